//! How a task ended and what it cost: the outcome with its exit code, the counters of model
//! calls, tools and context compactions, and the result the front ends print.

use super::observer::{Compaction, CompactionKind};
use serde::Serialize;

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model gave its final answer.
    Done,
    /// The turn limit was reached first.
    MaxTurns,
    /// The person pressed Ctrl-C.
    Interrupted,
    /// The provider failed for good, or the model could not be brought back on track.
    Error,
}

impl Outcome {
    /// The documented process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Done => 0,
            Outcome::Error => 1,
            Outcome::MaxTurns => 2,
            Outcome::Interrupted => 130,
        }
    }
}

/// Counters for one task (or, in the REPL, the session).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    pub turns: u32,
    pub llm_calls: u32,
    pub tool_calls: u32,
    pub tool_errors: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Compactions of the conversation, of every kind.
    pub compactions: u32,
    /// Of those, the ones after the provider refused a request as too long.
    pub reactive_compactions: u32,
    /// Model turns replaced by recaps.
    pub turns_dropped: u32,
    /// Estimated tokens compaction saved.
    pub tokens_saved: u64,
    /// Snapshot restores applied.
    pub snapshot_restores: u32,
}

impl Stats {
    pub(super) fn add(&mut self, o: &Stats) {
        self.turns += o.turns;
        self.llm_calls += o.llm_calls;
        self.tool_calls += o.tool_calls;
        self.tool_errors += o.tool_errors;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.compactions += o.compactions;
        self.reactive_compactions += o.reactive_compactions;
        self.turns_dropped += o.turns_dropped;
        self.tokens_saved += o.tokens_saved;
        self.snapshot_restores += o.snapshot_restores;
    }

    pub(super) fn compacted(&mut self, c: &Compaction) {
        self.compactions += 1;
        if c.kind == CompactionKind::Reactive {
            self.reactive_compactions += 1;
        }
        self.turns_dropped += c.report.turns_dropped;
        self.tokens_saved += c.report.saved();
    }
}

/// The end of one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    pub outcome: Outcome,
    /// The final answer (for `Done`), or the last text the model wrote.
    pub answer: String,
    /// What went wrong, for `Error`.
    pub error: Option<String>,
    pub stats: Stats,
}
