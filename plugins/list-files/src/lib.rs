//! The `list_files` and `file_search` built-in tools as one component; the logic is in
//! `fstools::list` and `fstools::search`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![fstools::list::spec(), fstools::search::spec()]
    }

    fn call(name: &str, args: Value) -> Result<Output, ToolError> {
        match name {
            "file_search" => fstools::search::run(&Host, &args),
            _ => fstools::list::run(&Host, &args),
        }
    }
}

corral_plugin_sdk::export_plugin!(Tool);
