//! A stand-in host for native unit tests of tool logic: the same contract as the real
//! host (roots, read guard, protected `.corral/` and `corral.toml`, trash), done with
//! std::fs on a test directory. It does not model symlink confinement; the host's own
//! tests and corral's end-to-end suite cover that.

use super::{FsError, FsErrorCode, Root, TrashInfo, Workspace, WriteInfo};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// An in-process workspace rooted at a real directory.
pub struct FakeWorkspace {
    root: PathBuf,
    read: RefCell<HashSet<PathBuf>>,
    /// Whether the read-before-write guard is on (it is by default).
    pub read_guard: bool,
    trashed: Cell<u32>,
}

impl FakeWorkspace {
    /// A workspace whose only root is `root` (made absolute).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        FakeWorkspace { root, read: RefCell::new(HashSet::new()), read_guard: true, trashed: Cell::new(0) }
    }

    /// Whether `path` has been noted as read or written.
    pub fn was_read(&self, path: &Path) -> bool {
        self.read.borrow().contains(&self.abs(path))
    }

    fn abs(&self, path: &Path) -> PathBuf {
        let p = if path.is_absolute() { path.to_path_buf() } else { self.root.join(path) };
        crate::paths::normalize(&p)
    }

    fn check(&self, path: &Path) -> Result<PathBuf, FsError> {
        let abs = self.abs(path);
        let rel = abs.strip_prefix(&self.root).map_err(|_| FsError {
            code: FsErrorCode::OutsideRoots,
            message: format!("'{}' is outside the workspace", path.display()),
        })?;
        let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().to_lowercase());
        if first.as_deref() == Some(".corral") || rel == Path::new("corral.toml") {
            return Err(FsError {
                code: FsErrorCode::Protected,
                message: format!("'{}' is one of corral's own files", rel.display()),
            });
        }
        Ok(abs)
    }

    fn guard(&self, abs: &Path) -> Result<bool, FsError> {
        let existed = abs.symlink_metadata().is_ok();
        if existed && self.read_guard && !self.read.borrow().contains(abs) {
            return Err(FsError {
                code: FsErrorCode::NotRead,
                message: format!("'{}' exists and has not been read in this session", abs.display()),
            });
        }
        Ok(existed)
    }

    fn rel(&self, abs: &Path) -> String {
        abs.strip_prefix(&self.root).unwrap_or(abs).to_string_lossy().into_owned()
    }
}

fn io(e: std::io::Error) -> FsError {
    FsError { code: FsErrorCode::Io, message: e.to_string() }
}

impl Workspace for FakeWorkspace {
    fn roots(&self) -> Vec<Root> {
        vec![Root { path: self.root.clone(), writable: true }]
    }

    fn note_read(&self, path: &Path) {
        self.read.borrow_mut().insert(self.abs(path));
    }

    fn write(&self, path: &Path, contents: &[u8]) -> Result<WriteInfo, FsError> {
        let abs = self.check(path)?;
        if abs.is_dir() {
            return Err(FsError {
                code: FsErrorCode::IsDirectory,
                message: format!("'{}' is a directory", self.rel(&abs)),
            });
        }
        let existed = self.guard(&abs)?;
        if let Some(parent) = abs.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&abs, contents).map_err(io)?;
        self.read.borrow_mut().insert(abs.clone());
        Ok(WriteInfo { path: self.rel(&abs), bytes: contents.len() as u64, existed })
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<WriteInfo, FsError> {
        let src = self.check(from)?;
        let dst = self.check(to)?;
        let meta = src.symlink_metadata().map_err(|_| FsError {
            code: FsErrorCode::NotFound,
            message: format!("'{}' does not exist", self.rel(&src)),
        })?;
        let existed = self.guard(&dst)?;
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::rename(&src, &dst).map_err(io)?;
        self.read.borrow_mut().insert(dst.clone());
        Ok(WriteInfo { path: self.rel(&dst), bytes: meta.len(), existed })
    }

    fn trash(&self, path: &Path) -> Result<TrashInfo, FsError> {
        let abs = self.check(path)?;
        let meta = abs.symlink_metadata().map_err(|_| FsError {
            code: FsErrorCode::NotFound,
            message: format!("'{}' does not exist", self.rel(&abs)),
        })?;
        if meta.is_dir() {
            return Err(FsError {
                code: FsErrorCode::IsDirectory,
                message: format!("'{}' is a directory", self.rel(&abs)),
            });
        }
        if !meta.file_type().is_symlink() {
            self.guard(&abs)?;
        }
        let n = self.trashed.get() + 1;
        self.trashed.set(n);
        let id = format!("fake{n:04}");
        let dir = self.root.join(".corral/trash").join(&id);
        std::fs::create_dir_all(&dir).map_err(io)?;
        let name = abs.file_name().map(|n| n.to_owned()).unwrap_or_default();
        std::fs::rename(&abs, dir.join(name)).map_err(io)?;
        Ok(TrashInfo { id: id.clone(), location: format!(".corral/trash/{id}") })
    }
}
