//! A plugin that imports the host's `http` interface, for the grant tests: it must be refused
//! at load unless it is granted `http`.

use corral_plugin_sdk::host::{Host, HttpRequest, Net};
use corral_plugin_sdk::{Capability, Output, Plugin, Spec, ToolError, Value, args, json};

struct NeedsHttp;

impl Plugin for NeedsHttp {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("fetch_probe", "fetches a URL", json!({"type": "object"})).needs(Capability::Http)]
    }

    fn call(_name: &str, a: Value) -> Result<Output, ToolError> {
        let r = Host.fetch(&HttpRequest::get(args::req_str(&a, "url")?))?;
        Ok(Output::text(format!("status {}", r.status)))
    }
}

corral_plugin_sdk::export_plugin!(NeedsHttp);
