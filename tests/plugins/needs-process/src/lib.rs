//! A plugin that imports the host's `process` interface, for the grant tests: it must be
//! refused at load unless it is granted `process`, and its runs obey the command policy.

use corral_plugin_sdk::host::{Command, Host, Proc};
use corral_plugin_sdk::{Capability, Output, Plugin, Spec, ToolError, Value, json};

struct NeedsProcess;

impl Plugin for NeedsProcess {
    fn tools() -> Vec<Spec> {
        vec![Spec::new("exec_probe", "runs a program", json!({"type": "object"})).needs(Capability::Process)]
    }

    fn call(_name: &str, a: Value) -> Result<Output, ToolError> {
        let argv: Vec<String> =
            a["argv"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect();
        let Some((program, rest)) = argv.split_first() else {
            return Err(ToolError::invalid_args("give argv"));
        };
        let cmd = Command { program: program.clone(), args: rest.to_vec(), ..Command::default() };
        let out = Host.run(&cmd)?;
        Ok(Output::text(format!("exit {:?}: {}", out.exit_code, out.stdout)))
    }
}

corral_plugin_sdk::export_plugin!(NeedsProcess);
