//! MCP, the Model Context Protocol: `serve` offers the workspace's sandboxed tools to other
//! agents and editors, over stdio or streamable HTTP on a loopback address with a bearer token.

pub mod serve;
mod serve_hints;
pub mod serve_http;
pub mod serve_stdio;

pub use serve::{CallLog, NOT_SERVED, Served, Server};
pub use serve_hints::Hints;
