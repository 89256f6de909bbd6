//! `todo`: the session's checklist. Items live in kv; after every change the list is
//! published as the `todo` section (`- [ ] task` / `- [x] task` lines), which the host shows
//! the model, mirrors to `.corral/todo.md`, and counts as unfinished work.

use crate::text::{clip_bytes, clip_chars, json_list_in_string, one_line, publish};
use corral_plugin_sdk::args::req_str;
use corral_plugin_sdk::host::context::MAX_SECTION_BYTES;
use corral_plugin_sdk::host::{self, Level, State, load_json, save_json};
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};
use serde::{Deserialize, Serialize};

/// Most items on the list.
pub const MAX_ITEMS: usize = 50;
/// Longest item, in characters.
pub const MAX_ITEM_CHARS: usize = 500;
/// The context section that shows the list.
pub const SECTION: &str = "todo";
/// The kv key of the list.
const KEY: &str = "todo";
/// Candidates listed when a task matches several items.
const AMBIGUOUS_SHOWN: usize = 5;
/// Characters of an over-long task quoted back in `errors`.
const QUOTED_CHARS: usize = 80;

pub fn spec() -> Spec {
    Spec::new(
        "todo",
        "Keep a checklist of the work for the current task. When a task has several steps, add them \
         first, mark each one done as soon as it is finished, and check the list before your final \
         answer. Actions: add (`tasks`: one task or a list; duplicates are skipped), done and remove \
         (each task is matched by its exact text, else a unique prefix, else a unique part of the \
         text, ignoring case), clear, and list. Every call returns the whole list as JSON. The list is \
         shown in the system prompt (section `todo`), survives compaction and is saved to \
         .corral/todo.md. At most 50 items of up to 500 characters. It changes nothing in the \
         workspace.",
        json!({
            "type": "object",
            "properties": {
                "action": {
                    "type": "string", "enum": ["add", "done", "remove", "clear", "list"],
                    "description": "add, done or remove the `tasks`; clear the whole list; or list it"
                },
                "tasks": {
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}}
                    ],
                    "description": "One task or a list of tasks (for add, done and remove)"
                },
                "task": {
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}}
                    ],
                    "description": "Same as `tasks`"
                }
            },
            "required": ["action"]
        }),
    )
    .needs(Capability::Kv)
    .needs(Capability::Context)
    .idempotent(false)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Item {
    task: String,
    done: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct List {
    items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Add,
    Done,
    Remove,
    Clear,
    List,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Done => "done",
            Action::Remove => "remove",
            Action::Clear => "clear",
            Action::List => "list",
        }
    }
}

/// A task that could not be handled; reported in `errors` while the others go ahead.
#[derive(Debug, Clone, PartialEq)]
struct ItemError {
    task: String,
    reason: String,
    kind: ErrorKind,
}

/// The comparison key: full Unicode lowercase.
fn key(s: &str) -> String {
    s.to_lowercase()
}

impl List {
    fn load(state: &dyn State) -> List {
        match load_json(state, KEY) {
            Ok(l) => l.unwrap_or_default(),
            Err(e) => {
                host::log(Level::Warn, &format!("todo: starting a new list: {e}"));
                List::default()
            }
        }
    }

    /// Stores the list and publishes it as the `todo` section.
    fn save(&self, state: &dyn State) -> Result<(), ToolError> {
        save_json(state, KEY, self)
            .map_err(|e| ToolError::new(ErrorKind::Io, format!("cannot keep the todo list: {e}")))?;
        publish(state, SECTION, &self.checklist());
        Ok(())
    }

    fn remaining(&self) -> usize {
        self.items.iter().filter(|i| !i.done).count()
    }

    /// The item `task` names: exact text, else a unique prefix, else a unique substring
    /// (all ignoring case). Several candidates at the first level that has any is an error.
    fn find(&self, task: &str) -> Result<usize, ItemError> {
        let k = key(task);
        let keys: Vec<String> = self.items.iter().map(|i| key(&i.task)).collect();
        let levels: [Vec<usize>; 3] = [
            (0..keys.len()).filter(|&i| keys[i] == k).collect(),
            (0..keys.len()).filter(|&i| keys[i].starts_with(&k)).collect(),
            (0..keys.len()).filter(|&i| keys[i].contains(&k)).collect(),
        ];
        if let Some(one) = levels.iter().find(|l| l.len() == 1) {
            return Ok(one[0]);
        }
        let fail = |reason: String, kind| ItemError { task: task.to_string(), reason, kind };
        match levels.iter().find(|l| !l.is_empty()) {
            None => Err(fail(format!("no item matches '{task}'"), ErrorKind::NotFound)),
            Some(many) => {
                let shown: Vec<String> =
                    many.iter().take(AMBIGUOUS_SHOWN).map(|&i| format!("'{}'", self.items[i].task)).collect();
                Err(fail(
                    format!("'{task}' matches several items, be more specific: {}", shown.join("; ")),
                    ErrorKind::Conflict,
                ))
            }
        }
    }

    /// The `todo` section: one `- [ ] task` or `- [x] task` line per item, nothing when the list
    /// is empty. Items are shortened only if the whole would exceed the host's section limit.
    fn checklist(&self) -> String {
        let render = |max: usize| -> String {
            let lines: Vec<String> = self
                .items
                .iter()
                .map(|i| format!("- [{}] {}", if i.done { 'x' } else { ' ' }, clip_bytes(&i.task, max)))
                .collect();
            lines.join("\n")
        };
        let full = render(usize::MAX);
        if full.len() <= MAX_SECTION_BYTES {
            return full;
        }
        // Every line costs "- [ ] " and a newline besides its text.
        render((MAX_SECTION_BYTES / self.items.len()).saturating_sub(7))
    }

    fn response(&self, action: Action, skipped: &[String], errors: &[ItemError]) -> Output {
        let items: Vec<Value> = self.items.iter().map(|i| json!({"task": i.task, "done": i.done})).collect();
        let mut r = json!({
            "action": action.name(),
            "total": self.items.len(),
            "remaining": self.remaining(),
            "items": items,
        });
        if !skipped.is_empty() {
            r["skipped"] = json!(skipped);
        }
        if !errors.is_empty() {
            r["errors"] = errors.iter().map(|e| json!({"task": e.task, "reason": e.reason})).collect();
        }
        Output::text(r.to_string())
    }
}

fn parse_action(args: &Value) -> Result<Action, ToolError> {
    let raw = req_str(args, "action")?;
    match raw.trim().to_lowercase().as_str() {
        "add" => Ok(Action::Add),
        "done" => Ok(Action::Done),
        "remove" => Ok(Action::Remove),
        "clear" => Ok(Action::Clear),
        "list" => Ok(Action::List),
        _ => Err(ToolError::invalid_args(format!(
            "unknown action '{raw}': use add, done, remove, clear or list"
        ))),
    }
}

/// One task's text on one line; `{"task": ...}` objects and scalars are accepted.
fn item_text(v: &Value) -> String {
    match v {
        Value::String(s) => one_line(s),
        Value::Null => String::new(),
        Value::Object(o) => match o.get("task") {
            Some(Value::String(s)) => one_line(s),
            _ => one_line(&v.to_string()),
        },
        other => one_line(&other.to_string()),
    }
}

/// A `tasks` value as a list: a string is one task unless it holds a JSON-encoded list.
fn task_list(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => match json_list_in_string(s) {
            Some(items) => items.iter().map(item_text).collect(),
            None => vec![one_line(s)],
        },
        Value::Array(items) => items.iter().map(item_text).collect(),
        other => vec![item_text(other)],
    }
}

/// The tasks of an add, done or remove call, from `tasks` or its alias `task`.
fn tasks(args: &Value, action: Action) -> Result<Vec<String>, ToolError> {
    let get = |k: &str| args.get(k).filter(|v| !v.is_null()).map(task_list);
    let list = match (get("tasks"), get("task")) {
        (Some(a), Some(b)) if a != b => {
            return Err(ToolError::invalid_args(
                "'tasks' and its alias 'task' were both given, with different values; give only 'tasks'",
            ));
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            return Err(ToolError::invalid_args(format!(
                "action '{}' needs 'tasks': one task or a list of tasks",
                action.name()
            )));
        }
    };
    if list.is_empty() {
        return Err(ToolError::invalid_args("'tasks' is empty: give at least one task"));
    }
    Ok(list)
}

/// The error for a call in which every task failed.
fn all_failed(errors: &[ItemError]) -> ToolError {
    let kind = errors[0].kind;
    let message = match errors {
        [one] => one.reason.clone(),
        many => format!(
            "all {} tasks failed: {}",
            many.len(),
            many.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>().join("; ")
        ),
    };
    let err = ToolError::new(kind, message);
    match kind {
        ErrorKind::NotFound => err.with_hint("call todo with action list to see the items"),
        _ => err,
    }
}

pub fn run(state: &dyn State, args: &Value) -> Result<Output, ToolError> {
    let action = parse_action(args)?;
    let mut list = List::load(state);
    match action {
        Action::List => return Ok(list.response(action, &[], &[])),
        Action::Clear => {
            list.items.clear();
            list.save(state)?;
            return Ok(list.response(action, &[], &[]));
        }
        Action::Add | Action::Done | Action::Remove => {}
    }

    let mut errors: Vec<ItemError> = Vec::new();
    let mut valid: Vec<String> = Vec::new();
    for task in tasks(args, action)? {
        let chars = task.chars().count();
        if chars == 0 {
            errors.push(ItemError { task, reason: "empty task".into(), kind: ErrorKind::InvalidArgs });
        } else if chars > MAX_ITEM_CHARS {
            errors.push(ItemError {
                task: clip_chars(&task, QUOTED_CHARS),
                reason: format!("the task is {chars} characters long; the limit is {MAX_ITEM_CHARS}"),
                kind: ErrorKind::TooLarge,
            });
        } else {
            valid.push(task);
        }
    }

    let mut skipped: Vec<String> = Vec::new();
    let mut changed = 0;
    for task in valid {
        match action {
            Action::Add => {
                let k = key(&task);
                if list.items.iter().any(|i| key(&i.task) == k) {
                    skipped.push(task);
                } else if list.items.len() >= MAX_ITEMS {
                    errors.push(ItemError {
                        reason: format!(
                            "the list is full ({MAX_ITEMS} items); remove finished items or clear the list \
                             first"
                        ),
                        task,
                        kind: ErrorKind::TooLarge,
                    });
                } else {
                    list.items.push(Item { task, done: false });
                    changed += 1;
                }
            }
            Action::Done => match list.find(&task) {
                Ok(i) => {
                    list.items[i].done = true;
                    changed += 1;
                }
                Err(e) => errors.push(e),
            },
            Action::Remove => match list.find(&task) {
                Ok(i) => {
                    list.items.remove(i);
                    changed += 1;
                }
                Err(e) => errors.push(e),
            },
            Action::Clear | Action::List => {}
        }
    }
    if changed == 0 && skipped.is_empty() && !errors.is_empty() {
        return Err(all_failed(&errors));
    }
    if changed > 0 {
        list.save(state)?;
    }
    Ok(list.response(action, &skipped, &errors))
}

#[cfg(test)]
mod tests;
