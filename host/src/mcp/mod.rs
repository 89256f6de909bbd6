//! MCP (Model Context Protocol): other servers' tools used inside corral (`client*`, their
//! `[mcp_servers]` settings in `config`).

pub mod client;
mod client_call;
mod client_http;
pub mod client_names;
mod client_result;
mod client_stdio;
pub mod config;
