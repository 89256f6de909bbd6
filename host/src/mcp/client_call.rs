//! One call of an MCP server's tool: found by its corral name, timed by `tool_timeout_sec`,
//! and every way it can fail (timeout, a dead server, an error result) made a tool error.

use super::client::{Live, Manager, Server, Shared, State, clean, lock, set};
use super::client_result;
use super::client_stdio::Child;
use crate::agent::external::{CallFuture, ExternalResult, ExternalTool, ExternalTools};
use corral_contract::{ErrorKind, error::error_text};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How a stdio server whose connection failed ended: its pipes close a moment before the
/// kernel reports the exit, so this waits up to a second for it, then for its last stderr.
async fn exit_of(live: &Live) -> Option<String> {
    let poll = || live.child.lock().ok().map(|mut c| c.as_mut().map(Child::exited));
    let mut status = None;
    for _ in 0..40 {
        match poll() {
            Some(Some(Some(s))) => {
                status = Some(s);
                break;
            }
            Some(Some(None)) => tokio::time::sleep(Duration::from_millis(25)).await,
            _ => return None,
        }
    }
    let reader = live.child.lock().ok().and_then(|mut c| c.as_mut().and_then(Child::take_reader));
    if let (Some(_), Some(r)) = (&status, reader) {
        let _ = tokio::time::timeout(Duration::from_millis(500), r).await;
    }
    status
}

impl Shared {
    /// The ready server offering `name`, with the tool's name on that server.
    fn find(&self, name: &str) -> Option<(Arc<Server>, Arc<Live>, String)> {
        self.servers.iter().find_map(|s| {
            let st = lock(&s.state)?;
            let State::Ready(live) = &*st else { return None };
            let t = live.tools.iter().find(|t| t.exposed == name)?;
            Some((s.clone(), live.clone(), t.remote.clone()))
        })
    }

    async fn call(&self, name: &str, args: serde_json::Value) -> ExternalResult {
        let Some((server, live, remote)) = self.find(name) else {
            return ExternalResult {
                content: error_text(
                    ErrorKind::NotFound,
                    &format!("the MCP tool {name} is not available any more"),
                    None,
                ),
                is_error: true,
                source: "mcp".into(),
            };
        };
        let source = format!("mcp:{}", server.cfg.name);
        let fail = |content: String| ExternalResult { content, is_error: true, source: source.clone() };
        let serde_json::Value::Object(map) = args else {
            return fail(error_text(ErrorKind::InvalidArgs, "the arguments must be a JSON object", None));
        };
        let mut params = rmcp::model::CallToolRequestParams::new(remote.clone());
        params.arguments = Some(map);
        let limit: Duration = server.cfg.tool_timeout;
        let who = format!("MCP server {}", server.cfg.name);
        match tokio::time::timeout(limit, live.service.call_tool(params)).await {
            Err(_) => fail(error_text(
                ErrorKind::Timeout,
                &format!(
                    "{who} did not answer {remote} within {} s (tool_timeout_sec); the call was \
                 abandoned. Try another way, or ask the person to raise tool_timeout_sec",
                    limit.as_secs_f64()
                ),
                None,
            )),
            Ok(Err(e)) => {
                let mut why = clean(&e.to_string());
                let ended = exit_of(&live).await;
                if let Some(status) = ended {
                    let tail = live.child.lock().ok().and_then(|c| c.as_ref().map(Child::stderr_tail));
                    why = format!(
                        "the server stopped ({status}){}",
                        tail.filter(|t| !t.is_empty())
                            .map(|t| format!("; its stderr ends: {t}"))
                            .unwrap_or_default()
                    );
                    set(self, &server, State::Failed(why.clone()));
                } else if live.service.is_transport_closed() {
                    why = format!("the connection to the server closed ({why})");
                    set(self, &server, State::Failed(why.clone()));
                }
                fail(error_text(
                    ErrorKind::Mcp,
                    &format!("{who} failed on {remote}: {why}. Its tools may be gone; carry on without them"),
                    None,
                ))
            }
            Ok(Ok(result)) => {
                let text = client_result::text_of(&result);
                let is_error = result.is_error.unwrap_or(false);
                let text = if is_error {
                    error_text(ErrorKind::Tool, &format!("{who}: {}", clean(&text)), None)
                } else {
                    text
                };
                let ws = &self.session.roots().workspace().dir;
                ExternalResult { content: client_result::fit(ws, &text), is_error, source }
            }
        }
    }
}

impl ExternalTools for Manager {
    fn tools(&self) -> Vec<ExternalTool> {
        let mut out = Vec::new();
        for s in &self.shared.servers {
            let Some(st) = lock(&s.state) else { continue };
            if let State::Ready(live) = &*st {
                let group = format!("{}{}", crate::context::schemas::MCP_GROUP, s.cfg.name);
                out.extend(live.tools.iter().map(|t| ExternalTool {
                    def: t.def.clone(),
                    group: group.clone(),
                    read_only: t.read_only,
                }));
            }
        }
        out
    }

    fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    fn has(&self, name: &str) -> bool {
        self.shared.find(name).is_some()
    }

    fn call<'a>(&'a self, name: &'a str, args: serde_json::Value) -> CallFuture<'a> {
        Box::pin(self.shared.call(name, args))
    }

    fn take_notices(&self) -> Vec<String> {
        self.shared.notices.lock().map(|mut n| std::mem::take(&mut *n)).unwrap_or_default()
    }
}
