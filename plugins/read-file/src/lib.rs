//! The `read_file` and `view_image` built-in tools as a component; the logic is in
//! `fstools::read` and `fstools::image`.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, host::Host};

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        vec![fstools::read::spec(), fstools::image::view_spec()]
    }

    fn call(name: &str, args: Value) -> Result<Output, ToolError> {
        match name {
            "view_image" => fstools::image::view_run(&Host, &args),
            _ => fstools::read::run(&Host, &args),
        }
    }
}

corral_plugin_sdk::export_plugin!(Tool);
