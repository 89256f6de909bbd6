//! CI mode's audit log: a header line (corral's version, the policy file, network and
//! command settings, every plugin with its sha256 and grant), then one JSON line per model
//! call (tokens, duration, outcome) and per tool call (tool, plugin, plugin sha256, a digest
//! of the arguments, outcome, bytes, duration), written as they happen, and a closing line.

use crate::agent::branch::BranchEvent;
use crate::agent::{CallOutcome, Compaction, Observer, SummaryCall, TaskResult};
use crate::llm::{Event, Response, ToolCall};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Opens the log at `path` for appending, creating its folder: never through a link at its
/// name, never a FIFO, socket or device, and, when it lies in `workspace` (the real path),
/// never through a link that leads out of it (a repository cannot aim the log at a file of
/// the person's).
pub fn open_log(path: &Path, workspace: &Path) -> std::io::Result<File> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::OpenOptionsExt;
    let parent = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent)?;
    if path.starts_with(workspace) && !std::fs::canonicalize(parent)?.starts_with(workspace) {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{} leads out of the workspace through a link; the audit log is not written there",
                parent.display()
            ),
        ));
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Error::new(
                ErrorKind::PermissionDenied,
                format!("{} is a link; the audit log is never written through one", path.display()),
            ),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(file)
}

/// The version of the line shapes; bumped on any incompatible change.
pub const AUDIT_SCHEMA_VERSION: u32 = 1;

/// What the session started with, for the first line.
#[derive(Debug, Clone, Default)]
pub struct Header {
    pub model: String,
    pub task: String,
    /// The policy file and its sha256, when there is one.
    pub policy: Option<(String, String)>,
    pub network: String,
    pub commands: Value,
    /// One object per plugin: name, sha256, granted.
    pub plugins: Vec<Value>,
    /// One object per skill: name, kind, sha256 (what a policy pins).
    pub skills: Vec<Value>,
    /// One object per MCP server: name, identity (`command sha256:...` or `url ...`).
    pub mcp_servers: Vec<Value>,
}

/// Forwards every event to `inner` and records the auditable ones.
pub struct Audit<'a> {
    inner: &'a mut dyn Observer,
    file: File,
    /// Plugin name -> sha256 of its component.
    shas: HashMap<String, String>,
    model: String,
    call_started: Option<Instant>,
    tool_started: Option<Instant>,
    /// The first write error; the run fails when the log cannot be kept.
    pub failed: Option<String>,
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Writes one line: `v` stamped with the schema version and the time, secrets masked.
pub fn write_line(file: &mut File, mut v: Value) -> std::io::Result<()> {
    if let Value::Object(map) = &mut v {
        map.insert("schema_version".into(), json!(AUDIT_SCHEMA_VERSION));
        map.insert("time".into(), json!(now()));
    }
    writeln!(file, "{}", crate::redact::text(&v.to_string())).and_then(|_| file.flush())
}

/// The line of one tool call; `sha` is its plugin's (or skill's) sha256.
pub fn tool_call_line(call: &ToolCall, o: &CallOutcome, sha: Option<&str>) -> Value {
    // An MCP server's tool: the server and its identity instead of a component digest.
    let mcp = o.plugin.as_deref().and_then(|p| p.strip_prefix("mcp:"));
    let (sha, mcp) = match mcp {
        Some(name) => (None, Some(json!({"name": name, "identity": sha}))),
        None => (sha, None),
    };
    let mut line = json!({
        "type": "tool_call",
        "tool": call.name,
        "call_id": call.id,
        "plugin": o.plugin,
        "plugin_sha256": sha,
        "args_sha256": digest(call.arguments.as_bytes()),
        "outcome": if o.is_error { "error" } else { "ok" },
        "error_kind": if o.is_error { error_kind(&o.content) } else { None },
        "bytes": o.content.len(),
        "duration_ms": o.duration.as_secs_f64() * 1000.0,
    });
    // Only an MCP call's line names a server, so plugin lines keep their shape.
    if let (Some(server), Value::Object(map)) = (mcp, &mut line) {
        map.insert("mcp_server".into(), server);
    }
    line
}

/// The hex sha256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl<'a> Audit<'a> {
    /// Opens `path` for appending (see [`open_log`]), and records the session start.
    pub fn open(
        path: &Path,
        workspace: &Path,
        inner: &'a mut dyn Observer,
        shas: HashMap<String, String>,
        header: &Header,
    ) -> std::io::Result<Self> {
        let file = open_log(path, workspace)?;
        let mut a = Audit {
            inner,
            file,
            shas,
            model: header.model.clone(),
            call_started: None,
            tool_started: None,
            failed: None,
        };
        let policy = header.policy.as_ref().map(|(path, sha)| json!({"path": path, "sha256": sha}));
        a.line(json!({
            "type": "session_start",
            "corral_version": env!("CARGO_PKG_VERSION"),
            "model": header.model,
            "task_sha256": digest(header.task.as_bytes()),
            "policy": policy,
            "network": header.network,
            "commands": header.commands,
            "plugins": header.plugins,
            "skills": header.skills,
            "mcp_servers": header.mcp_servers,
        }));
        if let Some(e) = a.failed.take() {
            return Err(std::io::Error::other(e));
        }
        Ok(a)
    }

    fn line(&mut self, v: Value) {
        let written = write_line(&mut self.file, v);
        if let Err(e) = written
            && self.failed.is_none()
        {
            self.failed = Some(format!("cannot write the audit log: {e}"));
        }
    }

    /// Records how the session ended.
    pub fn finish(&mut self, r: &TaskResult) {
        self.line(json!({
            "type": "session_end",
            "outcome": r.outcome,
            "exit_code": r.outcome.exit_code(),
            "error": r.error,
            "stats": r.stats,
        }));
    }
}

/// The error kind of a tool result text (`error (kind): ...`, the contract's one text of a
/// failed call), if it is one.
fn error_kind(content: &str) -> Option<&'static str> {
    corral_contract::error::kind_of(content).map(corral_contract::ErrorKind::as_str)
}

impl Audit<'_> {
    /// The line of one tool call.
    fn tool_line(&self, call: &ToolCall, o: &CallOutcome) -> Value {
        let sha = o.plugin.as_ref().and_then(|p| self.shas.get(p)).cloned();
        tool_call_line(call, o, sha.as_deref())
    }

    /// A conversation call that got no reply: failed for good, or refused as too long.
    fn failed_call(&mut self, error: &str) {
        let ms = self.call_started.take().map(|t| t.elapsed().as_secs_f64() * 1000.0);
        self.line(json!({
            "type": "model_call",
            "purpose": "turn",
            "model": self.model,
            "outcome": "error",
            "error": error,
            "input_tokens": 0,
            "output_tokens": 0,
            "duration_ms": ms,
        }));
    }
}

impl Observer for Audit<'_> {
    fn waiting(&mut self) {
        self.call_started = Some(Instant::now());
        self.inner.waiting();
    }

    fn event(&mut self, e: &Event) {
        if let Event::Retry { attempt, reason, .. } = e {
            self.line(
                json!({"type": "model_retry", "model": self.model, "attempt": attempt, "reason": reason}),
            );
        }
        self.inner.event(e);
    }

    fn reply(&mut self, r: &Response) {
        let ms = self.call_started.take().map(|t| t.elapsed().as_secs_f64() * 1000.0);
        self.line(json!({
            "type": "model_call",
            "purpose": "turn",
            "model": self.model,
            "outcome": "ok",
            "input_tokens": r.usage.input_tokens,
            "output_tokens": r.usage.output_tokens,
            "finish": r.finish,
            "tool_calls": r.tool_calls.len(),
            "duration_ms": ms,
        }));
        self.inner.reply(r);
    }

    fn model_error(&mut self, error: &str) {
        self.failed_call(error);
        self.inner.model_error(error);
    }

    fn model_refused(&mut self, error: &str) {
        self.failed_call(error);
        self.inner.model_refused(error);
    }

    fn tool_start(&mut self, call: &ToolCall) {
        self.tool_started = Some(Instant::now());
        self.inner.tool_start(call);
    }

    fn tool_done(&mut self, call: &ToolCall, o: &CallOutcome) {
        let line = self.tool_line(call, o);
        self.line(line);
        self.inner.tool_done(call, o);
    }

    fn branch(&mut self, e: &BranchEvent) {
        let line = match e {
            BranchEvent::Start { id, call_id, description, max_turns, allow_writes } => json!({
                "type": "branch_start",
                "branch": id,
                "call_id": call_id,
                "description_sha256": digest(description.as_bytes()),
                "max_turns": max_turns,
                "allow_writes": allow_writes,
            }),
            BranchEvent::ModelCall { id, duration, result } => {
                let mut line = json!({
                    "type": "model_call",
                    "purpose": "branch",
                    "branch": id,
                    "model": self.model,
                    "outcome": if result.is_ok() { "ok" } else { "error" },
                    "input_tokens": result.as_ref().map_or(0, |u| u.input_tokens),
                    "output_tokens": result.as_ref().map_or(0, |u| u.output_tokens),
                    "duration_ms": duration.as_secs_f64() * 1000.0,
                });
                if let Err(e) = result {
                    line["error"] = json!(e);
                }
                line
            }
            BranchEvent::ToolCall { id, call, outcome } => {
                let mut line = self.tool_line(call, outcome);
                line["branch"] = json!(id);
                line
            }
            BranchEvent::End { id, end, turns } => {
                json!({"type": "branch_end", "branch": id, "outcome": end.as_str(), "turns": turns})
            }
        };
        self.line(line);
        self.inner.branch(e);
    }

    fn notice(&mut self, text: &str) {
        self.inner.notice(text);
    }

    fn compaction(&mut self, c: &Compaction) {
        let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.insert("type".into(), json!("compaction"));
        }
        self.line(v);
        self.inner.compaction(c);
    }

    fn summary_call(&mut self, c: &SummaryCall) {
        let mut line = json!({
            "type": "model_call",
            "purpose": c.purpose,
            "model": self.model,
            "outcome": if c.result.is_ok() { "ok" } else { "error" },
            "input_tokens": c.result.as_ref().map_or(0, |u| u.input_tokens),
            "output_tokens": c.result.as_ref().map_or(0, |u| u.output_tokens),
            "duration_ms": c.duration.as_secs_f64() * 1000.0,
        });
        if let Err(e) = &c.result {
            line["error"] = json!(e);
        }
        self.line(line);
        self.inner.summary_call(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_are_read_from_results() {
        assert_eq!(error_kind("error (not-found): there is no tool"), Some("not-found"));
        assert_eq!(error_kind("1: hello"), None);
        assert_eq!(error_kind("error (out-of-memory): the plugin needed more"), Some("out-of-memory"));
        assert_eq!(error_kind("error (made-up): no kind of the contract"), None);
        assert_eq!(digest(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
