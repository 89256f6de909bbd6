//! What a skill is, as one SHA-256, so a policy file can pin it: a component skill is its
//! component file's digest; a `SKILL.md` folder is the digest of a listing of everything in
//! it, sorted by path: each file's path, size and SHA-256, each link's path and target.
//! Renaming, adding, removing or changing any file changes the digest; the order in which
//! files were created does not.

use crate::runtime::registry::{hex, sha256_hex};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Folders with more entries than this are not digested (a skill is a handful of files).
pub const MAX_ENTRIES: usize = 2_000;

/// The digest of the folder `dir`. Errors name what could not be read.
pub fn folder(dir: &Path) -> Result<String, String> {
    let mut lines = Vec::new();
    walk(dir, "", &mut lines)?;
    lines.sort();
    let mut h = Sha256::new();
    for l in &lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    Ok(hex(&h.finalize()))
}

fn walk(dir: &Path, prefix: &str, lines: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        if lines.len() >= MAX_ENTRIES {
            return Err(format!("it has more than {MAX_ENTRIES} entries"));
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
        if kind.is_symlink() {
            let target =
                std::fs::read_link(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            lines.push(format!("link\0{rel}\0{}", target.display()));
        } else if kind.is_dir() {
            lines.push(format!("dir\0{rel}"));
            walk(&path, &rel, lines)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            lines.push(format!("file\0{rel}\0{}\0{}", bytes.len(), sha256_hex(&bytes)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, files: &[(&str, &str)]) {
        for (p, text) in files {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    #[test]
    fn the_digest_follows_content_and_names_not_creation_order() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        skill(a.path(), &[("SKILL.md", "---\nname: x\n---\n"), ("scripts/run.sh", "echo hi\n")]);
        skill(b.path(), &[("scripts/run.sh", "echo hi\n"), ("SKILL.md", "---\nname: x\n---\n")]);
        let d = folder(a.path()).unwrap();
        assert_eq!(d.len(), 64);
        assert_eq!(d, folder(b.path()).unwrap());
        // One byte changed.
        std::fs::write(b.path().join("scripts/run.sh"), "echo ho\n").unwrap();
        assert_ne!(d, folder(b.path()).unwrap());
        // Same bytes under another name.
        std::fs::write(b.path().join("scripts/run.sh"), "echo hi\n").unwrap();
        assert_eq!(d, folder(b.path()).unwrap());
        std::fs::rename(b.path().join("scripts/run.sh"), b.path().join("scripts/go.sh")).unwrap();
        assert_ne!(d, folder(b.path()).unwrap());
        // An added empty folder or file.
        std::fs::rename(b.path().join("scripts/go.sh"), b.path().join("scripts/run.sh")).unwrap();
        std::fs::create_dir(b.path().join("empty")).unwrap();
        assert_ne!(d, folder(b.path()).unwrap());
        std::fs::remove_dir(b.path().join("empty")).unwrap();
        std::fs::write(b.path().join("notes.txt"), "").unwrap();
        assert_ne!(d, folder(b.path()).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn links_count_by_target_and_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        skill(dir.path(), &[("SKILL.md", "s")]);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("p")).unwrap();
        let with_link = folder(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("p")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("p")).unwrap();
        assert_ne!(with_link, folder(dir.path()).unwrap());
    }

    #[test]
    fn an_unreadable_folder_is_an_error() {
        let e = folder(Path::new("/nonexistent/skill")).unwrap_err();
        assert!(e.contains("cannot list /nonexistent/skill"), "{e}");
    }
}
