//! Host-side bindings of the WIT package `corral:plugin@0.1.0` (the frozen folder `wit/0.1/`):
//! world `tool-plugin`, and world `skill-plugin` (in [`skill_world`]), whose imports reuse the
//! tool world's generated modules. Shared by `runtime` (which calls the exports) and
//! `capabilities` (which implements the imports); [`VERSION`] and [`interface`] name the contract.

mod names;
#[cfg(test)]
mod tests;
mod version;

pub use names::{PluginName, UnknownVersion, interface, parse, pattern, unknown_version};
pub use version::{PACKAGE, SUPPORTED, VERSION, Version};

// The path names the folder of [`VERSION`] (a macro needs a literal); a test checks they agree.
// Adding 0.2 binds its folder here too, and adapts 0.1's imports to it (docs/wit-versions.md).

wasmtime::component::bindgen!({
    world: "tool-plugin",
    path: "../wit/0.1",
    imports: { default: async },
    exports: { default: async },
});

pub use self::corral::plugin::{context, host_info, http, kv, log, process, types, workspace};

/// The `skill-plugin` world. Its imports are a subset of the tool world's, so one linker
/// (with the tool world's host functions) instantiates both kinds of component.
pub mod skill_world {
    wasmtime::component::bindgen!({
        world: "skill-plugin",
        path: "../wit/0.1",
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

/// What only corral's built-in components may import (`wit/builtin/`, package
/// `corral:builtin`): built with the host, so it is no part of the versioned contract, and the
/// registry refuses it to every other plugin.
pub mod builtin {
    wasmtime::component::bindgen!({
        world: "builtin",
        path: "../wit/builtin",
        imports: { default: async },
        // `listing` takes the plugin's own wasi:filesystem descriptors: wasmtime-wasi's types.
        with: {
            "wasi:filesystem": wasmtime_wasi::p2::bindings::filesystem,
            "wasi:io": wasmtime_wasi::p2::bindings::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        },
    });

    pub use self::corral::builtin::{listing, parallel};

    /// The package's name, as its import names begin (`corral:builtin/parallel@0.1.0`).
    pub const PACKAGE: &str = "corral:builtin";
}

/// The file `name` of [`VERSION`]'s folder in the source tree (for tests that compare what
/// corral writes with the contract itself).
#[cfg(test)]
pub fn contract_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit").join(VERSION.folder()).join(name)
}
