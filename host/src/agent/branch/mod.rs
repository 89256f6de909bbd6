//! The `branch` host tool: a sub-investigation in memory with its own small context (the
//! parent's system prompt and the description, never the parent's transcript), on the same
//! client and session; its final answer is the tool result and its context is then dropped.

mod args;
mod group;
mod running;

pub use args::{Args, MAX_TURNS, parse};
use corral_contract::{ErrorKind, error::error_text};
use running::Entry;
pub use running::{Running, RunningBranch};

use super::call::CallOutcome;
use super::{Toolbox, parallel};
use crate::capabilities::effects::Effect;
use crate::llm::{Client, Message, Request, ToolCall, ToolDef, Usage};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// The tool's name.
pub const NAME: &str = "branch";
/// At most this many branches of one reply run at once.
pub const MAX_CONCURRENT: usize = 4;
/// The longest conclusion given back to the parent, in bytes.
pub const CONCLUSION_MAX_BYTES: usize = 8 * 1024;
/// The longest tool result kept in a branch's context, in bytes.
const RESULT_MAX_BYTES: usize = 16 * 1024;

/// The tool as the model sees it.
pub fn def() -> ToolDef {
    ToolDef {
        name: NAME.into(),
        description: "Investigate something on the side and get back a short conclusion, without filling your \
                      own context: a sub-agent starts from your system prompt and the description alone (it does \
                      not see this conversation), uses tools for up to max_turns turns, and its final answer is \
                      the result. Read-only tools only unless allow_writes is true. Several branch calls in one \
                      reply run at the same time."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "What to find out, with every detail the branch needs (it sees nothing else)."},
                "max_turns": {"type": "integer", "minimum": 1, "maximum": MAX_TURNS, "description": "Turns before it must stop (default 10)."},
                "allow_writes": {"type": "boolean", "description": "Offer the write tools and run_command as this session allows (default false: read-only tools)."}
            },
            "required": ["description"],
            "additionalProperties": false
        }),
    }
}

/// How a branch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It gave its final answer.
    Done,
    /// It used all its turns first.
    MaxTurns,
    /// A model call failed.
    Error,
}

impl End {
    pub fn as_str(self) -> &'static str {
        match self {
            End::Done => "done",
            End::MaxTurns => "max_turns",
            End::Error => "error",
        }
    }
}

/// What observers hear about a branch, tagged with its id.
#[derive(Debug, Clone)]
pub enum BranchEvent {
    Start {
        id: String,
        call_id: String,
        description: String,
        max_turns: u32,
        allow_writes: bool,
    },
    /// One of its model calls, with what it cost or why it failed.
    ModelCall {
        id: String,
        duration: Duration,
        result: Result<Usage, String>,
    },
    /// One of its tool calls.
    ToolCall {
        id: String,
        call: ToolCall,
        outcome: CallOutcome,
    },
    End {
        id: String,
        end: End,
        turns: u32,
    },
}

/// What a branch borrows from its parent.
pub(super) struct Parent<'p, 'a> {
    pub llm: &'p Client,
    pub tools: &'p Toolbox<'a>,
    /// The parent's system prompt as it stands.
    pub system: String,
    /// The tools the parent is offered (the branch gets these, filtered).
    pub defs: &'p [ToolDef],
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub running: &'p Running,
    pub events: UnboundedSender<BranchEvent>,
}

impl Parent<'_, '_> {
    fn emit(&self, e: BranchEvent) {
        // The receiver lives as long as the batch that runs the branches.
        let _ = self.events.send(e);
    }

    /// The tools a branch is offered: never `branch` itself (depth 1); without
    /// `allow_writes`, only tools that declare themselves read-only.
    pub fn branch_defs(&self, allow_writes: bool) -> Vec<ToolDef> {
        self.defs
            .iter()
            .filter(|d| d.name != NAME && (allow_writes || self.tools.is_read_only(&d.name)))
            .cloned()
            .collect()
    }

    /// Runs one `branch` call to its end. Never fails: every problem is the call's result.
    pub async fn run(&self, call: &ToolCall) -> CallOutcome {
        let started = Instant::now();
        let args = match parse(&call.arguments) {
            Ok(a) => a,
            Err(e) => return CallOutcome::refused(error_text(ErrorKind::InvalidArgs, &e.to_string(), None)),
        };
        let entry = self.running.begin(&args.description);
        let id = entry.id();
        self.emit(BranchEvent::Start {
            id: id.clone(),
            call_id: call.id.clone(),
            description: args.description.clone(),
            max_turns: args.max_turns,
            allow_writes: args.allow_writes,
        });
        let (end, turns, content) = self.investigate(&entry, &args).await;
        self.emit(BranchEvent::End { id, end, turns });
        CallOutcome {
            content,
            is_error: end == End::Error,
            plugin: None,
            duration: started.elapsed(),
            effects: Vec::new(),
            images: Vec::new(),
        }
    }

    /// The branch's own loop: its result text, how it ended, and the turns it used.
    async fn investigate(&self, entry: &Entry, args: &Args) -> (End, u32, String) {
        let id = entry.id();
        let defs: std::sync::Arc<[ToolDef]> = self.branch_defs(args.allow_writes).into();
        let offered: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        let mut messages = vec![Message::user(task_text(args))];
        let mut last_text = String::new();
        for turn in 1..=args.max_turns {
            entry.turn(turn);
            let req = Request {
                system: self.system.clone(),
                messages: messages.clone(),
                tools: defs.clone(),
                max_tokens: self.max_tokens,
                temperature: self.temperature,
            };
            let asked = Instant::now();
            let reply = self.llm.complete(&req, &mut |_| {}).await;
            let result = reply.as_ref().map(|r| r.usage).map_err(|e| e.to_string());
            self.emit(BranchEvent::ModelCall { id: id.clone(), duration: asked.elapsed(), result });
            let response = match reply {
                Ok(r) => r,
                Err(e) => {
                    return (
                        End::Error,
                        turn,
                        error_text(
                            ErrorKind::BranchFailed,
                            &format!(
                                "{id} stopped in turn {turn}: its model call failed: {e}. Nothing \
                             it found is kept; carry on without it or start another branch"
                            ),
                            None,
                        ),
                    );
                }
            };
            if !response.text.trim().is_empty() {
                last_text = response.text.clone();
            }
            if response.tool_calls.is_empty() {
                let conclusion = cap(response.text.trim(), CONCLUSION_MAX_BYTES);
                return (End::Done, turn, format!("[{id} concluded after {turn} turn(s)]\n{conclusion}"));
            }
            messages.push(response.to_message());
            for c in &response.tool_calls {
                let outcome = if offered.contains(&c.name.as_str()) {
                    let mut o = self.tools.call(c).await;
                    self.tools.session.snapshot().note_call(&c.name, self.tools.is_read_only(&c.name));
                    if o.effects.iter().any(|e| matches!(e, Effect::SnapshotRestore(_))) {
                        // The scope to collapse is the parent's conversation, which a branch does not hold.
                        o.content = error_text(
                            ErrorKind::NotAllowed,
                            "a branch cannot restore a snapshot: its context is dropped when it ends anyway. \
                                 Put what you learned in your final answer",
                            None,
                        );
                        o.is_error = true;
                    }
                    o
                } else {
                    CallOutcome::refused(not_offered(&c.name, args.allow_writes, &offered))
                };
                messages.push(Message::Tool {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    content: cap(&outcome.content, RESULT_MAX_BYTES).to_string(),
                    is_error: outcome.is_error,
                    images: Vec::new(),
                });
                self.emit(BranchEvent::ToolCall { id: id.clone(), call: c.clone(), outcome });
            }
        }
        let so_far = if last_text.trim().is_empty() { "(it wrote nothing yet)" } else { last_text.trim() };
        let n = args.max_turns;
        (
            End::MaxTurns,
            n,
            format!(
                "[{id} reached its turn limit ({n}) before concluding; what it had so far:]\n{}",
                cap(so_far, CONCLUSION_MAX_BYTES)
            ),
        )
    }
}

/// The branch's first (and only) message from its parent.
fn task_text(args: &Args) -> String {
    let tools = if args.allow_writes { "the tools you are given" } else { "read-only tools" };
    format!(
        "You are a branch: a short side investigation started by another agent, which will read only your final \
         answer. Work with {tools}, in at most {} turn(s); nobody can answer questions. When you know, reply \
         without calling tools: a concise conclusion with the facts (paths, names, lines, values) the other agent \
         needs.\n\nThe investigation:\n{}",
        args.max_turns, args.description
    )
}

fn not_offered(name: &str, allow_writes: bool, offered: &[&str]) -> String {
    let shown: String = name.chars().take(80).collect();
    let why = if allow_writes {
        "it is not one of this branch's tools".to_string()
    } else {
        "this branch runs with read-only tools only (it was started without allow_writes)".to_string()
    };
    error_text(
        ErrorKind::NotAllowed,
        &format!("'{shown}' is not available: {why}. Its tools are: {}.", offered.join(", ")),
        None,
    )
}

/// The longest prefix of `text` of at most `max` bytes, marked when cut.
fn cap(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    format!("{}\n[cut at {max} bytes]", corral_contract::text::cut(text, max)).into()
}

/// Whether a `branch` call asks for the write tools.
pub(super) fn may_write(call: &ToolCall) -> bool {
    parse(&call.arguments).is_ok_and(|a| a.allow_writes)
}

/// The kind of a call for grouping: `branch` calls run side by side with each other.
pub(super) fn kind(offered: bool, call: &ToolCall) -> Option<parallel::Kind> {
    (offered && call.name == NAME).then_some(parallel::Kind::Branch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(cap("short", 10), "short");
        let c = cap("ééééé", 5);
        assert!(c.starts_with("éé\n[cut at 5 bytes]"), "{c}");
    }

    #[test]
    fn refusals_say_why_and_list_the_tools() {
        let e = not_offered("write_file", false, &["read_file", "grep"]);
        assert!(
            e.contains("read-only tools only") && e.contains("allow_writes") && e.contains("read_file, grep"),
            "{e}"
        );
    }
}
