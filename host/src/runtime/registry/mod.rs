//! Loading plugins: pins checked, each plugin's imports checked against its grant, its tools
//! described and indexed by name. Two plugins offering one tool name is an error unless one
//! is disabled. A plugin seen before is described from the compile cache and its compiled
//! code is loaded on first use (see [`code`]); a new one is compiled, described, and its
//! description kept (see [`manifest`]).

mod code;
mod discover;
pub mod grants;
mod manifest;
mod spec;

pub use code::{Code, Loader, Wasm};
pub use discover::{Candidate, Origin, discover};
pub use grants::{LoadRules, Pins, skill_import_allowed};
pub use spec::{DERIVE_KEY, Derive, ToolSpec};

use super::limits::Limits;
use super::{CacheStatus, CallState, Runtime};
use crate::capabilities::Session;
use crate::capabilities::grant::CapSet;
use crate::wit::ToolPluginPre;
use manifest::Described;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What is known about a loaded plugin.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    pub name: String,
    pub origin: Origin,
    pub location: String,
    pub sha256: String,
    pub size: usize,
    pub imports: Vec<String>,
    pub tools: Vec<ToolSpec>,
    /// What it asks for: its tools' declared capabilities and what its imports need.
    pub asks: CapSet,
    /// What it was granted.
    pub granted: CapSet,
}

/// A built-in that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub sha256: String,
    /// What it asks for, as far as it was looked at.
    pub asks: CapSet,
    pub reason: String,
}

/// A loaded plugin: described, granted, its code ready or loaded on first use.
pub struct Plugin {
    pub info: PluginInfo,
    code: Arc<Code>,
}

impl Plugin {
    /// The plugin's code, ready to instantiate (loaded now if it was not yet).
    pub fn pre(&self) -> Result<&ToolPluginPre<CallState>, &str> {
        self.code.get()
    }

    /// How its code was obtained ([`CacheStatus::Deferred`] until it is loaded).
    pub fn cache_status(&self) -> CacheStatus {
        self.code.status()
    }
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
    #[error(transparent)]
    NotGranted(Box<grants::NotGranted>),
    #[error(transparent)]
    PinMismatch(Box<grants::PinMismatch>),
    #[error(transparent)]
    NotInPolicy(Box<grants::NotInPolicy>),
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
    skipped: Vec<Skipped>,
}

/// Where a plugin's imports and tools are learnt from.
enum Facts {
    /// The description kept in the compile cache.
    Kept(Described),
    /// The component, compiled or loaded from the cache just now.
    Fresh(wasmtime::component::Component, CacheStatus),
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of `bytes`, as lowercase hex (how components and skills are named and pinned).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

impl Registry {
    /// Loads every enabled candidate under `rules`: pins checked, imports checked against
    /// the grant, tools described (from the compile cache's description, or by compiling and
    /// asking the component) and indexed. Each plugin's grant is recorded in the session.
    /// Built-ins whose feature is off are left out.
    pub async fn load(
        rt: &Runtime,
        session: &Arc<Session>,
        candidates: Vec<Candidate>,
        rules: &LoadRules,
        limits: &Limits,
    ) -> Result<Registry, RegistryError> {
        let mut reg = Registry { plugins: Vec::new(), tools: BTreeMap::new(), skipped: Vec::new() };
        for c in candidates.into_iter().filter(|c| !discover::is_disabled(c, &rules.disabled)) {
            let location = c.location();
            let builtin = c.origin == Origin::Builtin;
            let sha256 = match c.sha256 {
                Some(s) => s.to_string(),
                None => sha256_hex(&c.bytes),
            };
            if let Some(pins) = &rules.pins
                && !grants::pinned(&c.name, builtin, &location, &sha256, pins)?
            {
                let reason = format!("it is not in the policy file {}", pins.file.display());
                reg.skipped.push(Skipped { name: c.name, sha256, asks: CapSet::EMPTY, reason });
                continue;
            }
            let invalid = |why: String| RegistryError::Invalid { location: location.clone(), why };
            // What it imports: from the kept description, or from the compiled component.
            let (facts, imports, needs) = match manifest::read(rt.cache(), &sha256) {
                Some(d) => {
                    if let Some(import) = d.imports.iter().find(|i| !grants::import_allowed(i)) {
                        return Err(RegistryError::UnknownImport { location, import: import.clone() });
                    }
                    let (imports, needs) = (d.imports.clone(), d.needs.clone());
                    (Facts::Kept(d), imports, needs)
                }
                None => {
                    let (component, cache) = rt
                        .cache()
                        .load(rt.engine(), &c.bytes, &sha256)
                        .map_err(|e| invalid(format!("{e:#}")))?;
                    let (imports, needs) = grants::imports(rt.engine(), &component).map_err(|import| {
                        RegistryError::UnknownImport { location: location.clone(), import }
                    })?;
                    (Facts::Fresh(component, cache), imports, needs)
                }
            };
            // A plugin that is not built in is refused before it runs at all.
            let external =
                if builtin { None } else { Some(grants::external(&c.name, &location, &needs, rules)?) };
            let size = c.bytes.len();
            let (described, code) = match facts {
                Facts::Kept(d) => {
                    let wasm = Wasm::of(c.bytes, c.path.as_deref());
                    let code =
                        Code::deferred(rt.loader(), location.clone(), sha256.clone(), wasm, imports.clone());
                    (d.tools, code)
                }
                Facts::Fresh(component, cache) => {
                    let pre = rt
                        .linker
                        .instantiate_pre(&component)
                        .and_then(ToolPluginPre::new)
                        .map_err(|e| invalid(format!("{e:#}")))?;
                    let report = rt.describe(&pre, &c.name, session, limits).await;
                    let specs = report.result.map_err(|e| RegistryError::Describe {
                        location: location.clone(),
                        why: e.message,
                    })?;
                    if cache != CacheStatus::Disabled {
                        let d = Described {
                            imports: imports.clone(),
                            needs: needs.clone(),
                            tools: specs.clone(),
                        };
                        manifest::write(rt.cache(), &sha256, &d);
                    }
                    (specs, Code::ready(pre, cache))
                }
            };
            let mut checked = Vec::with_capacity(described.len());
            for spec in described {
                checked.push(spec::check_spec(&location, spec)?);
            }
            let declared: CapSet = checked.iter().fold(CapSet::EMPTY, |a, t| a.union(t.capabilities));
            // A built-in reader marks what it read without asking for workspace-write.
            let builtin_reads = |n: &&grants::Need| external.is_none() && n.function == "note-read";
            let needs: Vec<grants::Need> = needs.iter().filter(|n| !builtin_reads(n)).cloned().collect();
            let asks = declared.union(grants::caps(&needs));
            let granted = match external {
                Some(g) => g,
                None => match grants::builtin(&c.name, asks, rules) {
                    Ok(g) => g,
                    Err(reason) => {
                        reg.skipped.push(Skipped { name: c.name, sha256, asks, reason });
                        continue;
                    }
                },
            };
            reg.index(&c.name, &location, &checked)?;
            session.granted.set(&c.name, granted);
            if builtin {
                session.granted.set_builtin(&c.name);
            }
            let info = PluginInfo {
                name: c.name,
                origin: c.origin,
                location,
                sha256,
                size,
                imports,
                tools: checked,
                asks,
                granted,
            };
            reg.plugins.push(Plugin { info, code: Arc::new(code) });
        }
        Ok(reg)
    }

    /// Starts loading, on a background thread, the code of every plugin that was described
    /// from the cache, so that first calls seldom wait for it. The thread runs at the lowest
    /// priority, so it takes CPU time the session leaves idle (the first request is being
    /// written, then answered) and does not delay it; a call that needs code the thread has
    /// not reached yet loads it itself.
    pub fn warm_up(&self) {
        let pending: Vec<Arc<Code>> =
            self.plugins.iter().filter(|p| p.code.is_pending()).map(|p| p.code.clone()).collect();
        if pending.is_empty() {
            return;
        }
        // Without the thread every first call loads its own code: slower, not wrong.
        let _ = std::thread::Builder::new().name("corral-load".into()).spawn(move || {
            lower_priority();
            for code in pending {
                let _ = code.get();
            }
        });
    }

    /// Loads the code of every plugin now (for reports on the cache).
    pub fn load_all(&self) {
        for p in &self.plugins {
            let _ = p.code.get();
        }
    }

    /// Adds the tools of the plugin about to be pushed to the index; a name offered twice is
    /// an error.
    fn index(&mut self, name: &str, location: &str, checked: &[ToolSpec]) -> Result<(), RegistryError> {
        let idx = self.plugins.len();
        for (i, spec) in checked.iter().enumerate() {
            if let Some(&(other, _)) = self.tools.get(&spec.name) {
                let first: &Plugin = &self.plugins[other];
                return Err(RegistryError::Clash {
                    tool: spec.name.clone(),
                    first: format!("{} ({})", first.info.name, first.info.location),
                    second: format!("{name} ({location})"),
                    second_name: name.to_string(),
                });
            }
            if checked[..i].iter().any(|s| s.name == spec.name) {
                return Err(RegistryError::BadSpec {
                    location: location.to_string(),
                    tool: spec.name.clone(),
                    why: "the plugin describes this tool twice".into(),
                });
            }
        }
        for (i, spec) in checked.iter().enumerate() {
            self.tools.insert(spec.name.clone(), (idx, i));
        }
        Ok(())
    }

    /// Built-ins that were left out, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
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

/// Puts the calling thread at the lowest scheduling priority (nice 19). On Linux the nice
/// value belongs to the thread, and `who = 0` names the calling thread.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only reads its integer arguments; failure leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
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

    #[test]
    fn closest_names() {
        assert_eq!(edit_distance("read_fil", "read_file"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
