//! Host-side bindings of the WIT package `corral:plugin@0.1.0` (world `tool-plugin`),
//! shared by `runtime` (which calls the exports) and `capabilities` (which implements the imports).

wasmtime::component::bindgen!({
    world: "tool-plugin",
    path: "../wit",
    imports: { default: async },
    exports: { default: async },
});

pub use self::corral::plugin::{context, host_info, http, kv, log, process, types, workspace};
