//! The checkpoints on disk, in the workspace's local state: `checkpoints/<n>/index.json` (what
//! each path was before the turn and became after it) beside the saved contents, by hash.
//! Both are written whole-or-absent but not flushed to disk ([`Durability::Unsynced`]): what
//! is read back is checked (an index that does not parse is skipped, contents are compared
//! with their hash), so a power cut can cost an undo, never a wrong restore.

use super::super::atomic::{Durability, atomic_replace_as};
use super::super::hostread::read_regular;
use super::super::local::Local;
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;
use std::sync::Mutex;

/// The folder of the checkpoints inside the local state.
pub const DIR: &str = "checkpoints";
const INDEX: &str = "index.json";
/// The largest index read back.
const MAX_INDEX: u64 = 8 << 20;

/// What a path was (or became): what is needed to put it back, and to notice a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    Missing,
    /// A regular file; its contents are saved under `hash` when the entry is `kept`.
    File {
        mode: u32,
        size: u64,
        hash: String,
    },
    Link {
        target: String,
    },
    /// A folder, FIFO, socket or device: never put back, only noticed.
    Other,
}

impl State {
    /// Whether two observations are the same contents (a mode change alone is not an edit).
    pub fn same(&self, other: &State) -> bool {
        match (self, other) {
            (State::File { hash: a, .. }, State::File { hash: b, .. }) => a == b,
            (a, b) => a == b,
        }
    }
}

/// One path a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// As the session shows it (relative to the workspace, or absolute in an extra root).
    pub path: String,
    pub before: State,
    /// Whether `before` can be put back (its contents were saved).
    pub kept: bool,
    /// Why it cannot, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What the turn left there (a later difference is a change made outside corral).
    pub after: State,
    /// The folders the change had to create for the path (as shown, deepest first): an undo
    /// that deletes the file removes them again when they are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made: Vec<String>,
}

/// One turn's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub n: u64,
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// The model turn of the session that made it; none for a change outside a model turn
    /// (`corral tool`, a call over MCP).
    pub turn: Option<u64>,
    /// The session that made it, and the transcript id of the reply: a rewind in that same
    /// session trims the conversation there.
    pub session: String,
    pub reply: Option<u64>,
    pub tools: Vec<String>,
    pub undone: bool,
    pub entries: Vec<Entry>,
}

impl Checkpoint {
    /// The bytes of saved contents.
    pub fn bytes(&self) -> u64 {
        let mut seen = BTreeSet::new();
        self.entries
            .iter()
            .filter(|e| e.kept)
            .filter_map(|e| match &e.before {
                State::File { size, hash, .. } if seen.insert(hash.as_str()) => Some(*size),
                _ => None,
            })
            .sum()
    }

    pub fn entry(&self, path: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.path == path)
    }
}

/// How much the checkpoints keep (`undo.max_bytes`, `undo.keep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub max_bytes: u64,
    pub keep: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { max_bytes: 100 << 20, keep: 50 }
    }
}

/// A content hash, as stored.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A blob name from an index: hex only, so an index can never name a path.
fn blob_name(hash: &str) -> io::Result<&str> {
    if !hash.is_empty() && hash.len() <= 64 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(hash)
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidData, "a checkpoint index names an invalid blob"))
    }
}

/// The checkpoints folder of one workspace.
#[derive(Debug)]
pub struct Store {
    dir: Dir,
    /// The saved bytes of each checkpoint read or written through this store, by number.
    /// [`Store::enforce`] runs after every change of a turn; without this it read every index
    /// of the workspace (up to `undo.keep`, 50 by default) each time. Another corral in the
    /// same workspace may still be adding to a checkpoint counted here: the bound then holds
    /// for what this one saw, and the next run reads them afresh.
    sizes: Mutex<BTreeMap<u64, u64>>,
}

impl Store {
    /// The store in `local`, created when missing; `None` when nothing is kept.
    pub fn open(local: &Local) -> io::Result<Option<Store>> {
        Ok(local.subdir(DIR)?.map(|dir| Store { dir, sizes: Mutex::default() }))
    }

    fn sizes(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, u64>> {
        self.sizes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The checkpoints, oldest first; a folder whose index cannot be read is skipped.
    pub fn list(&self) -> io::Result<Vec<Checkpoint>> {
        let mut out: Vec<Checkpoint> =
            self.numbers()?.into_iter().filter_map(|n| self.load(n).ok()).collect();
        out.sort_by_key(|c| c.n);
        Ok(out)
    }

    fn numbers(&self) -> io::Result<Vec<u64>> {
        let mut ns = Vec::new();
        for entry in self.dir.entries()? {
            let entry = entry?;
            if let Some(n) = entry.file_name().to_str().and_then(|s| s.parse::<u64>().ok()) {
                ns.push(n);
            }
        }
        ns.sort_unstable();
        Ok(ns)
    }

    /// The checkpoint numbered `n`.
    pub fn load(&self, n: u64) -> io::Result<Checkpoint> {
        #[cfg(test)]
        tests::LOADS.with(|l| l.set(l.get() + 1));
        let path = format!("{n}/{INDEX}");
        let c = read_regular(&self.dir, Path::new(&path), MAX_INDEX)?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("checkpoint {n} does not exist"))
        })?;
        let cp: Checkpoint = serde_json::from_slice(&c.bytes).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("checkpoint {n} has an unreadable index: {e}"))
        })?;
        if cp.n != n {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("checkpoint {n} names another")));
        }
        Ok(cp)
    }

    /// Makes the folder of a new checkpoint: one past the newest, or further when another
    /// corral in the same workspace took that number first.
    pub fn create(&self) -> io::Result<u64> {
        let mut n = self.numbers()?.last().map_or(1, |l| l + 1);
        loop {
            match self.dir.create_dir(n.to_string()) {
                Ok(()) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(e),
            }
        }
    }

    fn sub(&self, n: u64) -> io::Result<Dir> {
        use cap_fs_ext::DirExt;
        self.dir.open_dir_nofollow(n.to_string())
    }

    /// Writes the index of `cp` (its folder exists).
    pub fn save(&self, cp: &Checkpoint) -> io::Result<()> {
        let text = serde_json::to_vec_pretty(cp).map_err(io::Error::other)?;
        let sub = self.sub(cp.n)?;
        let existed = sub.symlink_metadata(INDEX).is_ok();
        atomic_replace_as(&sub, Path::new(INDEX), &text, existed, Durability::Unsynced)?;
        self.sizes().insert(cp.n, cp.bytes());
        Ok(())
    }

    /// Saves `bytes` in checkpoint `n` under their hash.
    pub fn put_blob(&self, n: u64, hash: &str, bytes: &[u8]) -> io::Result<()> {
        let sub = self.sub(n)?;
        let name = blob_name(hash)?;
        if sub.symlink_metadata(name).is_ok() {
            return Ok(());
        }
        atomic_replace_as(&sub, Path::new(name), bytes, false, Durability::Unsynced)
    }

    /// The saved contents `hash` of checkpoint `n`, checked against the hash.
    pub fn blob(&self, n: u64, hash: &str, size: u64) -> io::Result<Vec<u8>> {
        let sub = self.sub(n)?;
        let missing = || {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("the saved contents {hash} of checkpoint {n} are missing"),
            )
        };
        let c =
            read_regular(&sub, Path::new(blob_name(hash)?), size.saturating_add(1))?.ok_or_else(missing)?;
        if self::hash(&c.bytes) != hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the saved contents {hash} of checkpoint {n} do not match their hash (changed \
                     since, or cut short by a crash)"
                ),
            ));
        }
        Ok(c.bytes)
    }

    /// Removes checkpoint `n` and its contents.
    pub fn remove(&self, n: u64) -> io::Result<()> {
        match self.dir.remove_dir_all(n.to_string()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => {
                self.sizes().remove(&n);
                Ok(())
            }
        }
    }

    /// Drops the oldest checkpoints until at most `b.keep` remain and their contents fit in
    /// `b.max_bytes`; checkpoint `current` (the one being written) is never dropped. Returns
    /// the numbers dropped. A checkpoint whose index cannot be read is neither counted nor
    /// dropped (as [`Store::list`] skips it). Indexes are read once per store (see `sizes`).
    pub fn enforce(&self, b: &Bounds, current: Option<u64>) -> io::Result<Vec<u64>> {
        let numbers = self.numbers()?;
        let mut sizes = self.sizes();
        sizes.retain(|n, _| numbers.binary_search(n).is_ok());
        for &n in &numbers {
            if !sizes.contains_key(&n)
                && let Ok(cp) = self.load(n)
            {
                sizes.insert(n, cp.bytes());
            }
        }
        let all: Vec<(u64, u64)> = sizes.iter().map(|(&n, &bytes)| (n, bytes)).collect();
        drop(sizes);
        let mut count = all.len() as u64;
        let mut total: u64 = all.iter().map(|&(_, bytes)| bytes).sum();
        let mut dropped = Vec::new();
        for &(n, bytes) in &all {
            if count <= b.keep && total <= b.max_bytes {
                break;
            }
            if Some(n) == current {
                continue;
            }
            self.remove(n)?;
            count -= 1;
            total -= bytes;
            dropped.push(n);
        }
        Ok(dropped)
    }
}

#[cfg(test)]
pub(super) mod tests {
    thread_local! {
        /// The indexes this thread read.
        pub(super) static LOADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// How many checkpoint indexes this thread has read.
    pub(in crate::capabilities::undo) fn loads() -> usize {
        LOADS.with(|l| l.get())
    }
}
