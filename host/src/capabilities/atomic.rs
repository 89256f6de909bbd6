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

/// Writes `contents` to a temporary file in `dir`, then renames it over `name`. The old
/// file's permissions are kept. Where the file system allows, the temporary file has no name
/// while it is written (`O_TMPFILE`) and is linked in only once complete, so a kill during the
/// write leaves nothing behind; elsewhere a named one is used, removed on any failure, and
/// stale ones left by a killed run are removed by the next write in that directory.
pub(crate) fn atomic_replace(dir: &Dir, name: &Path, contents: &[u8], existed: bool) -> io::Result<()> {
    let mode = if existed {
        use cap_std::fs::PermissionsExt;
        dir.metadata(name).ok().map(|m| m.permissions().mode())
    } else {
        None
    };
    atomic_replace_mode(dir, name, contents, mode)
}

/// [`atomic_replace`] with the permissions given (`None`: a new file's default).
pub(crate) fn atomic_replace_mode(
    dir: &Dir,
    name: &Path,
    contents: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!("{TMP_PREFIX}{}-{n}", std::process::id());
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

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
