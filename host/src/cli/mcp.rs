//! `corral mcp serve`: the same set-up as an agent run (trust, settings, policy, grants, roots,
//! limits), then the tools served over stdio or loopback HTTP until the client leaves or a signal.

use super::audit;
use super::{GlobalArgs, McpCommand, ServeArgs, setup};
use crate::agent::{CallOutcome, use_skill};
use crate::llm::ToolCall;
use crate::mcp::{self, CallLog, Served, Server};
use crate::runtime::Ahead;
use serde_json::json;
use std::collections::HashMap;
use std::fs::File;
use std::sync::Mutex;

/// Runs the command; returns the exit code.
pub async fn run(command: McpCommand, g: &GlobalArgs) -> i32 {
    match command {
        McpCommand::Serve(args) => match serve(&args, g).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {}", crate::redact::text(&e));
                2
            }
        },
        McpCommand::Servers(command) => super::mcp_config::run(super::mcp_config::McpArgs { command }, g)
            .unwrap_or_else(|e| {
                eprintln!("error: {}", crate::redact::text(&e.to_string()));
                2
            }),
    }
}

async fn serve(args: &ServeArgs, g: &GlobalArgs) -> Result<i32, String> {
    // The address and the token are checked before anything loads.
    let http = match &args.http {
        Some(text) => {
            let addr = mcp::serve_http::loopback_addr(text).map_err(|e| e.to_string())?;
            let get = |k: &str| std::env::var(k).ok();
            let (token, made) =
                mcp::serve_http::token(args.token_env.as_deref(), &get).map_err(|e| e.to_string())?;
            crate::redact::register(&token);
            Some((addr, token, made))
        }
        None => None,
    };
    // A client may call any tool first.
    let env = setup::prepare(g, g.ci, Ahead::All).await.map_err(|e| e.to_string())?;
    let transport = if http.is_some() { "http" } else { "stdio" };
    let log = match audit_path(&env, g) {
        Some(path) => Some(Box::new(AuditLog::open(&env, &path, transport)?) as Box<dyn CallLog>),
        None => None,
    };
    let s = &env.settings;
    let verbose = s.output.verbose;
    let served = Served {
        limits: s.limits,
        max_lines: usize::try_from(s.agent.max_output_lines).unwrap_or(usize::MAX),
        runtime: env.runtime,
        registry: env.registry,
        skills: env.skills,
        session: env.session,
        log,
    };
    let server = Server::new(served);
    if verbose {
        for (name, why) in mcp::NOT_SERVED {
            eprintln!("corral mcp serve: {name} is not served: {why}");
        }
    }
    let count = server.tools().len();
    match http {
        None => {
            eprintln!("corral mcp serve: {count} tools over stdio");
            mcp::serve_stdio::run(server, crate::signals::stop()).await.map(|()| 0).map_err(|e| e.to_string())
        }
        Some((addr, token, made)) => {
            let listener = mcp::serve_http::bind(addr).await.map_err(|e| e.to_string())?;
            eprintln!("corral mcp serve: {count} tools at http://{}{}", listener.addr, mcp::serve_http::PATH);
            if made {
                // Shown once, to the person who started the server; never logged elsewhere.
                eprintln!(
                    "corral mcp serve: bearer token {token} (send `Authorization: Bearer <token>`; \
                     --token-env VAR uses your own)"
                );
            }
            mcp::serve_http::run(server, listener, token, crate::signals::stop()).await;
            Ok(0)
        }
    }
}

/// Where the audit log goes: `--audit-log` (or the setting), or `.corral/audit.jsonl` under `--ci`.
fn audit_path(env: &setup::Env, g: &GlobalArgs) -> Option<std::path::PathBuf> {
    let ws = &env.session.roots().workspace().path;
    match &env.settings.agent.audit_log {
        Some(p) => Some(ws.join(p)),
        None if g.ci => Some(ws.join(".corral/audit.jsonl")),
        None => None,
    }
}

/// The audit log of a served session: a start line, one line per tool call (the shape of
/// an agent run's), and an end line when the server stops.
struct AuditLog {
    file: Mutex<File>,
    shas: HashMap<String, String>,
}

impl AuditLog {
    fn open(env: &setup::Env, path: &std::path::Path, transport: &str) -> Result<AuditLog, String> {
        let ws = &env.session.roots().workspace().path;
        let cannot = |e: std::io::Error| format!("cannot write the audit log {}: {e}", path.display());
        let mut file = audit::open_log(path, ws).map_err(cannot)?;
        let plugins = env.registry.plugins();
        let mut shas: HashMap<String, String> =
            plugins.iter().map(|p| (p.info.name.clone(), p.info.sha256.clone())).collect();
        let mut skills = Vec::new();
        for k in env.skills.all() {
            let sha = env.skills.digest(k).unwrap_or_else(|e| format!("unknown ({e})"));
            skills.push(json!({"name": k.name, "kind": k.kind.as_str(), "sha256": sha}));
            shas.insert(use_skill::plugin_label(&k.name), sha);
        }
        let start = json!({
            "type": "session_start",
            "corral_version": env!("CARGO_PKG_VERSION"),
            "mode": "mcp serve",
            "transport": transport,
            "policy": env.policy.as_ref().map(|p| json!({"path": p.path.display().to_string(), "sha256": p.sha256})),
            "network": env.session.net().mode.as_str(),
            "plugins": plugins.iter()
                .map(|p| json!({"name": p.info.name, "sha256": p.info.sha256, "granted": p.info.granted.names()}))
                .collect::<Vec<_>>(),
            "skills": skills,
        });
        audit::write_line(&mut file, start).map_err(cannot)?;
        Ok(AuditLog { file: Mutex::new(file), shas })
    }
}

impl CallLog for AuditLog {
    fn record(&self, call: &ToolCall, o: &CallOutcome) {
        let sha = o.plugin.as_ref().and_then(|p| self.shas.get(p)).map(String::as_str);
        let line = audit::tool_call_line(call, o, sha);
        if let Ok(mut f) = self.file.lock()
            && let Err(e) = audit::write_line(&mut f, line)
        {
            eprintln!("warning: cannot write the audit log: {e}");
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        if let Ok(f) = self.file.get_mut() {
            let _ = audit::write_line(f, json!({"type": "session_end", "mode": "mcp serve"}));
        }
    }
}
