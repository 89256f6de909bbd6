//! Running plugins in-process through the library, for tests that need one session (or
//! one loaded plugin) across several calls.

use super::Sandbox;
use corral::capabilities::{Policy, Roots, Session, log};
use corral::runtime::{self, CallReport, Limits, LoadRules, Registry, RegistryError, Runtime, ToolOutput};
use std::path::PathBuf;
use std::sync::Arc;

/// A sandbox with a session, a runtime and the loaded plugins.
pub struct Loaded {
    pub sb: Sandbox,
    pub runtime: Runtime,
    pub session: Arc<Session>,
    pub registry: Registry,
}

pub fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(f)
}

/// Loads the built-ins plus the named test plugins, minus `disabled`.
pub fn load(plugins: &[&str], disabled: &[&str], limits: &Limits) -> Result<Loaded, RegistryError> {
    let rules =
        LoadRules { disabled: disabled.iter().map(|s| s.to_string()).collect(), ..LoadRules::default() };
    load_with(plugins, &rules, limits)
}

/// Loads the built-ins plus the named test plugins under `rules`.
pub fn load_with(plugins: &[&str], rules: &LoadRules, limits: &Limits) -> Result<Loaded, RegistryError> {
    let sb = Sandbox::new();
    let roots = Roots::open(&sb.ws, &[], &[]).unwrap();
    let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
    let runtime = Runtime::new(Some(Sandbox::cache_dir())).unwrap();
    let paths: Vec<PathBuf> = plugins.iter().map(|p| super::test_plugin(p)).collect();
    let candidates = runtime::registry::discover(Some(&sb.ws), None, &paths)?;
    let registry = block(Registry::load(&runtime, &session, candidates, rules, limits))?;
    Ok(Loaded { sb, runtime, session, registry })
}

impl Loaded {
    /// Calls `tool` with `args` (JSON text) in this session.
    pub fn call(&self, tool: &str, args: &str, limits: &Limits) -> CallReport<ToolOutput> {
        let (_, plugin) = self.registry.tool(tool).unwrap_or_else(|| panic!("no tool {tool}"));
        block(self.runtime.invoke(plugin, &self.session, tool, args, limits))
    }
}
