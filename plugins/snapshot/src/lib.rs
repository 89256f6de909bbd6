//! The `snapshot` built-in tool as a component; the logic is in `agenttools::snapshot`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![agenttools::snapshot::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        agenttools::snapshot::run(&Host, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
