//! Running the tool calls of one model reply: each call in its sandbox (unless its tool was
//! left out), its effects applied (`agent/effects.rs`), its result recorded, the snapshot desk
//! told what ran, and the read-only streak counted for the snapshot nudge.

use super::branch;
use super::parallel::{self, Kind};
use super::{
    Agent, CallOutcome, Observer, Outcome, Stats, SummaryCall, TODO_REMINDER_AFTER, Toolbox, derive,
};
use crate::capabilities::process::clean;
use crate::context::{small, snapshot};
use crate::llm::{Client, Message, Response, ToolCall};
use corral_contract::{ErrorKind, error::error_text};
use std::collections::BTreeSet;
use std::ops::Range;

/// At most this many skills are activated from one message's `$name` mentions.
const MAX_MENTIONED_SKILLS: usize = 3;

/// The names written as `$name` in `text`, in order, each once. A name is what a skill name
/// may be: lowercase ASCII letters, digits and inner hyphens.
pub(super) fn mentions(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (i, _) in text.match_indices('$') {
        let rest = &text[i + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len());
        // `$naïve` or `$snake_case` is another word, not a name followed by punctuation.
        let runs_on = rest[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let name = rest[..end].trim_end_matches('-');
        let starts_well = name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit());
        if starts_well && !runs_on && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

impl Agent<'_> {
    /// `$name` in the person's message activates the skill `name` before the model is asked:
    /// a `use_skill` call and its result are added to the conversation as if the model had
    /// made it (so compaction treats them like any other call), and shown and audited the
    /// same way. Mentions that name no skill are left alone (`$HOME`, prices).
    pub(super) async fn activate_mentioned_skills(
        &mut self,
        text: &str,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) {
        if !self.tools.offers_skills() || self.hidden.contains(super::use_skill::NAME) {
            return;
        }
        let names: Vec<String> = mentions(text)
            .into_iter()
            .filter(|n| self.tools.skills.get(n).is_some())
            .take(MAX_MENTIONED_SKILLS)
            .map(str::to_string)
            .collect();
        for (i, name) in names.iter().enumerate() {
            let call = ToolCall {
                id: format!("corral_skill_{}_{i}", self.transcript.next_id()),
                name: super::use_skill::NAME.to_string(),
                arguments: serde_json::json!({"name": name, "action": "activate"}).to_string(),
            };
            self.transcript.push(Message::Assistant {
                text: String::new(),
                reasoning: None,
                tool_calls: vec![call.clone()],
            });
            obs.tool_start(&call);
            let outcome = call_tool(&self.tools, &self.hidden, &call).await;
            self.record_result(&call, outcome, false, stats, obs);
        }
    }

    /// Counts a finished call, shows it, and answers it in the conversation (`changes`: it
    /// may have changed files, which the transcript notes for compaction).
    fn record_result(
        &mut self,
        call: &ToolCall,
        outcome: CallOutcome,
        changes: bool,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) {
        stats.tool_calls += 1;
        if outcome.is_error {
            stats.tool_errors += 1;
        }
        obs.tool_done(call, &outcome);
        let content = self.fit_result(&call.name, outcome.content, obs);
        let (content, images) = super::images::attach(self.llm, content, outcome.images);
        let msg = Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: outcome.is_error,
            images,
        };
        self.transcript.push_tool(msg, changes);
        self.save_session(obs);
    }

    /// A result cut to the window's share for one result (and the person's line cap): a read
    /// keeps a paging hint; anything else is saved whole under `.corral/` with a pointer.
    fn fit_result(&self, tool: &str, content: String, obs: &mut dyn Observer) -> String {
        let max_bytes = small::result_cap(self.budget.budget_estimate(), self.cfg.max_output_bytes);
        let max_lines = usize::try_from(self.cfg.max_output_lines).unwrap_or(usize::MAX);
        match small::cut_result(tool, &content, max_bytes, max_lines) {
            small::Cut::Whole => content,
            small::Cut::Paged(p) => p,
            small::Cut::Preview(p) => {
                match clean::spill(&self.tools.session.roots().workspace().dir, &content) {
                    Ok(path) => small::with_pointer(&p, &path, content.len()),
                    Err(e) => {
                        obs.notice(&format!("cannot save a long {tool} result under .corral/: {e}"));
                        format!("{p}[output cut to fit the context window; the rest could not be saved]")
                    }
                }
            }
        }
    }

    /// Records the reply and runs its calls: in order, except that a run of read-only calls
    /// may run side by side (`agent/parallel.rs`); results are recorded in the model's order.
    /// Err when the person interrupted (the calls not finished get an "interrupted" result,
    /// so every call keeps its answer).
    pub(super) async fn run_calls(
        &mut self,
        response: &Response,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<(), Outcome> {
        let reply_id = self.transcript.push(response.to_message());
        self.save_session(obs);
        self.tools.session.snapshot().set_current(reply_id);
        // The reply's changes make one undo checkpoint, labelled with the session's turn.
        let turn = u64::from(self.totals.turns) + u64::from(stats.turns);
        self.tools.session.journal().begin(crate::capabilities::undo::Label { turn, reply: reply_id });
        let result = self.run_reply_calls(reply_id, response, stats, obs).await;
        self.tools.session.journal().end();
        result
    }

    /// The calls of the reply `reply_id`, in groups (see [`Agent::run_calls`]).
    async fn run_reply_calls(
        &mut self,
        reply_id: u64,
        response: &Response,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Result<(), Outcome> {
        let calls = &response.tool_calls;
        let kinds: Vec<Kind> = calls.iter().map(|c| self.kind_of(c)).collect();
        // One call needs no width (and counting the cores costs system calls on its first use).
        let width = if calls.len() > 1 { parallel::width(self.cfg.parallel_calls) } else { 1 };
        let mut turn = TurnMarks { used_todo: false, read_only: true };
        for range in parallel::groups(&kinds) {
            let kind = kinds[range.start];
            let together = kind != Kind::Alone && range.len() > 1 && (kind == Kind::Branch || width > 1);
            // A group that does not run together runs as one-call batches, each shown as it runs.
            let batches: Vec<Range<usize>> =
                if together { vec![range] } else { range.map(|i| i..i + 1).collect() };
            for batch in batches {
                let group = &calls[batch.clone()];
                for call in group {
                    obs.tool_start(call);
                }
                if let [call] = group
                    && kind == Kind::Alone
                {
                    self.tools.session.journal().calling(&call.name);
                }
                let results = if kind == Kind::Branch {
                    self.run_branches(group, stats, obs).await
                } else {
                    self.run_batch(group, width).await
                };
                let Some(results) = results else {
                    self.interrupted(&calls[batch.start..]);
                    return Err(Outcome::Interrupted);
                };
                for (call, (outcome, derived)) in group.iter().zip(results) {
                    self.finish_call(reply_id, call, outcome, derived, &mut turn, stats, obs);
                }
            }
        }
        if turn.used_todo {
            self.turns_since_todo = 0;
            self.reminder_gap = TODO_REMINDER_AFTER;
            self.last_reminder = None;
        } else {
            self.turns_since_todo += 1;
        }
        if self.streak.turn(turn.read_only) && self.tools.registry.tool("snapshot").is_some() {
            self.nudge(obs, snapshot::NUDGE);
        }
        Ok(())
    }

    /// How the call may run beside others.
    fn kind_of(&self, call: &ToolCall) -> Kind {
        if let Some(k) = branch::kind(self.offers_branch, call) {
            k
        } else if self.hidden.contains(&call.name) {
            Kind::Alone
        } else if self.tools.is_read_only(&call.name) {
            Kind::ReadOnly
        } else {
            Kind::Alone
        }
    }

    /// Runs one batch: a single call, or read-only calls side by side on up to `width`
    /// threads, then their derive steps side by side on this one (they wait on the network).
    /// None when the person interrupted.
    async fn run_batch(
        &self,
        group: &[ToolCall],
        width: usize,
    ) -> Option<Vec<(CallOutcome, Option<SummaryCall>)>> {
        let interrupt = self.interrupt.clone();
        if let [call] = group {
            return tokio::select! {
                r = call_and_derive(self.llm, &self.tools, &self.hidden, call) => Some(vec![r]),
                _ = interrupt.wait() => None,
            };
        }
        let slots = parallel::on_threads(&self.tools, group, width, &interrupt);
        let mut outcomes = Vec::with_capacity(group.len());
        for (call, slot) in group.iter().zip(slots) {
            if interrupt.is_set() {
                return None;
            }
            let outcome = match slot {
                Some(o) => o,
                // No thread could be started for it: run it here.
                None => tokio::select! {
                    o = call_tool(&self.tools, &self.hidden, call) => o,
                    _ = interrupt.wait() => return None,
                },
            };
            outcomes.push(outcome);
        }
        let derived = futures_util::future::join_all(
            group
                .iter()
                .zip(outcomes)
                .map(|(call, o)| derive_if_asked(self.llm, &self.tools, &self.hidden, call, o)),
        );
        tokio::select! {
            r = derived => Some(r),
            _ = interrupt.wait() => None,
        }
    }

    /// Answers every call in `calls` with "interrupted".
    fn interrupted(&mut self, calls: &[ToolCall]) {
        for c in calls {
            self.transcript.push(Message::Tool {
                call_id: c.id.clone(),
                name: c.name.clone(),
                content: error_text(ErrorKind::Interrupted, "the person stopped this call", None),
                is_error: true,
                images: Vec::new(),
            });
        }
    }

    /// Counts, applies and records one finished call of the reply `reply_id`.
    #[allow(clippy::too_many_arguments)]
    fn finish_call(
        &mut self,
        reply_id: u64,
        call: &ToolCall,
        outcome: CallOutcome,
        derived: Option<SummaryCall>,
        turn: &mut TurnMarks,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) {
        if let Some(record) = derived {
            stats.llm_calls += 1;
            if let Ok(u) = &record.result {
                super::add_usage(stats, *u);
            }
            obs.summary_call(&record);
        }
        // A branch's own calls told the desk what they did; the branch call itself changes
        // nothing unless it was given the write tools.
        let read_only = match branch::kind(self.offers_branch, call) {
            Some(_) => !branch::may_write(call),
            None => self.tools.is_read_only(&call.name),
        };
        turn.read_only &= read_only;
        self.tools.session.snapshot().note_call(&call.name, read_only);
        self.tools.session.journal().attribute(&call.name);
        let outcome = self.apply_effects(reply_id, outcome, stats);
        turn.used_todo |= outcome.changed_todo();
        self.activity.push(activity_line(call, &outcome));
        if self.activity.len() > 50 {
            self.activity.drain(..25);
        }
        self.record_result(call, outcome, !read_only, stats, obs);
    }
}

/// What the calls of one reply did, for the todo reminder and the snapshot nudge.
struct TurnMarks {
    used_todo: bool,
    read_only: bool,
}

/// Runs one call and, when the call asks for its tool's declared derive step and succeeds,
/// that step (a separate model request, returned for counting and auditing).
async fn call_and_derive(
    llm: &Client,
    tools: &Toolbox<'_>,
    hidden: &BTreeSet<String>,
    call: &ToolCall,
) -> (CallOutcome, Option<SummaryCall>) {
    let outcome = call_tool(tools, hidden, call).await;
    derive_if_asked(llm, tools, hidden, call, outcome).await
}

/// The derive step of a finished call, when the call asks for it and succeeded.
async fn derive_if_asked(
    llm: &Client,
    tools: &Toolbox<'_>,
    hidden: &BTreeSet<String>,
    call: &ToolCall,
    outcome: CallOutcome,
) -> (CallOutcome, Option<SummaryCall>) {
    match derive::requested(tools, call) {
        Some((d, prompt)) if !outcome.is_error && !hidden.contains(&call.name) => {
            let (outcome, record) = derive::run(llm, call, &d, &prompt, outcome).await;
            (outcome, Some(record))
        }
        _ => (outcome, None),
    }
}

/// Runs one call, unless its tool was left out of this session.
async fn call_tool(tools: &Toolbox<'_>, hidden: &BTreeSet<String>, call: &ToolCall) -> CallOutcome {
    if hidden.contains(&call.name) {
        return CallOutcome::refused(error_text(
            ErrorKind::NotFound,
            &format!(
                "the tool '{}' is not available in this session: its plugin's schemas did not \
             fit the model's context window. Use the tools you were given",
                call.name
            ),
            None,
        ));
    }
    tools.call(call).await
}

/// One line describing a call, for continue.md.
fn activity_line(call: &ToolCall, outcome: &CallOutcome) -> String {
    let args: String = call.arguments.chars().take(100).collect();
    let result = outcome.content.lines().next().unwrap_or("").chars().take(80).collect::<String>();
    let status = if outcome.is_error { "failed" } else { "ok" };
    format!("{} {args} -> {status}: {result}", call.name)
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn mentions_are_skill_shaped_names_after_a_dollar() {
        assert_eq!(mentions("use $code-review, then $markdown-docs."), ["code-review", "markdown-docs"]);
        assert_eq!(
            mentions("$HOME costs $5 and $-x; $release-notes- twice $release-notes"),
            ["5", "release-notes"]
        );
        assert!(mentions("no dollars here, and a lone $").is_empty());
        assert!(mentions("émoji $naïve and $snake_case").is_empty());
    }
}
