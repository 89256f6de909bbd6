//! MCP, the Model Context Protocol, both ways: `serve` offers the workspace's sandboxed tools to
//! other agents and editors (stdio, or streamable HTTP on loopback with a bearer token);
//! `client*` brings other servers' tools into corral (their `[mcp_servers]` settings in `config`).

pub mod client;
mod client_call;
mod client_http;
pub mod client_names;
mod client_result;
mod client_stdio;
pub mod config;
pub mod serve;
mod serve_hints;
pub mod serve_http;
pub mod serve_stdio;

pub use serve::{CallLog, NOT_SERVED, Served, Server};
pub use serve_hints::Hints;
