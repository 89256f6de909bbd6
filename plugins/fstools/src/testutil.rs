//! Fixtures shared by the tools' unit tests.

use corral_plugin_sdk::host::fake::FakeWorkspace;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A temporary directory and a fake workspace rooted at it.
pub fn setup() -> (tempfile::TempDir, FakeWorkspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = FakeWorkspace::new(dir.path());
    (dir, ws)
}

/// Writes `rel` (creating parents) with `content` and a modification time `age` seconds ago.
pub fn put(root: &Path, rel: &str, content: &str, age: u64) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, content).unwrap();
    let t = SystemTime::now() - Duration::from_secs(age);
    fs::File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
}
