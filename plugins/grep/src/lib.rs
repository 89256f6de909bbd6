//! The `grep` built-in tool as a component; the logic is in `fstools::grep`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![fstools::grep::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        fstools::grep::run(&Host, &args)
    }

    /// The parts a large search runs side by side (`fstools::grep::SCAN_PART`).
    fn part(name: &str, args: Value) -> Result<Output, ToolError> {
        fstools::grep::part(name, &args)
    }
}

corral_plugin_sdk::export_plugin!(Tool);
