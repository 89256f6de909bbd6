//! The `outline` built-in tool as a component: the structure of source files, parsed with the
//! tree-sitter grammars compiled in. `tool` is the tool, `items` one file's outline, `lang` the
//! languages, `survey` the files under a folder.

pub mod items;
pub mod lang;
pub mod survey;
pub mod tool;

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value};

struct Outline;

impl Plugin for Outline {
    fn tools() -> Vec<Spec> {
        vec![tool::spec()]
    }

    fn call(_name: &str, args: Value) -> Result<Output, ToolError> {
        tool::run(&args)
    }
}

corral_plugin_sdk::export_plugin!(Outline);
