//! `think`: numbered scratchpad thoughts, with revisions of earlier thoughts and named
//! branches. The history lives in kv; the latest thoughts are published as the `thinking`
//! section, so the model keeps its notes after the conversation is compacted.
//!
//! Calls are coerced rather than refused where the intent is clear: the mode is inferred
//! from the fields present, fields the mode does not use are dropped, a revision or branch
//! with nothing to refer to becomes a new thought, and the same error twice in a row is
//! recorded as a plain new thought so a model cannot get stuck in a loop of corrections.

use crate::text::{clip_chars, one_line, publish};
use corral_plugin_sdk::args::{opt_bool, opt_u64, req_str};
use corral_plugin_sdk::host::{self, Level, State, load_json, save_json};
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};
use serde::{Deserialize, Serialize};

/// Longest thought kept; longer ones are cut (with a note in the result).
pub const MAX_THOUGHT_CHARS: usize = 10_000;
/// Most thoughts in one session.
pub const MAX_THOUGHTS: usize = 200;
/// Most distinct branches in one session.
pub const MAX_BRANCHES: usize = 20;
/// Longest branch label.
pub const MAX_BRANCH_ID_CHARS: usize = 50;
/// The estimate of thoughts needed when the model gives none and there is no earlier one.
pub const DEFAULT_TOTAL: u64 = 3;
/// The context section that shows the latest thoughts.
pub const SECTION: &str = "thinking";
/// Thoughts shown in the section.
pub const SECTION_THOUGHTS: usize = 8;
/// Characters of each thought shown in the section (and kept in the history).
pub const SECTION_CLIP_CHARS: usize = 300;
/// The section's size limit in bytes; older thoughts are left out to stay under it.
pub const SECTION_MAX_BYTES: usize = 4096;
/// The kv key of the history.
const KEY: &str = "think";

pub fn spec() -> Spec {
    Spec::new(
        "think",
        "Record one step of structured reasoning before you act: planning a multi-step change, \
         debugging, or weighing alternatives. Only `thought` is required; thoughts are numbered \
         automatically. To correct an earlier thought use mode \"revision\" with `revises_thought`; \
         to explore an alternative use mode \"branch\" with `branch_from_thought` and a short \
         `branch_id`. Set `next_thought_needed` to false when you are done. Your latest thoughts stay \
         in the system prompt (section `thinking`) even after the conversation is compacted. The tool \
         changes nothing in the workspace; it returns the thought number, the estimate, the branch \
         labels and the history length.",
        json!({
            "type": "object",
            "properties": {
                "thought": {
                    "type": "string",
                    "description": "This thinking step (up to 10,000 characters; longer text is cut)"
                },
                "thought_number": {
                    "type": "integer", "minimum": 1,
                    "description": "Number of this thought (default: one more than the last)"
                },
                "total_thoughts": {
                    "type": "integer", "minimum": 1,
                    "description": "Estimated number of thoughts needed (default: the previous estimate, \
                                    or 3); raised when thought_number exceeds it"
                },
                "next_thought_needed": {
                    "type": "boolean",
                    "description": "Whether another thought follows (default true)"
                },
                "mode": {
                    "type": "string", "enum": ["new", "revision", "branch"],
                    "description": "new (default), revision (needs revises_thought) or branch (needs \
                                    branch_from_thought and branch_id)"
                },
                "revises_thought": {
                    "type": "integer", "minimum": 1,
                    "description": "For mode revision: the number of the earlier thought being corrected"
                },
                "branch_from_thought": {
                    "type": "integer", "minimum": 1,
                    "description": "For mode branch: the number of the thought this alternative starts from"
                },
                "branch_id": {
                    "type": "string",
                    "description": "For mode branch: a short label for the alternative (1 to 50 characters); \
                                    reuse it to continue that branch"
                }
            },
            "required": ["thought"]
        }),
    )
    .needs(Capability::Kv)
    .needs(Capability::Context)
    .idempotent(false)
}

/// The session's thoughts, as kept in kv.
#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    thoughts: Vec<Entry>,
    /// Branch labels, in the order they were opened.
    branches: Vec<String>,
    /// The last error returned, to spot the same error twice in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
}

/// One recorded thought. Only a one-line clip of the text is kept: nothing reads more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    number: u64,
    total: u64,
    next: bool,
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revises: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branch: Option<Branch>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Branch {
    id: String,
    from: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    New,
    Revision,
    Branch,
}

/// What kind of thought a call records, with only the fields that kind uses.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    New,
    Revision(u64),
    Branch(Branch),
}

/// A call after coercion.
#[derive(Debug, Clone, PartialEq)]
struct Request {
    number: Option<u64>,
    total: Option<u64>,
    next: Option<bool>,
    kind: Kind,
}

/// Why a call cannot be recorded as asked.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    /// A field could not be read (the message names it).
    Field(String),
    RevisionNeedsTarget,
    RevisesUnknown(u64),
    BranchIncomplete {
        has_from: bool,
    },
    BranchIdBlank,
    BranchIdTooLong(usize),
    BranchFromUnknown(u64),
    TooManyBranches,
}

impl Problem {
    fn message(&self) -> String {
        match self {
            Problem::Field(m) => m.clone(),
            Problem::RevisionNeedsTarget => {
                "mode \"revision\" needs revises_thought, the number of the thought it corrects".into()
            }
            Problem::RevisesUnknown(n) => format!("revises_thought={n} is not a recorded thought"),
            Problem::BranchIncomplete { has_from: true } => {
                "mode \"branch\" needs branch_id as well as branch_from_thought".into()
            }
            Problem::BranchIncomplete { has_from: false } => {
                "mode \"branch\" needs branch_from_thought as well as branch_id".into()
            }
            Problem::BranchIdBlank => "branch_id is blank".into(),
            Problem::BranchIdTooLong(n) => {
                format!("branch_id is {n} characters long; the limit is {MAX_BRANCH_ID_CHARS}")
            }
            Problem::BranchFromUnknown(n) => format!("branch_from_thought={n} is not a recorded thought"),
            Problem::TooManyBranches => format!("there are already {MAX_BRANCHES} branches, the limit"),
        }
    }

    /// How to correct the call, with the thought numbers that exist.
    fn hint(&self, h: &History) -> String {
        let numbers = h.numbers();
        let recorded = ranges(&numbers);
        let last = numbers.last().copied().unwrap_or(1);
        match self {
            Problem::Field(_) => "fix that field or leave it out".into(),
            Problem::RevisionNeedsTarget | Problem::RevisesUnknown(_) => format!(
                "recorded thoughts: {recorded}. Use revises_thought={last}, or leave out mode and \
                 revises_thought for a plain new thought"
            ),
            Problem::BranchIncomplete { .. } => format!(
                "set branch_from_thought (recorded thoughts: {recorded}) and branch_id together, or leave \
                 out mode for a plain new thought"
            ),
            Problem::BranchIdBlank | Problem::BranchIdTooLong(_) => {
                "use a short label such as \"alt-approach\"".into()
            }
            Problem::BranchFromUnknown(_) => {
                format!("recorded thoughts: {recorded}. Use branch_from_thought={last}")
            }
            Problem::TooManyBranches => format!(
                "continue an existing branch with its branch_id ({}), or leave out mode for a plain new \
                 thought",
                h.branches.join(", ")
            ),
        }
    }
}

/// Sorted numbers as compact ranges: `1-4, 7`.
fn ranges(numbers: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let start = numbers[i];
        let mut end = start;
        while i + 1 < numbers.len() && numbers[i + 1] == end + 1 {
            i += 1;
            end = numbers[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    if parts.is_empty() { "none yet".into() } else { parts.join(", ") }
}

fn present(args: &Value, key: &str) -> bool {
    args.get(key).is_some_and(|v| !v.is_null())
}

/// The mode: an explicit `mode` wins (an unknown one means new); otherwise the legacy
/// `is_revision`, then the fields present.
fn infer_mode(args: &Value) -> Mode {
    if let Some(Value::String(m)) = args.get("mode") {
        return match m.trim().to_ascii_lowercase().as_str() {
            "revision" => Mode::Revision,
            "branch" => Mode::Branch,
            _ => Mode::New,
        };
    }
    match opt_bool(args, "is_revision").ok().flatten() {
        Some(true) => Mode::Revision,
        Some(false) => Mode::New,
        None if present(args, "branch_from_thought") || present(args, "branch_id") => Mode::Branch,
        None if present(args, "revises_thought") => Mode::Revision,
        None => Mode::New,
    }
}

fn field<T>(r: Result<Option<T>, ToolError>) -> Result<Option<T>, Problem> {
    r.map_err(|e| Problem::Field(e.message))
}

/// A positive integer field; 0 counts as absent.
fn positive(args: &Value, key: &str) -> Result<Option<u64>, Problem> {
    Ok(field(opt_u64(args, key))?.filter(|n| *n > 0))
}

/// `branch_id` as a trimmed one-line label; numbers are accepted as labels.
fn branch_id(args: &Value) -> Result<Option<String>, Problem> {
    let id = match args.get("branch_id") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => one_line(s),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(Problem::Field("'branch_id' must be a short text label".into())),
    };
    let chars = id.chars().count();
    if chars == 0 {
        return Err(Problem::BranchIdBlank);
    }
    if chars > MAX_BRANCH_ID_CHARS {
        return Err(Problem::BranchIdTooLong(chars));
    }
    Ok(Some(id))
}

/// Reads a call's fields for its mode; fields the mode does not use are never looked at.
fn parse(args: &Value, has_history: bool) -> Result<Request, Problem> {
    let mode = if has_history { infer_mode(args) } else { Mode::New };
    let number = positive(args, "thought_number")?;
    let total = positive(args, "total_thoughts")?;
    let next = field(opt_bool(args, "next_thought_needed"))?;
    let kind = match mode {
        Mode::New => Kind::New,
        Mode::Revision => {
            Kind::Revision(positive(args, "revises_thought")?.ok_or(Problem::RevisionNeedsTarget)?)
        }
        Mode::Branch => {
            let from = positive(args, "branch_from_thought")?;
            let id = branch_id(args)?;
            match (from, id) {
                (Some(from), Some(id)) => Kind::Branch(Branch { id, from }),
                (from, _) => return Err(Problem::BranchIncomplete { has_from: from.is_some() }),
            }
        }
    };
    Ok(Request { number, total, next, kind })
}

impl History {
    fn load(state: &dyn State) -> History {
        match load_json(state, KEY) {
            Ok(h) => h.unwrap_or_default(),
            Err(e) => {
                host::log(Level::Warn, &format!("think: starting a new history: {e}"));
                History::default()
            }
        }
    }

    fn numbers(&self) -> Vec<u64> {
        let mut n: Vec<u64> = self.thoughts.iter().map(|e| e.number).collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    fn has(&self, number: u64) -> bool {
        self.thoughts.iter().any(|e| e.number == number)
    }

    fn validate(&self, kind: &Kind) -> Result<(), Problem> {
        match kind {
            Kind::New => Ok(()),
            Kind::Revision(n) if !self.has(*n) => Err(Problem::RevisesUnknown(*n)),
            Kind::Revision(_) => Ok(()),
            Kind::Branch(b) if !self.has(b.from) => Err(Problem::BranchFromUnknown(b.from)),
            Kind::Branch(b) if !self.branches.contains(&b.id) && self.branches.len() >= MAX_BRANCHES => {
                Err(Problem::TooManyBranches)
            }
            Kind::Branch(_) => Ok(()),
        }
    }

    fn record(&mut self, req: Request, text: &str) -> Entry {
        let number =
            req.number.unwrap_or_else(|| self.thoughts.iter().map(|e| e.number).max().unwrap_or(0) + 1);
        let total = req.total.or(self.thoughts.last().map(|e| e.total)).unwrap_or(DEFAULT_TOTAL).max(number);
        let (revises, branch) = match req.kind {
            Kind::New => (None, None),
            Kind::Revision(n) => (Some(n), None),
            Kind::Branch(b) => (None, Some(b)),
        };
        if let Some(b) = &branch
            && !self.branches.contains(&b.id)
        {
            self.branches.push(b.id.clone());
        }
        let entry = Entry {
            number,
            total,
            next: req.next.unwrap_or(true),
            text: clip_chars(&one_line(text), SECTION_CLIP_CHARS),
            revises,
            branch,
        };
        self.thoughts.push(entry.clone());
        entry
    }

    /// The `thinking` section: a header, then one line per recent thought, oldest first.
    fn section(&self) -> String {
        let lines: Vec<String> = self.thoughts.iter().map(section_line).collect();
        if lines.is_empty() {
            return String::new();
        }
        let mut start = lines.len().saturating_sub(SECTION_THOUGHTS);
        loop {
            let header = if start == 0 {
                "Your thoughts so far (think tool), oldest first:".to_string()
            } else {
                format!("Your latest thoughts (think tool), oldest first; {start} earlier not shown:")
            };
            let body = std::iter::once(header).chain(lines[start..].iter().cloned()).collect::<Vec<_>>();
            let body = body.join("\n");
            if body.len() <= SECTION_MAX_BYTES || start + 1 >= lines.len() {
                return body;
            }
            start += 1;
        }
    }
}

/// `7/12 (branch "alt" from 4): text`, `6/12 (revises 3): text` or `5/12: text`.
fn section_line(e: &Entry) -> String {
    let label = match (&e.revises, &e.branch) {
        (Some(r), _) => format!(" (revises {r})"),
        (None, Some(b)) => format!(" (branch \"{}\" from {})", b.id, b.from),
        (None, None) => String::new(),
    };
    format!("{}/{}{label}: {}", e.number, e.total, e.text)
}

pub fn run(state: &dyn State, args: &Value) -> Result<Output, ToolError> {
    let thought = req_str(args, "thought")?;
    if thought.trim().is_empty() {
        return Err(ToolError::invalid_args("'thought' is empty: write this thinking step in it"));
    }
    let mut history = History::load(state);
    if history.thoughts.len() >= MAX_THOUGHTS {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!("the thinking history is full ({MAX_THOUGHTS} thoughts)"),
        )
        .with_hint("stop thinking and act on your conclusions"));
    }
    let mut notes: Vec<String> = Vec::new();
    let chars = thought.chars().count();
    let text: String = if chars > MAX_THOUGHT_CHARS {
        notes.push(format!("the thought was {chars} characters long and was cut to {MAX_THOUGHT_CHARS}"));
        thought.chars().take(MAX_THOUGHT_CHARS).collect()
    } else {
        thought.to_string()
    };

    let attempt = parse(args, !history.thoughts.is_empty()).and_then(|req| {
        history.validate(&req.kind)?;
        Ok(req)
    });
    let req = match attempt {
        Ok(req) => req,
        Err(problem) => {
            let message = problem.message();
            if history.last_error.as_deref() != Some(message.as_str()) {
                let hint = problem.hint(&history);
                history.last_error = Some(message.clone());
                if let Err(e) = save_json(state, KEY, &history) {
                    host::log(Level::Warn, &format!("think: cannot keep the last error: {e}"));
                }
                return Err(ToolError::invalid_args(message).with_hint(hint));
            }
            notes.push(format!(
                "the same error came twice in a row ({message}), so this was recorded as a plain new thought"
            ));
            let next = opt_bool(args, "next_thought_needed").ok().flatten();
            Request { number: None, total: None, next, kind: Kind::New }
        }
    };
    let entry = history.record(req, &text);
    history.last_error = None;
    save_json(state, KEY, &history)
        .map_err(|e| ToolError::new(ErrorKind::Io, format!("cannot keep the thought: {e}")))?;
    publish(state, SECTION, &history.section());

    let mut result = json!({
        "thought_number": entry.number,
        "total_thoughts": entry.total,
        "next_thought_needed": entry.next,
        "branches": history.branches,
        "history_length": history.thoughts.len(),
    });
    if !notes.is_empty() {
        result["note"] = Value::String(notes.join("; "));
    }
    Ok(Output::text(result.to_string()))
}

#[cfg(test)]
mod tests;
