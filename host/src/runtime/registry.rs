//! Finding plugins (built-ins, then the project's, the user's, and `--plugin` files),
//! compiling or loading each once, asking it what tools it offers, and indexing the tools
//! by name. Two plugins offering one tool name is an error unless one is disabled.

use super::limits::Limits;
use super::{CacheStatus, CallState, Runtime};
use crate::builtins::BUILTINS;
use crate::capabilities::Session;
use crate::wit::{ToolPluginPre, types as wit};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// A tool as a plugin described it, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub schema: serde_json::Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    pub capabilities: Vec<&'static str>,
}

/// What is known about a loaded plugin.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    pub name: String,
    pub origin: Origin,
    pub location: String,
    pub sha256: String,
    pub size: usize,
    pub cache: CacheStatus,
    pub imports: Vec<String>,
    pub tools: Vec<ToolSpec>,
}

/// A loaded plugin, ready to instantiate.
pub struct Plugin {
    pub info: PluginInfo,
    pub pre: ToolPluginPre<CallState>,
}

/// Why plugins could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot read plugin {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("plugin {location} is not a valid component: {why}")]
    Invalid { location: String, why: String },
    #[error(
        "plugin {location} imports '{import}', which corral does not provide; \
         a tool plugin may import WASI and corral:plugin/{{log,workspace,kv,context,http,process,host-info}}@0.1"
    )]
    UnknownImport { location: String, import: String },
    #[error("plugin {location} could not describe its tools: {why}")]
    Describe { location: String, why: String },
    #[error("plugin {location}: tool '{tool}' is invalid: {why}")]
    BadSpec { location: String, tool: String, why: String },
    #[error(
        "tool '{tool}' is offered by two plugins: {first} and {second}.\n\
         Disable one in corral.toml, for example:\n  [plugins]\n  disabled = [\"{second_name}\"]"
    )]
    Clash { tool: String, first: String, second: String, second_name: String },
}

/// The loaded plugins and their tools.
pub struct Registry {
    plugins: Vec<Plugin>,
    tools: BTreeMap<String, (usize, usize)>,
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
    Ok(Candidate { name, origin, path: Some(path.to_path_buf()), bytes: Cow::Owned(bytes), sha256: None })
}

/// Finds every plugin: built-ins, `<workspace>/.corral/plugins/*.wasm`,
/// `<user_dir>/plugins/*.wasm`, then the `--plugin` files, in that order.
pub fn discover(
    workspace: &Path,
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
        })
        .collect();
    for path in wasm_files(&workspace.join(".corral").join("plugins")) {
        out.push(file_candidate(&path, Origin::Project)?);
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
fn is_disabled(c: &Candidate, disabled: &[String]) -> bool {
    disabled.iter().any(|d| {
        d == &c.name
            || d == &format!("{}:{}", c.origin.as_str(), c.name)
            || c.path.as_ref().is_some_and(|p| Path::new(d) == p || p.ends_with(d))
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn capability_name(c: wit::Capability) -> &'static str {
    match c {
        wit::Capability::WorkspaceWrite => "workspace-write",
        wit::Capability::Kv => "kv",
        wit::Capability::Http => "http",
        wit::Capability::Process => "process",
        wit::Capability::Context => "context",
    }
}

/// Checks one described tool and converts it.
fn check_spec(location: &str, spec: wit::ToolSpec) -> Result<ToolSpec, RegistryError> {
    let bad = |why: &str| RegistryError::BadSpec {
        location: location.into(),
        tool: spec.name.clone(),
        why: why.into(),
    };
    let valid_name = !spec.name.is_empty()
        && spec.name.len() <= 64
        && spec.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(bad("names must be 1 to 64 ASCII letters, digits, '_' or '-'"));
    }
    if spec.description.trim().is_empty() {
        return Err(bad("the description is empty"));
    }
    let schema: serde_json::Value = serde_json::from_str(&spec.input_schema)
        .map_err(|e| bad(&format!("the input schema is not valid JSON: {e}")))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(bad("the input schema must be a JSON Schema with \"type\": \"object\""));
    }
    Ok(ToolSpec {
        name: spec.name,
        description: spec.description,
        schema,
        read_only: spec.hints.read_only,
        destructive: spec.hints.destructive,
        idempotent: spec.hints.idempotent,
        open_world: spec.hints.open_world,
        capabilities: spec.capabilities.into_iter().map(capability_name).collect(),
    })
}

/// Whether a component import is something the host provides.
fn import_allowed(name: &str) -> bool {
    if name.starts_with("wasi:") {
        return true;
    }
    ["log", "workspace", "kv", "context", "http", "process", "host-info", "types"]
        .iter()
        .any(|i| name.starts_with(&format!("corral:plugin/{i}@0.1.")))
}

/// Whether a skill component may import `name`: WASI, and corral's log, kv, host-info and
/// types. `process` only for corral's own folder-skill server (`server`), which runs the
/// scripts of `SKILL.md` folders under run_command's policy; other skills have no grants.
pub(crate) fn skill_import_allowed(name: &str, server: bool) -> bool {
    if name.starts_with("wasi:") {
        return true;
    }
    let allowed: &[&str] = if server {
        &["log", "kv", "host-info", "types", "process"]
    } else {
        &["log", "kv", "host-info", "types"]
    };
    allowed.iter().any(|i| name.starts_with(&format!("corral:plugin/{i}@0.1.")))
}

impl Registry {
    /// Compiles (or loads from cache) every enabled candidate, describes its tools, and
    /// indexes them.
    pub async fn load(
        rt: &Runtime,
        session: &Arc<Session>,
        candidates: Vec<Candidate>,
        disabled: &[String],
        limits: &Limits,
    ) -> Result<Registry, RegistryError> {
        let mut plugins = Vec::new();
        let mut tools: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for c in candidates.into_iter().filter(|c| !is_disabled(c, disabled)) {
            let location = c.location();
            let sha256 = match c.sha256 {
                Some(s) => s.to_string(),
                None => hex(&Sha256::digest(&c.bytes)),
            };
            let invalid = |why: String| RegistryError::Invalid { location: location.clone(), why };
            let (component, cache) =
                rt.cache().load(rt.engine(), &c.bytes, &sha256).map_err(|e| invalid(format!("{e:#}")))?;
            let imports: Vec<String> =
                component.component_type().imports(rt.engine()).map(|(name, _)| name.to_string()).collect();
            if let Some(bad) = imports.iter().find(|i| !import_allowed(i)) {
                return Err(RegistryError::UnknownImport { location, import: bad.clone() });
            }
            let pre = rt.linker.instantiate_pre(&component).map_err(|e| invalid(format!("{e:#}")))?;
            let pre = ToolPluginPre::new(pre).map_err(|e| invalid(format!("{e:#}")))?;
            let report = rt.describe(&pre, &c.name, session, limits).await;
            let specs = report
                .result
                .map_err(|e| RegistryError::Describe { location: location.clone(), why: e.message })?;
            let mut checked = Vec::with_capacity(specs.len());
            for spec in specs {
                checked.push(check_spec(&location, spec)?);
            }
            let idx = plugins.len();
            for (i, spec) in checked.iter().enumerate() {
                if let Some(&(other, _)) = tools.get(&spec.name) {
                    let first: &Plugin = &plugins[other];
                    return Err(RegistryError::Clash {
                        tool: spec.name.clone(),
                        first: format!("{} ({})", first.info.name, first.info.location),
                        second: format!("{} ({location})", c.name),
                        second_name: c.name,
                    });
                }
                if checked[..i].iter().any(|s| s.name == spec.name) {
                    return Err(RegistryError::BadSpec {
                        location,
                        tool: spec.name.clone(),
                        why: "the plugin describes this tool twice".into(),
                    });
                }
                tools.insert(spec.name.clone(), (idx, i));
            }
            let info = PluginInfo {
                name: c.name,
                origin: c.origin,
                location,
                sha256,
                size: c.bytes.len(),
                cache,
                imports,
                tools: checked,
            };
            plugins.push(Plugin { info, pre });
        }
        Ok(Registry { plugins, tools })
    }

    /// The loaded plugins, in discovery order.
    pub fn plugins(&self) -> &[Plugin] {
        &self.plugins
    }

    /// Every tool with its plugin, sorted by tool name.
    pub fn tools(&self) -> impl Iterator<Item = (&ToolSpec, &Plugin)> {
        self.tools.values().map(|&(p, t)| (&self.plugins[p].info.tools[t], &self.plugins[p]))
    }

    /// The tool named `name` and its plugin.
    pub fn tool(&self, name: &str) -> Option<(&ToolSpec, &Plugin)> {
        self.tools.get(name).map(|&(p, t)| (&self.plugins[p].info.tools[t], &self.plugins[p]))
    }

    /// Tool names closest to `name`, for "did you mean" answers.
    pub fn closest(&self, name: &str, n: usize) -> Vec<String> {
        let mut scored: Vec<(usize, &String)> =
            self.tools.keys().map(|k| (edit_distance(name, k), k)).collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, k)| k.clone()).collect()
    }
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, schema: &str) -> wit::ToolSpec {
        wit::ToolSpec {
            name: name.into(),
            description: "d".into(),
            input_schema: schema.into(),
            hints: wit::ToolHints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            capabilities: vec![wit::Capability::Kv],
        }
    }

    #[test]
    fn specs_are_checked() {
        assert!(check_spec("p", spec("ok_name", r#"{"type":"object"}"#)).is_ok());
        let e = check_spec("p", spec("bad name", r#"{"type":"object"}"#)).unwrap_err().to_string();
        assert!(e.contains("names must be"), "{e}");
        let e = check_spec("p", spec("t", "{nope")).unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        let e = check_spec("p", spec("t", r#"{"type":"string"}"#)).unwrap_err().to_string();
        assert!(e.contains("\"type\": \"object\""), "{e}");
    }

    #[test]
    fn imports_outside_the_contract_are_refused() {
        assert!(import_allowed("wasi:filesystem/types@0.2.6"));
        assert!(import_allowed("corral:plugin/workspace@0.1.0"));
        assert!(!import_allowed("corral:plugin/workspace@0.2.0"));
        assert!(!import_allowed("evil:host/escape"));
    }

    #[test]
    fn skills_import_less_than_tools() {
        assert!(skill_import_allowed("wasi:filesystem/preopens@0.2.6", false));
        assert!(skill_import_allowed("corral:plugin/kv@0.1.0", false));
        for denied in ["workspace", "context", "http", "process"] {
            assert!(!skill_import_allowed(&format!("corral:plugin/{denied}@0.1.0"), false), "{denied}");
        }
        assert!(skill_import_allowed("corral:plugin/process@0.1.0", true), "the folder server runs commands");
        assert!(!skill_import_allowed("corral:plugin/workspace@0.1.0", true));
    }

    #[test]
    fn disabled_matches_name_origin_or_path() {
        let c = Candidate {
            name: "x".into(),
            origin: Origin::Project,
            path: Some("/w/.corral/plugins/x.wasm".into()),
            bytes: Cow::Borrowed(b""),
            sha256: None,
        };
        assert!(is_disabled(&c, &["x".into()]));
        assert!(is_disabled(&c, &["project:x".into()]));
        assert!(is_disabled(&c, &[".corral/plugins/x.wasm".into()]));
        assert!(!is_disabled(&c, &["built-in:x".into(), "y".into()]));
    }

    #[test]
    fn closest_names() {
        assert_eq!(edit_distance("read_fil", "read_file"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
