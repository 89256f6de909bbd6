//! The `edit_file`, `patch` and `notebook_edit` built-in tools as one component; the logic
//! is in `fstools::edit`, `fstools::patch` and `fstools::notebook`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![fstools::edit::spec(), fstools::patch::spec(), fstools::notebook::spec()]
    }

    fn call(name: &str, args: Value) -> Result<Output, ToolError> {
        match name {
            "patch" => fstools::patch::run(&Host, &args),
            "notebook_edit" => fstools::notebook::run(&Host, &args),
            _ => fstools::edit::run(&Host, &args),
        }
    }
}

corral_plugin_sdk::export_plugin!(Tool);
