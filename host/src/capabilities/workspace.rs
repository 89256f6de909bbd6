//! File changes on behalf of plugins: atomic writes, moves and read notes, all through the
//! roots' cap-std directories, all checked against protection and the read guard.

use super::atomic::{atomic_replace, move_entry, open_parent};
use super::guard::ReadGuard;
use super::{ErrorCode, Located, Roots, WsError, undo};
use std::io;
use std::path::Path;
use std::sync::Mutex;

/// What the workspace interface may touch: the roots, the read guard, and the undo journal
/// each change is first recorded in (`Session::workspace`).
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub roots: &'a Roots,
    /// Refuse changes to existing files the session has not read (`Policy::read_guard`).
    pub read_guard: bool,
    pub guard: &'a Mutex<ReadGuard>,
    pub undo: undo::View<'a>,
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteInfo {
    pub path: String,
    pub bytes: u64,
    pub existed: bool,
    /// Set when this change cannot be undone, saying why (for the tool's result).
    pub undo_note: Option<String>,
}

/// Records that the session read `input`. Paths that do not resolve are ignored.
pub fn note_read(s: &View<'_>, input: &str) {
    if let Ok(loc) = s.roots.resolve(input, true) {
        note(s, &loc);
    }
}

/// The entries of the directory `input` (inside a root, symlinks resolved like any read)
/// whose names are not UTF-8, escaped with `termtext::os_name`, sorted: a WASI listing
/// cannot return them, so the listing tools ask for them here rather than hide them.
pub fn undecodable_names(s: &View<'_>, input: &str) -> Result<Vec<String>, WsError> {
    let loc = s.roots.resolve(input, true)?;
    let shown = s.roots.display(&loc);
    let root = &s.roots.all()[loc.root].dir;
    let rel = if loc.rel.as_os_str().is_empty() { Path::new(".") } else { loc.rel.as_path() };
    let entries = root.read_dir(rel).map_err(|e| WsError::from_io(&shown, &e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_str().is_none())
        .map(|n| crate::termtext::os_name(&n))
        .collect();
    names.sort();
    Ok(names)
}

/// Refuses to change an existing file the session has not read; `refusal` says why.
pub(super) fn check_guard(
    s: &View<'_>,
    loc: &Located,
    refusal: impl FnOnce() -> String,
) -> Result<(), WsError> {
    if !s.read_guard {
        return Ok(());
    }
    let abs = s.roots.absolute(loc);
    let seen = s.guard.lock().map(|g| g.has_seen(&abs)).unwrap_or(false);
    if seen { Ok(()) } else { Err(WsError::new(ErrorCode::NotRead, refusal())) }
}

/// The guard's refusal for replacing `shown`.
fn unread_overwrite(shown: &str) -> String {
    format!(
        "'{shown}' already exists and has not been read in this session; read it first so that \
         changes you have not seen are not overwritten"
    )
}

fn note(s: &View<'_>, loc: &Located) {
    if let Ok(mut g) = s.guard.lock() {
        g.note(s.roots.absolute(loc));
    }
}

/// Atomically replaces or creates the file at `input` with `contents`.
pub fn write(s: &View<'_>, input: &str, contents: &[u8]) -> Result<WriteInfo, WsError> {
    let (loc, shown) = s.roots.resolve_writable(input, true)?;
    let root = &s.roots.all()[loc.root];
    let existed = match root.dir.symlink_metadata(&loc.rel) {
        Ok(m) if m.is_dir() => {
            return Err(WsError::new(ErrorCode::IsDirectory, format!("'{shown}' is a directory")));
        }
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(WsError::from_io(&shown, &e)),
    };
    if existed {
        check_guard(s, &loc, || unread_overwrite(&shown))?;
    }
    let name = loc.rel.file_name().ok_or_else(|| WsError::invalid_path(input, "no file name"))?;
    let captured = undo::capture(&s.undo, &loc, &shown);
    let parent = open_parent(&root.dir, &loc.rel, true).map_err(|e| WsError::from_io(&shown, &e))?;
    atomic_replace(&parent, Path::new(name), contents, existed).map_err(|e| WsError::from_io(&shown, &e))?;
    note(s, &loc);
    let undo_note = undo::commit(&s.undo, captured.into_iter().collect());
    Ok(WriteInfo { path: shown, bytes: contents.len() as u64, existed, undo_note })
}

/// Moves `from` to `to`. Links are moved, not followed; directories are refused.
pub fn rename(s: &View<'_>, from: &str, to: &str) -> Result<WriteInfo, WsError> {
    let (src, src_shown) = s.roots.resolve_writable(from, false)?;
    let (dst, dst_shown) = s.roots.resolve_writable(to, false)?;

    let src_root = &s.roots.all()[src.root];
    let meta = src_root.dir.symlink_metadata(&src.rel).map_err(|e| WsError::from_io(&src_shown, &e))?;
    if meta.is_dir() {
        return Err(WsError::new(
            ErrorCode::IsDirectory,
            format!("'{src_shown}' is a directory; only files and links can be moved"),
        ));
    }
    if src == dst {
        return Err(WsError::new(
            ErrorCode::InvalidPath,
            format!("'{src_shown}' cannot be moved onto itself"),
        ));
    }
    let dst_root = &s.roots.all()[dst.root];
    let existed = match dst_root.dir.symlink_metadata(&dst.rel) {
        Ok(m) if m.is_dir() => {
            return Err(WsError::new(ErrorCode::IsDirectory, format!("'{dst_shown}' is a directory")));
        }
        Ok(m) => {
            // Replacing a file loses its content: the guard applies to what it holds.
            let target = if m.file_type().is_symlink() { s.roots.resolve(to, true)? } else { dst.clone() };
            check_guard(s, &target, || unread_overwrite(&dst_shown))?;
            true
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(WsError::from_io(&dst_shown, &e)),
    };
    let src_dir =
        open_parent(&src_root.dir, &src.rel, false).map_err(|e| WsError::from_io(&src_shown, &e))?;
    let dst_dir = open_parent(&dst_root.dir, &dst.rel, true).map_err(|e| WsError::from_io(&dst_shown, &e))?;
    let (Some(src_name), Some(dst_name)) = (src.rel.file_name(), dst.rel.file_name()) else {
        return Err(WsError::invalid_path(from, "no file name"));
    };
    let captured: Vec<_> =
        [undo::capture(&s.undo, &src, &src_shown), undo::capture(&s.undo, &dst, &dst_shown)]
            .into_iter()
            .flatten()
            .collect();
    move_entry(&src_dir, Path::new(src_name), &dst_dir, Path::new(dst_name))
        .map_err(|e| WsError::from_io(&dst_shown, &e))?;
    note(s, &dst);
    let undo_note = undo::commit(&s.undo, captured);
    Ok(WriteInfo { path: dst_shown, bytes: meta.len(), existed, undo_note })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use crate::capabilities::{Policy, Session, log};
    use std::os::unix::fs::PermissionsExt;

    fn session(tmp: &Path, read_guard: bool) -> Session {
        let roots = Roots::open(tmp, &[], &[]).unwrap();
        Session::new(roots, Policy { read_guard, ..Policy::default() }, log::Sink::new(false))
    }

    #[test]
    fn replacing_keeps_permissions_and_leaves_no_temporary_file() {
        let t = tempfile::tempdir().unwrap();
        let script = t.path().join("run.sh");
        std::fs::write(&script, "old").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
        let s = session(t.path(), false);
        let info = write(&s.workspace(), "run.sh", b"new").unwrap();
        assert_eq!(info, WriteInfo { path: "run.sh".into(), bytes: 3, existed: true, undo_note: None });
        assert_eq!(std::fs::read(&script).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o750);
        let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
    }

    #[test]
    fn a_write_counts_as_a_read_for_the_guard() {
        let t = tempfile::tempdir().unwrap();
        let s = session(t.path(), true);
        write(&s.workspace(), "a/b.txt", b"1").unwrap();
        write(&s.workspace(), "a/b.txt", b"2").unwrap();
        std::fs::write(t.path().join("other.txt"), "x").unwrap();
        assert_eq!(write(&s.workspace(), "other.txt", b"y").unwrap_err().code, ErrorCode::NotRead);
        note_read(&s.workspace(), "other.txt");
        write(&s.workspace(), "other.txt", b"y").unwrap();
    }

    #[test]
    fn a_directory_is_not_a_file() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("d")).unwrap();
        let s = session(t.path(), false);
        assert_eq!(write(&s.workspace(), "d", b"x").unwrap_err().code, ErrorCode::IsDirectory);
        assert_eq!(rename(&s.workspace(), "d", "e").unwrap_err().code, ErrorCode::IsDirectory);
    }

    #[test]
    fn moving_onto_an_unread_file_is_refused_and_a_link_moves_as_a_link() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a"), "a").unwrap();
        std::fs::write(t.path().join("b"), "b").unwrap();
        std::os::unix::fs::symlink("a", t.path().join("l")).unwrap();
        let s = session(t.path(), true);
        assert_eq!(rename(&s.workspace(), "a", "b").unwrap_err().code, ErrorCode::NotRead);
        assert_eq!(std::fs::read(t.path().join("b")).unwrap(), b"b");
        rename(&s.workspace(), "l", "sub/l2").unwrap();
        let meta = std::fs::symlink_metadata(t.path().join("sub/l2")).unwrap();
        assert!(meta.file_type().is_symlink());
        assert_eq!(rename(&s.workspace(), "a", "a").unwrap_err().code, ErrorCode::InvalidPath);
    }
}
