//! Compiled functions kept across components: Cranelift's incremental compilation cache, on
//! disk beside the component cache. Components built with the same guest runtime share most
//! of their code (every Python plugin carries CPython, every JavaScript plugin StarlingMonkey),
//! and a plugin rebuilt after a small change shares nearly all of its own, so compiling one of
//! them finds most functions here and skips Cranelift for each.
//!
//! The functions first compiled while compiling one component are kept in one pack named
//! after it: a table (each function's key, the BLAKE3 hash and length of its code) tagged as a
//! whole with the user's secret, then the code. A pack's code is machine code that will run,
//! so a pack whose table has no valid tag under this user's key (damaged, planted, another
//! user's) is never read, and a function whose bytes do not hash to the table's entry is
//! compiled instead. Packs are read only when a compile asks for its first function (never at
//! start), the table alone then, each function's code when it is asked for; past [`KEEP`]
//! bytes in all the oldest packs are removed. Nothing here is needed: without a cache
//! directory or key, or on any error, the functions are compiled as usual.

use super::secret::Secret;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The tag's domain and the packs' first line.
const DOMAIN: &str = "corral compiled functions v1";
const MAGIC: &[u8] = b"corral functions v1\n";
/// The packs kept in all, oldest removed first (a CPython component's pack is about 30 MB).
const KEEP: u64 = 256 << 20;
/// Cranelift's keys are SHA-256 digests.
const KEY: usize = 32;
/// One table row: the key, the code's BLAKE3 hash, its length (u32, little-endian).
const ROW: usize = KEY + 32 + 4;

/// The store wasmtime's compiler asks (one per engine; see [`super::engine::new_engine`]).
#[derive(Debug, Default)]
pub(crate) struct Functions {
    /// Where packs live and the key that tags them; set once the cache is open.
    place: OnceLock<Place>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct Place {
    dir: PathBuf,
    secret: Secret,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the packs on disk have been indexed since the last [`Functions::keep`].
    indexed: bool,
    packs: Vec<File>,
    known: HashMap<[u8; KEY], Entry>,
    /// Compiled during the current compile, not yet in a pack.
    fresh: HashMap<[u8; KEY], Vec<u8>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    pack: usize,
    offset: u64,
    len: u32,
    hash: [u8; 32],
}

impl Functions {
    /// Keeps packs in `dir`, tagged with `secret`. Until this is called (or when it is not,
    /// without a disk cache) the store keeps nothing.
    pub(crate) fn open(&self, dir: PathBuf, secret: Secret) {
        let _ = self.place.set(Place { dir, secret });
    }

    /// Writes the functions compiled since the last call into a pack named `name` (the
    /// component's SHA-256), removes the oldest packs past [`KEEP`], and lets go of what was
    /// read: the next compile reads the packs again. Best effort, like the rest of the cache.
    pub(crate) fn keep(&self, name: &str) {
        let fresh = {
            let mut state = self.lock();
            let fresh = std::mem::take(&mut state.fresh);
            *state = State::default();
            fresh
        };
        let Some(place) = self.place.get() else { return };
        if fresh.is_empty() || std::fs::create_dir_all(&place.dir).is_err() {
            return;
        }
        let path = place.dir.join(format!("{name}.pack"));
        if super::atomic::write_atomic(&path, &pack(&fresh, &place.secret)).is_ok() {
            prune(&place.dir, &path, KEEP);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl wasmtime::CacheStore for Functions {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let key: [u8; KEY] = key.try_into().ok()?;
        let place = self.place.get()?;
        let mut state = self.lock();
        if !state.indexed {
            state.indexed = true;
            index(&place.dir, &place.secret, &mut state);
        }
        if let Some(code) = state.fresh.get(&key) {
            return Some(Cow::Owned(code.clone()));
        }
        let entry = *state.known.get(&key)?;
        let mut code = vec![0; entry.len as usize];
        let mut file = state.packs.get(entry.pack)?;
        file.seek(SeekFrom::Start(entry.offset)).ok()?;
        file.read_exact(&mut code).ok()?;
        // The table was tagged; the code must be what it names.
        (*blake3::hash(&code).as_bytes() == entry.hash).then_some(Cow::Owned(code))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let (Ok(key), Some(_)) = (<[u8; KEY]>::try_from(key), self.place.get()) else { return false };
        self.lock().fresh.insert(key, value);
        true
    }
}

/// A pack of `fresh`: the magic line, `tag HEX` over the table, the table, then the code.
fn pack(fresh: &HashMap<[u8; KEY], Vec<u8>>, secret: &Secret) -> Vec<u8> {
    let mut table = Vec::with_capacity(4 + fresh.len() * ROW);
    table.extend_from_slice(&(fresh.len() as u32).to_le_bytes());
    for (key, code) in fresh {
        table.extend_from_slice(key);
        table.extend_from_slice(blake3::hash(code).as_bytes());
        table.extend_from_slice(&(code.len() as u32).to_le_bytes());
    }
    let tag = secret.tag(DOMAIN, &table);
    let mut out = Vec::with_capacity(
        MAGIC.len() + tag.len() + 5 + table.len() + fresh.values().map(Vec::len).sum::<usize>(),
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(format!("tag {tag}\n").as_bytes());
    out.extend_from_slice(&table);
    for code in fresh.values() {
        out.extend_from_slice(code);
    }
    out
}

/// Reads the tables of the packs in `dir` whose tag is valid under `secret` into `state`.
fn index(dir: &Path, secret: &Secret, state: &mut State) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.flatten().map(|e| e.path()) {
        if path.extension().is_some_and(|e| e == "pack")
            && let Ok(file) = File::open(&path)
            && let Some(rows) = table(&file, secret, state.packs.len())
        {
            for (key, entry) in rows {
                state.known.entry(key).or_insert(entry);
            }
            state.packs.push(file);
        }
    }
}

/// The rows of a pack whose table carries a valid tag, each with where its code starts in
/// the file, which is `state.packs[pack]` once indexed.
fn table(mut file: &File, secret: &Secret, pack: usize) -> Option<Vec<([u8; KEY], Entry)>> {
    let len = file.metadata().ok()?.len();
    let mut head = vec![0u8; MAGIC.len() + "tag \n".len() + 64 + 4];
    file.read_exact(&mut head).ok()?;
    let rest = head.strip_prefix(MAGIC)?;
    let line = rest.strip_prefix(b"tag ")?;
    if line.get(64) != Some(&b'\n') {
        return None;
    }
    let tag = std::str::from_utf8(&line[..64]).ok()?;
    let count_bytes = &rest[rest.len() - 4..];
    let count = u32::from_le_bytes(count_bytes.try_into().ok()?) as u64;
    let table_len = 4 + count.checked_mul(ROW as u64)?;
    let start = (head.len() - 4) as u64;
    if start + table_len > len {
        return None;
    }
    let mut table = vec![0u8; table_len as usize];
    table[..4].copy_from_slice(count_bytes);
    file.read_exact(&mut table[4..]).ok()?;
    if !secret.check(DOMAIN, &table, tag) {
        return None;
    }
    let mut offset = start + table_len;
    let mut rows = Vec::with_capacity(count as usize);
    for row in table[4..].chunks_exact(ROW) {
        let key: [u8; KEY] = row[..KEY].try_into().ok()?;
        let hash: [u8; 32] = row[KEY..KEY + 32].try_into().ok()?;
        let code_len = u32::from_le_bytes(row[KEY + 32..].try_into().ok()?);
        rows.push((key, Entry { pack, offset, len: code_len, hash }));
        offset += code_len as u64;
    }
    (offset <= len).then_some(rows)
}

/// Removes the least recently written packs in `dir` until they hold at most `keep` bytes,
/// never `newest`.
fn prune(dir: &Path, newest: &Path, keep: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut packs: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = packs.iter().map(|p| p.1).sum();
    packs.sort();
    for (_, len, path) in packs {
        if total <= keep {
            break;
        }
        if path != newest && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    fn store(dir: &Path, key: u8) -> Functions {
        let f = Functions::default();
        f.open(dir.to_path_buf(), Secret::from_bytes([key; 32]));
        f
    }

    fn packs(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
        v.sort();
        v
    }

    #[test]
    fn kept_functions_are_found_by_the_next_compile() {
        let dir = tempfile::tempdir().unwrap();
        let f = store(dir.path(), 1);
        assert!(f.get(&[7; 32]).is_none());
        assert!(f.insert(&[7; 32], b"code seven".to_vec()));
        assert!(f.insert(&[8; 32], vec![0xAB; 5000]));
        // Within the compile, a function compiled twice is found the second time.
        assert_eq!(f.get(&[7; 32]).as_deref(), Some(&b"code seven"[..]));
        f.keep("aaaa");
        assert_eq!(packs(dir.path()), vec![dir.path().join("aaaa.pack")]);
        // Another process with the same key (the state was let go of: read from disk).
        let g = store(dir.path(), 1);
        assert_eq!(g.get(&[7; 32]).as_deref(), Some(&b"code seven"[..]));
        assert_eq!(g.get(&[8; 32]).as_deref(), Some(&[0xAB; 5000][..]));
        assert!(g.get(&[9; 32]).is_none());
        // Nothing new compiled: no pack written.
        g.keep("bbbb");
        assert_eq!(packs(dir.path()).len(), 1);
    }

    #[test]
    fn another_users_or_a_planted_pack_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = store(dir.path(), 2);
        theirs.insert(&[7; 32], b"their code".to_vec());
        theirs.keep("theirs");
        let mine = store(dir.path(), 1);
        assert!(mine.get(&[7; 32]).is_none(), "a pack tagged under another key was read");
        // A pack without a tag at all.
        let mut planted = MAGIC.to_vec();
        planted.extend_from_slice(format!("tag {}\n", "0".repeat(64)).as_bytes());
        planted.extend_from_slice(&1u32.to_le_bytes());
        planted.extend_from_slice(&[9; KEY]);
        planted.extend_from_slice(blake3::hash(b"evil").as_bytes());
        planted.extend_from_slice(&4u32.to_le_bytes());
        planted.extend_from_slice(b"evil");
        std::fs::write(dir.path().join("planted.pack"), planted).unwrap();
        let mine = store(dir.path(), 1);
        assert!(mine.get(&[9; 32]).is_none(), "an untagged pack was read");
    }

    #[test]
    fn code_changed_under_a_valid_table_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let f = store(dir.path(), 1);
        f.insert(&[1; 32], b"first".to_vec());
        f.insert(&[2; 32], b"second".to_vec());
        f.keep("c");
        let path = dir.path().join("c.pack");
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(6).position(|w| w == b"second").unwrap();
        bytes[at..at + 6].copy_from_slice(b"SECOND");
        std::fs::write(&path, &bytes).unwrap();
        let g = store(dir.path(), 1);
        assert_eq!(g.get(&[1; 32]).as_deref(), Some(&b"first"[..]));
        assert!(g.get(&[2; 32]).is_none(), "changed code was handed to the compiler");
        // Cut short: the table names more than the file holds.
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let h = store(dir.path(), 1);
        assert!(h.get(&[1; 32]).is_none());
    }

    #[test]
    fn without_a_place_nothing_is_kept() {
        let f = Functions::default();
        assert!(!f.insert(&[1; 32], b"code".to_vec()));
        assert!(f.get(&[1; 32]).is_none());
        f.keep("x");
    }

    #[test]
    fn the_oldest_packs_go_first_and_the_newest_stays() {
        let dir = tempfile::tempdir().unwrap();
        for (i, name) in ["old", "mid", "new"].iter().enumerate() {
            let path = dir.path().join(format!("{name}.pack"));
            std::fs::write(&path, vec![0u8; 100]).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            File::options().write(true).open(&path).unwrap().set_modified(t).unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), vec![0u8; 500]).unwrap();
        prune(dir.path(), &dir.path().join("old.pack"), 200);
        let left: Vec<String> =
            packs(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        // "old" is the one just written (kept); "mid" is the oldest of the others.
        assert_eq!(left, ["new.pack", "notes.txt", "old.pack"]);
    }
}
