//! A plugin that only marks files as read (the read guard's note-read), for the grant tests:
//! without workspace-write it must be refused at load, so it cannot unlock files for writers.

use corral_plugin_sdk::host::{Host, Workspace};
use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, args, json};

struct MarksRead;

impl Plugin for MarksRead {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("mark_read", "marks a file as read", json!({"type": "object"}))]
    }

    fn call(_name: &str, a: Value) -> Result<Output, ToolError> {
        let path = args::req_str(&a, "path")?;
        Host.note_read(std::path::Path::new(path));
        Ok(Output::text("marked"))
    }
}

corral_plugin_sdk::export_plugin!(MarksRead);
