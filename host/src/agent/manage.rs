//! Context controls for the interactive session: /compact (rung 2, or rungs 2 and 4),
//! /save, /restore (with a model-written summary) and /unsave, and what /status reports.

use super::{Agent, Observer};
use crate::context::compact::{Report, Rung};
use crate::context::recap;
use crate::context::snapshot;

/// The context's state, for /status.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextStatus {
    /// Size of the next request (system prompt, tools, messages) in the provider's tokens,
    /// as estimated and corrected by the learned ratio.
    pub estimate: u64,
    /// The prompt budget in the provider's tokens, when the window is known.
    pub budget: Option<u64>,
    pub window: Option<u64>,
    /// Provider tokens per estimated token, as learned.
    pub ratio: f64,
    pub messages: usize,
    pub compactions: u32,
    pub reactive_compactions: u32,
    pub turns_dropped: u32,
    pub checkpoint: Option<String>,
    pub dirty: Vec<String>,
    pub restores: u32,
    /// `--proactive-summaries` checkpoint summaries held.
    pub checkpoint_summaries: usize,
    /// Tools left out because their schemas did not fit.
    pub hidden_tools: usize,
}

impl Agent<'_> {
    /// The context's state now.
    pub fn context_status(&mut self) -> ContextStatus {
        let system = self.system_prompt();
        let fixed = self.fixed(&system);
        let snap = self.tools.session.snapshot().status();
        ContextStatus {
            estimate: self.budget.to_provider(self.estimate(fixed)),
            budget: self.budget.prompt_budget(),
            window: self.budget.window(),
            ratio: self.budget.ratio(),
            messages: self.transcript.len(),
            compactions: self.totals.compactions,
            reactive_compactions: self.totals.reactive_compactions,
            turns_dropped: self.totals.turns_dropped,
            checkpoint: snap.checkpoint,
            dirty: snap.dirty,
            restores: snap.restores,
            checkpoint_summaries: self.checkpoints.len(),
            hidden_tools: self.hidden.len(),
        }
    }

    /// /compact: shrinks old tool results (rung 2); with `drop`, also drops low-importance
    /// turns for a model-written recap (rung 4).
    pub async fn compact(&mut self, drop: bool, obs: &mut dyn Observer) -> Result<Report, String> {
        let rungs: &[Rung] =
            if drop { &[Rung::ShrinkResults, Rung::DropTurns] } else { &[Rung::ShrinkResults] };
        self.compact_now(rungs, obs).await
    }

    /// /save: sets a checkpoint at the current end of the conversation.
    pub fn save(&mut self, label: &str) -> Result<(), String> {
        let desk = &self.tools.session.snapshot();
        desk.set_current(self.transcript.next_id());
        desk.save(label)
    }

    /// /unsave: clears the checkpoint; returns its label.
    pub fn unsave(&mut self) -> Result<String, String> {
        self.tools.session.snapshot().cancel()
    }

    /// /restore: asks the model to summarise everything since the checkpoint (or the last
    /// message from the person), then collapses it into that summary. Returns a description.
    pub async fn restore(&mut self) -> Result<String, String> {
        let desk = &self.tools.session.snapshot();
        let checkpoint = desk.checkpoint();
        let end = self.transcript.len();
        let start = match &checkpoint {
            Some(c) if self.transcript.position(c.at).is_none() => {
                return Err("nothing to collapse: the conversation has not moved on since /save".into());
            }
            Some(c) => snapshot::scope_start(&self.transcript, Some(c.at), end)?,
            None => snapshot::scope_start(&self.transcript, None, end)?,
        };
        if start >= end {
            return Err("nothing to collapse since the checkpoint or the last message".into());
        }
        let span = recap::render_range(&self.transcript, start, end);
        let mut s = super::model::ModelSummarizer::new(self.llm, self.summary_span_chars());
        let summary = {
            use crate::context::Summarizer;
            s.summarize(span).await
        };
        // /restore is interactive, where nothing is audited: only the statistics count it.
        s.record(&mut self.totals, &mut super::Quiet);
        let summary =
            summary.ok_or("the model did not write a summary, so nothing was collapsed; try again")?;
        let label = checkpoint.map_or_else(|| "manual".to_string(), |c| c.label);
        let c = snapshot::collapse(&mut self.transcript, start, end, &label, &summary)?;
        self.tools.session.snapshot().restored(&label, &summary);
        self.totals.snapshot_restores += 1;
        Ok(format!("collapsed {} turns into a summary, saving ~{} tokens", c.turns, c.saved))
    }
}
