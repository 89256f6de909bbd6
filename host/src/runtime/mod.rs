//! Running plugins (tools and skills): one engine, compiled components cached on disk, one
//! `InstancePre` per component, and a fresh, limited store for every call.

mod atomic;
mod cache;
mod engine;
mod engine_config;
mod evict;
mod functions;
mod in_place;
mod invoke;
mod limits;
mod output;
mod parallel;
mod pipes;
mod reaper;
pub mod registry;
mod secret;
mod site;
pub mod skills;
mod watchdog;

pub use cache::{Cache, CacheStatus, default_dir as default_cache_dir};
pub use invoke::{CallReport, Rehearsal};
pub use limits::Limits;
pub use output::{ErrorKind, Image, ToolError, ToolOutput};
pub use parallel::cores;
pub use pipes::Captured;
pub use registry::{
    Ahead, Candidate, Derive, LoadRules, Origin, Pins, Plugin, PluginInfo, Registry, RegistryError, Skipped,
    ToolSpec,
};
pub use site::View;

use crate::capabilities::PluginCtx;
use crate::wit::ToolPlugin;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Errors setting up the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    #[error("cannot start the epoch ticker thread: {0}")]
    Ticker(std::io::Error),
}

/// A [`Runtime`] being made by [`Runtime::start`]. Dropped unused, it waits for the thread,
/// so nothing the runtime writes (the cache key) is cut short when a start fails early.
pub struct Starting {
    thread: Option<std::thread::JoinHandle<Result<Runtime, RuntimeError>>>,
    cache_dir: Option<PathBuf>,
}

impl Starting {
    /// The runtime, once made.
    pub fn wait(mut self) -> Result<Runtime, RuntimeError> {
        match self.thread.take() {
            Some(t) => {
                t.join().unwrap_or_else(|_| Err(RuntimeError::Engine("the thread making it stopped".into())))
            }
            None => Runtime::new(self.cache_dir.take()),
        }
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Everything a store holds during one call.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: limits::MemoryLimiter,
    host: PluginCtx,
    /// The call's place in the engine's pool, given back when the store is dropped (by the
    /// reaper, after the call).
    _slot: tokio::sync::OwnedSemaphorePermit,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The engine, the linker with every host interface, and the component cache.
pub struct Runtime {
    caller: Caller,
    linker: Arc<Linker<CallState>>,
    cache: Cache,
    _ticker: engine::Ticker,
}

/// What making a call's store and running the call need, cheap to clone: the calls a plugin
/// starts through the `parallel` import run on threads of their own with a copy.
#[derive(Clone)]
pub(crate) struct Caller {
    engine: Engine,
    /// One permit per instance the pool holds ([`engine_config::CALL_SLOTS`]): a call takes one
    /// before it makes its store, so calls past the pool's size wait their turn.
    slots: Arc<tokio::sync::Semaphore>,
}

impl Runtime {
    /// Creates the engine and starts its epoch ticker. `cache_dir` None disables caching; the
    /// key that authenticates cache entries lives in corral's state directory.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runtime, RuntimeError> {
        Runtime::with_key_dir(cache_dir, crate::paths::state_dir().as_deref())
    }

    /// Starts making the runtime on a thread of its own: the engine (its signal handlers and
    /// instance pools), the linker and the cache key take about a millisecond, which the
    /// caller spends reading its settings and opening the workspace meanwhile. Made by
    /// [`Starting::wait`] itself when no thread can be started.
    pub fn start(cache_dir: Option<PathBuf>) -> Starting {
        let dir = cache_dir.clone();
        let thread =
            std::thread::Builder::new().name("corral-engine".into()).spawn(move || Runtime::new(dir));
        Starting { thread: thread.ok(), cache_dir }
    }

    /// Like [`Runtime::new`], with the cache key kept in `key_dir` (made there on first use;
    /// None: the disk cache is not used).
    pub fn with_key_dir(cache_dir: Option<PathBuf>, key_dir: Option<&Path>) -> Result<Runtime, RuntimeError> {
        let functions = Arc::new(functions::Functions::default());
        let engine =
            engine::new_engine(functions.clone()).map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let mut linker: Linker<CallState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        ToolPlugin::add_to_linker::<CallState, HasSelf<PluginCtx>>(&mut linker, |s| &mut s.host)
            .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        // What only built-ins may import; the registry refuses it to other plugins. A listing
        // works on the call's own wasi:filesystem descriptors, so it sees the resource table.
        crate::wit::builtin::parallel::add_to_linker::<CallState, HasSelf<PluginCtx>>(&mut linker, |s| {
            &mut s.host
        })
        .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        crate::wit::builtin::listing::add_to_linker::<CallState, HasSelf<ResourceTable>>(&mut linker, |s| {
            &mut s.table
        })
        .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let cache = Cache::new(&engine, cache_dir, key_dir).with_functions(functions);
        let ticker = engine::Ticker::start(&engine).map_err(RuntimeError::Ticker)?;
        let slots = Arc::new(tokio::sync::Semaphore::new(engine_config::CALL_SLOTS as usize));
        Ok(Runtime { caller: Caller { engine, slots }, linker: Arc::new(linker), cache, _ticker: ticker })
    }

    pub fn engine(&self) -> &Engine {
        &self.caller.engine
    }

    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// What loading a plugin's code needs, for use beyond this borrow (see [`registry::Code`]).
    pub fn loader(&self) -> registry::Loader {
        registry::Loader {
            engine: self.caller.engine.clone(),
            linker: self.linker.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl Caller {
    fn new_store(&self, state: CallState) -> Store<CallState> {
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        // Yield to the executor on every epoch tick so the call's timeout can fire.
        store.set_epoch_deadline(1);
        store.epoch_deadline_async_yield_and_update(1);
        store
    }
}
