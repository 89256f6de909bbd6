//! What a component file is and offers: its kind, its tools (schemas, hints, declared
//! capabilities), its imports grouped by provider, its exports, size, sha256 and load time.

use super::componentize::{BinaryKind, binary_kind};
use super::sha256_hex;
use crate::capabilities::Session;
use crate::capabilities::grant::CapSet;
use crate::runtime::{
    CacheStatus, Candidate, Limits, LoadRules, Origin, Registry, RegistryError, Runtime, ToolSpec,
};
use crate::wit::{self, Version};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What kind of corral plugin a component is, read from its exports.
/// (A skill world would add a variant here and an arm in [`inspect_bytes`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Exports `corral:plugin/tool`.
    Tool,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool plugin",
        }
    }

    /// The kind a component with these exports is, if any, and the contract version its
    /// export was built against.
    pub fn of(exports: &[String]) -> Option<(Kind, Version)> {
        let tool =
            exports.iter().filter_map(|e| wit::parse(e)).find(|n| n.interface == "tool" && n.known())?;
        Some((Kind::Tool, tool.version?))
    }
}

/// A component's imports, by who provides them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imports {
    /// `wasi:*`, provided by wasmtime-wasi (files through read-only preopens only).
    pub wasi: Vec<String>,
    /// `corral:plugin/*`, provided by corral's host.
    pub host: Vec<String>,
}

impl Imports {
    fn group(names: Vec<String>) -> Imports {
        let (wasi, host) = names.into_iter().partition(|n| n.starts_with("wasi:"));
        Imports { wasi, host }
    }

    /// Whether the component imports the corral host interface `name` (e.g. `http`).
    pub fn has_host(&self, name: &str) -> bool {
        self.host.iter().any(|i| i.starts_with(&format!("corral:plugin/{name}@")))
    }
}

/// Everything `corral plugin inspect` shows.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The plugin's name (the file stem).
    pub name: String,
    pub path: PathBuf,
    pub kind: Kind,
    /// The contract version the component was built against (`corral:plugin@0.1.0`).
    pub contract: Version,
    pub size: usize,
    pub sha256: String,
    pub tools: Vec<ToolSpec>,
    /// The capabilities the tools declare, sorted.
    pub capabilities: Vec<&'static str>,
    pub imports: Imports,
    pub exports: Vec<String>,
    /// How the compiled form was obtained, and how long compiling or loading it took.
    pub cache: CacheStatus,
    pub load_time: Duration,
    /// Things an author should know (an import no tool declares, sockets that stay shut).
    pub notes: Vec<String>,
}

/// Why a file could not be inspected.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a WebAssembly file (it does not start with the \\0asm header)")]
    NotWasm { path: PathBuf },
    #[error(
        "{path} is a core WebAssembly module, not a component.\n\
         Make it a component first: corral plugin componentize {path} -o tool.wasm"
    )]
    CoreModule { path: PathBuf },
    #[error("{path} is not a valid component: {why}")]
    Invalid { path: PathBuf, why: String },
    #[error(
        "{path} is a component but not a corral plugin: it exports {exports}.\n\
         A tool plugin exports {} (see `corral plugin wit`).",
        wit::interface("tool")
    )]
    NotPlugin { path: PathBuf, exports: String },
    #[error("{path} {why}")]
    Version { path: PathBuf, why: wit::UnknownVersion },
    #[error("{0}")]
    Registry(#[from] RegistryError),
}

/// Reads and inspects the component at `path`, compiling it into the cache if needed.
pub async fn inspect_file(
    rt: &Runtime,
    session: &Arc<Session>,
    path: &Path,
    limits: &Limits,
) -> Result<Inspection, InspectError> {
    let bytes =
        std::fs::read(path).map_err(|source| InspectError::Read { path: path.to_path_buf(), source })?;
    inspect_bytes(rt, session, path, bytes, limits).await
}

/// Inspects `bytes`, which came from `path`.
pub async fn inspect_bytes(
    rt: &Runtime,
    session: &Arc<Session>,
    path: &Path,
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<Inspection, InspectError> {
    let path = path.to_path_buf();
    match binary_kind(&bytes) {
        BinaryKind::Component => {}
        BinaryKind::Module => return Err(InspectError::CoreModule { path }),
        BinaryKind::NotWasm => return Err(InspectError::NotWasm { path }),
    }
    let sha256 = sha256_hex(&bytes);
    let started = Instant::now();
    let (component, cache) = rt
        .cache()
        .load(rt.engine(), &bytes, &sha256)
        .map_err(|e| InspectError::Invalid { path: path.clone(), why: format!("{e:#}") })?;
    let load_time = started.elapsed();
    let ty = component.component_type();
    let imports = Imports::group(ty.imports(rt.engine()).map(|(n, _)| n.to_string()).collect());
    let exports: Vec<String> = ty.exports(rt.engine()).map(|(n, _)| n.to_string()).collect();
    let names = imports.wasi.iter().chain(&imports.host).chain(&exports);
    if let Some(why) = wit::unknown_version(names.map(String::as_str)) {
        return Err(InspectError::Version { path, why });
    }
    let Some((kind, contract)) = Kind::of(&exports) else {
        let exports = if exports.is_empty() { "nothing".into() } else { exports.join(", ") };
        return Err(InspectError::NotPlugin { path, exports });
    };
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "plugin".into());
    let size = bytes.len();
    let tools = match kind {
        Kind::Tool => {
            let candidate = Candidate {
                name: name.clone(),
                origin: Origin::Flag,
                path: Some(path.clone()),
                bytes: Cow::Owned(bytes),
                sha256: None,
                built: None,
            };
            let rules = LoadRules::default().trusting(&name);
            let registry = Registry::load(rt, session, vec![candidate], &rules, limits).await?;
            registry.plugins().first().map(|p| p.info.tools.clone()).unwrap_or_default()
        }
    };
    let declared = tools.iter().fold(CapSet::EMPTY, |all, t| all.union(t.capabilities));
    let mut capabilities = declared.names();
    capabilities.sort();
    let notes = notes(&imports, &capabilities);
    Ok(Inspection {
        name,
        path,
        kind,
        contract,
        size,
        sha256,
        tools,
        capabilities,
        imports,
        exports,
        cache,
        load_time,
        notes,
    })
}

/// Mismatches between what a component imports and what its tools declare.
fn notes(imports: &Imports, capabilities: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let undeclared: Vec<&str> = ["http", "process", "kv", "context"]
        .into_iter()
        .filter(|cap| imports.has_host(cap) && !capabilities.contains(cap))
        .collect();
    if !undeclared.is_empty() {
        out.push(format!(
            "it imports corral:plugin/{{{}}} but no tool declares {}; declare what a tool uses in its \
             spec (componentize-py and componentize-js import the whole world, so there this is expected)",
            undeclared.join(","),
            if undeclared.len() == 1 { "that capability" } else { "those capabilities" }
        ));
    }
    if imports.wasi.iter().any(|i| i.starts_with("wasi:sockets/")) {
        out.push(
            "it imports wasi:sockets (some language runtimes always do); corral links them with no \
             network access: fetch through corral:plugin/http instead"
                .into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_exports() {
        assert_eq!(Kind::of(&["corral:plugin/tool@0.1.0".into()]), Some((Kind::Tool, wit::VERSION)));
        assert_eq!(Kind::of(&["corral:plugin/tool@0.4.0".into()]), None, "a version corral does not know");
        assert_eq!(Kind::of(&["wasi:cli/run@0.2.0".into()]), None);
        assert_eq!(Kind::of(&[]), None);
    }

    #[test]
    fn imports_are_grouped_and_mismatches_noted() {
        let i = Imports::group(vec![
            "wasi:io/streams@0.2.6".into(),
            "corral:plugin/http@0.1.0".into(),
            "wasi:sockets/tcp@0.2.9".into(),
            "corral:plugin/log@0.1.0".into(),
        ]);
        assert_eq!(i.wasi, ["wasi:io/streams@0.2.6", "wasi:sockets/tcp@0.2.9"]);
        assert_eq!(i.host, ["corral:plugin/http@0.1.0", "corral:plugin/log@0.1.0"]);
        let n = notes(&i, &[]);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(
            n[0].starts_with("it imports corral:plugin/{http} but no tool declares that capability"),
            "{n:?}"
        );
        assert!(n[1].contains("wasi:sockets"), "{n:?}");
        assert_eq!(notes(&i, &["http"]).len(), 1);
        let all = Imports::group(vec!["corral:plugin/kv@0.1.0".into(), "corral:plugin/context@0.1.0".into()]);
        assert!(
            notes(&all, &[])[0]
                .starts_with("it imports corral:plugin/{kv,context} but no tool declares those")
        );
    }
}
