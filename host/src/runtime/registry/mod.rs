//! Loading plugins: pins checked, each plugin's imports checked against its grant, its tools
//! described and indexed by name. Two plugins offering one tool name is an error unless one
//! is disabled. A plugin seen before is described from the compile cache and its compiled
//! code is loaded on first use (see [`code`]); a new one is compiled, described, and its
//! description kept (see [`manifest`]).
//!
//! A plugin is known by its SHA-256, not its file name: a project plugin named like a
//! built-in or a user plugin is reported and not loaded, so it neither replaces that plugin
//! nor gets the grants and settings given to the name. A project plugin that is broken
//! (not a valid component, an import corral lacks, a trap or hang in `describe`, a bad tool
//! spec, a tool name taken) is reported and skipped; the start goes on without it.

mod code;
mod discover;
pub mod grants;
mod manifest;
mod spec;

pub use code::{Code, Loader, Wasm};
pub use discover::{Candidate, Origin, discover};
pub use grants::{LoadRules, Pins};
pub use spec::{DERIVE_KEY, Derive, ToolSpec};

use super::limits::Limits;
use super::{CacheStatus, CallState, Rehearsal, Runtime};
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

/// How long `describe` may take when a plugin is loaded (its tools are fixed data; one that
/// loops is cut here, however long tool calls may run).
pub const DESCRIBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A plugin that was not loaded (a built-in switched off, a project plugin skipped), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub origin: Origin,
    pub location: String,
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

impl RegistryError {
    /// Whether the error is about the plugin itself being broken (not about what the person
    /// allowed): such a project plugin is skipped rather than stopping the start.
    pub fn is_broken(&self) -> bool {
        matches!(
            self,
            RegistryError::Read { .. }
                | RegistryError::Invalid { .. }
                | RegistryError::UnknownImport { .. }
                | RegistryError::Version { .. }
                | RegistryError::Describe { .. }
                | RegistryError::BadSpec { .. }
                | RegistryError::Clash { .. }
        )
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
         a tool plugin may import WASI and {}",
        crate::wit::pattern(grants::TOOL_IMPORTS)
    )]
    UnknownImport { location: String, import: String },
    /// Built against a contract version this corral does not implement.
    // Not a `source`: the text already says it, and a chain printed with `{:#}` would repeat it.
    #[error("plugin {location} {why}")]
    Version { location: String, why: crate::wit::UnknownVersion },
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

/// Which code [`Registry::warm_up`] loads ahead of first calls.
#[derive(Debug, Clone, Copy)]
pub enum Ahead<'a> {
    /// None (a command that lists, or runs one tool).
    Nothing,
    /// Every plugin that is not built in, and the built-ins offering one of these tools
    /// (a session: the tools it cannot work without).
    Likely(&'a [&'a str]),
    /// Every plugin (a server, whose clients may call any tool first).
    All,
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
        // The names the person's own plugins hold (built-ins, user and --plugin files,
        // switched off or not): a project plugin cannot take one.
        let owned: BTreeMap<String, (Origin, String)> = candidates
            .iter()
            .filter(|c| c.origin != Origin::Project)
            .map(|c| (c.name.clone(), (c.origin, c.location())))
            .rev()
            .collect();
        for c in candidates.into_iter().filter(|c| !discover::is_disabled(c, &rules.disabled)) {
            let sha256 = match c.sha256 {
                Some(s) => s.to_string(),
                None => sha256_hex(&c.bytes),
            };
            let (name, origin, location) = (c.name.clone(), c.origin, c.location());
            let skip = |reason: String, sha256: String| Skipped {
                name: name.clone(),
                origin,
                location: location.clone(),
                sha256,
                asks: CapSet::EMPTY,
                reason,
            };
            if origin == Origin::Project
                && let Some((theirs, at)) = owned.get(&name)
            {
                let reason = format!(
                    "it has the name of the {} plugin {name} ({at}). A plugin is known by its content \
                     (this one's sha256 is {sha256}), not its file name: it neither replaces that plugin nor \
                     gets the grants and [plugin-settings.{name}] given to that name, and it is not loaded. \
                     To use it, rename the file (for example to {name}-project.wasm).",
                    theirs.as_str()
                );
                reg.skipped.push(skip(reason, sha256));
                continue;
            }
            match reg.load_one(rt, session, c, sha256.clone(), rules, limits).await {
                Ok(()) => {}
                Err(e) if origin == Origin::Project && e.is_broken() => {
                    let reason = format!(
                        "it is broken and was skipped: {e}\nFix or remove {location}, or disable it with \
                         [plugins] disabled = [\"project:{name}\"] in your config."
                    );
                    reg.skipped.push(skip(reason, sha256));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(reg)
    }

    /// Loads one candidate (see [`Registry::load`]); a built-in switched off is recorded as
    /// skipped.
    async fn load_one(
        &mut self,
        rt: &Runtime,
        session: &Arc<Session>,
        c: Candidate,
        sha256: String,
        rules: &LoadRules,
        limits: &Limits,
    ) -> Result<(), RegistryError> {
        let location = c.location();
        let builtin = c.origin == Origin::Builtin;
        let skip = |name: String, sha256: String, asks: CapSet, reason: String| Skipped {
            name,
            origin: c.origin,
            location: location.clone(),
            sha256,
            asks,
            reason,
        };
        if let Some(pins) = &rules.pins
            && !grants::pinned(&c.name, builtin, &location, &sha256, pins)?
        {
            let reason = format!("it is not in the policy file {}", pins.file.display());
            self.skipped.push(skip(c.name.clone(), sha256, CapSet::EMPTY, reason));
            return Ok(());
        }
        let invalid = |why: String| RegistryError::Invalid { location: location.clone(), why };
        // What it imports: from the kept description, or from the compiled component.
        // A built-in's description from the build, or one kept in the cache.
        let kept = c.built.and_then(manifest::built).or_else(|| manifest::read(rt.cache(), &sha256));
        let (facts, imports, needs) = match kept {
            Some(d) => {
                if let Some(why) = crate::wit::unknown_version(d.imports.iter().map(String::as_str)) {
                    return Err(RegistryError::Version { location, why });
                }
                if let Some(import) = d.imports.iter().find(|i| !grants::import_allowed(i, builtin)) {
                    return Err(RegistryError::UnknownImport { location, import: import.clone() });
                }
                let (imports, needs) = (d.imports.clone(), d.needs.clone());
                (Facts::Kept(d), imports, needs)
            }
            None => {
                let (component, cache) =
                    rt.cache().load(rt.engine(), &c.bytes, &sha256).map_err(|e| invalid(format!("{e:#}")))?;
                grants::version(rt.engine(), &component)
                    .map_err(|why| RegistryError::Version { location: location.clone(), why })?;
                let (imports, needs) = grants::imports(rt.engine(), &component, builtin)
                    .map_err(|import| RegistryError::UnknownImport { location: location.clone(), import })?;
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
                let describe = Limits { timeout: limits.timeout.min(DESCRIBE_TIMEOUT), ..*limits };
                let report = rt.describe(&pre, &c.name, session, &describe).await;
                let specs = report
                    .result
                    .map_err(|e| RegistryError::Describe { location: location.clone(), why: e.message })?;
                if cache != CacheStatus::Disabled {
                    let d =
                        Described { imports: imports.clone(), needs: needs.clone(), tools: specs.clone() };
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
                    self.skipped.push(skip(c.name.clone(), sha256, asks, reason));
                    return Ok(());
                }
            },
        };
        self.index(&c.name, &location, &checked)?;
        session.granted().set(&c.name, granted);
        if builtin {
            session.granted().set_builtin(&c.name);
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
        self.plugins.push(Plugin { info, code: Arc::new(code) });
        Ok(())
    }

    /// Starts loading, on a background thread, the code that first calls are likely to need,
    /// with its memory images, so that they seldom wait for either: what `ahead` says (see
    /// [`Ahead`]); a built-in's first instantiation is rehearsed too ([`Rehearsal`]).
    /// Built-ins it leaves out load when first called: their code is precompiled in corral,
    /// and leaving it unloaded keeps it out of memory (outline's alone is 13 MB). The thread
    /// runs at the lowest priority, so it takes CPU time the session leaves idle (the first
    /// request is being written, then answered) and does not delay it; a call that needs code
    /// the thread has not reached yet loads it itself (one that needs images the thread is
    /// making waits for them: a memfd's worth).
    pub fn warm_up(&self, ahead: Ahead<'_>, rehearsal: Rehearsal) {
        let pending: Vec<(Arc<Code>, Option<String>)> = self
            .to_warm(ahead)
            .map(|p| (p.code.clone(), (p.info.origin == Origin::Builtin).then(|| p.info.name.clone())))
            .collect();
        if pending.is_empty() {
            return;
        }
        // Without the thread every first call loads its own code: slower, not wrong.
        let _ = std::thread::Builder::new().name("corral-load".into()).spawn(move || {
            // The thread that drops finished calls' stores, started here rather than by the
            // first call (and before this thread lowers its priority, which it would inherit).
            crate::runtime::reaper::reaper();
            lower_priority();
            // The cores, which a call asking how wide it may search would otherwise count on
            // the session's thread (std reads the cgroup's files: ~0.1 ms).
            crate::runtime::cores();
            // Drives the rehearsals' instantiation (a future, as every call's).
            let exec = tokio::runtime::Builder::new_current_thread().build().ok();
            for (code, builtin) in pending {
                // With the code, the memory images its first instantiation would make (a
                // memfd per memory, filled with its initial data): off the first call's path.
                // A failure is left to that call, which tries again and reports it.
                let Ok(pre) = code.get() else { continue };
                if pre.instance_pre().component().initialize_copy_on_write_image().is_err() {
                    continue;
                }
                // Then, for a built-in, its first instantiation (see [`Rehearsal`]).
                if let (Some(name), Some(exec)) = (&builtin, &exec) {
                    let _ = rehearsal.instantiate(pre, name, exec);
                }
            }
        });
    }

    /// The plugins whose code [`Registry::warm_up`] loads ahead of their first call.
    fn to_warm<'a>(&'a self, ahead: Ahead<'a>) -> impl Iterator<Item = &'a Plugin> + 'a {
        let names: &[&str] = match ahead {
            Ahead::Likely(names) => names,
            Ahead::Nothing | Ahead::All => &[],
        };
        let wanted = move |p: &Plugin| match ahead {
            Ahead::Nothing => false,
            Ahead::Likely(names) => {
                p.info.origin != Origin::Builtin
                    || p.info.tools.iter().any(|t| names.contains(&t.name.as_str()))
            }
            Ahead::All => true,
        };
        // The likeliest first calls first (`names` is in that order), then the others.
        let rank = move |p: &&Plugin| {
            let of = |t: &ToolSpec| names.iter().position(|n| *n == t.name).unwrap_or(names.len());
            p.info.tools.iter().map(of).min().unwrap_or(names.len())
        };
        let mut pending: Vec<&Plugin> =
            self.plugins.iter().filter(|p| p.code.is_pending() && wanted(p)).collect();
        pending.sort_by_key(rank);
        pending.into_iter()
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
mod built_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names() {
        assert_eq!(edit_distance("read_fil", "read_file"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
