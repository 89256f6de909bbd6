//! The read-before-write guard: the set of files this session has read or written.
//! Changing an existing file that is not in the set is refused.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Files (real absolute paths) the session has seen.
#[derive(Debug, Default)]
pub struct ReadGuard {
    seen: HashSet<PathBuf>,
}

impl ReadGuard {
    /// Records that the session read or wrote `path`.
    pub fn note(&mut self, path: PathBuf) {
        self.seen.insert(path);
    }

    /// Whether the session has read or written `path`.
    pub fn has_seen(&self, path: &Path) -> bool {
        self.seen.contains(path)
    }

    /// Forgets everything (a `/clear`).
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}
