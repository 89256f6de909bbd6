//! The compaction ladder: one entry point, [`compact_to_budget`], that shrinks the transcript
//! below a token budget by rungs, cheapest and most nearly lossless first, on a copy that is
//! committed only when the ladder is done.
//!
//! Rungs: 1 drop spent nudges; 2 shrink old tool results to one-line stubs (the last two turns
//! stay whole); 3 strip reasoning and long pre-tool prose; 4 drop the least important middle
//! turns for a model-written recap (the person's messages stay); 5 drop the whole middle but
//! the person's latest message; 6 send this one request without tool schemas; 7 emergency
//! truncation of every message at bounded lengths. The proactive pass uses 1-3; a refused
//! request uses them all. A rung whose result breaks the pairing of calls and results is
//! discarded, and whatever the rungs achieved is committed even when the budget is not met.
//!
//! Choices for small windows (16K and less), where the seed left room: the proactive pass runs
//! before almost every call on such a window, so it may only use rungs that lose nothing the
//! model cannot fetch again (every stub names the file or pattern to re-read); turns are only
//! dropped when the provider has actually refused. Rung 2 keeps the last two turns whole
//! because the model is usually still acting on them; rung 4 protects three, since it loses
//! more. Recaps are assistant messages that begin with a marker saying they are a record,
//! not instructions, so a small model does not take a summary of its own past as new orders.

mod drop;
mod emergency;
mod light;
#[cfg(test)]
mod tests;

use super::transcript::{Transcript, check_pairs};
use serde::Serialize;
use std::future::Future;

/// One rung of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    /// 1: nudges the model has already answered.
    Scaffolding,
    /// 2: old tool results become one-line stubs.
    ShrinkResults,
    /// 3: reasoning payloads and long prose before tool calls.
    StripReasoning,
    /// 4: low-importance middle turns become a recap.
    DropTurns,
    /// 5: everything in the middle becomes a recap.
    DropMiddle,
    /// 6: this request goes without tool schemas.
    DropTools,
    /// 7: every message is cut to a bounded length.
    Emergency,
}

impl Rung {
    /// The rungs the proactive pass may use: cheap and nearly lossless.
    pub const PROACTIVE: [Rung; 3] = [Rung::Scaffolding, Rung::ShrinkResults, Rung::StripReasoning];
    /// The rungs of an agent turn while a task is in progress: all but dropping the tools,
    /// so the model can still act (see [`crate::context::small`] for the compact catalogue).
    pub const WITH_TOOLS: [Rung; 6] = [
        Rung::Scaffolding,
        Rung::ShrinkResults,
        Rung::StripReasoning,
        Rung::DropTurns,
        Rung::DropMiddle,
        Rung::Emergency,
    ];
    /// Every rung, in order.
    pub const ALL: [Rung; 7] = [
        Rung::Scaffolding,
        Rung::ShrinkResults,
        Rung::StripReasoning,
        Rung::DropTurns,
        Rung::DropMiddle,
        Rung::DropTools,
        Rung::Emergency,
    ];

    /// Its number on the ladder.
    pub fn number(self) -> u8 {
        self as u8 + 1
    }
}

/// The parts of the request outside the transcript, in estimated tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fixed {
    pub system: u64,
    pub tools: u64,
}

/// What one compaction did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Estimated request size before and after (system, tools and messages).
    pub before: u64,
    pub after: u64,
    /// The rungs that changed something, in order.
    pub applied: Vec<Rung>,
    /// Model turns removed (rungs 4, 5 and 7).
    pub turns_dropped: u32,
    /// Send this request without tool schemas (rung 6).
    pub without_tools: bool,
    /// Cut the system prompt to this many characters for this request (rung 7's last stage).
    pub system_chars: Option<usize>,
    /// Whether the result is within the budget.
    pub fits: bool,
}

impl Report {
    pub fn saved(&self) -> u64 {
        self.before.saturating_sub(self.after)
    }
}

/// Why compaction could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    #[error("the conversation is malformed, so it was left as it is: {0}")]
    Malformed(String),
}

/// Writes the recap of turns that compaction drops.
pub trait Summarizer {
    /// A factual summary of `span` (the dropped turns, rendered as text and capped), or None
    /// when none can be had (the model refused, failed, or there is no model to ask).
    fn summarize(&mut self, span: String) -> impl Future<Output = Option<String>>;
}

/// A summarizer that never has a summary (tests, and places with no model at hand).
pub struct NoSummaries;

impl Summarizer for NoSummaries {
    async fn summarize(&mut self, _span: String) -> Option<String> {
        None
    }
}

/// What the lossy rungs may use besides the transcript.
pub struct Aids<'a, S: Summarizer> {
    pub summarizer: &'a mut S,
    /// The proactive checkpoint summaries, used when the summarizer has nothing.
    pub fallback: Option<String>,
    /// The summarizer failed once in this compaction: do not ask again.
    failed: bool,
}

impl<'a, S: Summarizer> Aids<'a, S> {
    pub fn new(summarizer: &'a mut S, fallback: Option<String>) -> Self {
        Aids { summarizer, fallback, failed: false }
    }

    /// The recap text for `span`: the model's summary, else the fallback, else a marker.
    async fn recap(&mut self, span: String) -> String {
        if !self.failed {
            match self.summarizer.summarize(span).await {
                Some(s) if !s.trim().is_empty() => return super::recap::recap_text(s.trim()),
                _ => self.failed = true,
            }
        }
        match &self.fallback {
            Some(f) if !f.trim().is_empty() => super::recap::recap_text(f.trim()),
            _ => super::recap::STATIC_RECAP.to_string(),
        }
    }
}

/// How many turns at the end rungs 2, 3 and 5 keep whole.
pub const KEEP_TURNS: usize = 2;
/// How many turns at the end rung 4 never drops.
pub const KEEP_TURNS_DROP: usize = 3;

/// Compacts `t` until the request (with `fixed`) is at most `budget` estimated tokens, using
/// `rungs` in ladder order. Works on a copy and commits it at the end, so a cancelled or
/// failed compaction leaves `t` as it was. Leaner is kept even when the budget is not met.
pub async fn compact_to_budget<S: Summarizer>(
    t: &mut Transcript,
    fixed: Fixed,
    budget: u64,
    rungs: &[Rung],
    aids: &mut Aids<'_, S>,
) -> Result<Report, CompactError> {
    check_pairs(t.entries().iter().map(|e| &e.msg), true).map_err(CompactError::Malformed)?;
    let mut work = t.clone();
    let mut fixed = fixed;
    let total = |w: &Transcript, f: &Fixed| w.tokens() + f.system + f.tools;
    let before = total(&work, &fixed);
    let mut r = Report { before, after: before, ..Report::default() };
    let mut ordered: Vec<Rung> = rungs.to_vec();
    ordered.sort();
    ordered.dedup();
    for rung in ordered {
        if total(&work, &fixed) <= budget {
            break;
        }
        let mut trial = work.clone();
        let changed = match rung {
            Rung::Scaffolding => light::drop_spent_nudges(&mut trial),
            Rung::ShrinkResults => light::shrink_results(&mut trial, KEEP_TURNS),
            Rung::StripReasoning => light::strip_reasoning(&mut trial, KEEP_TURNS),
            Rung::DropTurns => {
                let n = drop::drop_low_turns(&mut trial, aids).await;
                r.turns_dropped += n;
                n > 0
            }
            Rung::DropMiddle => {
                let n = drop::drop_middle(&mut trial, aids).await;
                r.turns_dropped += n;
                n > 0
            }
            Rung::DropTools => {
                let had = fixed.tools > 0;
                fixed.tools = 0;
                r.without_tools = had;
                had
            }
            Rung::Emergency => {
                let room = budget.saturating_sub(fixed.tools);
                let (n, system) = emergency::truncate(&mut trial, fixed.system, room);
                r.turns_dropped += n;
                if let Some((chars, tokens)) = system {
                    r.system_chars = Some(chars);
                    fixed.system = tokens;
                }
                true
            }
        };
        if !changed {
            continue;
        }
        // A rung must never orphan a call or a result; if one did, its work is discarded.
        if check_pairs(trial.entries().iter().map(|e| &e.msg), true).is_err() {
            continue;
        }
        work = trial;
        r.applied.push(rung);
    }
    r.after = total(&work, &fixed);
    r.fits = r.after <= budget;
    *t = work;
    Ok(r)
}
