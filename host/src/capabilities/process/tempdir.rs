//! A command's private temp folder (`TMPDIR`; an MCP server started over stdio gets one too):
//! made fresh under the system's temp folder, removed when the command ends. A corral killed
//! outright (SIGKILL, the out-of-memory killer) cannot remove it; so each folder is locked
//! while its corral lives, and the first command of a later run removes the folders whose lock
//! nobody holds. The lock is the kernel's (`flock`), released when the holder dies, so a folder
//! of a live corral is never taken: not in another pid namespace, not after a pid is reused.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const PREFIX: &str = "corral-cmd-";

/// A left folder is removed only once it is this old: between its `mkdir` and its lock, a
/// folder being made is unlocked for an instant.
const LEFT_FOR: Duration = Duration::from_secs(60);

/// A command's temp folder, locked while it exists, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    /// `None` where the file system has no locks (`ENOLCK`, some network or FUSE mounts):
    /// there no sweeper can lock the folder either, so none removes it.
    _lock: Option<File>,
}

impl Scratch {
    /// A new private folder (0700) under the system's temp folder. Its name is random, not
    /// only the process id and a counter: a folder left by a killed corral whose id is reused,
    /// or one another user made ahead in a shared /tmp, is never taken (creation fails on an
    /// existing name and another name is tried). The first one a process makes also removes
    /// the folders killed runs left behind.
    pub fn create() -> io::Result<Scratch> {
        static SWEPT: Once = Once::new();
        let base = std::env::temp_dir();
        SWEPT.call_once(|| {
            sweep(&base, LEFT_FOR);
        });
        Scratch::create_in(&base)
    }

    fn create_in(base: &Path) -> io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut last = None;
        for _ in 0..16 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let mut salt = [0u8; 8];
            getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
            let salt: String = salt.iter().map(|b| format!("{b:02x}")).collect();
            let path = base.join(format!("{PREFIX}{}-{n}-{salt}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Scratch { _lock: lock(&path).ok(), path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free name for the temp folder")))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

#[allow(clippy::disallowed_methods)] // a command's private temp folder, outside every root
fn remove(path: &Path) {
    let _ = std::fs::remove_dir_all(path);
}

/// The folder at `path`, opened and locked (shared by no one), or why not.
#[allow(clippy::disallowed_methods)] // a command's private temp folder, outside every root
fn lock(path: &Path) -> io::Result<File> {
    let dir = File::open(path)?;
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    Ok(dir)
}

/// Whether `name` is one `create_in` makes: the prefix, a pid, a counter, 16 hex digits.
fn is_ours(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else { return false };
    let parts: Vec<&str> = rest.split('-').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(parts.as_slice(), [pid, n, salt]
        if digits(pid) && digits(n) && salt.len() == 16 && salt.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Removes the temp folders in `base` that a corral of this user left behind: named as ours,
/// a real folder (not a link), owned by this user, older than `age`, and locked by no one.
/// Returns how many were removed.
fn sweep(base: &Path, age: Duration) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else { return 0 };
    let me = rustix::process::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        if !entry.file_name().to_str().is_some_and(is_ours) {
            continue;
        }
        // The entry itself, not what a link names.
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta.modified().ok().and_then(|t| t.elapsed().ok()).is_some_and(|e| e >= age);
        if !meta.is_dir() || meta.uid() != me || !old {
            continue;
        }
        let path = entry.path();
        // Held until the folder is gone, so no other sweeper races this one.
        if let Ok(_held) = lock(&path) {
            remove(&path);
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn each_folder_is_new_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (Scratch::create().unwrap(), Scratch::create().unwrap());
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists());
    }

    fn age(path: &Path, by: Duration) {
        File::open(path).unwrap().set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn only_old_unlocked_folders_of_ours_are_swept() {
        let base = tempfile::tempdir().unwrap();
        let hour = Duration::from_secs(3600);
        // Left by a killed run: old, named as ours, locked by no one.
        let left = base.path().join("corral-cmd-4242-0-00112233445566aa");
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("partial.o"), "x").unwrap();
        age(&left, hour);
        // A live one (made by this process, which holds its lock), just as old.
        let live = Scratch::create_in(base.path()).unwrap();
        age(live.path(), hour);
        // One whose holder is another corral: locked through a handle of its own.
        let held = base.path().join("corral-cmd-4244-0-00112233445566ee");
        std::fs::create_dir(&held).unwrap();
        age(&held, hour);
        let holder = lock(&held).unwrap();
        // One being made (too young to be judged), and names that are not ours.
        let young = base.path().join("corral-cmd-4243-0-00112233445566bb");
        std::fs::create_dir(&young).unwrap();
        let others = ["corral-cmd-1-2", "corral-cmd-x-0-00112233445566cc", "corral-cron-1", "other"];
        for o in others {
            std::fs::create_dir(base.path().join(o)).unwrap();
            age(&base.path().join(o), hour);
        }
        // A link named as ours is never followed.
        let target = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(target.path(), base.path().join("corral-cmd-7-0-00112233445566dd"))
            .unwrap();

        assert_eq!(sweep(base.path(), Duration::from_secs(60)), 1);
        assert!(!left.exists());
        assert!(live.path().is_dir() && held.is_dir() && young.is_dir() && target.path().is_dir());
        for o in others {
            assert!(base.path().join(o).is_dir(), "{o}");
        }
        // Its holder gone (the kernel releases a dead process's locks), it is swept too.
        drop(holder);
        assert_eq!(sweep(base.path(), Duration::from_secs(60)), 1);
        assert!(!held.exists() && live.path().is_dir());
    }
}
