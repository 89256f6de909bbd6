//! The `run_command` built-in tool as a component; the logic is in `cmdtools`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![cmdtools::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        cmdtools::run(&Host, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
