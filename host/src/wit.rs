//! Host-side bindings of the WIT package `corral:plugin@0.1.0`: world `tool-plugin`, and world
//! `skill-plugin` (in [`skill_world`]), whose imports reuse the tool world's generated modules.
//! Shared by `runtime` (which calls the exports) and `capabilities` (which implements the imports).

wasmtime::component::bindgen!({
    world: "tool-plugin",
    path: "../wit",
    imports: { default: async },
    exports: { default: async },
});

pub use self::corral::plugin::{context, host_info, http, kv, log, process, types, workspace};

/// The `skill-plugin` world. Its imports are a subset of the tool world's, so one linker
/// (with the tool world's host functions) instantiates both kinds of component.
pub mod skill_world {
    wasmtime::component::bindgen!({
        world: "skill-plugin",
        path: "../wit",
        imports: { default: async },
        exports: { default: async },
        with: {
            "corral:plugin/types": crate::wit::types,
            "corral:plugin/log": crate::wit::log,
            "corral:plugin/kv": crate::wit::kv,
            "corral:plugin/host-info": crate::wit::host_info,
            "corral:plugin/process": crate::wit::process,
        },
    });

    pub use self::exports::corral::plugin::skill;
}
