//! A plugin's compiled code. A plugin described from the compile cache (see
//! [`super::manifest`]) starts without it: the code is loaded (from the cache, or compiled
//! again if the entry went missing) the first time a tool of the plugin is called, or earlier
//! by [`super::Registry::warm_up`]'s background thread, whichever comes first. Its imports
//! are checked against the description when it is loaded.

use super::{grants, manifest};
use crate::runtime::{Cache, CacheStatus, CallState};
use crate::wit::ToolPluginPre;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use wasmtime::Engine;
use wasmtime::component::Linker;

/// What loading code needs; cheap to clone and usable from any thread.
#[derive(Clone)]
pub struct Loader {
    pub engine: Engine,
    pub linker: Arc<Linker<CallState>>,
    pub cache: Cache,
}

/// Where deferred code comes from.
struct Source {
    loader: Loader,
    location: String,
    sha256: String,
    bytes: Cow<'static, [u8]>,
    /// The imports the description recorded.
    imports: Vec<String>,
}

struct Loaded {
    pre: ToolPluginPre<CallState>,
    status: CacheStatus,
}

/// A plugin's code: loaded already, or loaded on first use.
pub struct Code {
    cell: OnceLock<Result<Loaded, String>>,
    source: Option<Source>,
}

impl Code {
    /// Code that is loaded already.
    pub fn ready(pre: ToolPluginPre<CallState>, status: CacheStatus) -> Code {
        Code { cell: OnceLock::from(Ok(Loaded { pre, status })), source: None }
    }

    /// Code to load on first use, from the cache entry for `sha256` or from `bytes`.
    pub fn deferred(
        loader: Loader,
        location: String,
        sha256: String,
        bytes: Cow<'static, [u8]>,
        imports: Vec<String>,
    ) -> Code {
        Code { cell: OnceLock::new(), source: Some(Source { loader, location, sha256, bytes, imports }) }
    }

    /// The code, loading it now if needed. The error says what is wrong and what to do.
    ///
    /// A caller never waits for another thread's load: if the code is not there yet it loads
    /// it itself, and the first load to finish is kept. (The background thread runs at a low
    /// priority; waiting for it on a busy machine could take long.)
    pub fn get(&self) -> Result<&ToolPluginPre<CallState>, &str> {
        let loaded = match self.cell.get() {
            Some(loaded) => loaded,
            None => {
                let mine = match &self.source {
                    Some(src) => load(src),
                    None => Err("the plugin's code is missing".into()),
                };
                self.cell.get_or_init(|| mine)
            }
        };
        match loaded {
            Ok(l) => Ok(&l.pre),
            Err(e) => Err(e),
        }
    }

    /// How the code was obtained: [`CacheStatus::Deferred`] until it is loaded.
    pub fn status(&self) -> CacheStatus {
        match self.cell.get() {
            None => CacheStatus::Deferred,
            Some(Ok(l)) => l.status.clone(),
            Some(Err(e)) => CacheStatus::Failed(e.clone()),
        }
    }

    /// Whether the code waits to be loaded.
    pub fn is_pending(&self) -> bool {
        self.cell.get().is_none()
    }
}

fn load(src: &Source) -> Result<Loaded, String> {
    let Loader { engine, linker, cache } = &src.loader;
    let (component, status) = cache
        .load(engine, &src.bytes, &src.sha256)
        .map_err(|e| format!("plugin {} is not a valid component: {e:#}", src.location))?;
    let imports = grants::imports(engine, &component).map(|(names, _)| names).unwrap_or_default();
    if imports != src.imports {
        // The description was not made from this component: drop it, so the next start
        // loads and describes the plugin afresh.
        manifest::forget(cache, &src.sha256);
        return Err(format!(
            "the compiled code of plugin {} does not match the description kept in the compile cache \
             (their imports differ), so it was not run; the description was removed: start corral again",
            src.location
        ));
    }
    let pre = linker
        .instantiate_pre(&component)
        .and_then(ToolPluginPre::new)
        .map_err(|e| format!("plugin {} cannot be linked: {e:#}", src.location))?;
    Ok(Loaded { pre, status })
}
