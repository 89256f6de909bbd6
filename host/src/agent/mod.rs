//! The agent loop: build the request, call the model, run the tools it asks for, record the
//! results, and repeat until it answers, the turn limit is reached, or the person interrupts.

pub mod dispatch;
pub mod history;
pub mod observer;
pub mod prompt;
pub mod resume;
pub mod schema;
pub mod use_skill;

pub use dispatch::{CallOutcome, FileChange, Toolbox};
pub use observer::{Interrupt, Observer, Quiet};

use crate::capabilities::context::unfinished_items;
use crate::llm::{Client, FinishReason, Message, Request, ToolDef, Usage};
use prompt::StaticParts;
use serde::Serialize;

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
}

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

/// One conversation with the model over the session's tools.
pub struct Agent<'a> {
    llm: &'a Client,
    tools: Toolbox<'a>,
    defs: Vec<ToolDef>,
    prompt: StaticParts,
    cfg: AgentConfig,
    transcript: Vec<Message>,
    /// The previous session's continue-here note, shown until this session ends.
    continue_note: Option<String>,
    continue_consumed: bool,
    today: String,
    /// Recent tool calls, one line each, for continue.md.
    activity: Vec<String>,
    turns_since_todo: u32,
    reminder_gap: u32,
    last_reminder: Option<String>,
    pub interrupt: Interrupt,
    pub totals: Stats,
}

/// The local date and time, `YYYY-MM-DD HH:MM:SS`.
pub fn now_stamp() -> String {
    jiff::Zoned::now().strftime("%Y-%m-%d %H:%M:%S").to_string()
}

impl<'a> Agent<'a> {
    pub fn new(
        llm: &'a Client,
        tools: Toolbox<'a>,
        prompt: StaticParts,
        cfg: AgentConfig,
        continue_note: Option<String>,
    ) -> Self {
        let defs = tools.defs();
        Agent {
            llm,
            tools,
            defs,
            prompt,
            cfg,
            transcript: Vec::new(),
            continue_note,
            continue_consumed: false,
            today: jiff::Zoned::now().strftime("%Y-%m-%d (%A)").to_string(),
            activity: Vec::new(),
            turns_since_todo: 0,
            reminder_gap: TODO_REMINDER_AFTER,
            last_reminder: None,
            interrupt: Interrupt::default(),
            totals: Stats::default(),
        }
    }

    pub fn tools(&self) -> &Toolbox<'a> {
        &self.tools
    }

    pub fn transcript(&self) -> &[Message] {
        &self.transcript
    }

    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    /// Forgets the conversation and everything the tools kept (todo, thinking, read guard).
    pub fn clear(&mut self) {
        self.transcript.clear();
        self.activity.clear();
        self.tools.session.reset();
        self.turns_since_todo = 0;
        self.reminder_gap = TODO_REMINDER_AFTER;
        self.last_reminder = None;
    }

    /// The request the next model call would send.
    pub fn request(&self) -> Request {
        let sections: Vec<(String, String)> =
            self.tools.session.sections.all().into_iter().map(|(n, s)| (n, s.body)).collect();
        Request {
            system: self.prompt.render(&self.today, &sections, self.continue_note.as_deref()),
            messages: self.transcript.clone(),
            tools: self.defs.clone(),
            max_tokens: self.cfg.max_output_tokens,
            temperature: self.cfg.temperature,
        }
    }

    /// Works on `task` until the model answers or the loop has to stop.
    pub async fn run(&mut self, task: &str, obs: &mut dyn Observer) -> TaskResult {
        self.interrupt.reset();
        self.transcript.push(Message::user(task));
        let mut stats = Stats::default();
        let result = self.turns(&mut stats, obs).await;
        self.totals.turns += stats.turns;
        self.totals.llm_calls += stats.llm_calls;
        self.totals.tool_calls += stats.tool_calls;
        self.totals.tool_errors += stats.tool_errors;
        self.totals.input_tokens += stats.input_tokens;
        self.totals.output_tokens += stats.output_tokens;
        let (outcome, answer, error) = result;
        let ws = &self.tools.session.roots.workspace().dir;
        match outcome {
            Outcome::Done if self.cfg.history => {
                if let Err(e) = history::append(ws, &now_stamp(), task, &answer) {
                    obs.notice(&format!("cannot append to .corral/HISTORY.md: {e}"));
                }
            }
            Outcome::Done => {}
            _ if self.cfg.continue_file => {
                let reason = match (&outcome, &error) {
                    (Outcome::MaxTurns, _) => format!("the turn limit ({}) was reached", self.cfg.max_turns),
                    (Outcome::Interrupted, _) => "the person interrupted the session".to_string(),
                    (_, Some(e)) => format!("of an error: {}", e.lines().next().unwrap_or(e)),
                    _ => "the session ended early".to_string(),
                };
                let todo = self.tools.session.sections.get("todo");
                let note = resume::Note {
                    when: &now_stamp(),
                    reason: &reason,
                    task,
                    todo: todo.as_deref(),
                    activity: &self.activity,
                    last_reply: Some(&answer),
                };
                match resume::write(ws, &note) {
                    Ok(()) => obs.notice("wrote .corral/continue.md; the next session here will pick it up"),
                    Err(e) => obs.notice(&format!("cannot write .corral/continue.md: {e}")),
                }
            }
            _ => {}
        }
        TaskResult { outcome, answer, error, stats }
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
            self.remind_todo(obs);
            stats.turns += 1;
            let req = self.request();
            obs.waiting();
            stats.llm_calls += 1;
            let response = {
                let interrupt = self.interrupt.clone();
                let mut on_event = |e: crate::llm::Event| obs.event(&e);
                tokio::select! {
                    r = self.llm.complete(&req, &mut on_event) => r,
                    _ = interrupt.wait() => return (Outcome::Interrupted, last_text, None),
                }
            };
            let response = match response {
                Ok(r) => r,
                Err(e) => return (Outcome::Error, last_text, Some(e.to_string())),
            };
            self.accepted();
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
            self.transcript.push(response.to_message());
            let mut used_todo = false;
            for (i, call) in response.tool_calls.iter().enumerate() {
                obs.tool_start(call);
                let interrupt = self.interrupt.clone();
                let outcome = tokio::select! {
                    o = self.tools.call(call) => o,
                    _ = interrupt.wait() => {
                        for c in &response.tool_calls[i..] {
                            self.transcript.push(Message::Tool {
                                call_id: c.id.clone(),
                                name: c.name.clone(),
                                content: "error (interrupted): the person stopped this call".into(),
                                is_error: true,
                            });
                        }
                        return (Outcome::Interrupted, last_text, None);
                    }
                };
                stats.tool_calls += 1;
                if outcome.is_error {
                    stats.tool_errors += 1;
                }
                used_todo |= call.name == "todo";
                obs.tool_done(call, &outcome);
                self.activity.push(activity_line(call, &outcome));
                if self.activity.len() > 50 {
                    self.activity.drain(..25);
                }
                self.transcript.push(Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: outcome.content,
                    is_error: outcome.is_error,
                });
            }
            if used_todo {
                self.turns_since_todo = 0;
                self.reminder_gap = TODO_REMINDER_AFTER;
                self.last_reminder = None;
            } else {
                self.turns_since_todo += 1;
            }
        }
        (Outcome::MaxTurns, last_text, None)
    }

    /// The first accepted request consumed the continue-here file.
    fn accepted(&mut self) {
        if self.continue_note.is_some() && !self.continue_consumed {
            self.continue_consumed = true;
            let _ = resume::consume(&self.tools.session.roots.workspace().dir);
        }
    }

    fn nudge(&mut self, obs: &mut dyn Observer, text: &str) {
        obs.notice(text);
        self.transcript.push(Message::nudge(text));
    }

    /// Adds a reminder when todo items are open and the tool has not been used for a while;
    /// an unchanged reminder backs off (3, 6, 12, 24 turns).
    fn remind_todo(&mut self, obs: &mut dyn Observer) {
        let Some(todo) = self.tools.session.sections.get("todo") else { return };
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
        self.nudge(obs, &text);
    }
}

fn add_usage(stats: &mut Stats, u: Usage) {
    stats.input_tokens += u.input_tokens;
    stats.output_tokens += u.output_tokens;
}

/// One line describing a call, for continue.md.
fn activity_line(call: &crate::llm::ToolCall, outcome: &CallOutcome) -> String {
    let args: String = call.arguments.chars().take(100).collect();
    let result = outcome.content.lines().next().unwrap_or("").chars().take(80).collect::<String>();
    let status = if outcome.is_error { "failed" } else { "ok" };
    format!("{} {args} -> {status}: {result}", call.name)
}
