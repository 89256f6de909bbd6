//! One model call kept within the context budget: the system prompt with its durable parts,
//! the proactive compaction (rungs 1-3) when the estimate is over budget, and, when the
//! provider refuses the request as too long, the full ladder below the refused size and a
//! retry, tightening each round; plus the model-written summaries compaction asks for.

use super::{Agent, Compaction, CompactionKind, Observer, Outcome, Stats, Stop, SummaryCall};
use crate::context::budget::prompt_tokens_in_error;
use crate::context::compact::{Aids, Fixed, NoSummaries, Report, Rung, Summarizer, compact_to_budget};
use crate::context::{recap, small, snapshot, tokens};
use crate::llm::{Client, LlmError, Message, Request, Response};
use std::time::Instant;

/// Reactive rounds (compact and retry) before the turn gives up.
pub const MAX_REACTIVE_ROUNDS: u32 = 10;
/// Estimated entries shorter than this many tokens are never recounted exactly.
const RECOUNT_MIN: u32 = 64;

/// Asks the model for a recap, with no tools, a short reply cap and temperature 0.
pub(super) struct ModelSummarizer<'c> {
    pub llm: &'c Client,
    pub system: &'static str,
    /// The most characters of the span sent, so the request fits the window.
    pub max_span: usize,
    /// The summary calls made, for the statistics and the observers (see [`record`]).
    pub calls: Vec<SummaryCall>,
}

impl<'c> ModelSummarizer<'c> {
    pub fn new(llm: &'c Client, max_span: usize) -> Self {
        ModelSummarizer { llm, system: recap::SUMMARY_SYSTEM, max_span, calls: Vec::new() }
    }

    /// Counts the calls made in `stats` (calls and tokens) and reports each to `obs`.
    pub fn record(&self, stats: &mut Stats, obs: &mut dyn Observer) {
        stats.llm_calls += u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        for c in &self.calls {
            if let Ok(u) = &c.result {
                super::add_usage(stats, *u);
            }
            obs.summary_call(c);
        }
    }
}

impl Summarizer for ModelSummarizer<'_> {
    async fn summarize(&mut self, span: String) -> Option<String> {
        let started = Instant::now();
        let req = Request {
            system: self.system.to_string(),
            messages: vec![Message::user(recap::summary_request(&recap::cap_middle(&span, self.max_span)))],
            tools: Vec::new().into(),
            max_tokens: recap::SUMMARY_MAX_TOKENS,
            temperature: Some(0.0),
        };
        let r = self.llm.complete(&req, &mut |_| {}).await;
        let result = r.as_ref().map(|r| r.usage).map_err(|e| e.to_string());
        self.calls.push(SummaryCall { purpose: "summary".into(), duration: started.elapsed(), result });
        Some(r.ok()?.text).filter(|t| !t.trim().is_empty())
    }
}

/// How the next request departs from the normal one while recovering from an overflow.
#[derive(Debug, Clone, Default)]
struct Recovery {
    active: bool,
    /// Send the smallest catalogue (terse core tools) instead of the offered one.
    small_tools: bool,
    /// The compressed system prompt of the emergency floor.
    floor_system: Option<String>,
}

impl Agent<'_> {
    /// The durable parts of the system prompt: memory, sections and snapshot summaries.
    fn sections(&self) -> Vec<(String, String)> {
        let mut sections: Vec<(String, String)> = Vec::new();
        if let Some(m) = &self.memory {
            sections.push(("memory".into(), m.clone()));
        }
        sections.extend(self.tools.session.sections().all().into_iter().map(|(n, s)| (n, s.body)));
        let chars = self.budget.window().map_or(snapshot::SHOWN_MAX_CHARS, |w| {
            snapshot::SHOWN_MAX_CHARS.min(usize::try_from(w / 10 * 4).unwrap_or(usize::MAX))
        });
        if let Some(h) = snapshot::history_section(&self.tools.session.snapshot().history(), chars) {
            sections.push(("snapshots".into(), h));
        }
        sections
    }

    /// The system prompt as it stands: static parts, memory, durable sections, snapshot
    /// summaries and the continue note.
    pub(super) fn system_prompt(&self) -> String {
        self.prompt.render(&self.today, &self.sections(), self.continue_note.as_deref())
    }

    /// The cost of the fixed parts of the request (system prompt and tool schemas), cached.
    pub(super) fn fixed(&mut self, system: &str) -> Fixed {
        if self.system_cost.0 != system || (!self.system_cost.1.exact && tokens::ready()) {
            self.system_cost = (system.to_string(), tokens::count(system).plus(tokens::PER_MESSAGE));
        }
        if !self.tool_cost.exact && tokens::ready() {
            self.tool_cost = crate::context::schemas::cost(&self.defs);
        }
        Fixed { system: u64::from(self.system_cost.1.n), tools: u64::from(self.tool_cost.n) }
    }

    /// Makes the estimates exact where it matters: once the tokenizer is loaded, and before
    /// that, waiting for it when the conversation is past half the budget.
    fn settle_counts(&mut self) {
        let wait = self.budget.budget_estimate().is_some_and(|b| self.transcript.tokens() * 2 > b);
        self.transcript.refresh(RECOUNT_MIN, wait);
    }

    /// The estimated size of the request.
    pub(super) fn estimate(&self, fixed: Fixed) -> u64 {
        self.transcript.tokens() + fixed.system + fixed.tools
    }

    /// The most characters of dropped turns a summary request may carry so that it fits the
    /// window with its own system prompt and reply cap.
    pub(super) fn summary_span_chars(&self) -> usize {
        let Some(b) = self.budget.budget_estimate() else { return recap::SPAN_MAX_CHARS };
        let room = b.saturating_sub(u64::from(recap::SUMMARY_MAX_TOKENS) + 300);
        usize::try_from(room * small::CHARS_PER_TOKEN)
            .unwrap_or(usize::MAX)
            .clamp(1000, recap::SPAN_MAX_CHARS)
    }

    /// Compacts with the ladder's lossy rungs too (never dropping the tools) down to `target`,
    /// asking the model for the recap; Err when the person interrupted.
    async fn compact_lossy(
        &mut self,
        fixed: &mut Fixed,
        rec: &mut Recovery,
        target: u64,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<Result<Report, crate::context::CompactError>, Stop> {
        // When the catalogue alone takes half the target, the smallest one goes first, so
        // the ladder does not cut the conversation to make room for schemas.
        if !rec.small_tools && self.small_defs.len() < self.defs.len() && fixed.tools * 2 > target {
            rec.small_tools = true;
            fixed.tools = small::cost(&self.small_defs);
        }
        let fixed = *fixed;
        let fallback = self.checkpoints.render();
        let mut summarizer = ModelSummarizer::new(self.llm, self.summary_span_chars());
        let interrupt = self.interrupt.clone();
        let mut aids = Aids::new(&mut summarizer, fallback);
        let compacted = tokio::select! {
            r = compact_to_budget(&mut self.transcript, fixed, target, &Rung::WITH_TOOLS, &mut aids) => r,
            _ = interrupt.wait() => return Err((Outcome::Interrupted, None)),
        };
        drop(aids);
        summarizer.record(stats, obs);
        Ok(compacted)
    }

    /// Sends the next request within the budget. Before it, when the estimate is over the
    /// budget, rungs 1-3 down to the target below it, and the lossy rungs when those are not
    /// enough, so no request leaves without room for a useful reply. When the provider refuses
    /// it as too long, the ladder again below the refused size and a retry, at most
    /// [`MAX_REACTIVE_ROUNDS`] times. Tools are never dropped: when the offered catalogue
    /// cannot fit, that request carries the smallest one; the floor's compressed system
    /// prompt lasts for that request only.
    pub(super) async fn call_model(
        &mut self,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<Response, Stop> {
        self.settle_counts();
        let mut system = self.system_prompt();
        let mut fixed = self.fixed(&system);
        let mut rec = Recovery::default();
        if let Some(target) =
            self.budget.proactive_target().filter(|_| self.budget.over(self.estimate(fixed)))
        {
            let mut none = NoSummaries;
            let r = compact_to_budget(
                &mut self.transcript,
                fixed,
                target,
                &Rung::PROACTIVE,
                &mut Aids::new(&mut none, None),
            )
            .await;
            if let Ok(report) = r {
                self.report(Compaction { kind: CompactionKind::Proactive, round: 0, report }, stats, obs);
            }
            if self.budget.over(self.estimate(fixed)) {
                let report = match self.compact_lossy(&mut fixed, &mut rec, target, stats, obs).await? {
                    Ok(r) => r,
                    Err(e) => return Err((Outcome::Error, Some(e.to_string()))),
                };
                self.apply_floor(&report, &mut rec, &mut fixed);
                self.report(Compaction { kind: CompactionKind::Proactive, round: 0, report }, stats, obs);
            }
        }
        let mut round = 0;
        loop {
            let estimate = self.estimate(fixed);
            let cap =
                if rec.active { self.budget.recovery_cap(estimate) } else { self.budget.reply_cap(estimate) };
            let refused = match cap {
                None => estimate,
                Some(cap) => match self.send(&system, &rec, cap, stats, obs).await {
                    Ok(r) => {
                        self.budget.observe(estimate, r.usage.input_tokens);
                        return Ok(r);
                    }
                    Err(Some(LlmError::ContextOverflow { message, limit })) => {
                        obs.model_refused(&message);
                        if let Some(l) = limit {
                            self.budget.learn_window(l);
                            if let Some(note) = self.go_terse_if_small() {
                                obs.notice(&note);
                                system = self.system_prompt();
                                fixed = self.fixed(&system);
                            }
                        }
                        if let Some(n) = prompt_tokens_in_error(&message) {
                            self.budget.observe(estimate, n);
                        }
                        estimate
                    }
                    Err(Some(e)) => return Err((Outcome::Error, Some(e.to_string()))),
                    Err(None) => return Err((Outcome::Interrupted, None)),
                },
            };
            round += 1;
            if round > MAX_REACTIVE_ROUNDS {
                return Err((Outcome::Error, Some(self.overflow_error(round - 1))));
            }
            let target = self.budget.reactive_target(refused);
            let report = match self.compact_lossy(&mut fixed, &mut rec, target, stats, obs).await? {
                Ok(r) => r,
                Err(e) => return Err((Outcome::Error, Some(e.to_string()))),
            };
            rec.active = true;
            self.apply_floor(&report, &mut rec, &mut fixed);
            let progress = self.estimate(fixed) < refused;
            self.report(Compaction { kind: CompactionKind::Reactive, round, report }, stats, obs);
            if !progress {
                return Err((Outcome::Error, Some(self.overflow_error(round))));
            }
        }
    }

    /// After a compaction that did not fit: the smallest catalogue instead of the offered one,
    /// and the floor's compressed system prompt when the ladder cut the prompt.
    fn apply_floor(&mut self, report: &Report, rec: &mut Recovery, fixed: &mut Fixed) {
        if !report.fits && !rec.small_tools && self.small_defs.len() < self.defs.len() {
            rec.small_tools = true;
            fixed.tools = small::cost(&self.small_defs);
        }
        if let Some(chars) = report.system_chars {
            let floor = self.prompt.render_floor(&self.sections(), chars);
            fixed.system = u64::from(tokens::count(&floor).n) + u64::from(tokens::PER_MESSAGE);
            rec.floor_system = Some(floor);
        }
    }

    /// One request; `Err(None)` when the person interrupted it.
    async fn send(
        &mut self,
        system: &str,
        rec: &Recovery,
        cap: u32,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<Response, Option<LlmError>> {
        // What the model is about to see (compactions included) is on disk before it answers.
        self.save_session(obs);
        let req = Request {
            system: rec.floor_system.clone().unwrap_or_else(|| system.to_string()),
            messages: self.transcript.wire_messages(),
            tools: if rec.small_tools { self.small_defs.clone() } else { self.defs.clone() },
            max_tokens: cap,
            temperature: self.cfg.temperature,
        };
        obs.waiting();
        stats.llm_calls += 1;
        let interrupt = self.interrupt.clone();
        // Secrets the run holds never reach an observer, even split across text chunks.
        let (mut text, mut reasoning) = (crate::redact::Stream::default(), crate::redact::Stream::default());
        let mut on_event = |e: crate::llm::Event| {
            let shown = match e {
                crate::llm::Event::Text(t) => crate::llm::Event::Text(text.push(&t)),
                crate::llm::Event::Reasoning(t) => crate::llm::Event::Reasoning(reasoning.push(&t)),
                other => other,
            };
            if !matches!(&shown, crate::llm::Event::Text(t) | crate::llm::Event::Reasoning(t) if t.is_empty())
            {
                obs.event(&shown);
            }
        };
        let result = tokio::select! {
            r = self.llm.complete(&req, &mut on_event) => r.map_err(Some),
            _ = interrupt.wait() => Err(None),
        };
        for (rest, make) in [
            (reasoning.finish(), crate::llm::Event::Reasoning as fn(String) -> crate::llm::Event),
            (text.finish(), crate::llm::Event::Text),
        ] {
            if !rest.is_empty() {
                obs.event(&make(rest));
            }
        }
        result
    }

    fn overflow_error(&self, rounds: u32) -> String {
        let window = self.budget.window().map(|w| format!(" ({w} tokens)")).unwrap_or_default();
        format!(
            "the conversation no longer fits the model's context window{window}, even after {rounds} rounds of \
             compaction. The task and progress are saved in the workspace's continue-here note: start a new session \
             to continue from it, or use a model with a larger context window (--max-context-tokens says how large it is)"
        )
    }

    /// Records and shows a compaction.
    pub(super) fn report(&mut self, c: Compaction, stats: &mut Stats, obs: &mut dyn Observer) {
        if c.report.applied.is_empty() {
            return;
        }
        stats.compacted(&c);
        obs.compaction(&c);
    }

    /// `--proactive-summaries`: every 10 turns, summarises the turns since the last
    /// checkpoint; when the store is full, merges its oldest half.
    pub(super) async fn checkpoint_if_due(
        &mut self,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<(), Stop> {
        if !self.cfg.proactive_summaries || !self.checkpoints.due() {
            return Ok(());
        }
        let from = self.checkpoints.batch_start();
        let start = self.transcript.entries().iter().position(|e| e.id >= from && e.recap.is_none());
        let span: Vec<&crate::context::Entry> = match start {
            Some(i) => self.transcript.entries()[i..].iter().collect(),
            None => Vec::new(),
        };
        if span.is_empty() {
            self.checkpoints.postpone();
            return Ok(());
        }
        let text = recap::render_span(&span);
        let next = self.transcript.next_id();
        let mut s = ModelSummarizer::new(self.llm, self.summary_span_chars());
        let interrupt = self.interrupt.clone();
        let summary = tokio::select! {
            r = s.summarize(text) => r,
            _ = interrupt.wait() => return Err((Outcome::Interrupted, None)),
        };
        let Some(summary) = summary else {
            s.record(stats, obs);
            self.checkpoints.postpone();
            obs.notice("could not get a checkpoint summary from the model; trying again later");
            return Ok(());
        };
        if self.checkpoints.add(&summary, next) {
            let (old, n) = self.checkpoints.oldest_half();
            s.system = recap::MERGE_SYSTEM;
            let merged = tokio::select! {
                r = s.summarize(old) => r,
                _ = interrupt.wait() => return Err((Outcome::Interrupted, None)),
            };
            self.checkpoints.merge_oldest(n, merged);
        }
        s.record(stats, obs);
        obs.notice(&format!("checkpoint summary {} stored", self.checkpoints.len()));
        Ok(())
    }

    /// Compacts with `rungs` down to `target` outside a model call (the REPL's /compact).
    pub(super) async fn compact_now(
        &mut self,
        rungs: &[Rung],
        obs: &mut dyn Observer,
    ) -> Result<Report, String> {
        let system = self.system_prompt();
        let fixed = self.fixed(&system);
        let fallback = self.checkpoints.render();
        let mut summarizer = ModelSummarizer::new(self.llm, self.summary_span_chars());
        let report = compact_to_budget(
            &mut self.transcript,
            fixed,
            0,
            rungs,
            &mut Aids::new(&mut summarizer, fallback),
        )
        .await
        .map_err(|e| e.to_string())?;
        let mut stats = Stats::default();
        summarizer.record(&mut stats, obs);
        self.report(
            Compaction { kind: CompactionKind::Manual, round: 0, report: report.clone() },
            &mut stats,
            obs,
        );
        self.totals.add(&stats);
        Ok(report)
    }
}
