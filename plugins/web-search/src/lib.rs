//! The `web_search` built-in tool as a component; the logic is in `webtools::search`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![webtools::search::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        webtools::search::run(&Host, &Host, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
