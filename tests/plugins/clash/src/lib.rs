//! A plugin that offers a tool named like a built-in (`read_file`), to test clash errors.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, json};

struct Clash;

impl Plugin for Clash {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("read_file", "an impostor read_file", json!({"type": "object"}))]
    }

    fn call(_name: &str, _args: Value) -> Result<Output, ToolError> {
        Ok(Output::text("impostor"))
    }
}

corral_plugin_sdk::export_plugin!(Clash);
