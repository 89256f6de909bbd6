//! Changes to files that never leave a half-written file or follow a link: atomic replace
//! (through a temporary file renamed over the name), moves, and opening a path's folder.

use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Opens the parent directory of `rel` inside `dir`, creating it when `create` is set.
pub(crate) fn open_parent(dir: &Dir, rel: &Path, create: bool) -> io::Result<Dir> {
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

/// Prefix of the names temporary files get while they are linked in.
pub const TMP_PREFIX: &str = ".corral-tmp-";

/// What a replacement must survive. Both kinds are whole or absent after a kill: the new
/// contents are complete before they get the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Also a power cut: the contents are on disk (`fsync`) before the rename. The person's
    /// files, and corral's own settings and state.
    Synced,
    /// Left to the kernel's write-back, which may lose or cut short what a power cut
    /// interrupts: only for state that is checked when it is read back and whose loss costs
    /// nothing else (the undo checkpoints: an index that does not parse is skipped, saved
    /// contents are checked against their hash). Each `fsync` is a disk flush on the turn's
    /// path: an edit wrote four.
    Unsynced,
}

/// Writes `contents` to a temporary file in `dir`, then renames it over `name`. The old
/// file's permissions are kept. Where the file system allows, the temporary file has no name
/// while it is written (`O_TMPFILE`) and is linked in only once complete, so a kill during the
/// write leaves nothing behind; elsewhere a named one is used, removed on any failure, and
/// stale ones left by a killed run are removed by the next write in that directory.
pub(crate) fn atomic_replace(dir: &Dir, name: &Path, contents: &[u8], existed: bool) -> io::Result<()> {
    atomic_replace_as(dir, name, contents, existed, Durability::Synced)
}

/// [`atomic_replace`] with the durability given.
pub(crate) fn atomic_replace_as(
    dir: &Dir,
    name: &Path,
    contents: &[u8],
    existed: bool,
    durability: Durability,
) -> io::Result<()> {
    let mode = if existed {
        use cap_std::fs::PermissionsExt;
        dir.metadata(name).ok().map(|m| m.permissions().mode())
    } else {
        None
    };
    replace(dir, name, contents, mode, durability)
}

/// [`atomic_replace`] with the permissions given (`None`: a new file's default).
pub(crate) fn atomic_replace_mode(
    dir: &Dir,
    name: &Path,
    contents: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    replace(dir, name, contents, mode, Durability::Synced)
}

fn replace(
    dir: &Dir,
    name: &Path,
    contents: &[u8],
    mode: Option<u32>,
    durability: Durability,
) -> io::Result<()> {
    #[cfg(test)]
    tests::REPLACES.with(|n| n.set(n.get() + 1));
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!("{TMP_PREFIX}{}-{n}", std::process::id());
    let result = match unnamed::write(dir, &tmp, contents, mode, durability) {
        Ok(()) => dir.rename(&tmp, dir, name),
        Err(unnamed::Unsupported) => {
            let _ = remove_stale(dir, std::time::SystemTime::now());
            named(dir, &tmp, contents, mode, durability).and_then(|()| dir.rename(&tmp, dir, name))
        }
    };
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

fn named(dir: &Dir, tmp: &str, contents: &[u8], mode: Option<u32>, durability: Durability) -> io::Result<()> {
    use cap_std::fs::PermissionsExt;
    let mut f = dir.open_with(tmp, OpenOptions::new().write(true).create_new(true))?;
    f.write_all(contents)?;
    if let Some(m) = mode {
        f.set_permissions(cap_std::fs::Permissions::from_mode(m))?;
    }
    flush(durability, || f.sync_all())
}

/// Flushes a written file to disk when `durability` asks for it.
fn flush(durability: Durability, sync_all: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    match durability {
        Durability::Synced => {
            #[cfg(test)]
            tests::SYNCS.with(|n| n.set(n.get() + 1));
            sync_all()
        }
        Durability::Unsynced => Ok(()),
    }
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
    use super::Durability;
    use cap_std::fs::Dir;
    use rustix::fs::{AtFlags, Mode, OFlags};
    use std::io::Write;
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::fs::PermissionsExt;

    /// The file system (or a missing `/proc`) does not allow it: write a named file instead.
    /// Any other failure is reported as such too, so the caller can still try.
    pub struct Unsupported;

    /// Writes `contents` to an unnamed file in `dir` and links it in as `tmp`.
    pub fn write(
        dir: &Dir,
        tmp: &str,
        contents: &[u8],
        mode: Option<u32>,
        durability: Durability,
    ) -> Result<(), Unsupported> {
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir.as_fd(), ".", flags, Mode::from_raw_mode(0o600))
            .map_err(|_| Unsupported)?;
        let mut f = std::fs::File::from(fd);
        // A new file gets what `open` would give it: 0666 less the umask.
        let perm = std::fs::Permissions::from_mode(mode.unwrap_or_else(|| 0o666 & !umask()));
        (|| {
            f.write_all(contents)?;
            f.set_permissions(perm)?;
            super::flush(durability, || f.sync_all())
        })()
        .map_err(|_| Unsupported)?;
        let proc_path = format!("/proc/self/fd/{}", f.as_raw_fd());
        rustix::fs::linkat(rustix::fs::CWD, proc_path.as_str(), dir.as_fd(), tmp, AtFlags::SYMLINK_FOLLOW)
            .map_err(|_| Unsupported)
    }

    /// The process's umask, from `/proc/self/status` (setting it to read it would race with
    /// other threads); 022 when it cannot be read. Read once: corral never changes it.
    #[allow(clippy::disallowed_methods)] // /proc, not a workspace file
    fn umask() -> u32 {
        static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *UMASK.get_or_init(|| {
            std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    let line = s.lines().find(|l| l.starts_with("Umask:"))?;
                    u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
                })
                .unwrap_or(0o022)
        })
    }
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

/// How many files this thread has flushed to disk (unit tests count what a change costs).
#[cfg(test)]
pub(crate) fn syncs_on_this_thread() -> usize {
    tests::SYNCS.with(|n| n.get())
}

/// How many files this thread has written whole (each a new file renamed over the name).
#[cfg(test)]
pub(crate) fn replaces_on_this_thread() -> usize {
    tests::REPLACES.with(|n| n.get())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    thread_local! {
        /// The files this thread flushed to disk.
        pub(super) static SYNCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// The files this thread wrote whole.
        pub(super) static REPLACES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn only_synced_replacements_are_flushed_and_both_replace_whole() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        std::fs::write(t.path().join("a.txt"), "old").unwrap();
        let before = syncs_on_this_thread();
        atomic_replace(&d, Path::new("a.txt"), b"synced", true).unwrap();
        assert_eq!(syncs_on_this_thread(), before + 1, "the person's file is flushed before the rename");
        atomic_replace_as(&d, Path::new("a.txt"), b"unsynced", true, Durability::Unsynced).unwrap();
        atomic_replace_as(&d, Path::new("b.txt"), b"new", false, Durability::Unsynced).unwrap();
        assert_eq!(syncs_on_this_thread(), before + 1, "unsynced replacements are not flushed");
        assert_eq!(std::fs::read_to_string(t.path().join("a.txt")).unwrap(), "unsynced");
        assert_eq!(std::fs::read_to_string(t.path().join("b.txt")).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
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
}
