//! The one wasmtime engine of the process, configured for async calls with epoch
//! interruption, and the ticker thread that advances its epoch (and lets the watchdog
//! interrupt a call stuck in a system call).

use super::engine_config::config;
use super::functions::Functions;
use super::in_place::InPlace;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wasmtime::Engine;

/// How often the epoch advances. A running plugin yields to the host once per tick,
/// which is what lets the wall-clock timeout fire.
pub const TICK: Duration = Duration::from_millis(10);

/// Creates the engine used for every component: with the pooling allocator, which keeps
/// memories, tables and fiber stacks mapped between calls (a call's fixed cost falls from
/// about 55 to about 31 µs, see BENCHMARKS.md), or, where the address space for the pool
/// cannot be reserved, with on-demand allocation.
/// Where the build placed the built-ins' code among the binary's own, the engine runs it
/// there (see [`super::in_place`]). Cranelift keeps the functions it compiles in `functions`
/// and looks for each there before compiling it (see [`super::functions`]).
pub fn new_engine(functions: Arc<Functions>) -> wasmtime::Result<Engine> {
    let in_place = InPlace::for_this_binary().map(Arc::new);
    let engine = |pooling| -> wasmtime::Result<Engine> {
        let mut cfg = config(pooling, None)?;
        if let Some(code) = &in_place {
            cfg.with_custom_code_memory(Some(code.clone()));
        }
        cfg.enable_incremental_compilation(functions.clone())?;
        Engine::new(&cfg)
    };
    engine(true).or_else(|_| engine(false))
}

/// Advances the engine's epoch every [`TICK`] until dropped.
#[derive(Debug)]
pub struct Ticker {
    stop: Arc<AtomicBool>,
}

impl Ticker {
    /// Starts the ticker thread for `engine`.
    pub fn start(engine: &Engine) -> std::io::Result<Ticker> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let engine = engine.clone();
        std::thread::Builder::new().name("corral-epoch".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                engine.increment_epoch();
                super::watchdog::check(std::time::Instant::now());
            }
        })?;
        Ok(Ticker { stop })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
