//! The settings in force, as typed structs with their defaults, and the bridge between a
//! dotted key and the field it names (`get` for display, `set` for building).

use super::value::{Value, f32_to_f64};
use crate::runtime::Limits;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The settings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub limits: Limits,
    pub disabled_plugins: Vec<String>,
    pub read_guard: bool,
    /// Let tools write `.git/` (hooks and git config run code at the person's next git
    /// command); the person's own choice only (`--allow-git-writes`).
    pub allow_git_writes: bool,
    /// Extra roots: (path, writable).
    pub extra_roots: Vec<(PathBuf, bool)>,
    /// Extra plugin components to load (`[plugins] load`, `--plugin`).
    pub extra_plugins: Vec<PathBuf>,
    /// Capabilities granted per plugin (`[plugins.grants]`, `--grant`): plugin name ->
    /// capability names. A plugin named here gets exactly this list.
    pub grants: BTreeMap<String, Vec<String>>,
    /// A policy file that pins plugins by sha256 and bounds every grant (`--policy`).
    pub policy: Option<PathBuf>,
    pub commands: CommandSettings,
    pub model: ModelSettings,
    pub agent: AgentSettings,
    pub sessions: SessionSettings,
    pub output: OutputSettings,
    pub network: NetworkSettings,
    /// `[plugin-settings.<plugin>]`: plugin name -> setting -> value, read by the plugin.
    pub plugin_settings: BTreeMap<String, BTreeMap<String, String>>,
    /// `[mcp_servers.<name>]` as written, checked by `mcp::config` when servers start.
    pub mcp_servers: super::layer::McpTables,
    /// What the undo checkpoints keep (`[undo] max_bytes`, `keep`).
    pub undo: crate::capabilities::undo::Bounds,
}

/// What plugins may reach over the network (`[network]`); checked and turned into the
/// session's policy by `capabilities::http::NetPolicy::from_settings`.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkSettings {
    /// One of `keys::NETWORK_MODES`: `off`, `llm-only` (plugins get no network), `on`.
    pub mode: String,
    /// When not empty, the only hosts plugins may fetch from (`docs.rs`, `*.python.org`).
    pub allow_hosts: Vec<String>,
    /// Private addresses the user trusts (`127.0.0.1:8123`, `10.0.0.5`): the only way a
    /// plugin ever reaches a private, loopback or link-local address.
    pub allow_private: Vec<String>,
    /// Names answered before DNS, like /etc/hosts: name -> address(es), comma-separated.
    pub hosts: BTreeMap<String, String>,
}

impl Default for NetworkSettings {
    fn default() -> Self {
        NetworkSettings {
            mode: "llm-only".into(),
            allow_hosts: Vec::new(),
            allow_private: Vec::new(),
            hosts: BTreeMap::new(),
        }
    }
}

/// Which programs the `process` capability may run (`[commands]`).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSettings {
    /// One of `keys::COMMAND_MODES`: `off`, `allowlist` (only `allowed`), `ask` (`allowed`
    /// run freely, anything else after the person approves it).
    pub mode: String,
    /// Program names, resolved to absolute paths at start-up.
    pub allowed: Vec<String>,
    /// Shell strings through `/bin/sh -c`, and any program: no allowlist.
    pub yolo: bool,
    /// Environment variables passed to commands besides the default set.
    pub env: Vec<String>,
    /// Whether commands may use the network (TCP, UDP, any socket); off by default.
    pub network: bool,
    /// Folders commands may read besides the roots, the system and the toolchains.
    pub read_paths: Vec<PathBuf>,
    /// Folders commands may change besides the writable roots.
    pub write_paths: Vec<PathBuf>,
    /// Run commands without the operating-system sandbox where it is unavailable.
    pub unsandboxed: bool,
}

impl Default for CommandSettings {
    fn default() -> Self {
        CommandSettings {
            mode: "allowlist".into(),
            allowed: Vec::new(),
            yolo: false,
            env: Vec::new(),
            network: false,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            unsandboxed: false,
        }
    }
}

impl CommandSettings {
    /// Whether commands can run at all: not `off`, and something is allowed or may be asked.
    pub fn enabled(&self) -> bool {
        self.mode != "off" && (self.yolo || self.mode == "ask" || !self.allowed.is_empty())
    }
}

/// Which model to talk to and how (`[model]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    /// One of `keys::PROVIDERS`.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Provider-specific variables such as `OPENAI_API_KEY` are resolved by the provider.
    pub api_key: Option<String>,
    pub max_context_tokens: Option<u64>,
    pub max_output_tokens: u32,
    pub temperature: Option<f32>,
    /// Total attempts per request.
    pub retries: u32,
    pub retry_base_ms: u64,
    pub timeout_secs: u64,
    pub stream: bool,
    /// One of `keys::EFFORTS`; `None` leaves thinking to the server.
    pub reasoning_effort: Option<String>,
    /// One of `keys::TOKEN_PARAMS`; `None` decides by server and model.
    pub token_param: Option<String>,
    /// One of `keys::IMAGES`: whether tool images go to the model ("auto": by provider and model).
    pub images: String,
}

/// How the agent loop runs (`[agent]`).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    pub max_turns: u32,
    /// Append to HISTORY.md.
    pub history: bool,
    /// Write and read the continue-here file.
    pub continue_file: bool,
    /// Load AGENTS.md / CLAUDE.md.
    pub instructions: bool,
    /// Replaces the built-in role text.
    pub system_prompt: Option<String>,
    /// Where CI mode's audit log goes (relative to the workspace); `.corral/audit.jsonl` when unset.
    pub audit_log: Option<String>,
    /// Summarise every 10 turns, for recaps when compaction drops turns.
    pub proactive_summaries: bool,
    /// Show all of `.corral/memory/MEMORY.md` (bounded) instead of a budgeted selection.
    pub memory_full: bool,
    /// Most lines of one tool result kept in the conversation (beside the byte cap).
    pub max_output_lines: u32,
    /// Most read-only calls of one reply run at the same time (also bounded by the cores).
    pub parallel_calls: u32,
}

/// Saved sessions (`[sessions]`): whether each run is saved, and the retention limits.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSettings {
    pub save: bool,
    /// Most sessions kept per workspace (the newest).
    pub keep: u64,
    /// Most MiB all of a workspace's sessions take.
    pub max_mb: u64,
    /// Most MiB one session takes; past it the rest of that session is not saved.
    pub max_file_mb: u64,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings { save: true, keep: 50, max_mb: 200, max_file_mb: 20 }
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

impl OutputFormat {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "json" => Some(Self::Json),
            "stream-json" => Some(Self::StreamJson),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::StreamJson => "stream-json",
        }
    }
}

/// Whether to colour terminal output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "always" => Some(Self::Always),
            "never" => Some(Self::Never),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }

    /// Whether to colour a stream that is (or is not) a terminal.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            Self::Auto => is_terminal,
            Self::Always => true,
            Self::Never => false,
        }
    }
}

/// Output settings (`[output]`).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSettings {
    pub quiet: bool,
    pub format: OutputFormat,
    pub color: ColorChoice,
    pub verbose: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Limits::default(),
            disabled_plugins: Vec::new(),
            read_guard: true,
            allow_git_writes: false,
            extra_roots: Vec::new(),
            extra_plugins: Vec::new(),
            grants: BTreeMap::new(),
            policy: None,
            commands: CommandSettings::default(),
            model: ModelSettings::default(),
            agent: AgentSettings::default(),
            sessions: SessionSettings::default(),
            output: OutputSettings::default(),
            network: NetworkSettings::default(),
            plugin_settings: BTreeMap::new(),
            mcp_servers: BTreeMap::new(),
            undo: Default::default(),
        }
    }
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings {
            provider: None,
            model: None,
            base_url: None,
            api_key: None,
            max_context_tokens: None,
            max_output_tokens: 32768,
            temperature: None,
            retries: 5,
            retry_base_ms: 1000,
            timeout_secs: 600,
            stream: true,
            reasoning_effort: None,
            token_param: None,
            images: "auto".into(),
        }
    }
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            max_turns: 100,
            history: true,
            continue_file: true,
            instructions: true,
            system_prompt: None,
            audit_log: None,
            proactive_summaries: false,
            memory_full: false,
            max_output_lines: 2000,
            parallel_calls: 8,
        }
    }
}

impl Default for OutputSettings {
    fn default() -> Self {
        OutputSettings { quiet: false, format: OutputFormat::Text, color: ColorChoice::Auto, verbose: false }
    }
}

fn opt_str(v: &Option<String>) -> Value {
    v.clone().map_or(Value::Unset, Value::Str)
}

fn roots(s: &Settings, writable: bool) -> Value {
    Value::Paths(s.extra_roots.iter().filter(|(_, w)| *w == writable).map(|(p, _)| p.clone()).collect())
}

/// The value of `key` in `s`, as `corral config` shows it.
pub fn get(s: &Settings, key: &str) -> Value {
    let (m, a, o) = (&s.model, &s.agent, &s.output);
    match key {
        "limits.timeout_secs" => Value::Float(s.limits.timeout.as_secs_f64()),
        "limits.memory_mib" => Value::Int((s.limits.memory_bytes >> 20) as u64),
        "limits.max_output_kb" => Value::Int((s.limits.output_bytes / 1024) as u64),
        "plugins.disabled" => Value::List(s.disabled_plugins.clone()),
        "plugins.load" => Value::Paths(s.extra_plugins.clone()),
        "plugins.grants" => Value::ListMap(s.grants.clone()),
        "plugins.policy" => s.policy.clone().map_or(Value::Unset, Value::Path),
        "workspace.read_guard" => Value::Bool(s.read_guard),
        "workspace.allow_git_writes" => Value::Bool(s.allow_git_writes),
        "workspace.add_dirs" => roots(s, true),
        "workspace.add_dirs_ro" => roots(s, false),
        "undo.max_bytes" => Value::Int(s.undo.max_bytes),
        "undo.keep" => Value::Int(s.undo.keep),
        "model.provider" => opt_str(&m.provider),
        "model.name" => opt_str(&m.model),
        "model.base_url" => opt_str(&m.base_url),
        "model.api_key" => opt_str(&m.api_key),
        "model.max_context_tokens" => m.max_context_tokens.map_or(Value::Unset, Value::Int),
        "model.max_output_tokens" => Value::Int(m.max_output_tokens.into()),
        "model.temperature" => m.temperature.map_or(Value::Unset, |t| Value::Float(f32_to_f64(t))),
        "model.retries" => Value::Int(m.retries.into()),
        "model.retry_base_ms" => Value::Int(m.retry_base_ms),
        "model.timeout_secs" => Value::Int(m.timeout_secs),
        "model.stream" => Value::Bool(m.stream),
        "model.reasoning_effort" => opt_str(&m.reasoning_effort),
        "model.token_param" => opt_str(&m.token_param),
        "model.images" => Value::Str(m.images.clone()),
        "agent.max_turns" => Value::Int(a.max_turns.into()),
        "agent.history" => Value::Bool(a.history),
        "agent.continue" => Value::Bool(a.continue_file),
        "agent.instructions" => Value::Bool(a.instructions),
        "agent.system_prompt" => opt_str(&a.system_prompt),
        "agent.audit_log" => opt_str(&a.audit_log),
        "agent.proactive_summaries" => Value::Bool(a.proactive_summaries),
        "agent.memory_full" => Value::Bool(a.memory_full),
        "agent.max_output_lines" => Value::Int(a.max_output_lines.into()),
        "agent.parallel_calls" => Value::Int(a.parallel_calls.into()),
        "sessions.save" => Value::Bool(s.sessions.save),
        "sessions.keep" => Value::Int(s.sessions.keep),
        "sessions.max_mb" => Value::Int(s.sessions.max_mb),
        "sessions.max_file_mb" => Value::Int(s.sessions.max_file_mb),
        "output.quiet" => Value::Bool(o.quiet),
        "output.format" => Value::Str(o.format.as_str().into()),
        "output.color" => Value::Str(o.color.as_str().into()),
        "output.verbose" => Value::Bool(o.verbose),
        "network.mode" => Value::Str(s.network.mode.clone()),
        "network.allow_hosts" => Value::List(s.network.allow_hosts.clone()),
        "network.allow_private" => Value::List(s.network.allow_private.clone()),
        "network.hosts" => Value::Map(s.network.hosts.clone()),
        "commands.mode" => Value::Str(s.commands.mode.clone()),
        "commands.allowed" => Value::List(s.commands.allowed.clone()),
        "commands.yolo" => Value::Bool(s.commands.yolo),
        "commands.env" => Value::List(s.commands.env.clone()),
        "commands.network" => Value::Bool(s.commands.network),
        "commands.read_paths" => Value::Paths(s.commands.read_paths.clone()),
        "commands.write_paths" => Value::Paths(s.commands.write_paths.clone()),
        "commands.unsandboxed" => Value::Bool(s.commands.unsandboxed),
        _ => Value::Unset,
    }
}

/// Sets `key` in `s` to a value already checked against the key's kind; a value of the
/// wrong shape is ignored (the unit tests set and get every key).
pub fn set(s: &mut Settings, key: &str, v: Value) {
    let (m, a, o) = (&mut s.model, &mut s.agent, &mut s.output);
    let u32_of = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    match (key, v) {
        ("limits.timeout_secs", Value::Float(t)) => s.limits.timeout = Duration::from_secs_f64(t),
        ("limits.memory_mib", Value::Int(n)) => s.limits.memory_bytes = (n as usize) << 20,
        ("limits.max_output_kb", Value::Int(n)) => s.limits.output_bytes = (n as usize) * 1024,
        ("plugins.disabled", Value::List(v)) => s.disabled_plugins = v,
        ("plugins.load", Value::Paths(v)) => s.extra_plugins = v,
        ("plugins.grants", Value::ListMap(m)) => s.grants = m,
        ("plugins.policy", Value::Path(p)) => s.policy = Some(p),
        ("workspace.read_guard", Value::Bool(b)) => s.read_guard = b,
        ("workspace.allow_git_writes", Value::Bool(b)) => s.allow_git_writes = b,
        ("workspace.add_dirs" | "workspace.add_dirs_ro", Value::Paths(v)) => {
            let writable = key == "workspace.add_dirs";
            s.extra_roots.retain(|(_, w)| *w != writable);
            s.extra_roots.extend(v.into_iter().map(|p| (p, writable)));
        }
        ("undo.max_bytes", Value::Int(n)) => s.undo.max_bytes = n,
        ("undo.keep", Value::Int(n)) => s.undo.keep = n,
        ("model.provider", Value::Str(x)) => m.provider = Some(x),
        ("model.name", Value::Str(x)) => m.model = Some(x),
        ("model.base_url", Value::Str(x)) => m.base_url = Some(x),
        ("model.api_key", Value::Str(x)) => m.api_key = Some(x),
        ("model.max_context_tokens", Value::Int(n)) => m.max_context_tokens = Some(n),
        ("model.max_output_tokens", Value::Int(n)) => m.max_output_tokens = u32_of(n),
        ("model.temperature", Value::Float(t)) => m.temperature = Some(t as f32),
        ("model.retries", Value::Int(n)) => m.retries = u32_of(n),
        ("model.retry_base_ms", Value::Int(n)) => m.retry_base_ms = n,
        ("model.timeout_secs", Value::Int(n)) => m.timeout_secs = n,
        ("model.stream", Value::Bool(b)) => m.stream = b,
        ("model.reasoning_effort", Value::Str(x)) => m.reasoning_effort = Some(x),
        ("model.token_param", Value::Str(x)) => m.token_param = Some(x),
        ("model.images", Value::Str(x)) => m.images = x,
        ("agent.max_turns", Value::Int(n)) => a.max_turns = u32_of(n),
        ("agent.history", Value::Bool(b)) => a.history = b,
        ("agent.continue", Value::Bool(b)) => a.continue_file = b,
        ("agent.instructions", Value::Bool(b)) => a.instructions = b,
        ("agent.system_prompt", Value::Str(x)) => a.system_prompt = Some(x),
        ("agent.audit_log", Value::Str(x)) => a.audit_log = Some(x),
        ("agent.proactive_summaries", Value::Bool(b)) => a.proactive_summaries = b,
        ("agent.memory_full", Value::Bool(b)) => a.memory_full = b,
        ("agent.max_output_lines", Value::Int(n)) => a.max_output_lines = u32_of(n),
        ("agent.parallel_calls", Value::Int(n)) => a.parallel_calls = u32_of(n),
        ("sessions.save", Value::Bool(b)) => s.sessions.save = b,
        ("sessions.keep", Value::Int(n)) => s.sessions.keep = n,
        ("sessions.max_mb", Value::Int(n)) => s.sessions.max_mb = n,
        ("sessions.max_file_mb", Value::Int(n)) => s.sessions.max_file_mb = n,
        ("output.quiet", Value::Bool(b)) => o.quiet = b,
        ("output.format", Value::Str(x)) => o.format = OutputFormat::parse(&x).unwrap_or(o.format),
        ("output.color", Value::Str(x)) => o.color = ColorChoice::parse(&x).unwrap_or(o.color),
        ("output.verbose", Value::Bool(b)) => o.verbose = b,
        ("network.mode", Value::Str(x)) => s.network.mode = x,
        ("network.allow_hosts", Value::List(v)) => s.network.allow_hosts = v,
        ("network.allow_private", Value::List(v)) => s.network.allow_private = v,
        ("network.hosts", Value::Map(m)) => s.network.hosts = m,
        ("commands.mode", Value::Str(x)) => s.commands.mode = x,
        ("commands.allowed", Value::List(v)) => s.commands.allowed = v,
        ("commands.yolo", Value::Bool(b)) => s.commands.yolo = b,
        ("commands.env", Value::List(v)) => s.commands.env = v,
        ("commands.network", Value::Bool(b)) => s.commands.network = b,
        ("commands.read_paths", Value::Paths(v)) => s.commands.read_paths = v,
        ("commands.write_paths", Value::Paths(v)) => s.commands.write_paths = v,
        ("commands.unsandboxed", Value::Bool(b)) => s.commands.unsandboxed = b,
        _ => {}
    }
}
