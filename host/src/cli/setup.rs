//! From flags to a ready environment: settings resolved, roots opened, the session and
//! runtime created, plugins discovered and loaded.

use super::GlobalArgs;
use crate::capabilities::{Policy, Roots, Session, find_workspace_root, log};
use crate::config::{self, ConfigError, Settings};
use crate::runtime::{self, Registry, RegistryError, Runtime, RuntimeError};
use std::path::PathBuf;
use std::sync::Arc;

/// Why corral could not start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}\nCheck --workspace, --add-dir and --add-dir-ro.")]
    Roots(std::io::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Registry(#[from] RegistryError),
    #[error("cannot determine the current directory: {0}")]
    Cwd(std::io::Error),
}

/// Everything a command needs.
pub struct Env {
    pub settings: Settings,
    pub session: Arc<Session>,
    pub runtime: Runtime,
    pub registry: Registry,
}

/// Resolves settings and loads every plugin.
pub async fn prepare(g: &GlobalArgs) -> Result<Env, SetupError> {
    let cwd = std::env::current_dir().map_err(SetupError::Cwd)?;
    let workspace = match &g.workspace {
        Some(w) => cwd.join(w),
        None => find_workspace_root(&cwd),
    };
    let user_dir = config::user_dir();
    let mut settings = Settings::default();
    if let Some(dir) = &user_dir {
        settings.apply_file(config::read_file(&dir.join("config.toml"))?, dir)?;
    }
    settings.apply_file(config::read_file(&workspace.join("corral.toml"))?, &workspace)?;
    settings.apply_env(|k| std::env::var(k).ok())?;
    settings.apply_limits(g.timeout, g.memory_mib, g.max_output_kb)?;
    if g.no_read_guard {
        settings.read_guard = false;
    }
    settings.extra_roots.extend(g.add_dir.iter().map(|d| (cwd.join(d), true)));
    settings.extra_roots.extend(g.add_dir_ro.iter().map(|d| (cwd.join(d), false)));

    let cache_dir = runtime::default_cache_dir();
    let protected: Vec<PathBuf> = user_dir.iter().chain(cache_dir.iter()).cloned().collect();
    let roots = Roots::open(&workspace, &settings.extra_roots, &protected).map_err(SetupError::Roots)?;
    let policy = Policy { read_guard: settings.read_guard, ..Policy::default() };
    let session = Arc::new(Session::new(roots, policy, log::Sink::new(g.verbose)));
    let runtime = Runtime::new(cache_dir)?;
    let ws_root = session.roots.workspace().path.clone();
    let candidates = runtime::registry::discover(&ws_root, user_dir.as_deref(), &g.plugin)?;
    let registry =
        Registry::load(&runtime, &session, candidates, &settings.disabled_plugins, &settings.limits).await?;
    if g.verbose {
        for p in registry.plugins() {
            eprintln!("plugin {} ({}): {:?}", p.info.name, p.info.location, p.info.cache);
        }
    }
    Ok(Env { settings, session, runtime, registry })
}
