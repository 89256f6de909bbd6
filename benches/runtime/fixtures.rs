//! What the benchmarks work on: a 1 MB text file, the test plugin, and a large source tree.

use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Size of the generated text file.
pub const BIG_FILE_BYTES: usize = 1 << 20;
/// Name of the generated text file inside a workspace.
pub const BIG_FILE: &str = "big.txt";

/// Writes `big.txt` into `dir`: numbered lines of about 80 characters, 1 MiB in all.
pub fn write_big_file(dir: &Path) -> Result<()> {
    let mut text = String::with_capacity(BIG_FILE_BYTES + 100);
    let mut n = 0u32;
    while text.len() < BIG_FILE_BYTES {
        n += 1;
        let _ = writeln!(
            text,
            "{n:06} the quick brown fox jumps over the lazy dog, lorem ipsum dolor sit amet {:04}",
            n % 7919
        );
    }
    let path = dir.join(BIG_FILE);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The `faulty` test plugin component, built (with the other test plugins) by the test
/// support on first use.
pub fn faulty_plugin() -> Result<PathBuf> {
    let path = crate::support::test_plugin("faulty");
    if !path.is_file() {
        bail!("building tests/plugins did not produce {}", path.display());
    }
    Ok(path)
}

/// A directory tree to search, with its size.
pub struct Tree {
    pub root: PathBuf,
    pub files: u64,
    pub bytes: u64,
    pub origin: String,
    _tmp: tempfile::TempDir,
}

/// The tree for the grep comparison: a copy of the crate sources in the local cargo
/// registry without the `windows_*` crates, which hold only prebuilt import libraries
/// (~100 MB of binaries, not source). The copy lives in a temporary directory, outside any
/// git repository.
pub fn grep_tree() -> Result<Tree> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let registry = cargo_home.join("registry/src");
    let source = largest_subdir(&registry).with_context(|| {
        format!("no crate sources under {} (run any cargo build first)", registry.display())
    })?;
    let tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
    let root = tmp.path().join("tree");
    let (mut files, mut bytes) = (0, 0);
    for entry in read_dir(&source)? {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("windows_") {
            continue;
        }
        copy_tree(&entry.path(), &root.join(&name), &mut files, &mut bytes)?;
    }
    let origin = format!("copy of {} without windows_* crates", source.display());
    Ok(Tree { root, files, bytes, origin, _tmp: tmp })
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    entries.collect::<std::io::Result<_>>().with_context(|| format!("cannot list {}", dir.display()))
}

/// The subdirectory of `dir` with the most entries (a registry usually has one).
fn largest_subdir(dir: &Path) -> Option<PathBuf> {
    let subdirs =
        std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir());
    subdirs.max_by_key(|p| std::fs::read_dir(p).map_or(0, |r| r.count()))
}

/// Copies regular files and directories (not symlinks), counting files and bytes.
fn copy_tree(from: &Path, to: &Path, files: &mut u64, bytes: &mut u64) -> Result<()> {
    let kind = std::fs::symlink_metadata(from).with_context(|| format!("cannot stat {}", from.display()))?;
    if kind.is_file() {
        *bytes += std::fs::copy(from, to).with_context(|| format!("cannot copy {}", from.display()))?;
        *files += 1;
    } else if kind.is_dir() {
        std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
        for entry in read_dir(from)? {
            copy_tree(&entry.path(), &to.join(entry.file_name()), files, bytes)?;
        }
    }
    Ok(())
}
