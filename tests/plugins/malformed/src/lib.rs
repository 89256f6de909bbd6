//! A plugin whose result breaks the component ABI: its text is not UTF-8, which the host
//! must reject when lifting the result.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, json};

struct Malformed;

impl Plugin for Malformed {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("bad_utf8", "returns bytes that are not UTF-8", json!({"type": "object"}))]
    }

    fn call(_name: &str, _args: Value) -> Result<Output, ToolError> {
        // SAFETY: deliberately not UTF-8; the string is only lowered to bytes for the host,
        // whose validation is what this plugin tests. No Rust code reads it as text.
        let text = unsafe { String::from_utf8_unchecked(vec![b'o', b'k', 0xff, 0xfe, 0xfd]) };
        Ok(Output::text(text))
    }
}

corral_plugin_sdk::export_plugin!(Malformed);
