//! What the loop reports as it works, for the terminal, JSON streams and tests; and the
//! interrupt flag that Ctrl-C sets to stop the current turn.

use super::call::CallOutcome;
use crate::context::Report;
use crate::llm::{Event, Response, ToolCall, Usage};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// Receives the loop's progress. Every method has a do-nothing default.
pub trait Observer: Send {
    /// A request was sent; the model is thinking.
    fn waiting(&mut self) {}
    /// Streamed text, reasoning, or a retry notice.
    fn event(&mut self, _e: &Event) {}
    /// The model's complete reply.
    fn reply(&mut self, _r: &Response) {}
    /// The model call failed for good (after retries); the task ends with this error.
    fn model_error(&mut self, _error: &str) {}
    /// The provider refused the request as longer than its context window; the loop
    /// compacts the conversation and asks again.
    fn model_refused(&mut self, _error: &str) {}
    /// A tool call is about to run.
    fn tool_start(&mut self, _call: &ToolCall) {}
    /// A tool call finished.
    fn tool_done(&mut self, _call: &ToolCall, _outcome: &CallOutcome) {}
    /// Something the person should know (a reminder sent to the model, a warning).
    fn notice(&mut self, _text: &str) {}
    /// The conversation was compacted to fit the context budget.
    fn compaction(&mut self, _c: &Compaction) {}
    /// A model call made outside the conversation: a summary (compaction, checkpoints) or a
    /// tool's derive step (answering a prompt from a tool's result).
    fn summary_call(&mut self, _c: &SummaryCall) {}
    /// A branch started, made a model or tool call, or ended (`agent/branch/`).
    fn branch(&mut self, _e: &super::branch::BranchEvent) {}
}

/// One summary call: what it was for, how long it took and what it cost, or why it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryCall {
    /// `summary` for compaction and checkpoints; a tool's declared purpose for a derive step.
    pub purpose: String,
    pub duration: Duration,
    pub result: Result<Usage, String>,
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    /// Before a request, because the estimate was over the budget (rungs 1-3).
    Proactive,
    /// After the provider refused a request as too long (the whole ladder).
    Reactive,
    /// Asked for with /compact.
    Manual,
}

/// One compaction, as reported to observers.
#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub kind: CompactionKind,
    /// The reactive round (1 for the first retry); 0 otherwise.
    pub round: u32,
    #[serde(flatten)]
    pub report: Report,
}

impl Compaction {
    /// One line for people: "compacted 12400 -> 9800 tokens (rungs 1, 2)".
    pub fn describe(&self) -> String {
        let r = &self.report;
        let rungs: Vec<String> = r.applied.iter().map(|x| x.number().to_string()).collect();
        let what = match self.kind {
            CompactionKind::Proactive => "context over budget".to_string(),
            CompactionKind::Reactive => {
                format!("the model refused the request as too long (retry {})", self.round)
            }
            CompactionKind::Manual => "compacted on request".to_string(),
        };
        let mut s = format!("{what}: {} -> {} tokens", r.before, r.after);
        if !rungs.is_empty() {
            s.push_str(&format!(" (rungs {})", rungs.join(", ")));
        }
        if r.turns_dropped > 0 {
            s.push_str(&format!(", {} turns summarised", r.turns_dropped));
        }
        if r.without_tools {
            s.push_str(", this request without tools");
        }
        s
    }
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Set by Ctrl-C (and SIGTERM where the front end says so); the loop stops at the next await
/// point.
#[derive(Clone, Default)]
pub struct Interrupt(Arc<(AtomicBool, Notify, AtomicBool)>);

impl Interrupt {
    /// Whether SIGTERM interrupts too (the front end decides: see [`crate::signals`]).
    pub fn stop_on_sigterm(&self, yes: bool) {
        self.0.2.store(yes, Ordering::SeqCst);
    }

    /// A listener for the signals that interrupt this run. Whoever waits on the runtime the
    /// front end's listener runs on (the threads of a parallel batch) listens with one of its own.
    pub fn signals(&self) -> crate::signals::Stops {
        crate::signals::Stops::new(self.0.2.load(Ordering::SeqCst))
    }

    pub fn trigger(&self) {
        self.0.0.store(true, Ordering::SeqCst);
        self.0.1.notify_waiters();
    }

    pub fn is_set(&self) -> bool {
        self.0.0.load(Ordering::SeqCst)
    }

    pub fn reset(&self) {
        self.0.0.store(false, Ordering::SeqCst);
    }

    /// Resolves once the interrupt is set.
    pub async fn wait(&self) {
        loop {
            let notified = self.0.1.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}
