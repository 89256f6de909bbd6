//! Everything that decides what the model sees: the transcript with token estimates, the
//! budget, the compaction ladder, recaps, and the system prompt with its durable parts.
//!
//! The four layers (see docs/context.md): 1, prevention (tool caps, instruction
//! files capped, the tool-schema budget in [`schemas`]); 2, the model's own `snapshot`
//! collapses ([`snapshot`]); 3, automatic compaction ([`compact`]) before each call and when
//! the provider refuses; 4, knowledge kept outside the messages: durable sections, snapshot
//! summaries, checkpoint summaries ([`recap`]) and project memory ([`memory`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod alternate;
pub mod bm25;
pub mod budget;
pub mod compact;
pub mod memory;
pub mod prompt;
pub mod recap;
pub mod resume;
pub mod saved;
pub mod schemas;
pub mod small;
pub mod snapshot;
pub mod tokens;
pub mod transcript;

pub use budget::Budget;
pub use compact::{Aids, CompactError, Fixed, NoSummaries, Report, Rung, Summarizer, compact_to_budget};
pub use transcript::{Entry, Recap, Transcript};
