//! The agent loop: build the request, call the model, run the tools it asks for, record the
//! results, and repeat until it answers, the turn limit is reached, or the person interrupts.

mod batch;
pub mod branch;
mod call;
pub mod cron_tool;
mod derive;
pub mod dispatch;
mod downscale;
mod effects;
pub mod external;
pub mod history;
pub mod images;
mod manage;
mod model;
pub mod observer;
mod outcome;
mod parallel;
mod saving;
pub mod schema;
pub mod undo_tool;
pub mod use_skill;
mod window;

pub use crate::capabilities::effects::{Effect, FileChange};
/// The system prompt and continue-here notes moved to `context`; kept here for old paths.
pub use crate::context::{prompt, resume};
pub use call::CallOutcome;
pub use dispatch::Toolbox;
pub use external::{ExternalResult, ExternalTool, ExternalTools};
pub use manage::ContextStatus;
pub use observer::{Compaction, CompactionKind, Interrupt, Observer, Quiet, SummaryCall};
pub use outcome::{Outcome, Stats, TaskResult};

use crate::capabilities::context::unfinished_items;
use crate::context::recap::Checkpoints;
use crate::context::snapshot::Streak;
use crate::context::{Budget, Transcript, memory, schemas, small, tokens};
use crate::llm::{Client, FinishReason, Message, ToolDef, Usage};
use prompt::StaticParts;
use std::collections::BTreeSet;

/// Turns without the todo tool, while items are open, before a reminder.
const TODO_REMINDER_AFTER: u32 = 3;

/// How the loop behaves.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub max_turns: u32,
    pub max_output_tokens: u32,
    pub temperature: Option<f32>,
    /// Append final answers to `.corral/HISTORY.md`.
    pub history: bool,
    /// Write `.corral/continue.md` when a task ends unfinished.
    pub continue_file: bool,
    /// The model's context window in tokens, when known (`--max-context-tokens`, or the
    /// server's model list). Unknown: nothing is compacted until the provider refuses.
    pub window: Option<u64>,
    /// Summarise every 10 turns, for recaps when turns are dropped (`--proactive-summaries`).
    pub proactive_summaries: bool,
    /// Show all of MEMORY.md instead of a budgeted selection (`--memory-full`).
    pub memory_full: bool,
    /// The person's cap on one tool result kept in the conversation, in bytes and lines
    /// (`--max-output-kb`, `--max-output-lines`); small windows lower the byte cap further.
    pub max_output_bytes: usize,
    pub max_output_lines: u32,
    /// Most read-only calls of one reply run at once (`agent.parallel_calls`; the cores
    /// bound it too). 1 runs every call in turn.
    pub parallel_calls: u32,
}

/// One conversation with the model over the session's tools.
pub struct Agent<'a> {
    llm: &'a Client,
    tools: Toolbox<'a>,
    /// The tools offered to the model.
    defs: std::sync::Arc<[ToolDef]>,
    /// Tools left out because their schemas did not fit the window.
    hidden: BTreeSet<String>,
    /// What the offered schemas cost.
    tool_cost: tokens::Count,
    /// The smallest catalogue (terse core tools), sent when the offered one cannot fit.
    small_defs: std::sync::Arc<[ToolDef]>,
    /// Every tool of the session, and what the full prompt and built-in schemas cost (for
    /// choosing terse mode when the window turns out small).
    all_defs: Vec<ToolDef>,
    builtin_cost: u64,
    /// Warnings from start-up for the person (the tool-schema budget).
    notes: Vec<String>,
    /// The external tools' generation the catalogue was planned for.
    external_generation: u64,
    prompt: StaticParts,
    cfg: AgentConfig,
    transcript: Transcript,
    budget: Budget,
    checkpoints: Checkpoints,
    streak: Streak,
    /// The memory block for the current task.
    memory: Option<String>,
    /// The last system prompt and its cost.
    system_cost: (String, tokens::Count),
    /// The previous session's continue-here note, shown until this session ends.
    continue_note: Option<String>,
    continue_consumed: bool,
    /// Whether the model answered at least once in the current task (a run that never
    /// reached it leaves no continue note).
    answered: bool,
    today: String,
    /// Recent tool calls, one line each, for continue.md.
    activity: Vec<String>,
    turns_since_todo: u32,
    reminder_gap: u32,
    last_reminder: Option<String>,
    /// Whether `branch` is offered (no plugin took the name).
    offers_branch: bool,
    /// The branches running now (for `/status`).
    branches: branch::Running,
    /// Where the session is saved as it goes (`context/saved/`); None: it is not.
    journal: Option<crate::context::saved::Journal>,
    pub interrupt: Interrupt,
    pub totals: Stats,
}

/// The local date and time, `YYYY-MM-DD HH:MM:SS`.
pub fn now_stamp() -> String {
    local_now().strftime("%Y-%m-%d %H:%M:%S").to_string()
}

/// The current local time. Without `TZ`, the zone is read from `/etc/localtime` directly:
/// jiff's own lookup first indexes the whole zoneinfo database, which cost about 1.5 ms of
/// every start on the way to the first request.
fn local_now() -> jiff::Zoned {
    const LOCALTIME: &str = "/etc/localtime";
    let now = jiff::Timestamp::now();
    if std::env::var_os("TZ").is_none()
        && let Ok(data) = std::fs::read(LOCALTIME)
    {
        let name = std::fs::read_link(LOCALTIME)
            .ok()
            .and_then(|target| target.to_string_lossy().split_once("zoneinfo/").map(|(_, n)| n.to_string()))
            .unwrap_or_else(|| "Local".to_string());
        if let Ok(tz) = jiff::tz::TimeZone::tzif(&name, &data) {
            return now.to_zoned(tz);
        }
    }
    jiff::Zoned::now()
}

/// How a turn loop stopped early: the outcome and the error, if any.
type Stop = (Outcome, Option<String>);

impl<'a> Agent<'a> {
    pub fn new(
        llm: &'a Client,
        tools: Toolbox<'a>,
        prompt: StaticParts,
        cfg: AgentConfig,
        continue_note: Option<String>,
    ) -> Self {
        // Exact counts only matter against a budget; without a known window the estimate is
        // enough and the tokenizer (and its memory) is not loaded until an overflow names one.
        if cfg.window.is_some() {
            tokens::warm_up();
        }
        let costs = external::costs(&tools);
        let external_generation = tools.external.map_or(0, |e| e.generation());
        let budget = Budget::new(cfg.window, cfg.max_output_tokens);
        let mut all = tools.defs();
        let offers_branch = tools.registry.tool(branch::NAME).is_none();
        if offers_branch {
            all.push(branch::def());
            all.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let small_defs = small::compact(&all, 0);
        // Terse mode follows what corral itself needs (its built-in tools); large plugins are
        // the schema budget's business (`schemas::plan`).
        let full_system = prompt.render("", &[], continue_note.as_deref());
        let estimates = schemas::Estimates::of(&all);
        let builtin = costs.iter().filter(|c| c.builtin).map(|c| &c.def);
        let builtin_cost = u64::from(tokens::approx(&full_system)) + u64::from(estimates.cost(builtin).n);
        let plan = schemas::plan(&costs, cfg.window);
        let hidden: BTreeSet<String> = plan.left_out.iter().cloned().collect();
        let defs: Vec<ToolDef> = all.iter().filter(|d| !hidden.contains(&d.name)).cloned().collect();
        let tool_cost = estimates.cost(&defs);
        let mut agent = Agent {
            llm,
            tools,
            defs: defs.into(),
            hidden,
            tool_cost,
            small_defs: small_defs.into(),
            all_defs: all,
            builtin_cost,
            notes: plan.notes,
            external_generation,
            prompt,
            budget,
            transcript: Transcript::new(llm.replays_reasoning()),
            cfg,
            checkpoints: Checkpoints::default(),
            streak: Streak::default(),
            memory: None,
            system_cost: (String::new(), tokens::Count::default()),
            continue_note,
            continue_consumed: false,
            answered: false,
            today: local_now().strftime("%Y-%m-%d (%A)").to_string(),
            activity: Vec::new(),
            turns_since_todo: 0,
            reminder_gap: TODO_REMINDER_AFTER,
            last_reminder: None,
            offers_branch,
            branches: branch::Running::default(),
            journal: None,
            interrupt: Interrupt::default(),
            totals: Stats::default(),
        };
        if let Some(note) = agent.go_terse_if_small() {
            agent.notes.push(note);
        }
        agent
    }

    pub fn tools(&self) -> &Toolbox<'a> {
        &self.tools
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    /// The branches running now; a handle the front end may keep (`/status`).
    pub fn running_branches(&self) -> branch::Running {
        self.branches.clone()
    }

    /// Warnings from start-up that the person should see.
    pub fn startup_notes(&self) -> &[String] {
        &self.notes
    }

    /// Forgets the conversation and everything kept beside it: todo list, thinking notes,
    /// snapshots, checkpoint summaries, the read guard.
    pub fn clear(&mut self) {
        self.transcript.clear();
        self.activity.clear();
        self.tools.session.reset();
        self.checkpoints.clear(self.transcript.next_id());
        self.streak.reset();
        self.turns_since_todo = 0;
        self.reminder_gap = TODO_REMINDER_AFTER;
        self.last_reminder = None;
    }

    /// Works on `task` until the model answers or the loop has to stop.
    pub async fn run(&mut self, task: &str, obs: &mut dyn Observer) -> TaskResult {
        self.interrupt.reset();
        self.load_memory(task, obs);
        self.transcript.push(Message::user(task));
        self.tools.session.snapshot().person_spoke();
        self.streak.reset();
        let mut stats = Stats::default();
        self.answered = false;
        self.activate_mentioned_skills(task, &mut stats, obs).await;
        let result = self.turns(&mut stats, obs).await;
        self.totals.add(&stats);
        let (outcome, answer, error) = result;
        self.save_end(&outcome, error.as_deref(), stats.turns, obs);
        let local = &self.tools.session.local();
        if outcome == Outcome::Done {
            // The task is finished: a waiting note about unfinished work is not wanted any more.
            let _ = resume::consume(local);
        }
        match outcome {
            Outcome::Done if self.cfg.history => {
                if let Err(e) = history::append(local, &now_stamp(), task, &answer) {
                    obs.notice(&format!("cannot append to {}: {e}", local.shown("HISTORY.md")));
                }
            }
            Outcome::Done => {}
            // A run the model never answered has no work to continue.
            _ if self.cfg.continue_file && self.answered => {
                let reason = match (&outcome, &error) {
                    (Outcome::MaxTurns, _) => format!("the turn limit ({}) was reached", self.cfg.max_turns),
                    (Outcome::Interrupted, _) => "the person interrupted the session".to_string(),
                    (_, Some(e)) => format!("of an error: {}", e.lines().next().unwrap_or(e)),
                    _ => "the session ended early".to_string(),
                };
                let todo = self.tools.session.sections().get("todo");
                let note = resume::Note {
                    when: &now_stamp(),
                    reason: &reason,
                    task,
                    todo: todo.as_deref(),
                    activity: &self.activity,
                    last_reply: Some(&answer),
                };
                match resume::write(local, &note) {
                    Ok(()) => obs.notice(&format!(
                        "wrote {}; the next session here will pick it up (--no-continue to start fresh)",
                        local.shown("continue.md")
                    )),
                    Err(e) => obs.notice(&format!("cannot write {}: {e}", local.shown("continue.md"))),
                }
            }
            _ => {}
        }
        TaskResult { outcome, answer, error, stats }
    }

    /// Chooses the memory notes to show for `task`.
    fn load_memory(&mut self, task: &str, obs: &mut dyn Observer) {
        let ws = &self.tools.session.roots().workspace().dir;
        self.memory = match crate::capabilities::state::read(ws, memory::FILE) {
            Ok(Some(text)) => memory::render(&text, task, self.cfg.memory_full),
            Ok(None) => None,
            Err(e) => {
                obs.notice(&format!("cannot read .corral/{}: {e}", memory::FILE));
                None
            }
        };
    }

    async fn turns(
        &mut self,
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> (Outcome, String, Option<String>) {
        let mut last_text = String::new();
        let mut repaired_empty = false;
        let mut repaired_length = false;
        while stats.turns < self.cfg.max_turns {
            if self.interrupt.is_set() {
                return (Outcome::Interrupted, last_text, None);
            }
            self.remind_todo();
            self.refresh_external(obs);
            stats.turns += 1;
            if let Err((o, e)) = self.checkpoint_if_due(stats, obs).await {
                return (o, last_text, e);
            }
            let response = match self.call_model(stats, obs).await {
                Ok(r) => r,
                Err((o, e)) => {
                    if let Some(e) = &e {
                        obs.model_error(e);
                    }
                    return (o, last_text, e);
                }
            };
            self.accepted();
            self.answered = true;
            add_usage(stats, response.usage);
            obs.reply(&response);
            if !response.text.trim().is_empty() {
                last_text = response.text.clone();
            }
            if response.tool_calls.is_empty() {
                if response.text.trim().is_empty() {
                    if repaired_empty {
                        return (
                            Outcome::Error,
                            last_text,
                            Some("the model sent two empty replies in a row".to_string()),
                        );
                    }
                    repaired_empty = true;
                    self.nudge(obs, "Your last reply was empty. Continue the task: call a tool, or give your final answer.");
                    continue;
                }
                self.transcript.push(response.to_message());
                if response.finish == FinishReason::Length && !repaired_length {
                    repaired_length = true;
                    self.nudge(
                        obs,
                        "Your reply was cut off by the output limit. Continue exactly where it stopped.",
                    );
                    continue;
                }
                return (Outcome::Done, response.text, None);
            }
            if let Err(o) = self.run_calls(&response, stats, obs).await {
                return (o, last_text, None);
            }
            if self.cfg.proactive_summaries {
                self.checkpoints.tick();
            }
        }
        (Outcome::MaxTurns, last_text, None)
    }

    /// The first accepted request consumed the continue-here file.
    fn accepted(&mut self) {
        if self.continue_note.is_some() && !self.continue_consumed {
            self.continue_consumed = true;
            let _ = resume::consume(self.tools.session.local());
        }
    }

    fn nudge(&mut self, obs: &mut dyn Observer, text: &str) {
        obs.notice(text);
        self.transcript.push(Message::nudge(text));
    }

    /// Adds a reminder when todo items are open and the tool has not been used for a while;
    /// an unchanged reminder backs off (3, 6, 12, 24 turns). It is for the model only: the
    /// person sees the list itself on each todo call, so it is not shown as a notice.
    fn remind_todo(&mut self) {
        let Some(todo) = self.tools.session.sections().get("todo") else { return };
        let open = unfinished_items(&todo);
        if open == 0 || self.turns_since_todo < self.reminder_gap {
            return;
        }
        let text = format!(
            "Reminder: your todo list has {open} unfinished item(s):\n{}\nMark finished items done with the \
             todo tool, or carry on with the next one.",
            todo.lines().filter(|l| l.trim_start().starts_with("- [ ]")).collect::<Vec<_>>().join("\n")
        );
        if self.last_reminder.as_deref() == Some(text.as_str()) {
            self.reminder_gap = (self.reminder_gap * 2).min(24);
        }
        self.turns_since_todo = 0;
        self.last_reminder = Some(text.clone());
        self.transcript.push(Message::nudge(&text));
    }
}

fn add_usage(stats: &mut Stats, u: Usage) {
    stats.input_tokens += u.input_tokens;
    stats.output_tokens += u.output_tokens;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_local_time_agrees_with_the_system_zone_lookup() {
        let (fast, slow) = (super::local_now(), jiff::Zoned::now());
        assert_eq!(fast.offset(), slow.offset());
        assert!((slow.timestamp() - fast.timestamp()).get_seconds().abs() < 2);
    }
}
