//! A plugin whose tool schemas are large (three tools of about 2,000 tokens each), for the
//! tool-schema budget: on a small window corral must leave its tools out.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, json};

struct Bulky;

const TOOLS: &[&str] = &["bulky_one", "bulky_two", "bulky_three"];

impl Plugin for Bulky {
    fn tools() -> Vec<Spec> {
        let words =
            "This paragraph pads the description so that the schema is expensive to send. ".repeat(130);
        TOOLS
            .iter()
            .map(|n| Spec::new(n, &format!("A bulky tool. {words}"), json!({"type": "object"})))
            .collect()
    }

    fn call(name: &str, _args: Value) -> Result<Output, ToolError> {
        Ok(Output::text(format!("{name} ran")))
    }
}

corral_plugin_sdk::export_plugin!(Bulky);
