//! The wasmtime `Config` every component is compiled under. `build.rs` includes this very file
//! to precompile the built-ins, so the artifacts it embeds match the engine that loads them.

use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

/// The engine's configuration, with the pooling allocator or with on-demand allocation.
/// `target`: compile for this triple with its baseline ISA (no host feature detection), as
/// the build does for artifacts that must run on every machine; None: for this machine.
pub fn config(pooling: bool, target: Option<&str>) -> wasmtime::Result<Config> {
    let mut cfg = Config::new();
    if let Some(triple) = target {
        cfg.target(triple)?;
    }
    cfg.wasm_component_model(true);
    cfg.epoch_interruption(true);
    // Give host functions room beside deep guest stacks (interpreted guests recurse deeply).
    cfg.max_wasm_stack(1024 * 1024);
    cfg.async_stack_size(4 * 1024 * 1024);
    if pooling {
        // At most 16 calls run at once per session (read-only calls side by side, bounded by
        // `agent.parallel_calls`); these bounds leave room for that, and for components built
        // from several core modules (Python, JavaScript).
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(32)
            .total_core_instances(256)
            .total_memories(64)
            .total_tables(256)
            .total_stacks(32)
            .max_core_instances_per_component(64)
            .max_memories_per_component(16)
            .max_tables_per_component(64);
        cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Ok(cfg)
}
