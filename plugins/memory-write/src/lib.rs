//! The `memory_write` built-in tool as a component; the logic is in `agenttools::memory`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![agenttools::memory::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        agenttools::memory::run(&Host, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
