//! Lexical path normalisation: `.` removed and `..` resolved without touching the file
//! system, as the host does before confining a path and the guest SDK before showing one.

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

#[cfg(test)]
mod tests {
    use super::*;

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
