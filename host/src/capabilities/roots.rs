//! The directories a session may touch: the workspace root and any extra roots, each held
//! as a cap-std `Dir`, and the rules that map a path a plugin sends to one of them.

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::WsError;

/// Longest path the host accepts from a plugin, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// One granted directory.
#[derive(Debug)]
pub struct Root {
    /// Real absolute path (symlinks resolved); also the guest path of its preopen.
    pub path: PathBuf,
    /// The directory handle every host-side access goes through.
    pub dir: Dir,
    /// Whether plugins may change files under it.
    pub writable: bool,
}

/// A path inside a root, as the host will act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Index into [`Roots::all`].
    pub root: usize,
    /// Path relative to the root, normalised, with every existing directory component
    /// resolved through symlinks (the last component is resolved only when asked).
    pub rel: PathBuf,
}

/// The workspace root (first) and extra roots.
#[derive(Debug)]
pub struct Roots {
    roots: Vec<Root>,
    /// Absolute paths no plugin may change (corral's own state and settings).
    protected: Vec<PathBuf>,
}

/// Finds the workspace root for `start`: the nearest ancestor holding `.git` or
/// `corral.toml`, else `start` itself.
pub fn find_workspace_root(start: &Path) -> PathBuf {
    for dir in start.ancestors() {
        if dir.join(".git").exists() || dir.join("corral.toml").exists() {
            return dir.to_path_buf();
        }
    }
    start.to_path_buf()
}

impl Roots {
    /// Opens the workspace and the extra roots. Paths are resolved to their real absolute
    /// form. `protected` lists extra absolute paths to refuse as write targets (the user's
    /// config and cache directories); the workspace's `.corral/` and `corral.toml` always are.
    pub fn open(workspace: &Path, extra: &[(PathBuf, bool)], protected: &[PathBuf]) -> io::Result<Roots> {
        let mut roots = Vec::with_capacity(1 + extra.len());
        for (path, writable) in std::iter::once(&(workspace.to_path_buf(), true)).chain(extra) {
            let real = std::fs::canonicalize(path)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot open root {}: {e}", path.display())))?;
            if real.parent().is_none() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "root {} is the whole file system: corral confines tools to the folders you name, and a \
                         root of / would give them every file on the machine; name the folders the task needs \
                         instead (--workspace, --add-dir, --add-dir-ro)",
                        path.display()
                    ),
                ));
            }
            if !real.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("root {} is not a directory", path.display()),
                ));
            }
            let dir = Dir::open_ambient_dir(&real, ambient_authority())?;
            roots.push(Root { path: real, dir, writable: *writable });
        }
        let ws = roots[0].path.clone();
        let mut prot = vec![ws.join(".corral"), ws.join("corral.toml")];
        prot.extend(protected.iter().filter_map(|p| std::fs::canonicalize(p).ok()));
        Ok(Roots { roots, protected: prot })
    }

    /// All roots, workspace first.
    pub fn all(&self) -> &[Root] {
        &self.roots
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Root {
        &self.roots[0]
    }

    /// The absolute form of a located path.
    pub fn absolute(&self, loc: &Located) -> PathBuf {
        self.roots[loc.root].path.join(&loc.rel)
    }

    /// The path as shown to plugins and users: relative to the workspace root when inside it.
    pub fn display(&self, loc: &Located) -> String {
        let abs = self.absolute(loc);
        match abs.strip_prefix(&self.roots[0].path) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => abs.to_string_lossy().into_owned(),
        }
    }

    /// Maps `input` to a root and a lexically normalised relative path. Relative inputs
    /// start at the workspace root. Nothing is resolved on disk yet.
    pub fn locate_lexically(&self, input: &str) -> Result<Located, WsError> {
        if input.is_empty() {
            return Err(WsError::invalid_path(input, "the path is empty"));
        }
        if input.contains('\0') {
            return Err(WsError::invalid_path(input, "the path contains a NUL byte"));
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(WsError::invalid_path(input, "the path is longer than 4096 bytes"));
        }
        let path = Path::new(input);
        let (root, rest) = if path.is_absolute() {
            let normal = normalize_absolute(path);
            let (idx, root) = self
                .roots
                .iter()
                .enumerate()
                .filter(|(_, r)| normal.starts_with(&r.path))
                .max_by_key(|(_, r)| r.path.as_os_str().len())
                .ok_or_else(|| WsError::outside(input))?;
            let rest = normal.strip_prefix(&root.path).map(Path::to_path_buf).unwrap_or_default();
            (idx, rest)
        } else {
            (0, normalize_relative(path).ok_or_else(|| WsError::outside(input))?)
        };
        Ok(Located { root, rel: rest })
    }

    /// Locates `input` and resolves every existing directory on the way through symlinks,
    /// refusing any that leads out of its root. With `follow_last`, a final component that
    /// is a symlink is resolved too (writes go to the link's target); without it the link
    /// itself is the subject (moves and trash move links, not targets).
    pub fn resolve(&self, input: &str, follow_last: bool) -> Result<Located, WsError> {
        let lex = self.locate_lexically(input)?;
        let dir = &self.roots[lex.root].dir;
        let Some(name) = lex.rel.file_name().map(|n| n.to_os_string()) else {
            // The root itself.
            return Ok(lex);
        };
        let parent = lex.rel.parent().unwrap_or(Path::new(""));
        let mut rel = canonical_prefix(dir, parent).map_err(|e| WsError::from_io(input, &e))?;
        rel.push(&name);
        if follow_last && dir.symlink_metadata(&rel).is_ok_and(|m| m.file_type().is_symlink()) {
            rel = match dir.canonicalize(&rel) {
                Ok(target) => target,
                // A dangling link inside the root: write where it points, if that
                // stays inside; otherwise refuse.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    dangling_target(dir, &rel).map_err(|e| WsError::from_io(input, &e))?
                }
                Err(e) => return Err(WsError::from_io(input, &e)),
            };
        }
        Ok(Located { root: lex.root, rel })
    }

    /// [`Roots::resolve`] for a path about to be changed: also its display form, and the
    /// refusal of read-only roots and corral's own files.
    pub fn resolve_writable(&self, input: &str, follow_last: bool) -> Result<(Located, String), WsError> {
        let loc = self.resolve(input, follow_last)?;
        let shown = self.display(&loc);
        self.check_writable(&loc, &shown)?;
        Ok((loc, shown))
    }

    /// Refuses a change to `loc` when its root is read-only or it is one of corral's own files.
    pub fn check_writable(&self, loc: &Located, shown: &str) -> Result<(), WsError> {
        let root = &self.roots[loc.root];
        if !root.writable {
            return Err(WsError::protected(format!(
                "'{shown}' is in a read-only root ({}); it cannot be changed",
                root.path.display()
            )));
        }
        let abs = self.absolute(loc);
        if loc.rel.as_os_str().is_empty() {
            return Err(WsError::protected(format!("'{shown}' is a root directory; it cannot be changed")));
        }
        if self.protected.iter().any(|p| starts_with_ignore_case(&abs, p) || starts_with_ignore_case(p, &abs))
        {
            return Err(WsError::protected(format!(
                "'{shown}' is one of corral's own files (settings or state under .corral/); tools may not change it"
            )));
        }
        Ok(())
    }
}

/// Resolves the directories of `rel` that exist through symlinks; components that do not
/// exist yet are appended as written (they will be created as plain directories).
fn canonical_prefix(dir: &Dir, rel: &Path) -> io::Result<PathBuf> {
    if rel.as_os_str().is_empty() {
        return Ok(PathBuf::new());
    }
    match dir.canonicalize(rel) {
        Ok(c) => Ok(c),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Find the deepest existing ancestor, then append the missing tail.
            let mut existing = rel.to_path_buf();
            let mut tail = Vec::new();
            while let Some(name) = existing.file_name().map(|n| n.to_os_string()) {
                tail.push(name);
                existing.pop();
                if existing.as_os_str().is_empty() || dir.symlink_metadata(&existing).is_ok() {
                    break;
                }
            }
            // A dangling symlink in the middle of the path cannot be created through.
            if let Some(first_missing) = tail.last() {
                let probe = existing.join(first_missing);
                if dir.symlink_metadata(&probe).is_ok() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        "a path component is a dangling symlink",
                    ));
                }
            }
            let mut out =
                if existing.as_os_str().is_empty() { PathBuf::new() } else { dir.canonicalize(&existing)? };
            for name in tail.into_iter().rev() {
                out.push(name);
            }
            Ok(out)
        }
        Err(e) => Err(e),
    }
}

/// Where a dangling symlink at `rel` points, if that stays inside the root.
fn dangling_target(dir: &Dir, rel: &Path) -> io::Result<PathBuf> {
    let target = dir.read_link_contents(rel)?;
    if target.is_absolute() {
        return Err(escape());
    }
    let base = rel.parent().unwrap_or(Path::new(""));
    let joined = base.join(target);
    let normal = normalize_relative(&joined).ok_or_else(escape)?;
    let parent = normal.parent().unwrap_or(Path::new(""));
    let mut out = canonical_prefix(dir, parent)?;
    if let Some(name) = normal.file_name() {
        out.push(name);
    }
    Ok(out)
}

/// The error cap-std itself gives for an escape attempt, for paths refused before it is asked.
fn escape() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "a path led outside of the root")
}

/// Removes `.` and `..` from an absolute path lexically.
fn normalize_absolute(path: &Path) -> PathBuf {
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

/// Removes `.` and `..` from a relative path lexically; `None` if `..` climbs above it.
fn normalize_relative(path: &Path) -> Option<PathBuf> {
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

/// `path` starts with `prefix`, comparing components without regard to ASCII case (so a
/// case-insensitive file system cannot be used to reach `.Corral/`).
fn starts_with_ignore_case(path: &Path, prefix: &Path) -> bool {
    let mut p = path.components();
    for want in prefix.components() {
        match p.next() {
            Some(got) if got.as_os_str().eq_ignore_ascii_case(want.as_os_str()) => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(tmp: &Path) -> Roots {
        std::fs::create_dir_all(tmp.join("ws/sub")).unwrap();
        std::fs::create_dir_all(tmp.join("extra")).unwrap();
        std::fs::create_dir_all(tmp.join("outside")).unwrap();
        Roots::open(&tmp.join("ws"), &[(tmp.join("extra"), false)], &[]).unwrap()
    }

    #[test]
    fn the_file_system_root_is_refused_as_a_root() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("ws")).unwrap();
        for extra in [PathBuf::from("/"), t.path().join("ws/../../../../../../../..")] {
            let Err(e) = Roots::open(&t.path().join("ws"), &[(extra, true)], &[]) else {
                panic!("/ was accepted as a root")
            };
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            assert!(e.to_string().contains("is the whole file system"), "{e}");
        }
        assert!(Roots::open(Path::new("/"), &[], &[]).is_err(), "nor as the workspace");
    }

    #[test]
    fn relative_paths_land_in_the_workspace() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        let loc = r.resolve("sub/new/file.txt", true).unwrap();
        assert_eq!(loc, Located { root: 0, rel: PathBuf::from("sub/new/file.txt") });
    }

    #[test]
    fn dotdot_escapes_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        for p in ["../outside/x", "sub/../../outside/x", "/etc/passwd"] {
            let e = r.resolve(p, true).unwrap_err();
            assert_eq!(e.code, super::super::ErrorCode::OutsideRoots, "{p}: {e:?}");
        }
        let abs = format!("{}/../outside/x", r.workspace().path.display());
        assert!(r.resolve(&abs, true).is_err());
    }

    #[test]
    fn symlinked_directory_out_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        std::os::unix::fs::symlink(t.path().join("outside"), t.path().join("ws/out")).unwrap();
        let e = r.resolve("out/x", true).unwrap_err();
        assert_eq!(e.code, super::super::ErrorCode::OutsideRoots, "{e:?}");
    }

    #[test]
    fn absolute_path_in_extra_root_picks_it() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        let p = format!("{}/a.txt", r.all()[1].path.display());
        let loc = r.resolve(&p, true).unwrap();
        assert_eq!(loc.root, 1);
        assert!(r.check_writable(&loc, &p).is_err(), "extra root is read-only");
    }

    #[test]
    fn own_files_are_protected_in_any_case() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        for p in [".corral/x", ".CORRAL/trash/a", "corral.toml", "Corral.TOML", "."] {
            let loc = r.resolve(p, true).unwrap();
            assert!(r.check_writable(&loc, p).is_err(), "{p}");
        }
        let ok = r.resolve("sub/corral.toml", true).unwrap();
        assert!(r.check_writable(&ok, "sub/corral.toml").is_ok());
    }

    #[test]
    fn symlink_into_own_state_is_protected() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        std::fs::create_dir_all(t.path().join("ws/.corral")).unwrap();
        std::os::unix::fs::symlink(".corral", t.path().join("ws/state")).unwrap();
        let loc = r.resolve("state/x", true).unwrap();
        assert!(r.check_writable(&loc, "state/x").is_err());
    }

    #[test]
    fn workspace_root_detection() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("p/.git")).unwrap();
        std::fs::create_dir_all(t.path().join("p/a/b")).unwrap();
        assert_eq!(find_workspace_root(&t.path().join("p/a/b")), t.path().join("p"));
    }
}
