//! The small-window task for tests/context.rs: a realistic piece of work (read a 30 KB log,
//! grep it, read notes, read and edit a config, answer) and the strict chat template that
//! local model servers render requests with. Shared by tests/context.rs and the `windows`
//! bench section, which uses only part of it.

#![allow(dead_code)]

use crate::support::model_server::{Reply, Step};
use serde_json::{Value, json};
use std::path::Path;

/// The agent turns of the task: ten tool calls and the answer.
pub const TASK_TURNS: usize = 11;

/// The task given to corral.
pub const TASK: &str = "The service in app.log keeps failing to reach its database. Find out why from the log \
and notes.md, then fix config.toml.";

/// The final answer of the script.
pub const ANSWER: &str =
    "Raised db.retries from 1 to 5 in config.toml: the log shows the retry budget running out.";

/// Writes the task's files into the workspace `ws`: a 30 KB log with a few errors, notes
/// and a config.
pub fn files(ws: &Path) {
    let mut log = String::new();
    let mut i = 0;
    while log.len() < 30 * 1024 {
        i += 1;
        if i % 97 == 0 {
            log.push_str(&format!(
                "2026-11-23T10:{:02}:{:02} ERROR db: retry budget exhausted after 1 attempt\n",
                i / 60 % 60,
                i % 60
            ));
        } else {
            log.push_str(&format!(
                "2026-11-23T10:{:02}:{:02} INFO request {i} served in {} ms\n",
                i / 60 % 60,
                i % 60,
                i % 40 + 3
            ));
        }
    }
    std::fs::write(ws.join("app.log"), log).unwrap();
    let notes: String = (1..=30)
        .map(|n| format!("- note {n}: the database fails over now and then; callers must retry\n"))
        .collect();
    std::fs::write(ws.join("notes.md"), notes).unwrap();
    std::fs::write(ws.join("config.toml"), "[db]\nhost = \"db.internal\"\nretries = 1\ntimeout_ms = 500\n")
        .unwrap();
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

/// The model's side of the task.
pub fn script() -> Vec<Step> {
    vec![
        tool("read_file", json!({"file_path": "app.log"})),
        tool("read_file", json!({"file_path": "app.log", "offset": 60, "limit": 60})),
        tool("read_file", json!({"file_path": "app.log", "offset": 120, "limit": 60})),
        tool("read_file", json!({"file_path": "app.log", "offset": 180, "limit": 60})),
        tool("grep", json!({"pattern": "ERROR", "path": "app.log"})),
        tool("grep", json!({"pattern": "retry", "path": "notes.md"})),
        tool("read_file", json!({"file_path": "notes.md"})),
        tool("read_file", json!({"file_path": "config.toml"})),
        tool("read_file", json!({"file_path": "app.log", "offset": 570, "limit": 20})),
        tool(
            "edit_file",
            json!({"file_path": "config.toml", "old_string": "retries = 1", "new_string": "retries = 5"}),
        ),
        Step::Reply(Reply::text(ANSWER)),
    ]
}

/// Answers for summary requests.
pub fn summaries(n: usize) -> Vec<Step> {
    (0..n)
        .map(|_| {
            Step::Reply(Reply::text(
                "- read app.log: db retry budget exhausted; notes say callers must retry",
            ))
        })
        .collect()
}

/// A strict chat template, written for these tests: it enforces the rule of the templates
/// published with Mistral's instruct models (Apache-2.0), which llama.cpp, vLLM and Ollama
/// render and which raise on a break: after an optional system message, leaving out tool
/// results and tool-calling assistant messages, roles alternate user, assistant, user, ...
pub const STRICT_TEMPLATE: &str = r#"
{%- if messages[0].role == "system" %}{% set rest = messages[1:] %}{% else %}{% set rest = messages %}{% endif %}
{%- set ns = namespace(i=0) %}
{%- for m in rest %}
  {%- if m.role != "tool" and not m.tool_calls %}
    {%- if (m.role == "user") != (ns.i % 2 == 0) %}
      {{- raise_exception("conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif %}
    {%- set ns.i = ns.i + 1 %}
  {%- endif %}
  {%- if m.role == "user" %}[INST]{{ m.content }}[/INST]
  {%- elif m.role == "tool" %}[TOOL_RESULTS]{{ m.content }}[/TOOL_RESULTS]
  {%- elif m.tool_calls %}[TOOL_CALLS]{% for c in m.tool_calls %}{{ c.function.name }}{% endfor %}</s>
  {%- else %}{{ m.content }}</s>{% endif %}
{%- endfor %}"#;

/// Renders an OpenAI-format request body's messages through [`STRICT_TEMPLATE`].
pub fn render_strict(body: &Value) -> Result<String, String> {
    let mut env = minijinja::Environment::new();
    env.add_function("raise_exception", |msg: String| -> Result<String, minijinja::Error> {
        Err(minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, msg))
    });
    env.add_template("chat", STRICT_TEMPLATE).map_err(|e| e.to_string())?;
    let t = env.get_template("chat").map_err(|e| e.to_string())?;
    t.render(minijinja::context! { messages => minijinja::Value::from_serialize(&body["messages"]) })
        .map_err(|e| format!("{e:#}"))
}
