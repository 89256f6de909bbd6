//! The `read_file` built-in tool as a component; the logic is in `fstools::read`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![fstools::read::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        fstools::read::run(&Host, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
