//! One workspace's local state, kept outside it in corral's state directory
//! (`<state>/workspaces/<key>/`): command approvals, the continue note, the answer history,
//! the todo mirror, the trash index, the undo checkpoints and saved sessions. Only corral writes there, so a repository can never
//! ship any of it.

use super::atomic::{Durability, atomic_replace, atomic_replace_as};
use super::hostread::read_regular;
use cap_fs_ext::DirExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The largest state file read back.
const MAX_READ: u64 = 8 << 20;

/// The state folder of one workspace, or none (no home and no state directory: nothing is
/// kept between runs).
#[derive(Debug, Default)]
pub struct Local {
    dir: Option<(Dir, PathBuf)>,
}

impl Local {
    /// Opens (creating it, private to this user) the folder at `path`, and records which
    /// workspace it belongs to.
    pub fn open(path: &Path, workspace: &Path) -> io::Result<Local> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)?;
        let dir = Dir::open_ambient_dir(path, ambient_authority())?;
        let local = Local { dir: Some((dir, path.to_path_buf())) };
        let owner = format!("{}\n", workspace.display());
        if local.read("workspace")?.as_deref() != Some(owner.as_str()) {
            // Not flushed: it is checked at every open and written again when it differs, so
            // a power cut that loses it costs nothing, while a flush here would be a disk
            // flush before the first request of every new workspace (0.5-2 ms, more while
            // the disk is busy writing back).
            let dir = local.dir()?;
            atomic_replace_as(dir, Path::new("workspace"), owner.as_bytes(), false, Durability::Unsynced)?;
        }
        Ok(local)
    }

    /// Where the state is kept, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.dir.as_ref().map(|(_, p)| p.as_path())
    }

    fn dir(&self) -> io::Result<&Dir> {
        self.dir.as_ref().map(|(d, _)| d).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "corral has no state directory (set HOME or CORRAL_STATE_DIR)",
            )
        })
    }

    /// The contents of `name`, or `None` when it does not exist (or nothing is kept).
    pub fn read(&self, name: &str) -> io::Result<Option<String>> {
        let Some((dir, _)) = &self.dir else { return Ok(None) };
        match read_regular(dir, Path::new(name), MAX_READ)? {
            Some(c) => Ok(Some(String::from_utf8_lossy(&c.bytes).into_owned())),
            None => Ok(None),
        }
    }

    /// Atomically replaces `name` with `contents`.
    pub fn write(&self, name: &str, contents: &[u8]) -> io::Result<()> {
        let dir = self.dir()?;
        let existed = dir.symlink_metadata(name).is_ok();
        atomic_replace(dir, Path::new(name), contents, existed)
    }

    /// Appends `line` to `name`, creating it.
    pub fn append(&self, name: &str, line: &[u8]) -> io::Result<()> {
        let mut f = self.dir()?.open_with(name, OpenOptions::new().append(true).create(true))?;
        f.write_all(line)
    }

    /// Removes `name`; a missing file is not an error.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        let Some((dir, _)) = &self.dir else { return Ok(()) };
        match dir.remove_file(name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// The sub-folder `name` (created private to this user when missing), for state kept as
    /// many files (saved sessions); an error when nothing is kept.
    pub fn folder(&self, name: &str) -> io::Result<Dir> {
        self.dir()?;
        self.subdir(name)?.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "corral keeps no state"))
    }

    /// Seconds since `name` last changed, if it exists.
    pub fn age_secs(&self, name: &str) -> Option<u64> {
        let (dir, _) = self.dir.as_ref()?;
        let modified = dir.metadata(name).ok()?.modified().ok()?.into_std();
        std::time::SystemTime::now().duration_since(modified).ok().map(|d| d.as_secs())
    }

    /// The folder `name` inside the state, created (private) when missing; `None` when
    /// nothing is kept. A link planted under the name is refused, not followed.
    pub fn subdir(&self, name: &str) -> io::Result<Option<Dir>> {
        let Some((dir, _)) = &self.dir else { return Ok(None) };
        match dir.symlink_metadata(name) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a folder; remove it", self.shown(name)),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                use cap_std::fs::{DirBuilder, DirBuilderExt};
                let mut private = DirBuilder::new();
                private.mode(0o700);
                dir.create_dir_with(name, &private)?
            }
            Err(e) => return Err(e),
        }
        dir.open_dir_nofollow(name).map(Some)
    }

    /// The absolute path of `name`, for messages.
    pub fn shown(&self, name: &str) -> String {
        match self.path() {
            Some(p) => p.join(name).display().to_string(),
            None => format!("(not kept) {name}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    #[test]
    fn round_trip_private_folder_and_no_state_dir() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("state/ws1");
        let synced = crate::capabilities::atomic::syncs_on_this_thread;
        let before = synced();
        let l = Local::open(&p, Path::new("/w")).unwrap();
        assert_eq!(synced(), before, "the owner file is not flushed");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_to_string(p.join("workspace")).unwrap(), "/w\n");
        // Another workspace's (or a damaged) owner file is written again.
        std::fs::write(p.join("workspace"), "").unwrap();
        Local::open(&p, Path::new("/w")).unwrap();
        assert_eq!(std::fs::read_to_string(p.join("workspace")).unwrap(), "/w\n");
        assert_eq!(l.read("x").unwrap(), None);
        l.write("x", b"one").unwrap();
        l.append("y", b"a\n").unwrap();
        l.append("y", b"b\n").unwrap();
        assert_eq!(l.read("x").unwrap().as_deref(), Some("one"));
        assert_eq!(l.read("y").unwrap().as_deref(), Some("a\nb\n"));
        l.remove("x").unwrap();
        l.remove("x").unwrap();
        assert_eq!(l.read("x").unwrap(), None);
        let none = Local::default();
        assert_eq!(none.read("x").unwrap(), None);
        assert!(none.write("x", b"1").unwrap_err().to_string().contains("no state directory"));
    }
}
