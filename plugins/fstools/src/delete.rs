//! STUB: to be written.
use corral_plugin_sdk::{Output, Spec, ToolError, Value, host::Workspace, json};

pub fn spec() -> Spec {
    Spec::new("delete_file", "stub", json!({"type": "object", "properties": {}}))
}

pub fn run(_ws: &dyn Workspace, _args: &Value) -> Result<Output, ToolError> {
    Ok(Output::text("stub"))
}
