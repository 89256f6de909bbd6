//! The directories a session may touch: the workspace root and any extra roots, each held
//! as a cap-std `Dir`, and the rules that map a path a plugin sends to one of them.

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::WsError;
// Lexical `.` and `..` removal is shared with the guest SDK (contract/).
use corral_contract::paths::{normalize as normalize_absolute, normalize_relative};

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
    /// Absolute paths no plugin may change (corral's user settings, cache and state), each
    /// as given and as resolved through its existing ancestors, whether it exists or not.
    protected: Vec<PathBuf>,
    /// Whether `.git` (at any depth, in any root) is refused to writers: hooks and git config
    /// run code at the person's next git command.
    protect_git: bool,
}

/// Names refused as a path component of any change, at any depth, in every root.
const PROTECTED_NAMES: &[&str] = &[".corral", "corral.toml"];

/// Finds the workspace root for `start`: the nearest ancestor holding `.git` or a
/// `corral.toml` of this user's (or root's), else `start` itself. A `corral.toml` another
/// user owns (say in a shared `/tmp`) marks nothing.
pub fn find_workspace_root(start: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let me = unsafe { libc::geteuid() };
    let own_settings = |dir: &Path| {
        std::fs::symlink_metadata(dir.join("corral.toml")).is_ok_and(|m| m.uid() == me || m.uid() == 0)
    };
    for dir in start.ancestors() {
        if dir.join(".git").exists() || own_settings(dir) {
            return dir.to_path_buf();
        }
    }
    start.to_path_buf()
}

impl Roots {
    /// Opens the workspace and the extra roots. Paths are resolved to their real absolute
    /// form. `protected` lists absolute paths to refuse as write targets whether they exist
    /// or not (the user's config, cache and state directories); `.corral/`, `corral.toml` and
    /// `.git/` at any depth always are (see [`Roots::allow_git_writes`]). A root that is `/`,
    /// or holds the person's home folder or one of the `protected` paths, is refused.
    pub fn open(workspace: &Path, extra: &[(PathBuf, bool)], protected: &[PathBuf]) -> io::Result<Roots> {
        let home =
            std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute() && h != Path::new("/"));
        let mut prot: Vec<PathBuf> = Vec::new();
        for p in protected {
            prot.push(normalize_absolute(p));
            prot.extend(resolve_existing_prefix(p));
        }
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
            let refuse = |what: String| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "root {} would give tools {what}; corral refuses such a root. Run corral inside a project \
                         folder (or pass --workspace DIR), and name narrower folders with --add-dir",
                        path.display()
                    ),
                )
            };
            if real == Path::new("/") {
                return Err(refuse("the whole file system".into()));
            }
            let home_real = home.as_ref().map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()));
            if let Some(h) = home_real.iter().chain(home.iter()).find(|h| h.starts_with(&real)) {
                return Err(refuse(format!(
                    "your home folder {} (keys, credentials, settings)",
                    h.display()
                )));
            }
            if let Some(p) = prot.iter().find(|p| p.starts_with(&real)) {
                return Err(refuse(format!("corral's own settings, cache or state at {}", p.display())));
            }
            let dir = Dir::open_ambient_dir(&real, ambient_authority())?;
            roots.push(Root { path: real, dir, writable: *writable });
        }
        Ok(Roots { roots, protected: prot, protect_git: true })
    }

    /// Whether `.git/` is refused to writers (the command sandbox keeps it read-only too).
    pub fn protects_git(&self) -> bool {
        self.protect_git
    }

    /// Lets tools write `.git/` (the person's `--allow-git-writes`).
    pub fn allow_git_writes(&mut self) {
        self.protect_git = false;
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
        for c in loc.rel.components() {
            let Component::Normal(name) = c else { continue };
            let name = name.to_string_lossy().to_ascii_lowercase();
            if PROTECTED_NAMES.contains(&name.as_str()) {
                return Err(WsError::protected(format!(
                    "'{shown}' is one of corral's own files (settings or state under .corral/ or a corral.toml, at \
                     any depth); tools may not change it. Change it yourself if it needs to change"
                )));
            }
            if self.protect_git && name == ".git" {
                return Err(WsError::protected(format!(
                    "'{shown}' is inside .git/: hooks and git config there run code at your next git command, so \
                     tools may not change it. The person running corral can allow it with --allow-git-writes"
                )));
            }
        }
        if self.protected.iter().any(|p| starts_with_ignore_case(&abs, p) || starts_with_ignore_case(p, &abs))
        {
            return Err(WsError::protected(format!(
                "'{shown}' is one of corral's own files (its user settings, cache or state); tools may not change it"
            )));
        }
        Ok(())
    }
}

/// `p` with its deepest existing ancestor resolved through links and the rest appended, when
/// that differs from `p` as written.
fn resolve_existing_prefix(p: &Path) -> Option<PathBuf> {
    let mut existing = normalize_absolute(p);
    let mut tail = Vec::new();
    while !existing.exists() {
        tail.push(existing.file_name()?.to_os_string());
        if !existing.pop() {
            return None;
        }
    }
    let mut out = std::fs::canonicalize(&existing).ok()?;
    out.extend(tail.iter().rev());
    Some(out)
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
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
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
        for p in [
            ".corral/x",
            ".CORRAL/trash/a",
            "corral.toml",
            "Corral.TOML",
            ".",
            "sub/corral.toml",
            "a/b/.corral/plugins/x.wasm",
            ".git/hooks/pre-commit",
            "vendor/lib/.GIT/config",
            ".git",
        ] {
            let loc = r.resolve(p, true).unwrap();
            assert!(r.check_writable(&loc, p).is_err(), "{p}");
        }
        for p in ["sub/corral.toml.bak", ".github/workflows/ci.yml", ".gitignore", "corral/x"] {
            let loc = r.resolve(p, true).unwrap();
            assert!(r.check_writable(&loc, p).is_ok(), "{p}");
        }
        let e = r.check_writable(&r.resolve(".git/config", true).unwrap(), ".git/config").unwrap_err();
        assert!(e.message.contains("--allow-git-writes"), "{}", e.message);
        let mut r = roots(t.path());
        r.allow_git_writes();
        assert!(r.check_writable(&r.resolve(".git/config", true).unwrap(), ".git/config").is_ok());
        assert!(r.check_writable(&r.resolve("x/.corral/y", true).unwrap(), "x/.corral/y").is_err());
    }

    #[test]
    fn protected_dirs_hold_before_they_exist_and_wide_roots_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::fs::create_dir_all(base.join("extra")).unwrap();
        // A config folder inside an extra root that does not exist yet is still refused.
        let conf = base.join("extra/not-yet/corral");
        let r = Roots::open(&base.join("ws"), &[(base.join("extra"), true)], std::slice::from_ref(&conf));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("corral's own settings"), "{e}");
        let r =
            Roots::open(&base.join("ws"), &[(base.join("extra"), true)], &[base.join("cfg/corral")]).unwrap();
        let loc = r.resolve(&base.join("extra/x").display().to_string(), true).unwrap();
        assert!(r.check_writable(&loc, "x").is_ok());
        let e = Roots::open(&base.join("ws"), &[(PathBuf::from("/"), false)], &[]).unwrap_err().to_string();
        assert!(e.contains("the whole file system") && e.contains("--add-dir"), "{e}");
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
