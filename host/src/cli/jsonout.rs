//! Machine-readable output for scripts and CI: `json` prints one result object at the end,
//! `stream-json` prints one event per line as the session runs. Both carry a schema version.

use crate::agent::branch::BranchEvent;
use crate::agent::{CallOutcome, Compaction, Observer, TaskResult};
use crate::llm::{Event, Response, ToolCall};
use serde_json::{Value, json};
use std::io::Write;

/// The version of the JSON shapes below; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

fn emit(mut v: Value) {
    if let Value::Object(map) = &mut v {
        map.insert("schema_version".into(), json!(SCHEMA_VERSION));
    }
    let line = v.to_string();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", crate::redact::text(&line));
    let _ = out.flush();
}

/// The final result object (the `json` format's only output, `stream-json`'s last line).
pub fn result_value(r: &TaskResult, model: &str) -> Value {
    json!({
        "type": "result",
        "outcome": r.outcome,
        "exit_code": r.outcome.exit_code(),
        "answer": r.answer,
        "error": r.error,
        "model": model,
        "stats": r.stats,
    })
}

pub fn print_result(r: &TaskResult, model: &str) {
    emit(result_value(r, model));
}

/// Emits every event as a JSON line on stdout.
pub struct StreamJson;

impl StreamJson {
    /// The first event; `session` is the saved session's id (for `--resume`), if it is saved.
    pub fn start(model: &str, workspace: &str, task: &str, session: Option<&str>) {
        emit(
            json!({"type": "start", "model": model, "workspace": workspace, "task": task, "session": session}),
        );
    }
}

impl Observer for StreamJson {
    fn event(&mut self, e: &Event) {
        match e {
            Event::Text(t) => emit(json!({"type": "text", "text": t})),
            Event::Reasoning(t) => emit(json!({"type": "reasoning", "text": t})),
            Event::Notice(m) => emit(json!({"type": "notice", "text": m})),
            Event::Retry { attempt, wait, reason } => emit(json!({
                "type": "retry", "attempt": attempt, "wait_ms": wait.as_millis() as u64, "reason": reason
            })),
        }
    }

    fn reply(&mut self, r: &Response) {
        let calls: Vec<Value> = r
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        emit(json!({
            "type": "assistant", "text": r.text, "tool_calls": calls, "finish": r.finish, "usage": r.usage
        }));
    }

    fn tool_start(&mut self, call: &ToolCall) {
        emit(json!({"type": "tool_start", "id": call.id, "name": call.name}));
    }

    fn tool_done(&mut self, call: &ToolCall, o: &CallOutcome) {
        emit(json!({
            "type": "tool_result",
            "id": call.id,
            "name": call.name,
            "plugin": o.plugin,
            "is_error": o.is_error,
            "content": o.content,
            "duration_ms": o.duration.as_secs_f64() * 1000.0,
        }));
    }

    fn notice(&mut self, text: &str) {
        emit(json!({"type": "notice", "text": text}));
    }

    fn branch(&mut self, e: &BranchEvent) {
        match e {
            BranchEvent::Start { id, call_id, description, max_turns, allow_writes } => emit(json!({
                "type": "branch_start", "id": id, "call_id": call_id, "description": description,
                "max_turns": max_turns, "allow_writes": allow_writes,
            })),
            BranchEvent::End { id, end, turns } => {
                emit(json!({"type": "branch_end", "id": id, "outcome": end.as_str(), "turns": turns}))
            }
            BranchEvent::ModelCall { .. } | BranchEvent::ToolCall { .. } => {}
        }
    }

    fn compaction(&mut self, c: &Compaction) {
        let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.insert("type".into(), json!("compaction"));
        }
        emit(v);
    }
}
