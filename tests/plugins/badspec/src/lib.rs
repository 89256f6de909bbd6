//! A plugin whose tool description is broken: its input schema is not JSON.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value};

struct BadSpec;

impl Plugin for BadSpec {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("broken_schema", "a tool with an invalid schema", Value::String("{not json".into()))]
    }

    fn call(_name: &str, _args: Value) -> Result<Output, ToolError> {
        Ok(Output::text("unreachable"))
    }
}

corral_plugin_sdk::export_plugin!(BadSpec);
