//! A plugin whose `describe` never returns (it spins), to test that loading cuts it off and
//! skips the plugin instead of hanging the start.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, json};

struct Hangs;

impl Plugin for Hangs {
    fn tools() -> Vec<Spec> {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
            if n == u64::MAX {
                break;
            }
        }
        vec![Spec::new("never", "never described", json!({"type": "object"}))]
    }

    fn call(_name: &str, _args: Value) -> Result<Output, ToolError> {
        Ok(Output::text("unreachable"))
    }
}

corral_plugin_sdk::export_plugin!(Hangs);
