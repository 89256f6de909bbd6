//! The MCP client: the person's `[mcp_servers]` started in the background (required ones
//! waited for), their tools offered to the loop as `server__tool`, calls timed and contained.
//!
//! A server's life: `Starting` (spawned in the command sandbox or reached over HTTP, then
//! `initialize` and `tools/list` within `startup_timeout_sec`), then `Ready` or `Failed`. A
//! server that is not ready when the model is first called joins for a later turn (the loop
//! sees the generation change). A call that outlives `tool_timeout_sec` is an error result; a
//! server that dies is `Failed` and its tools go from the next request. Everything a server
//! sends is untrusted: its texts are cleaned and long results saved to a scratch file
//! (`client_call.rs`).

use super::client_names;
use super::client_stdio::{self, Child};
use super::config::{ServerConfig, Transport};
use crate::capabilities::Session;
use crate::capabilities::process::confine::Confinement;
use crate::config::Policy;
use crate::llm::ToolDef;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What `/mcp` and `corral mcp list` show of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Starting,
    /// Ready, with the names its tools have in corral.
    Ready(Vec<String>),
    Failed(String),
    Disabled,
}

impl Status {
    pub fn label(&self) -> String {
        match self {
            Status::Starting => "starting".into(),
            Status::Ready(t) => format!("ready ({} tools)", t.len()),
            Status::Failed(why) => format!("failed: {why}"),
            Status::Disabled => "disabled (enabled = false)".into(),
        }
    }
}

/// A required server that did not start: the run does not begin without it.
#[derive(Debug, thiserror::Error)]
#[error(
    "MCP server {server} is required (required = true) but did not start: {why}. Fix the server or its \
     [mcp_servers.{server}] settings, or set required = false to start without it"
)]
pub struct StartError {
    pub server: String,
    pub why: String,
}

/// One offered tool.
pub(super) struct Offered {
    pub(super) exposed: String,
    pub(super) remote: String,
    pub(super) def: ToolDef,
    pub(super) read_only: bool,
}

/// A server that answered `initialize` and `tools/list`.
pub(super) struct Live {
    pub(super) service: RunningService<RoleClient, ()>,
    pub(super) tools: Vec<Offered>,
    /// The process of a stdio server (killed with its group when dropped).
    pub(super) child: Mutex<Option<Child>>,
}

pub(super) enum State {
    Starting,
    Ready(Arc<Live>),
    Failed(String),
    Disabled,
}

pub(super) struct Server {
    pub(super) cfg: ServerConfig,
    pub(super) state: Mutex<State>,
}

pub(super) struct Shared {
    pub(super) servers: Vec<Arc<Server>>,
    pub(super) generation: AtomicU64,
    /// Every name handed out, so servers that start later never take one.
    pub(super) names: Mutex<BTreeSet<String>>,
    pub(super) session: Arc<Session>,
    /// The command sandbox's settings, for stdio servers.
    pub(super) confine: Confinement,
    /// Failures not yet shown to the person.
    pub(super) notices: Mutex<Vec<String>>,
}

/// The session's MCP servers. Dropping it stops them all.
pub struct Manager {
    pub(super) shared: Arc<Shared>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Manager {
    /// Starts `servers`: each in the background, except the required ones, which are waited
    /// for (Err when one fails). Under a policy, a server not pinned as it is does not start.
    pub async fn start(
        servers: Vec<ServerConfig>,
        session: Arc<Session>,
        confine: Confinement,
        policy: Option<&Policy>,
    ) -> Result<Manager, StartError> {
        let mut list = Vec::new();
        for cfg in servers {
            let state = if !cfg.enabled {
                State::Disabled
            } else {
                match cfg.check_pin(policy) {
                    Ok(()) => State::Starting,
                    Err(why) if cfg.required => return Err(StartError { server: cfg.name.clone(), why }),
                    Err(why) => {
                        session.log().push("host", "warn", &why);
                        State::Failed(why)
                    }
                }
            };
            list.push(Arc::new(Server { cfg, state: Mutex::new(state) }));
        }
        let shared = Arc::new(Shared {
            servers: list,
            generation: AtomicU64::new(1),
            names: Mutex::new(BTreeSet::new()),
            session,
            confine,
            notices: Mutex::new(Vec::new()),
        });
        let manager = Manager { shared: shared.clone(), tasks: Mutex::new(Vec::new()) };
        let starting: Vec<Arc<Server>> = shared
            .servers
            .iter()
            .filter(|s| matches!(lock(&s.state).as_deref(), Some(State::Starting)))
            .cloned()
            .collect();
        let (required, background): (Vec<_>, Vec<_>) = starting.into_iter().partition(|s| s.cfg.required);
        let mut tasks = Vec::new();
        for server in background {
            tasks.push(tokio::spawn(start_one(shared.clone(), server)));
        }
        if let Ok(mut t) = manager.tasks.lock() {
            t.extend(tasks);
        }
        let waited =
            futures_util::future::join_all(required.iter().map(|s| start_one(shared.clone(), s.clone())));
        waited.await;
        for s in &required {
            if let Some(State::Failed(why)) = lock(&s.state).as_deref() {
                return Err(StartError { server: s.cfg.name.clone(), why: why.clone() });
            }
        }
        Ok(manager)
    }

    /// Each server's name, identity and state, in name order.
    pub fn statuses(&self) -> Vec<(String, String, Status)> {
        self.shared
            .servers
            .iter()
            .map(|s| {
                let status = match lock(&s.state).as_deref() {
                    Some(State::Starting) | None => Status::Starting,
                    Some(State::Ready(live)) => {
                        Status::Ready(live.tools.iter().map(|t| t.exposed.clone()).collect())
                    }
                    Some(State::Failed(why)) => Status::Failed(why.clone()),
                    Some(State::Disabled) => Status::Disabled,
                };
                (s.cfg.name.clone(), s.cfg.identity(), status)
            })
            .collect()
    }

    /// Server name -> identity, for the audit log.
    pub fn identities(&self) -> Vec<(String, String)> {
        self.shared.servers.iter().map(|s| (s.cfg.name.clone(), s.cfg.identity())).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.shared.servers.is_empty()
    }

    /// Stops every server now: start-ups abandoned, processes killed with their groups.
    pub fn stop(&self) {
        if let Ok(mut tasks) = self.tasks.lock() {
            for t in tasks.drain(..) {
                t.abort();
            }
        }
        for s in &self.shared.servers {
            if let Ok(mut st) = s.state.lock()
                && let State::Ready(live) = &*st
            {
                if let Ok(mut c) = live.child.lock() {
                    c.take();
                }
                live.service.cancellation_token().cancel();
                *st = State::Failed("stopped".into());
            }
        }
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The state behind `m`, or `None` when a panic poisoned it (treated as not ready).
pub(super) fn lock<T>(m: &Mutex<T>) -> Option<std::sync::MutexGuard<'_, T>> {
    m.lock().ok()
}

pub(super) fn set(shared: &Shared, server: &Server, state: State) {
    if let State::Failed(why) = &state
        && let Ok(mut n) = shared.notices.lock()
    {
        n.push(format!(
            "MCP server {} failed: {why}; its tools are not offered (/mcp shows the servers)",
            server.cfg.name
        ));
    }
    if let Ok(mut st) = server.state.lock() {
        *st = state;
    }
    shared.generation.fetch_add(1, Ordering::SeqCst);
}

/// Starts one server and records how it went.
async fn start_one(shared: Arc<Shared>, server: Arc<Server>) {
    let limit = server.cfg.startup_timeout;
    let outcome = match tokio::time::timeout(limit, connect(&shared, &server.cfg)).await {
        Ok(r) => r,
        Err(_) => {
            Err(format!("it did not finish starting within {} s (startup_timeout_sec)", limit.as_secs_f64()))
        }
    };
    match outcome {
        Ok(live) => set(&shared, &server, State::Ready(Arc::new(live))),
        Err(why) => {
            shared.session.log().push(
                "host",
                "warn",
                &format!("MCP server {} failed to start: {why}", server.cfg.name),
            );
            set(&shared, &server, State::Failed(why));
        }
    }
}

/// Reaches the server, runs `initialize` and lists its tools.
async fn connect(shared: &Shared, cfg: &ServerConfig) -> Result<Live, String> {
    let (service, child) = match &cfg.transport {
        Transport::Stdio { command, args, env, cwd, network } => {
            let launch = client_stdio::Launch { command, args, env, cwd: cwd.as_deref(), network: *network };
            let (mut child, stdout, stdin) = client_stdio::spawn(&shared.session, &shared.confine, &launch)?;
            match ().serve((stdout, stdin)).await {
                Ok(s) => (s, Some(child)),
                Err(e) => {
                    let tail = child.stderr_tail();
                    let ended = child.exited().map(|s| format!(" (it exited: {s})")).unwrap_or_default();
                    let said =
                        if tail.is_empty() { String::new() } else { format!("; its stderr ends: {tail}") };
                    return Err(format!("the MCP handshake failed: {}{ended}{said}", clean(&e.to_string())));
                }
            }
        }
        Transport::Http { url, bearer_token_env_var, http_headers } => {
            let s = super::client_http::connect(
                &shared.session,
                url,
                bearer_token_env_var.as_deref(),
                http_headers,
            )
            .await?;
            (s, None)
        }
    };
    let listed = service
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {}", clean(&e.to_string())))?;
    let kept: Vec<rmcp::model::Tool> = listed.into_iter().filter(|t| cfg.offers(&t.name)).collect();
    let remote: Vec<String> = kept.iter().map(|t| t.name.to_string()).collect();
    let names = {
        let mut taken =
            shared.names.lock().map_err(|_| "internal error: the name table is unusable".to_string())?;
        let names = client_names::assign(&cfg.name, &remote, &taken);
        taken.extend(names.iter().cloned());
        names
    };
    let tools = kept
        .into_iter()
        .zip(names)
        .map(|(t, exposed)| Offered {
            def: ToolDef {
                name: exposed.clone(),
                description: t.description.as_deref().unwrap_or_default().to_string(),
                parameters: serde_json::Value::Object((*t.input_schema).clone()),
            },
            read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false),
            remote: t.name.to_string(),
            exposed,
        })
        .collect();
    Ok(Live { service, tools, child: Mutex::new(child) })
}

/// A server's text made safe for the terminal and the model: control sequences removed.
pub(super) fn clean(text: &str) -> String {
    crate::termtext::clean(text)
}
