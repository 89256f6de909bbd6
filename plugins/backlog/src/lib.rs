//! The `backlog` built-in tool as a component; the logic is in `agenttools::backlog`.

use agenttools::backlog::{self, ids::Clock};
use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![backlog::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        backlog::run(&Host, &args, Clock::now())
    }
}

corral_plugin_sdk::export_plugin!(Tool);
