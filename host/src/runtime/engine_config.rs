//! The wasmtime `Config` every component is compiled under. `build.rs` includes this very file
//! to precompile the built-ins, so the artifacts it embeds match the engine that loads them.

use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

/// The CPU features the build's x86-64 artifacts may use: x86-64-v2 (every x86-64 CPU since
/// about 2009). Without SSSE3 Cranelift turns WebAssembly's byte shuffles into calls into the
/// host, which the built-ins' SIMD searches make constantly; without SSE4.1 it does the same
/// for float rounding. A CPU that lacks one is refused by wasmtime at load, and the built-in is
/// compiled for it instead.
pub const X86_64_FEATURES: [&str; 5] = ["has_sse3", "has_ssse3", "has_sse41", "has_sse42", "has_popcnt"];

/// How many plugin calls the pool holds at once (one component instance and one stack each).
/// The runtime lets no more than this many calls hold a store (see `Runtime::run`): a call
/// past it waits for a slot instead of failing to start.
pub const CALL_SLOTS: u32 = 32;

/// The engine's configuration, with the pooling allocator or with on-demand allocation.
/// `target`: compile for this triple without looking at this machine's CPU, as the build
/// does for artifacts that must load everywhere (the triple's baseline ISA, plus
/// [`X86_64_FEATURES`] on x86-64); None: for this machine.
pub fn config(pooling: bool, target: Option<&str>) -> wasmtime::Result<Config> {
    let mut cfg = Config::new();
    if let Some(triple) = target {
        cfg.target(triple)?;
        if triple.starts_with("x86_64-") {
            for flag in X86_64_FEATURES {
                // SAFETY: these are CPU feature flags of the x64 backend, which wasmtime checks
                // against the running CPU before it runs code compiled with them.
                unsafe { cfg.cranelift_flag_enable(flag) };
            }
        }
    }
    cfg.wasm_component_model(true);
    cfg.epoch_interruption(true);
    // Give host functions room beside deep guest stacks (interpreted guests recurse deeply).
    cfg.max_wasm_stack(1024 * 1024);
    cfg.async_stack_size(4 * 1024 * 1024);
    if pooling {
        // At most 16 calls run at once per session (read-only calls side by side, bounded by
        // `agent.parallel_calls`), but sessions side by side (branches, MCP clients) share the
        // pool, so the runtime hands out its CALL_SLOTS instances; the other bounds leave room
        // for components built from several core modules (Python, JavaScript).
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(CALL_SLOTS)
            .total_core_instances(8 * CALL_SLOTS)
            .total_memories(2 * CALL_SLOTS)
            .total_tables(8 * CALL_SLOTS)
            .total_stacks(CALL_SLOTS)
            .max_core_instances_per_component(64)
            .max_memories_per_component(16)
            .max_tables_per_component(64)
            // A slot's memory is reset for its next call by zeroing the pages the call
            // dirtied (found with Linux's PAGEMAP_SCAN, 6.7 and later) rather than handing
            // them back with madvise: the next call takes no page faults on them. Past 2 MiB
            // (well over what a Rust or C tool touches) the rest is still handed back.
            .pagemap_scan(wasmtime::Enabled::Auto)
            .linear_memory_keep_resident(2 << 20)
            .table_keep_resident(64 << 10);
        cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Ok(cfg)
}
