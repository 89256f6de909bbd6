//! The MCP server: the workspace's tools, as an agent run would build them, offered to an MCP
//! client; every call goes through the agent's own dispatch (`Toolbox::call`) and result caps.

use super::serve_hints::Hints;
use crate::agent::{CallOutcome, Toolbox, use_skill};
use crate::capabilities::Session;
use crate::capabilities::process::clean;
use crate::context::small;
use crate::llm::ToolCall;
use crate::runtime::skills::SkillSet;
use crate::runtime::{Limits, Registry, Runtime, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Tools an MCP client is not given, and why (shown by `corral mcp serve --verbose` and the docs).
pub const NOT_SERVED: &[(&str, &str)] = &[
    ("question", "it asks the person at corral's terminal, and a served corral has none"),
    ("snapshot", "it collapses corral's own conversation, which an MCP client does not have"),
];

/// Where a served call's outcome is recorded (the audit log of `--audit-log` or `--ci`).
pub trait CallLog: Send + Sync {
    fn record(&self, call: &ToolCall, outcome: &CallOutcome);
}

/// What is served: the loaded plugins and skills, the session they run in, and the limits.
pub struct Served {
    pub runtime: Runtime,
    pub registry: Registry,
    pub skills: SkillSet,
    pub session: Arc<Session>,
    pub limits: Limits,
    /// Cap on one result, in lines (`agent.max_output_lines`).
    pub max_lines: usize,
    pub log: Option<Box<dyn CallLog>>,
}

/// The MCP server handler; cheap to clone (one per HTTP session).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    served: Served,
    /// The tool list, built once: names, descriptions, schemas and annotations.
    tools: Vec<Tool>,
    read_only: BTreeMap<String, bool>,
    /// Calls that change nothing share it; any other call holds it alone, so the read guard,
    /// snapshots and files never see two writers at once.
    gate: tokio::sync::RwLock<()>,
    calls: AtomicU64,
}

impl Server {
    pub fn new(served: Served) -> Server {
        let mut tools = Vec::new();
        let mut read_only = BTreeMap::new();
        for (spec, plugin) in served.registry.tools() {
            if NOT_SERVED.iter().any(|(n, _)| *n == spec.name) {
                continue;
            }
            let hints = Hints::of(spec, plugin.info.granted);
            read_only.insert(spec.name.clone(), hints.read_only);
            tools.push(tool(&spec.name, &spec.description, served_schema(spec), hints));
        }
        let toolbox = toolbox(&served);
        if toolbox.offers_skills() {
            let def = use_skill::def(&served.skills);
            let catalogue: Vec<String> =
                served.skills.all().iter().map(|k| format!("- {}: {}", k.name, k.description)).collect();
            // An MCP client has no corral system prompt, so the catalogue goes in the description.
            let description = format!("{}\n\nThe skills:\n{}", def.description, catalogue.join("\n"));
            read_only.insert(def.name.clone(), true);
            tools.push(tool(&def.name, &description, def.parameters, Hints::skills()));
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let gate = tokio::sync::RwLock::new(());
        Server { inner: Arc::new(Inner { served, tools, read_only, gate, calls: AtomicU64::new(0) }) }
    }

    /// The tools served, as listed to a client.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Runs one call as the agent would, with the result cut to the caps; `None` when no
    /// tool of that name is served.
    pub async fn call(&self, name: &str, arguments: &serde_json::Value) -> Option<CallOutcome> {
        let inner = &*self.inner;
        let read_only = *inner.read_only.get(name)?;
        let n = inner.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call =
            ToolCall { id: format!("mcp-{n}"), name: name.to_string(), arguments: arguments.to_string() };
        let mut outcome = if read_only {
            let _shared = inner.gate.read().await;
            toolbox(&inner.served).call(&call).await
        } else {
            let _alone = inner.gate.write().await;
            toolbox(&inner.served).call(&call).await
        };
        if let Some(log) = &inner.served.log {
            log.record(&call, &outcome);
        }
        outcome.content = self.fit(name, std::mem::take(&mut outcome.content));
        Some(outcome)
    }

    /// A result cut to `--max-output-kb` and `--max-output-lines`, as in an agent run: a read
    /// keeps a paging hint; anything else is saved whole under `.corral/` with a pointer.
    fn fit(&self, tool: &str, content: String) -> String {
        let s = &self.inner.served;
        let max_bytes = small::result_cap(None, s.limits.output_bytes);
        match small::cut_result(tool, &content, max_bytes, s.max_lines) {
            small::Cut::Whole => content,
            small::Cut::Paged(p) => p,
            small::Cut::Preview(p) => match clean::spill(&s.session.roots().workspace().dir, &content) {
                Ok(path) => small::with_pointer(&p, &path, content.len()),
                Err(_) => format!("{p}[output cut to --max-output-kb; the rest could not be saved]"),
            },
        }
    }
}

fn toolbox(s: &Served) -> Toolbox<'_> {
    Toolbox {
        runtime: &s.runtime,
        registry: &s.registry,
        skills: &s.skills,
        session: &s.session,
        limits: s.limits,
        // Other MCP servers' tools are not passed on: a client connects to them itself.
        external: None,
        // Jobs persist beyond the call: not offered to MCP clients.
        cron: None,
        // A client's calls have no turns to revert; the person has `corral undo`.
        undo: false,
    }
}

fn tool(name: &str, description: &str, schema: serde_json::Value, hints: Hints) -> Tool {
    let schema = match schema {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let mut t = Tool::new(name.to_string(), description.to_string(), Arc::new(schema));
    t.annotations = Some(hints.annotations());
    t
}

/// The schema a client sees: without the argument of a "derive with the model" step, which
/// needs corral's model (an MCP client gets the tool's whole result instead).
fn served_schema(spec: &ToolSpec) -> serde_json::Value {
    let mut schema = spec.schema.clone();
    if let Some(d) = &spec.derive {
        if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
            props.remove(&d.argument);
        }
        if let Some(req) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
            req.retain(|v| v.as_str() != Some(d.argument.as_str()));
        }
    }
    schema
}

/// An outcome as an MCP tool result: the text (secrets masked), the images, and `isError`.
pub fn result(o: CallOutcome) -> CallToolResult {
    let mut content = vec![ContentBlock::text(crate::redact::text(&o.content).into_owned())];
    for img in &o.images {
        content.push(ContentBlock::image(crate::agent::images::base64(&img.data), img.mime_type.clone()));
    }
    if o.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("corral", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "corral's tools for this workspace, each run in its own WebAssembly sandbox with the \
                 grants, limits, read guard and protected paths of a corral run. Read a file before \
                 changing it.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        match self.call(&request.name, &args).await {
            Some(outcome) => Ok(result(outcome).into()),
            None => Err(McpError::invalid_params(unknown(&self.inner.tools, &request.name), None)),
        }
    }
}

/// The message for a call to a tool that is not served.
fn unknown(tools: &[Tool], name: &str) -> String {
    let shown: String = name.chars().take(80).collect();
    if let Some((_, why)) = NOT_SERVED.iter().find(|(n, _)| *n == name) {
        return format!("the tool '{shown}' is not served over MCP: {why}");
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    format!("there is no tool named '{shown}'; the served tools are: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Derive;

    #[test]
    fn a_derive_argument_is_not_offered() {
        let spec = ToolSpec {
            name: "fetch_url".into(),
            description: "d".into(),
            schema: serde_json::json!({"type": "object", "properties": {"url": {"type": "string"},
                "prompt": {"type": "string"}}, "required": ["url", "prompt"]}),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: true,
            capabilities: Default::default(),
            derive: Some(Derive { argument: "prompt".into(), purpose: "web_prompt".into() }),
        };
        let s = served_schema(&spec);
        assert_eq!(
            s,
            serde_json::json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]})
        );
    }

    #[test]
    fn results_carry_text_images_and_the_error_flag() {
        let o = CallOutcome {
            content: "error (not-found): nope".into(),
            is_error: true,
            plugin: None,
            duration: std::time::Duration::ZERO,
            effects: Vec::new(),
            images: vec![crate::runtime::Image { mime_type: "image/png".into(), data: vec![7, 7, 7] }],
        };
        let v = serde_json::to_value(result(o)).unwrap();
        assert_eq!(v["isError"], true);
        assert_eq!(v["content"][0], serde_json::json!({"type": "text", "text": "error (not-found): nope"}));
        assert_eq!(
            v["content"][1],
            serde_json::json!({"type": "image", "data": "BwcH", "mimeType": "image/png"})
        );
    }

    #[test]
    fn unserved_tools_say_why() {
        let tools = vec![tool("read_file", "r", serde_json::json!({"type": "object"}), Hints::skills())];
        assert!(unknown(&tools, "question").contains("asks the person"));
        assert_eq!(unknown(&tools, "nope"), "there is no tool named 'nope'; the served tools are: read_file");
    }
}
