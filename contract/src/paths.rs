//! Lexical path normalisation: `.` removed and `..` resolved without touching the file
//! system, as the host does before confining a path and the guest SDK before showing one; and
//! how a file name that is not UTF-8 is written, by the host's listings and the guest's alike.

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically. `..` above `/` stays at `/`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Removes `.` and `..` from a relative path lexically; `None` if `..` climbs above it or the
/// path is absolute.
pub fn normalize_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// A file name as people see it: valid UTF-8 as it is, every other byte as `\xNN`.
pub fn escape_name(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_utf8_are_escaped_byte_by_byte() {
        assert_eq!(escape_name(b"caf\xe9-\xff.txt"), "caf\\xe9-\\xff.txt");
        assert_eq!(escape_name("ok-é.rs".as_bytes()), "ok-é.rs");
    }

    #[test]
    fn dots_are_resolved_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/../..")), Path::new("/"));
        assert_eq!(normalize(Path::new("a/../../b")), Path::new("b"));
        assert_eq!(normalize_relative(Path::new("a/./b/../c")), Some(PathBuf::from("a/c")));
        assert_eq!(normalize_relative(Path::new("a/../..")), None);
        assert_eq!(normalize_relative(Path::new("/a")), None);
        assert_eq!(normalize_relative(Path::new(".")), Some(PathBuf::new()));
    }
}
