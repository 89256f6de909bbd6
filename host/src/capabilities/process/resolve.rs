//! Finding programs: a name is looked up on the PATH corral started with (absolute entries
//! only), and a program that lives inside a root is refused, since tools can rewrite it.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Whether `p` is a regular file someone may execute.
fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in the absolute directories of `path_var`.
pub fn search(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let dirs = std::env::split_paths(path_var?);
    dirs.filter(|d| d.is_absolute()).map(|d| d.join(name)).find(|p| executable(p))
}

/// Why a program cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// Not found (or not executable).
    Missing(String),
    /// Inside one of the roots.
    InsideRoot { shown: PathBuf, root: PathBuf },
    /// A relative path such as `./x` or `bin/x`.
    Relative,
}

/// Resolves `program`, a bare name (looked up on `path_var`) or an absolute path, to the
/// path to execute, refusing programs whose real location is inside one of `roots`.
pub fn program(program: &str, path_var: Option<&OsStr>, roots: &[PathBuf]) -> Result<PathBuf, Unusable> {
    if program.is_empty() || program.contains('\0') {
        return Err(Unusable::Missing(program.to_string()));
    }
    let found = if program.starts_with('/') {
        let p = PathBuf::from(program);
        if !executable(&p) {
            return Err(Unusable::Missing(program.to_string()));
        }
        p
    } else if program.contains('/') {
        return Err(Unusable::Relative);
    } else {
        search(program, path_var).ok_or_else(|| Unusable::Missing(program.to_string()))?
    };
    // Both the path as found and its real target must be outside every root.
    let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    for candidate in [&found, &real] {
        if let Some(root) = roots.iter().find(|r| candidate.starts_with(r)) {
            return Err(Unusable::InsideRoot { shown: candidate.clone(), root: root.clone() });
        }
    }
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn make_exe(p: &Path) {
        std::fs::write(p, "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn names_are_found_on_absolute_path_entries_only() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        make_exe(&bin.join("tool"));
        std::fs::write(bin.join("plain"), "not executable").unwrap();
        let path = OsString::from(format!("relative:{}", bin.display()));
        assert_eq!(search("tool", Some(&path)), Some(bin.join("tool")));
        assert_eq!(search("plain", Some(&path)), None);
        assert_eq!(search("tool", Some(OsStr::new("relative"))), None);
        assert_eq!(program("tool", Some(&path), &[]), Ok(bin.join("tool")));
        assert_eq!(program("nope", Some(&path), &[]), Err(Unusable::Missing("nope".into())));
        assert_eq!(program("./tool", Some(&path), &[]), Err(Unusable::Relative));
        let abs = bin.join("tool").display().to_string();
        assert_eq!(program(&abs, None, &[]), Ok(bin.join("tool")));
    }

    #[test]
    fn programs_inside_a_root_or_linked_from_one_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let (ws, bin) = (base.join("ws"), base.join("bin"));
        std::fs::create_dir_all(ws.join("scripts")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        make_exe(&ws.join("scripts/build"));
        std::os::unix::fs::symlink(ws.join("scripts/build"), bin.join("build")).unwrap();
        let path = OsString::from(format!("{}:{}", ws.join("scripts").display(), bin.display()));
        let roots = vec![ws.clone()];
        match program("build", Some(&path), &roots) {
            Err(Unusable::InsideRoot { shown, root }) => {
                assert_eq!(shown, ws.join("scripts/build"));
                assert_eq!(root, ws);
            }
            other => panic!("{other:?}"),
        }
        let linked = OsString::from(bin.display().to_string());
        assert!(matches!(program("build", Some(&linked), &roots), Err(Unusable::InsideRoot { .. })));
    }
}
