//! File changes on behalf of plugins: atomic writes, moves and read notes, all through the
//! roots' cap-std directories, all checked against protection and the read guard.

use super::{ErrorCode, Located, Session, WsError};
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteInfo {
    pub path: String,
    pub bytes: u64,
    pub existed: bool,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Records that the session read `input`. Paths that do not resolve are ignored.
pub fn note_read(s: &Session, input: &str) {
    if let Ok(loc) = s.roots.resolve(input, true) {
        note(s, &loc);
    }
}

/// The entries of the directory `input` (inside a root, symlinks resolved like any read)
/// whose names are not UTF-8, escaped with `termtext::os_name`, sorted: a WASI listing
/// cannot return them, so the listing tools ask for them here rather than hide them.
pub fn undecodable_names(s: &Session, input: &str) -> Result<Vec<String>, WsError> {
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
    s: &Session,
    loc: &Located,
    refusal: impl FnOnce() -> String,
) -> Result<(), WsError> {
    if !s.policy.read_guard {
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

fn note(s: &Session, loc: &Located) {
    if let Ok(mut g) = s.guard.lock() {
        g.note(s.roots.absolute(loc));
    }
}

/// Opens the parent directory of `rel` inside `dir`, creating it when `create` is set.
pub(super) fn open_parent(dir: &Dir, rel: &Path, create: bool) -> io::Result<Dir> {
    match rel.parent() {
        Some(p) if !p.as_os_str().is_empty() => {
            if create {
                dir.create_dir_all(p)?;
            }
            dir.open_dir(p)
        }
        _ => dir.try_clone(),
    }
}

/// Atomically replaces or creates the file at `input` with `contents`.
pub fn write(s: &Session, input: &str, contents: &[u8]) -> Result<WriteInfo, WsError> {
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
    let parent = open_parent(&root.dir, &loc.rel, true).map_err(|e| WsError::from_io(&shown, &e))?;
    atomic_replace(&parent, Path::new(name), contents, existed).map_err(|e| WsError::from_io(&shown, &e))?;
    note(s, &loc);
    Ok(WriteInfo { path: shown, bytes: contents.len() as u64, existed })
}

/// Prefix of the names temporary files get while they are linked in.
pub const TMP_PREFIX: &str = ".corral-tmp-";

/// Writes `contents` to a temporary file in `dir`, then renames it over `name`. The old
/// file's permissions are kept. Where the file system allows, the temporary file has no name
/// while it is written (`O_TMPFILE`) and is linked in only once complete, so a kill during the
/// write leaves nothing behind; elsewhere a named one is used, removed on any failure, and
/// stale ones left by a killed run are removed by the next write in that directory.
pub(crate) fn atomic_replace(dir: &Dir, name: &Path, contents: &[u8], existed: bool) -> io::Result<()> {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!("{TMP_PREFIX}{}-{n}", std::process::id());
    let mode = if existed {
        use cap_std::fs::PermissionsExt;
        dir.metadata(name).ok().map(|m| m.permissions().mode())
    } else {
        None
    };
    let result = match unnamed::write(dir, &tmp, contents, mode) {
        Ok(()) => dir.rename(&tmp, dir, name),
        Err(unnamed::Unsupported) => {
            let _ = remove_stale(dir, std::time::SystemTime::now());
            named(dir, &tmp, contents, mode).and_then(|()| dir.rename(&tmp, dir, name))
        }
    };
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

fn named(dir: &Dir, tmp: &str, contents: &[u8], mode: Option<u32>) -> io::Result<()> {
    use cap_std::fs::PermissionsExt;
    let mut f = dir.open_with(tmp, OpenOptions::new().write(true).create_new(true))?;
    f.write_all(contents)?;
    if let Some(m) = mode {
        f.set_permissions(cap_std::fs::Permissions::from_mode(m))?;
    }
    f.sync_all()
}

/// Removes `.corral-tmp-*` files of `dir` older than a minute (left by a killed run);
/// returns how many went.
pub fn remove_stale(dir: &Dir, now: std::time::SystemTime) -> io::Result<usize> {
    let mut removed = 0;
    for entry in dir.entries()? {
        let entry = entry?;
        if !entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
            continue;
        }
        let meta = entry.metadata()?;
        let age = meta.modified().ok().and_then(|m| now.duration_since(m.into_std()).ok());
        if meta.is_file() && age.is_some_and(|a| a > std::time::Duration::from_secs(60)) {
            dir.remove_file(entry.file_name())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Files written without a name (`O_TMPFILE`), linked in when complete.
mod unnamed {
    use cap_std::fs::Dir;
    use rustix::fs::{AtFlags, Mode, OFlags};
    use std::io::Write;
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::fs::PermissionsExt;

    /// The file system (or a missing `/proc`) does not allow it: write a named file instead.
    /// Any other failure is reported as such too, so the caller can still try.
    pub struct Unsupported;

    /// Writes `contents` to an unnamed file in `dir` and links it in as `tmp`.
    pub fn write(dir: &Dir, tmp: &str, contents: &[u8], mode: Option<u32>) -> Result<(), Unsupported> {
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir.as_fd(), ".", flags, Mode::from_raw_mode(0o600))
            .map_err(|_| Unsupported)?;
        let mut f = std::fs::File::from(fd);
        // A new file gets what `open` would give it: 0666 less the umask.
        let perm = std::fs::Permissions::from_mode(mode.unwrap_or_else(|| 0o666 & !umask()));
        (|| {
            f.write_all(contents)?;
            f.set_permissions(perm)?;
            f.sync_all()
        })()
        .map_err(|_| Unsupported)?;
        let proc_path = format!("/proc/self/fd/{}", f.as_raw_fd());
        rustix::fs::linkat(rustix::fs::CWD, proc_path.as_str(), dir.as_fd(), tmp, AtFlags::SYMLINK_FOLLOW)
            .map_err(|_| Unsupported)
    }

    /// The process's umask, from `/proc/self/status` (setting it to read it would race with
    /// other threads); 022 when it cannot be read.
    #[allow(clippy::disallowed_methods)] // /proc, not a workspace file
    fn umask() -> u32 {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("Umask:"))?;
                u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
            })
            .unwrap_or(0o022)
    }
}

/// Moves `from` to `to`. Links are moved, not followed; directories are refused.
pub fn rename(s: &Session, from: &str, to: &str) -> Result<WriteInfo, WsError> {
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
    move_entry(&src_dir, Path::new(src_name), &dst_dir, Path::new(dst_name))
        .map_err(|e| WsError::from_io(&dst_shown, &e))?;
    note(s, &dst);
    Ok(WriteInfo { path: dst_shown, bytes: meta.len(), existed })
}

/// Renames between two directories; across file systems, copies then removes.
pub(crate) fn move_entry(from_dir: &Dir, from: &Path, to_dir: &Dir, to: &Path) -> io::Result<()> {
    match from_dir.rename(from, to_dir, to) {
        Err(e) if e.raw_os_error() == Some(18) => {
            // EXDEV: different file systems.
            let meta = from_dir.symlink_metadata(from)?;
            if meta.file_type().is_symlink() {
                let target = from_dir.read_link_contents(from)?;
                let _ = to_dir.remove_file(to);
                to_dir.symlink_contents(target, to)?;
            } else {
                let data = from_dir.read(from)?;
                atomic_replace(to_dir, to, &data, false)?;
            }
            from_dir.remove_file(from)
        }
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use crate::capabilities::{Policy, Roots, log};
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
        let info = write(&s, "run.sh", b"new").unwrap();
        assert_eq!(info, WriteInfo { path: "run.sh".into(), bytes: 3, existed: true });
        assert_eq!(std::fs::read(&script).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o750);
        let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
    }

    #[test]
    fn stale_temporary_files_are_removed_and_fresh_ones_kept() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join(".corral-tmp-1-0"), "partial").unwrap();
        std::fs::write(t.path().join("keep.txt"), "x").unwrap();
        let d = Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        let now = std::time::SystemTime::now();
        assert_eq!(remove_stale(&d, now).unwrap(), 0, "a fresh one may belong to a running write");
        assert_eq!(remove_stale(&d, now + std::time::Duration::from_secs(120)).unwrap(), 1);
        assert!(!t.path().join(".corral-tmp-1-0").exists() && t.path().join("keep.txt").exists());
    }

    #[test]
    fn a_write_counts_as_a_read_for_the_guard() {
        let t = tempfile::tempdir().unwrap();
        let s = session(t.path(), true);
        write(&s, "a/b.txt", b"1").unwrap();
        write(&s, "a/b.txt", b"2").unwrap();
        std::fs::write(t.path().join("other.txt"), "x").unwrap();
        assert_eq!(write(&s, "other.txt", b"y").unwrap_err().code, ErrorCode::NotRead);
        note_read(&s, "other.txt");
        write(&s, "other.txt", b"y").unwrap();
    }

    #[test]
    fn a_directory_is_not_a_file() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("d")).unwrap();
        let s = session(t.path(), false);
        assert_eq!(write(&s, "d", b"x").unwrap_err().code, ErrorCode::IsDirectory);
        assert_eq!(rename(&s, "d", "e").unwrap_err().code, ErrorCode::IsDirectory);
    }

    #[test]
    fn moving_onto_an_unread_file_is_refused_and_a_link_moves_as_a_link() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a"), "a").unwrap();
        std::fs::write(t.path().join("b"), "b").unwrap();
        std::os::unix::fs::symlink("a", t.path().join("l")).unwrap();
        let s = session(t.path(), true);
        assert_eq!(rename(&s, "a", "b").unwrap_err().code, ErrorCode::NotRead);
        assert_eq!(std::fs::read(t.path().join("b")).unwrap(), b"b");
        rename(&s, "l", "sub/l2").unwrap();
        let meta = std::fs::symlink_metadata(t.path().join("sub/l2")).unwrap();
        assert!(meta.file_type().is_symlink());
        assert_eq!(rename(&s, "a", "a").unwrap_err().code, ErrorCode::InvalidPath);
    }
}
