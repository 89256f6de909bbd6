//! corral: a coding-agent host whose tools are sandboxed WebAssembly components.
//! Modules follow the data flow: cli -> config -> mcp -> agent -> llm / context / runtime -> capabilities.

pub mod agent;
pub mod authoring;
pub mod builtins;
pub mod capabilities;
pub mod cli;
pub mod config;
pub mod context;
pub mod cron;
pub mod llm;
pub mod mcp;
pub mod paths;
pub mod redact;
pub mod runtime;
pub mod signals;
pub mod termtext;
pub mod trust;
pub mod wit;

#[cfg(test)]
mod layering;
