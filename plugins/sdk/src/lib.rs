//! The guest side of corral's plugin contract: implement [`Plugin`], call [`export_plugin!`],
//! and build for `wasm32-wasip2` (a skill: [`skill::Skill`] and [`export_skill!`]). The WIT
//! bindings, JSON handling and path rules live here.

pub mod args;
pub mod host;
pub mod paths;
pub mod skill;
mod spec;

/// The rules the host follows too (capability names, path normalisation, the char-boundary cut).
pub use corral_contract as contract;
pub use serde_json::{self, Value, json};
pub use spec::{Capability, ErrorKind, Output, Spec, ToolError};

/// The generated WIT bindings (`corral:plugin@0.1.0`, frozen in `wit/0.1/`; world `tool-plugin`).
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/0.1",
        world: "tool-plugin",
        pub_export_macro: true,
        default_bindings_module: "corral_plugin_sdk::bindings",
        export_macro_name: "__export_tool_plugin",
    });
}

/// A plugin: the tools it offers and how to run them.
pub trait Plugin {
    /// The tools this plugin offers. Must be the same on every call.
    fn tools() -> Vec<Spec>;
    /// Runs tool `name` with its parsed JSON arguments.
    fn call(name: &str, args: Value) -> Result<Output, ToolError>;

    /// Runs a call of `name`, a name not in [`Plugin::tools`]. The host never calls such a name
    /// for the model; corral's built-in `grep` uses one for the parts of a large search, which
    /// it runs side by side through an interface only built-ins may import. The default knows
    /// no such names.
    fn part(name: &str, _args: Value) -> Result<Output, ToolError> {
        Err(ToolError::new(ErrorKind::NotFound, format!("this plugin has no tool named '{name}'")))
    }
}

#[doc(hidden)]
pub fn describe_for<P: Plugin>() -> Vec<bindings::corral::plugin::types::ToolSpec> {
    P::tools().into_iter().map(Spec::into_wit).collect()
}

#[doc(hidden)]
pub fn invoke_for<P: Plugin>(
    name: String,
    args_json: String,
) -> Result<bindings::corral::plugin::types::ToolOutput, bindings::corral::plugin::types::ToolError> {
    let args: Value = serde_json::from_str(&args_json)
        .map_err(|e| ToolError::invalid_args(format!("arguments are not valid JSON: {e}")).into_wit())?;
    if !args.is_object() {
        return Err(ToolError::invalid_args("arguments must be a JSON object").into_wit());
    }
    // The host only calls listed names for the model; any other name is the plugin's own
    // (a part a built-in started).
    let result =
        if P::tools().iter().any(|s| s.name == name) { P::call(&name, args) } else { P::part(&name, args) };
    result.map(Output::into_wit).map_err(ToolError::into_wit)
}

/// Exports a [`Plugin`] implementation as the component's `tool` interface.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[doc(hidden)]
        pub struct __CorralExport;
        impl $crate::bindings::exports::corral::plugin::tool::Guest for __CorralExport {
            fn describe() -> ::std::vec::Vec<$crate::bindings::corral::plugin::types::ToolSpec> {
                $crate::describe_for::<$plugin>()
            }
            fn invoke(
                name: ::std::string::String,
                args_json: ::std::string::String,
            ) -> ::std::result::Result<
                $crate::bindings::corral::plugin::types::ToolOutput,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::invoke_for::<$plugin>(name, args_json)
            }
        }
        $crate::bindings::__export_tool_plugin!(__CorralExport with_types_in $crate::bindings);
    };
}
