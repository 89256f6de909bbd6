//! Soft delete: files move into `.corral/trash/<id>/` with a line in the trash index, kept in
//! the workspace's local state (so a repository cannot ship one); entries older than the
//! retention age, then the oldest beyond the size cap, are purged, except the file just
//! deleted, which is kept (until a later delete) whatever its size.

use super::atomic::{move_entry, open_parent};
use super::local::Local;
use super::log::Sink;
use super::workspace::{self, check_guard};
use super::{ErrorCode, WsError};
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The trash directory, relative to the workspace root.
pub const TRASH_DIR: &str = ".corral/trash";
/// The trash index inside the local state.
pub const INDEX: &str = "trash.jsonl";

/// How long and how much the trash keeps.
#[derive(Debug, Clone)]
pub struct Retention {
    pub max_age_secs: u64,
    pub max_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { max_age_secs: 7 * 24 * 3600, max_bytes: 50 * 1024 * 1024 }
    }
}

/// One line of `index.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub trash_id: String,
    pub original_path: String,
    pub timestamp: u64,
    pub bytes: u64,
}

/// Where a trashed file went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrashInfo {
    pub id: String,
    pub location: String,
    /// Set when this delete cannot be undone (by `undo`), saying why.
    pub undo_note: Option<String>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);
static LOCK: Mutex<()> = Mutex::new(());

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn new_id() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut h = blake3::Hasher::new();
    h.update(&nanos.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(&n.to_le_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// What `workspace.trash` may touch (`Session::trash`): the workspace view, and the trash's
/// index and retention.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub workspace: workspace::View<'a>,
    pub retention: &'a Retention,
    pub local: &'a Local,
    pub log: &'a Sink,
}

/// Moves the file or link at `input` into the trash. Directories are refused; a regular
/// file must have passed the read guard, a link need not (its target is untouched).
pub fn trash(t: &View<'_>, input: &str) -> Result<TrashInfo, WsError> {
    let s = &t.workspace;
    let (loc, shown) = s.roots.resolve_writable(input, false)?;
    let root = &s.roots.all()[loc.root];
    let meta = root.dir.symlink_metadata(&loc.rel).map_err(|e| WsError::from_io(&shown, &e))?;
    if meta.is_dir() {
        return Err(WsError::new(
            ErrorCode::IsDirectory,
            format!("'{shown}' is a directory; only files and links can be deleted"),
        ));
    }
    if !meta.file_type().is_symlink() {
        check_guard(s, &loc, || {
            format!("'{shown}' has not been read in this session; read it before deleting it")
        })?;
    }
    let Some(name) = loc.rel.file_name() else {
        return Err(WsError::invalid_path(input, "no file name"));
    };
    let _lock = LOCK.lock();
    let ws = &s.roots.workspace().dir;
    let id = new_id();
    let entry_dir = format!("{TRASH_DIR}/{id}");
    let io_err =
        |e: io::Error| WsError::new(ErrorCode::Io, format!("cannot move '{shown}' to the trash: {e}"));
    super::state::ensure_gitignore(ws).map_err(io_err)?;
    ws.create_dir_all(&entry_dir).map_err(io_err)?;
    let to = ws.open_dir(&entry_dir).map_err(io_err)?;
    let from = open_parent(&root.dir, &loc.rel, false).map_err(io_err)?;
    let captured = super::undo::capture(&s.undo, &loc, &shown);
    move_entry(&from, Path::new(name), &to, Path::new(name)).map_err(io_err)?;
    let undo_note = super::undo::commit(&s.undo, captured.into_iter().collect());
    let entry = Entry {
        trash_id: id.clone(),
        original_path: shown.clone(),
        timestamp: now_secs(),
        bytes: meta.len(),
    };
    if t.local.path().is_some() {
        append_index(t.local, &entry).map_err(io_err)?;
    } else {
        t.log.push("host", "warn", "no state folder: the trash entry is not indexed, and never purged");
    }
    // Retention failures must not undo a completed delete; they are retried next time.
    // The file just deleted is reported as restorable, so the size cap never purges it.
    if let Err(e) = enforce_retention(ws, t.local, t.retention, now_secs(), Some(&id)) {
        t.log.push("host", "warn", &format!("trash clean-up failed: {e}"));
    }
    Ok(TrashInfo { id, location: entry_dir, undo_note })
}

fn append_index(local: &Local, entry: &Entry) -> io::Result<()> {
    let mut line = serde_json::to_string(entry).map_err(io::Error::other)?;
    line.push('\n');
    local.append(INDEX, line.as_bytes())
}

/// Reads the index; unreadable lines are dropped.
pub fn read_index(local: &Local) -> io::Result<Vec<Entry>> {
    let text = local.read(INDEX)?.unwrap_or_default();
    Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// Purges entries older than the age limit, then the oldest until the total fits; the
/// entry `keep_id` (the delete just made) is never purged.
pub fn enforce_retention(
    ws: &Dir,
    local: &Local,
    r: &Retention,
    now: u64,
    keep_id: Option<&str>,
) -> io::Result<usize> {
    let mut entries = read_index(local)?;
    entries.sort_by_key(|e| e.timestamp);
    let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
    let mut keep = Vec::with_capacity(entries.len());
    let mut purged = 0;
    for e in entries {
        let too_old = now.saturating_sub(e.timestamp) > r.max_age_secs;
        let kept = keep_id == Some(e.trash_id.as_str());
        if !kept && (too_old || total > r.max_bytes) {
            total -= e.bytes;
            let dir = format!("{TRASH_DIR}/{}", e.trash_id);
            if e.trash_id.chars().all(|c| c.is_ascii_alphanumeric()) {
                match ws.remove_dir_all(&dir) {
                    Ok(()) => {}
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                    Err(err) => return Err(err),
                }
            }
            purged += 1;
        } else {
            keep.push(e);
        }
    }
    if purged > 0 {
        let mut text = String::new();
        for e in &keep {
            text.push_str(&serde_json::to_string(e).map_err(io::Error::other)?);
            text.push('\n');
        }
        local.write(INDEX, text.as_bytes())?;
    }
    Ok(purged)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    fn entry(id: &str, timestamp: u64, bytes: u64) -> Entry {
        Entry { trash_id: id.into(), original_path: format!("{id}.txt"), timestamp, bytes }
    }

    fn setup(entries: &[Entry]) -> (tempfile::TempDir, Dir, Local) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("ws")).unwrap();
        let ws = Dir::open_ambient_dir(t.path().join("ws"), ambient_authority()).unwrap();
        let local = Local::open(&t.path().join("state"), Path::new("/w")).unwrap();
        ws.create_dir_all(TRASH_DIR).unwrap();
        for e in entries {
            ws.create_dir_all(format!("{TRASH_DIR}/{}", e.trash_id)).unwrap();
            append_index(&local, e).unwrap();
        }
        (t, ws, local)
    }

    #[test]
    fn oldest_entries_go_first_when_over_the_size_cap() {
        let entries = [entry("a", 100, 40), entry("b", 200, 40), entry("c", 300, 40)];
        let (_t, ws, local) = setup(&entries);
        let r = Retention { max_age_secs: 1000, max_bytes: 90 };
        assert_eq!(enforce_retention(&ws, &local, &r, 400, None).unwrap(), 1);
        let left: Vec<String> = read_index(&local).unwrap().into_iter().map(|e| e.trash_id).collect();
        assert_eq!(left, vec!["b", "c"]);
        assert!(!ws.exists(format!("{TRASH_DIR}/a")) && ws.exists(format!("{TRASH_DIR}/b")));
    }

    #[test]
    fn the_delete_just_made_is_kept_even_when_it_alone_passes_the_cap() {
        let entries = [entry("a", 100, 40), entry("big", 200, 500)];
        let (_t, ws, local) = setup(&entries);
        let r = Retention { max_age_secs: 1000, max_bytes: 90 };
        assert_eq!(enforce_retention(&ws, &local, &r, 300, Some("big")).unwrap(), 1);
        assert_eq!(read_index(&local).unwrap(), vec![entry("big", 200, 500)]);
        assert!(ws.exists(format!("{TRASH_DIR}/big")), "the file reported restorable is still there");
        // The next delete may purge it.
        append_index(&local, &entry("c", 300, 10)).unwrap();
        ws.create_dir_all(format!("{TRASH_DIR}/c")).unwrap();
        assert_eq!(enforce_retention(&ws, &local, &r, 300, Some("c")).unwrap(), 1);
        assert!(!ws.exists(format!("{TRASH_DIR}/big")) && ws.exists(format!("{TRASH_DIR}/c")));
    }

    #[test]
    fn entries_past_the_age_limit_are_purged() {
        let (_t, ws, local) = setup(&[entry("old", 10, 1), entry("new", 990, 1)]);
        let r = Retention { max_age_secs: 100, max_bytes: 1 << 20 };
        assert_eq!(enforce_retention(&ws, &local, &r, 1000, None).unwrap(), 1);
        assert_eq!(read_index(&local).unwrap(), vec![entry("new", 990, 1)]);
    }

    #[test]
    fn an_index_id_cannot_point_outside_the_trash() {
        let (t, ws, local) = setup(&[entry("ok1", 1, 1)]);
        std::fs::create_dir_all(t.path().join("precious")).unwrap();
        append_index(&local, &entry("../../precious", 1, 1)).unwrap();
        let r = Retention { max_age_secs: 0, max_bytes: 0 };
        enforce_retention(&ws, &local, &r, 1000, None).unwrap();
        assert!(t.path().join("precious").exists());
        assert!(read_index(&local).unwrap().is_empty());
        // An index shipped inside the workspace is not the index.
        std::fs::write(
            t.path().join("ws/.corral/trash/index.jsonl"),
            "{\"trash_id\":\"x\",\"original_path\":\"a\",\"timestamp\":1,\"bytes\":1}\n",
        )
        .unwrap();
        assert!(read_index(&local).unwrap().is_empty());
    }
}
