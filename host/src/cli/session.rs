//! An agent session from the command line: connect to the model, assemble the agent over
//! the loaded plugins, then run one task (text, json or stream-json output) or the REPL.

use super::audit::{Audit, Header};
use super::jsonout::{self, StreamJson};
use super::render::{Style, Terminal};
use super::report::{final_answer, report};
use super::setup::{self, Env};
use super::{GlobalArgs, asker, repl};
use crate::agent::{
    Agent, AgentConfig, Observer, Outcome, Quiet, TaskResult, Toolbox, prompt::StaticParts, resume,
};
use crate::config::{ColorChoice, OutputFormat, Settings};
use crate::llm::{Client, ClientConfig, RetryPolicy};
use crate::runtime::Ahead;
use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

/// Builds the model client from the settings and the environment.
pub fn client(s: &Settings, base_url_source: Option<String>) -> Result<Client, String> {
    let m = &s.model;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut cfg = ClientConfig::resolve(
        m.provider.as_deref(),
        m.base_url.as_deref(),
        m.model.as_deref(),
        m.api_key.as_deref(),
        &env,
    )
    .map_err(|e| crate::redact::text(&e.to_string()).into_owned())?;
    if let Some(key) = &cfg.api_key {
        crate::redact::register(key);
    }
    cfg.stream = m.stream;
    cfg.timeout = Duration::from_secs(m.timeout_secs);
    cfg.retry = RetryPolicy {
        attempts: m.retries,
        base: Duration::from_millis(m.retry_base_ms),
        ..RetryPolicy::default()
    };
    cfg.endpoint_source = base_url_source.filter(|_| m.base_url.is_some());
    cfg.token_param = m.token_param.clone();
    cfg.effort = m.reasoning_effort.as_deref().and_then(crate::llm::Effort::parse);
    cfg.images = match m.images.as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    Client::new(cfg).map_err(|e| e.to_string())
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// Runs `task`, or the interactive session when there is no task and a terminal. In CI
/// mode (`ci`) nothing is ever asked and every call goes to the audit log.
/// Returns the process exit code: 0 done, 1 error, 2 turn limit, 130 interrupted.
pub async fn run(g: &GlobalArgs, task: Option<String>, ci: bool) -> i32 {
    // `corral -` reads the task from stdin, even from a terminal (until Ctrl-D).
    let from_stdin = task.as_deref() == Some("-");
    let task = task.filter(|_| !from_stdin);
    let interactive = !ci && !from_stdin && task.is_none() && std::io::stdin().is_terminal();
    if ci && !from_stdin && task.is_none() && std::io::stdin().is_terminal() {
        eprintln!("error: corral exec needs a task: corral exec \"fix the build\" (or the task on stdin)");
        return 1;
    }
    let task = match task {
        Some(t) => Some(t),
        None if interactive => None,
        None => {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                eprintln!("error: cannot read the task from stdin: {e}");
                return 1;
            }
            if text.trim().is_empty() {
                eprintln!(
                    "error: no task given. Pass it as an argument (corral \"fix the tests\") or on stdin."
                );
                return 1;
            }
            Some(text)
        }
    };
    let mut base = match setup::base(g, ci, !ci) {
        Ok(base) => base,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e.to_string()));
            return 1;
        }
    };
    if super::firstrun::nothing_chosen(&base.settings) {
        let at_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        let chosen = match at_terminal && !ci {
            true => super::firstrun::ask(base.user_dir.as_deref()).await.ok(),
            false => None,
        };
        let Some((provider, model)) = chosen else {
            eprintln!(
                "error: {}",
                super::firstrun::missing_message(&base.settings, base.user_dir.as_deref())
            );
            return 1;
        };
        base.settings.model.provider = Some(provider);
        base.settings.model.model = Some(model);
    }
    let client = match client(&base.settings, base.provenance.source("model.base_url")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e.to_string()));
            return 1;
        }
    };
    // The model's context window is asked for while plugins and skills load: the probe is
    // polled first, so its request is on the wire before the loading starts.
    let fixed_window = base.settings.model.max_context_tokens;
    let probe = async {
        match fixed_window {
            Some(n) => Some(n),
            None => client.context_window().await,
        }
    };
    // The code first calls are likely to need (third-party plugins; of the built-ins, those
    // of the tools a session cannot work without: read, change, find) loads in the background
    // from the moment the plugins are known, while the rest loads and the first request is
    // prepared and answered. Other built-ins load at their first call (about half a
    // millisecond each): loading all nine core tools ahead held 2-3 MB more for the session,
    // mostly code of tools it may never call, and kept the loading thread busy into the first
    // turns.
    let first_calls = &crate::context::small::CORE_TOOLS[..crate::context::small::MIN_CORE];
    let (window, env) = tokio::join!(biased; probe, setup::load(base, Ahead::Likely(first_calls)));
    if let Some(w) = window {
        client.use_window(w);
    }
    let env = match env {
        Ok(env) => env,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e.to_string()));
            return 1;
        }
    };
    // A person at a terminal can answer (command approvals, questions), one-shot or not.
    let at_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let person_answers = interactive || (!ci && at_terminal);
    if person_answers {
        env.session.ask().set(Some(std::sync::Arc::new(asker::TerminalAsker)));
    }
    let s = &env.settings;
    let style = Style::new(use_color(s.output.color));
    let mut warn = |w: String| {
        if !s.output.quiet {
            eprintln!("{}warning:{} {w}", style.red, style.reset);
        }
    };
    // A resumed session goes on from its own conversation, not from a continue-here note.
    let choice = super::sessions::Choice::of(g);
    let continue_note = if choice.resumes() { None } else { load_continue(&env, &mut warn) };
    // MCP servers start in the background (required ones are waited for) and join when ready.
    let mcp = match super::mcp_config::start_servers(&env).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e));
            return 1;
        }
    };
    let cron = super::cron::host(&env, ci);
    let toolbox = Toolbox {
        runtime: &env.runtime,
        registry: &env.registry,
        skills: &env.skills,
        session: &env.session,
        limits: s.limits,
        external: mcp.as_ref().map(|m| m as &dyn crate::agent::ExternalTools),
        cron: cron.as_ref(),
        undo: !ci || may_write(&env),
    };
    let mut prompt = StaticParts::new(
        s.agent.system_prompt.as_deref(),
        &toolbox.defs(),
        &env.session,
        s.agent.instructions,
        interactive,
        &mut warn,
    );
    if toolbox.offers_skills() {
        prompt =
            prompt.with_skills(env.skills.all().iter().map(|k| (k.name.as_str(), k.description.as_str())));
    }
    let cfg = AgentConfig {
        max_turns: s.agent.max_turns,
        max_output_tokens: s.model.max_output_tokens,
        temperature: s.model.temperature,
        history: s.agent.history,
        continue_file: s.agent.continue_file,
        window,
        proactive_summaries: s.agent.proactive_summaries,
        memory_full: s.agent.memory_full,
        max_output_bytes: s.limits.output_bytes,
        max_output_lines: s.agent.max_output_lines,
        parallel_calls: s.agent.parallel_calls,
    };
    let mut agent = Agent::new(&client, toolbox, prompt, cfg, continue_note);
    if let Err(e) = agent.window_check() {
        eprintln!("error: {e}");
        return 1;
    }
    for n in agent.startup_notes() {
        warn(n.clone());
    }
    match super::sessions::begin(&mut agent, &env, &client, choice, ci) {
        Ok(notes) => notes.into_iter().for_each(&mut warn),
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e));
            return 1;
        }
    }
    // Ctrl-C stops the turn (in the interactive session, only the turn). SIGTERM does the same
    // where no prompt can hold the runtime (see signals.rs); at a terminal it keeps its default.
    let interrupt = agent.interrupt.clone();
    interrupt.stop_on_sigterm(!person_answers);
    let mut stops = interrupt.signals();
    let ctrl_c = tokio::spawn(async move {
        loop {
            stops.next().await;
            interrupt.trigger();
        }
    });
    let code = match task {
        None => {
            if let Some(refused) = client.refused_locally().await {
                warn(refused);
            }
            repl::run(&mut agent, &env, &client, style, mcp.as_ref()).await
        }
        Some(task) if ci => ci_run(&mut agent, &env, &client, &task, style, mcp.as_ref()).await,
        Some(task) => one_shot(&mut agent, &env, &client, &task, style, None).await,
    };
    ctrl_c.abort();
    code
}

/// Loads a waiting continue-here note (the file is removed once the model has seen it).
fn load_continue(env: &Env, warn: &mut dyn FnMut(String)) -> Option<String> {
    if !env.settings.agent.continue_file {
        return None;
    }
    let local = &env.session.local();
    match resume::load(local) {
        Ok(Some((text, age))) => {
            let old =
                if age > resume::STALE_SECS { format!(", {} hours old", age / 3600) } else { String::new() };
            warn(format!(
                "the model is given the note an unfinished run left ({}{old}); pass --no-continue to start fresh",
                local.shown("continue.md")
            ));
            Some(text)
        }
        Ok(None) => None,
        Err(e) => {
            warn(format!("cannot read {}: {e}", local.shown("continue.md")));
            None
        }
    }
}

/// CI mode: the one-shot run, with every call recorded in the audit log.
async fn ci_run(
    agent: &mut Agent<'_>,
    env: &Env,
    client: &Client,
    task: &str,
    style: Style,
    mcp: Option<&crate::mcp::client::Manager>,
) -> i32 {
    let ws = &env.session.roots().workspace().path;
    let path = match &env.settings.agent.audit_log {
        Some(p) => ws.join(p),
        None => ws.join(".corral/audit.jsonl"),
    };
    let plugins = env.registry.plugins();
    let mut shas: std::collections::HashMap<String, String> =
        plugins.iter().map(|p| (p.info.name.clone(), p.info.sha256.clone())).collect();
    let mut skills = Vec::new();
    for k in env.skills.all() {
        // What a policy pins: the component's file, or the folder's listing.
        let sha = env.skills.digest(k).unwrap_or_else(|e| format!("unknown ({e})"));
        skills.push(serde_json::json!({"name": k.name, "kind": k.kind.as_str(), "sha256": sha}));
        shas.insert(crate::agent::use_skill::plugin_label(&k.name), sha);
    }
    // An MCP call is audited with its server's identity (command digest or URL).
    let mut mcp_servers = Vec::new();
    for (name, identity) in mcp.map(|m| m.identities()).unwrap_or_default() {
        mcp_servers.push(serde_json::json!({"name": name, "identity": identity}));
        shas.insert(format!("mcp:{name}"), identity);
    }
    let c = &env.settings.commands;
    let header = Header {
        model: client.config().model.clone(),
        task: task.to_string(),
        policy: env.policy.as_ref().map(|p| (p.path.display().to_string(), p.sha256.clone())),
        network: env.session.net().mode.as_str().to_string(),
        commands: serde_json::json!({
            "enabled": c.enabled(),
            "mode": c.mode,
            "allowed": env.session.commands().allowed.iter()
                .map(|(n, p)| serde_json::json!({"name": n, "path": p.display().to_string()}))
                .collect::<Vec<_>>(),
            "yolo": c.yolo,
        }),
        plugins: plugins
            .iter()
            .map(|p| serde_json::json!({"name": p.info.name, "sha256": p.info.sha256, "granted": p.info.granted.names()}))
            .collect(),
        skills,
        mcp_servers,
    };
    let workspace = ws.clone();
    one_shot(agent, env, client, task, style, Some(AuditTarget { path, workspace, shas, header })).await
}

/// Where the audit log goes, the plugin hashes it records, and its first line.
struct AuditTarget {
    path: std::path::PathBuf,
    /// The workspace's real path: a log inside it is never written through a link out of it.
    workspace: std::path::PathBuf,
    shas: std::collections::HashMap<String, String>,
    header: Header,
}

/// Runs the task with `front` as the display, wrapped in the audit log when there is one.
async fn observed(
    agent: &mut Agent<'_>,
    task: &str,
    front: &mut dyn Observer,
    audit: Option<AuditTarget>,
) -> TaskResult {
    let Some(target) = audit else { return agent.run(task, front).await };
    let mut log = match Audit::open(&target.path, &target.workspace, front, target.shas, &target.header) {
        Ok(l) => l,
        Err(e) => {
            return TaskResult {
                outcome: Outcome::Error,
                answer: String::new(),
                error: Some(format!("cannot open the audit log {}: {e}", target.path.display())),
                stats: Default::default(),
            };
        }
    };
    let mut r = agent.run(task, &mut log).await;
    log.finish(&r);
    if let Some(e) = log.failed.take() {
        r.outcome = Outcome::Error;
        r.error = Some(e);
    }
    r
}

async fn one_shot(
    agent: &mut Agent<'_>,
    env: &Env,
    client: &Client,
    task: &str,
    style: Style,
    audit: Option<AuditTarget>,
) -> i32 {
    let s = &env.settings;
    let model = client.config().model.clone();
    match s.output.format {
        OutputFormat::Json => {
            let r = observed(agent, task, &mut Quiet, audit).await;
            jsonout::print_result(&r, &model);
            r.outcome.exit_code()
        }
        OutputFormat::StreamJson => {
            let ws = env.session.roots().workspace().path.to_string_lossy().into_owned();
            StreamJson::start(&model, &ws, task, agent.session_id());
            let r = observed(agent, task, &mut StreamJson, audit).await;
            jsonout::print_result(&r, &model);
            r.outcome.exit_code()
        }
        OutputFormat::Text => {
            let mut term = Terminal::new(style, s.output.quiet, std::io::stderr().is_terminal());
            let r = observed(agent, task, &mut term, audit).await;
            term.finish();
            report(&r, &mut term, s.agent.max_turns);
            let already_seen = term.streamed_answer && std::io::stdout().is_terminal() && !s.output.quiet;
            if r.outcome == Outcome::Done && !already_seen {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{}", final_answer(&r.answer, style));
                let _ = out.flush();
            }
            r.outcome.exit_code()
        }
    }
}

/// Whether a loaded plugin may change the workspace (in CI, `undo` is offered only then).
fn may_write(env: &Env) -> bool {
    use crate::capabilities::grant::Capability;
    env.registry
        .tools()
        .any(|(_, p)| env.session.granted().get(&p.info.name).contains(Capability::WorkspaceWrite))
}
