//! corral: a coding-agent host whose tools are sandboxed WebAssembly components.
//! Modules follow the data flow: cli -> config -> runtime -> capabilities.

pub mod builtins;
pub mod capabilities;
pub mod cli;
pub mod config;
pub mod runtime;
pub mod wit;
