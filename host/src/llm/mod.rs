//! Model providers: OpenAI-compatible chat completions, Anthropic messages and Ollama's chat
//! API, streamed or not, with retries and errors that say what to do. Knows nothing of plugins or the agent.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod anthropic;
mod body;
mod client;
mod config;
mod error;
mod failure;
pub mod limits;
mod ollama;
mod openai;
mod probe;
mod retry;
mod sse;
pub mod types;

#[cfg(test)]
mod tests;

pub use client::Client;
pub use config::{ClientConfig, Preset, ProviderKind, preset, preset_names};
pub use error::LlmError;
pub use retry::RetryPolicy;
pub use types::*;

use std::sync::atomic::{AtomicU64, Ordering};

/// An id for a tool call the server sent without one: "call_<n>", unique in this process.
fn fresh_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
