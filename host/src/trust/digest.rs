//! The digest of what a workspace asks to be trusted with: `corral.toml` and the plugins and
//! skills under `.corral/`. Any change to them changes the digest, and trust is asked again.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The project files and folders the digest covers, relative to the workspace.
pub const COVERED: &[&str] = &["corral.toml", ".corral/plugins", ".corral/skills", ".claude/skills"];

/// Entries read at most; past that the digest says so and stays stable only while the tree does.
const MAX_ENTRIES: usize = 5000;

/// Hex SHA-256 over every covered entry: its path, kind, size and contents (links by their
/// target, never followed).
pub fn project_digest(workspace: &Path) -> String {
    let mut h = Sha256::new();
    let mut seen = 0usize;
    for rel in COVERED {
        walk(workspace, Path::new(rel), &mut h, &mut seen);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn walk(ws: &Path, rel: &Path, h: &mut Sha256, seen: &mut usize) {
    *seen += 1;
    if *seen > MAX_ENTRIES {
        if *seen == MAX_ENTRIES + 1 {
            h.update(b"\0too-many-entries\0");
        }
        return;
    }
    let path = ws.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else { return };
    h.update(rel.as_os_str().as_bytes());
    let ft = meta.file_type();
    if ft.is_symlink() {
        h.update(b"\0link\0");
        if let Ok(t) = std::fs::read_link(&path) {
            h.update(t.as_os_str().as_bytes());
        }
    } else if ft.is_dir() {
        h.update(b"\0dir\0");
        let Ok(rd) = std::fs::read_dir(&path) else { return };
        let mut names: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
        names.sort();
        for n in names {
            walk(ws, &rel.join(n), h, seen);
        }
    } else if ft.is_file() {
        h.update(b"\0file\0");
        h.update(meta.len().to_le_bytes());
        h.update(file_sha(&path));
    } else {
        h.update(b"\0special\0");
    }
    h.update(b"\n");
}

fn file_sha(path: &Path) -> [u8; 32] {
    use std::os::unix::fs::OpenOptionsExt;
    let mut h = Sha256::new();
    // Non-blocking and not through a link, so a FIFO or link swapped in never stalls or strays.
    let opened =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(path);
    if let Ok(f) = opened {
        let mut buf = vec![0u8; 64 * 1024];
        let mut f = f.take(1 << 30);
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_covered_change_changes_the_digest() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        let d0 = project_digest(ws);
        std::fs::write(ws.join("corral.toml"), "[agent]\nmax_turns = 3\n").unwrap();
        let d1 = project_digest(ws);
        assert_ne!(d0, d1);
        std::fs::create_dir_all(ws.join(".corral/plugins")).unwrap();
        std::fs::write(ws.join(".corral/plugins/p.wasm"), "a").unwrap();
        let d2 = project_digest(ws);
        assert_ne!(d1, d2);
        std::fs::write(ws.join(".corral/plugins/p.wasm"), "b").unwrap();
        let d3 = project_digest(ws);
        assert_ne!(d2, d3);
        std::fs::create_dir_all(ws.join(".corral/skills/s")).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join(".corral/skills/s/link")).unwrap();
        let d4 = project_digest(ws);
        assert_ne!(d3, d4);
        // Local state and the rest of the tree are not covered.
        std::fs::write(ws.join(".corral/HISTORY.md"), "x").unwrap();
        std::fs::write(ws.join("main.rs"), "x").unwrap();
        assert_eq!(project_digest(ws), d4);
    }
}
