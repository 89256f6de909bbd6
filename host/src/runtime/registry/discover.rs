//! Finding plugin candidates: the built-ins, then `<workspace>/.corral/plugins/*.wasm`, the
//! user's `plugins/*.wasm` and the `--plugin` files; and the `disabled` rule.

use super::RegistryError;
use crate::builtins::{BUILTINS, BuiltDescription};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where a plugin came from, in precedence order of discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Project,
    User,
    Flag,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Builtin => "built-in",
            Origin::Project => "project",
            Origin::User => "user",
            Origin::Flag => "--plugin",
        }
    }
}

/// A plugin found but not yet loaded.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub name: String,
    pub origin: Origin,
    /// The file it came from (None for built-ins).
    pub path: Option<PathBuf>,
    pub bytes: Cow<'static, [u8]>,
    /// Known SHA-256 (built-ins carry theirs).
    pub sha256: Option<&'static str>,
    /// A built-in's description made at build time (see `manifest::built`).
    pub built: Option<&'static BuiltDescription>,
}

impl Candidate {
    /// Where the plugin came from: its file, or `embedded in corral`.
    pub fn location(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "embedded in corral".to_string(),
        }
    }
}

/// Plugin files (`*.wasm`) in `dir`, sorted by name; a missing directory has none.
fn wasm_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
        .collect();
    files.sort();
    files
}

fn file_candidate(path: &Path, origin: Origin) -> Result<Candidate, RegistryError> {
    let bytes =
        std::fs::read(path).map_err(|source| RegistryError::Read { path: path.to_path_buf(), source })?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "plugin".into());
    Ok(Candidate {
        name,
        origin,
        path: Some(path.to_path_buf()),
        bytes: Cow::Owned(bytes),
        sha256: None,
        built: None,
    })
}

/// The largest plugin file read from a project.
const PROJECT_PLUGIN_MAX: u64 = 256 << 20;

/// A trusted project's plugin files (`.corral/plugins/*.wasm`), read through the workspace's
/// handle: no link out of the workspace, no final link, regular files only.
fn project_candidates(workspace: &Path) -> Result<Vec<Candidate>, RegistryError> {
    let rel = Path::new(".corral").join("plugins");
    let read = |path: PathBuf, source: std::io::Error| RegistryError::Read { path, source };
    let ws = match cap_std::fs::Dir::open_ambient_dir(workspace, cap_std::ambient_authority()) {
        Ok(d) => d,
        Err(e) => return Err(read(workspace.to_path_buf(), e)),
    };
    let Ok(entries) = ws.read_dir(&rel) else { return Ok(Vec::new()) };
    let mut names: Vec<std::ffi::OsString> = entries.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
    names.sort();
    let mut out = Vec::new();
    for name in names.into_iter().filter(|n| Path::new(n).extension().is_some_and(|x| x == "wasm")) {
        let file = rel.join(&name);
        let path = workspace.join(&file);
        let capped = crate::capabilities::hostread::read_regular(&ws, &file, PROJECT_PLUGIN_MAX)
            .map_err(|e| read(path.clone(), e))?;
        let Some(c) = capped else { continue };
        if c.truncated() {
            let why = format!("larger than {} MiB", PROJECT_PLUGIN_MAX >> 20);
            return Err(read(path, std::io::Error::new(std::io::ErrorKind::InvalidData, why)));
        }
        let stem = Path::new(&name).file_stem().map(|s| s.to_string_lossy().into_owned());
        out.push(Candidate {
            name: stem.unwrap_or_else(|| "plugin".into()),
            origin: Origin::Project,
            path: Some(path),
            bytes: Cow::Owned(c.bytes),
            sha256: None,
            built: None,
        });
    }
    Ok(out)
}

/// Finds every plugin: built-ins, the trusted `project`'s `.corral/plugins/*.wasm` (None: the
/// project is not trusted, and its plugins are not read), `<user_dir>/plugins/*.wasm`, then the
/// `--plugin` files, in that order.
pub fn discover(
    project: Option<&Path>,
    user_dir: Option<&Path>,
    flag_paths: &[PathBuf],
) -> Result<Vec<Candidate>, RegistryError> {
    let mut out: Vec<Candidate> = BUILTINS
        .iter()
        .map(|b| Candidate {
            name: b.name.to_string(),
            origin: Origin::Builtin,
            path: None,
            bytes: Cow::Borrowed(b.bytes),
            sha256: Some(b.sha256),
            built: b.description.as_ref(),
        })
        .collect();
    if let Some(ws) = project {
        out.extend(project_candidates(ws)?);
    }
    if let Some(dir) = user_dir {
        for path in wasm_files(&dir.join("plugins")) {
            out.push(file_candidate(&path, Origin::User)?);
        }
    }
    for path in flag_paths {
        out.push(file_candidate(path, Origin::Flag)?);
    }
    Ok(out)
}

/// Whether `c` is named by a `disabled` entry: its name, `origin:name`, or its file path.
pub fn is_disabled(c: &Candidate, disabled: &[String]) -> bool {
    disabled.iter().any(|d| {
        d == &c.name
            || d == &format!("{}:{}", c.origin.as_str(), c.name)
            || c.path.as_ref().is_some_and(|p| Path::new(d) == p || p.ends_with(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_matches_name_origin_or_path() {
        let c = Candidate {
            name: "x".into(),
            origin: Origin::Project,
            path: Some("/w/.corral/plugins/x.wasm".into()),
            bytes: Cow::Borrowed(b""),
            sha256: None,
            built: None,
        };
        assert!(is_disabled(&c, &["x".into()]));
        assert!(is_disabled(&c, &["project:x".into()]));
        assert!(is_disabled(&c, &[".corral/plugins/x.wasm".into()]));
        assert!(!is_disabled(&c, &["built-in:x".into(), "y".into()]));
    }
}
