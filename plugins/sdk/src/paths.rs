//! Turning the paths a model writes into absolute paths inside the workspace roots, and
//! back into short paths for display. The host enforces confinement again on every access;
//! these rules exist so that a model gets a clear message instead of a bare errno.

use crate::host::{Root, Workspace};
use crate::{ErrorKind, ToolError};
use std::path::{Path, PathBuf};

/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// Resolves paths against the roots the host granted.
#[derive(Debug, Clone)]
pub struct Resolver {
    roots: Vec<Root>,
}

impl Resolver {
    /// A resolver for the roots `ws` reports.
    pub fn new(ws: &dyn Workspace) -> Self {
        Resolver { roots: ws.roots() }
    }

    /// A resolver for the running plugin's roots, asking the host for nothing else: what a
    /// plugin that only reads should use, since it then needs no grant.
    pub fn of_host() -> Self {
        Resolver { roots: crate::host::roots() }
    }

    /// A resolver over explicit roots (the first is the workspace root).
    pub fn from_roots(roots: Vec<Root>) -> Self {
        Resolver { roots }
    }

    /// The workspace root.
    pub fn workspace_root(&self) -> &Path {
        self.roots.first().map(|r| r.path.as_path()).unwrap_or(Path::new("/"))
    }

    /// The roots, workspace root first.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// Makes `input` absolute (relative paths start at the workspace root), removes `.` and
    /// `..` lexically, and checks that the result lies inside a root.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, ToolError> {
        if input.is_empty() {
            return Err(ToolError::invalid_args("the path is empty"));
        }
        if input.contains('\0') {
            return Err(ToolError::invalid_args("the path contains a NUL byte"));
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(ToolError::invalid_args(format!(
                "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
                input.len()
            )));
        }
        let joined = if Path::new(input).is_absolute() {
            PathBuf::from(input)
        } else {
            self.workspace_root().join(input)
        };
        // `~`, `~/x` and `~user/x` are home paths, unless the workspace really holds a
        // `~user` entry (an editor's backup file, say).
        if is_home_path(input) && (input == "~" || input.starts_with("~/") || !joined.exists()) {
            return Err(self.home(input, "the path"));
        }
        let normal = normalize(&joined);
        if self.roots.iter().any(|r| normal.starts_with(&r.path)) {
            Ok(normal)
        } else {
            Err(self.outside(input))
        }
    }

    /// The refusal of a home path (`~...`) given in `what` (a path, a pattern).
    pub fn home(&self, input: &str, what: &str) -> ToolError {
        let roots: Vec<String> = self.roots.iter().map(|r| r.path.display().to_string()).collect();
        ToolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "{what} '{input}' starts with '~', the home directory: '~' is not expanded and home paths are \
                 not available; tools can only reach {}",
                roots.join(", ")
            ),
        )
        .with_hint(
            "use a path relative to the workspace root; a folder outside it can be reached only if the person \
             starts corral with --add-dir <folder>",
        )
    }

    fn outside(&self, input: &str) -> ToolError {
        let roots: Vec<String> = self.roots.iter().map(|r| r.path.display().to_string()).collect();
        ToolError::new(
            ErrorKind::PermissionDenied,
            format!("'{input}' is outside the workspace; tools can only reach {}", roots.join(", ")),
        )
        .with_hint("use a path inside the workspace")
    }

    /// `path` relative to the workspace root when it is inside it (`.` for the root
    /// itself), else the absolute path.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(self.workspace_root()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// A file name as people see it: valid UTF-8 as it is, every other byte as `\xNN` (the
/// host's `undecodable-names` writes names with the same function).
pub use corral_contract::paths::escape_name;

/// Whether `input` is written as a home path: `~`, `~/...`, `~user` or `~user/...`.
pub fn is_home_path(input: &str) -> bool {
    let Some(rest) = input.strip_prefix('~') else { return false };
    let user = rest.split(['/', '\\']).next().unwrap_or("");
    user.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Removes `.` and resolves `..` lexically (`..` above `/` stays at `/`), as the host does.
pub use corral_contract::paths::normalize;

/// A model-readable error for an I/O failure on `shown` (the path as the model wrote it).
pub fn io_error(shown: &str, e: &std::io::Error) -> ToolError {
    use std::io::ErrorKind as K;
    // WASI reports a sandbox refusal as ENOTCAPABLE (76) or EPERM (63).
    let refused = matches!(e.raw_os_error(), Some(63) | Some(76)) || e.kind() == K::PermissionDenied;
    if refused {
        return ToolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "'{shown}' cannot be accessed: it resolves outside the workspace roots or is not readable"
            ),
        )
        .with_hint("symlinks and '..' may not lead out of the workspace");
    }
    match e.kind() {
        K::NotFound => ToolError::new(ErrorKind::NotFound, format!("'{shown}' does not exist")),
        K::IsADirectory => ToolError::new(ErrorKind::InvalidArgs, format!("'{shown}' is a directory")),
        K::NotADirectory => ToolError::new(
            ErrorKind::NotFound,
            format!("'{shown}': a parent of this path is not a directory"),
        ),
        K::InvalidData => ToolError::new(ErrorKind::Unsupported, format!("'{shown}': {e}")),
        _ => ToolError::new(ErrorKind::Io, format!("'{shown}': {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r() -> Resolver {
        Resolver::from_roots(vec![
            Root { path: "/ws/proj".into(), writable: true },
            Root { path: "/data/ro".into(), writable: false },
        ])
    }

    #[test]
    fn relative_paths_start_at_the_workspace() {
        assert_eq!(r().resolve("src/main.rs").unwrap(), PathBuf::from("/ws/proj/src/main.rs"));
        assert_eq!(r().resolve("./a/../b").unwrap(), PathBuf::from("/ws/proj/b"));
        assert_eq!(r().resolve(".").unwrap(), PathBuf::from("/ws/proj"));
    }

    #[test]
    fn dotdot_out_of_the_root_is_refused() {
        let e = r().resolve("../secret").unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert!(e.message.contains("outside the workspace"), "{}", e.message);
        assert!(r().resolve("a/../../x").is_err());
        assert!(r().resolve("/ws/proj/../proj2/x").is_err());
        assert!(r().resolve("/ws/projx/a").is_err(), "a sibling with a common prefix is outside");
    }

    #[test]
    fn absolute_paths_in_any_root() {
        assert_eq!(r().resolve("/data/ro/x").unwrap(), PathBuf::from("/data/ro/x"));
        assert!(r().resolve("/etc/passwd").is_err());
    }

    #[test]
    fn malformed_paths() {
        assert!(r().resolve("").is_err());
        assert!(r().resolve("a\0b").unwrap_err().message.contains("NUL"));
        assert!(r().resolve(&"a/".repeat(3000)).unwrap_err().message.contains("limit"));
        let e = r().resolve("~/x").unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert!(e.message.starts_with("the path '~/x' starts with '~', the home directory"), "{}", e.message);
        assert!(e.hint.as_deref().unwrap_or("").contains("--add-dir"));
        assert!(r().resolve("~").is_err() && r().resolve("~bob/notes.txt").is_err());
        assert!(
            is_home_path("~alice") && !is_home_path("a~") && !is_home_path("~ x") && !is_home_path("x/~")
        );
    }

    #[test]
    fn display_is_relative_inside_the_workspace() {
        assert_eq!(r().display(Path::new("/ws/proj/src/x.rs")), "src/x.rs");
        assert_eq!(r().display(Path::new("/ws/proj")), ".");
        assert_eq!(r().display(Path::new("/data/ro/y")), "/data/ro/y");
    }

    #[test]
    fn sandbox_refusals_read_clearly() {
        let e = io_error(
            "link",
            &std::io::Error::from_raw_os_error(if cfg!(target_os = "wasi") { 63 } else { 1 }),
        );
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        let e = io_error("nope", &std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.message, "'nope' does not exist");
    }
}
