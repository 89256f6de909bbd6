//! The table of every setting: its dotted key, the values it accepts and the environment
//! variable that sets it. The order here is the order `corral config` lists them in.

/// What values a key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    UInt {
        min: u64,
        max: u64,
    },
    /// A number in `min..=max`, or `min < x <= max` when `open_min`.
    Float {
        min: f64,
        max: f64,
        open_min: bool,
    },
    Bool,
    Str,
    /// One string of a fixed set.
    Choice(&'static [&'static str]),
    /// Strings; lists accumulate across layers.
    List,
    /// Paths, relative to the file that names them (or the current directory for flags).
    Paths,
    /// A table of strings (`{ "name" = "value" }`); layers merge it, later ones winning per name.
    Map,
    /// A table of lists drawn from a fixed set (`{ "name" = ["a", "b"] }`); layers merge it,
    /// later ones replacing a name's whole list.
    ListMap(&'static [&'static str]),
    /// One path, relative to the file that names it (or the current directory for flags).
    Path,
}

/// How an environment variable maps to a key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EnvRule {
    /// The variable holds the value.
    Plain(&'static str),
    /// A boolean variable that sets the key to the opposite (`CORRAL_NO_READ_GUARD=1`).
    Negated(&'static str),
    /// The variable being set (non-empty) sets the key to a fixed value (`NO_COLOR`).
    Presence(&'static str, &'static str),
}

impl EnvRule {
    pub fn var(&self) -> &'static str {
        match self {
            EnvRule::Plain(v) | EnvRule::Negated(v) | EnvRule::Presence(v, _) => v,
        }
    }
}

/// What a project's `corral.toml` may do with a key (see docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectRule {
    /// Any project may set it: it changes nothing a run may reach, run or spend credentials on.
    Free,
    /// Before the workspace is trusted, a project may only make it narrower than the value
    /// the person's own layers give (a smaller number, `true`, an earlier choice, a host list
    /// where the person has none); once trusted, anything.
    Narrow,
    /// Only a trusted project may set it: it widens what a run may do.
    Trusted,
    /// Never from a project file, trusted or not: it decides where requests and the API key
    /// go, or where the record of the run is kept.
    Never,
}

/// One setting.
#[derive(Debug)]
pub struct KeyDef {
    /// `table.name`.
    pub key: &'static str,
    pub kind: Kind,
    pub env: Option<EnvRule>,
    /// Shown masked.
    pub secret: bool,
    /// What a project file may do with it.
    pub project: ProjectRule,
}

impl KeyDef {
    /// The table part of the key.
    pub fn table(&self) -> &'static str {
        self.key.split_once('.').map_or(self.key, |(t, _)| t)
    }

    /// The name inside the table.
    pub fn name(&self) -> &'static str {
        self.key.split_once('.').map_or(self.key, |(_, n)| n)
    }

    /// Whether values from several layers are joined instead of replaced.
    pub fn accumulates(&self) -> bool {
        matches!(self.kind, Kind::List | Kind::Paths | Kind::Map | Kind::ListMap(_))
    }
}

/// The model providers corral can talk to.
pub const PROVIDERS: &[&str] = &["openai", "anthropic", "ollama", "llamacpp", "lmstudio", "openrouter"];
/// `model.reasoning_effort` values.
pub const EFFORTS: &[&str] = &["off", "low", "medium", "high"];
/// `model.images` values.
pub const IMAGES: &[&str] = &["auto", "true", "false"];
/// `model.token_param` values.
pub const TOKEN_PARAMS: &[&str] = &["max_tokens", "max_completion_tokens"];
/// The `[output] format` values.
pub const FORMATS: &[&str] = &["text", "json", "stream-json"];
/// The `[output] color` values.
pub const COLORS: &[&str] = &["auto", "always", "never"];
/// The `[network] mode` values (`--network`): what plugins may reach.
pub const NETWORK_MODES: &[&str] = &["off", "llm-only", "on"];
/// The `[commands] mode` values (`--commands`): how `run_command` and the `process`
/// capability decide what may run.
pub const COMMAND_MODES: &[&str] = &["off", "allowlist", "ask"];
/// The capabilities a plugin may be granted (`[plugins.grants]`, `--grant`).
pub const CAPABILITIES: &[&str] = &["workspace-write", "kv", "http", "process", "context"];
/// The tables a settings file may have, in listing order.
pub const TABLES: &[&str] = &[
    "limits",
    "plugins",
    "workspace",
    "undo",
    "model",
    "agent",
    "sessions",
    "output",
    "network",
    "commands",
];
/// The table of per-plugin settings, `[plugin-settings.<plugin>]` (free-form strings that
/// the plugin reads through `host-info.setting`).
pub const PLUGIN_SETTINGS: &str = "plugin-settings";
/// The table of MCP servers corral uses, `[mcp_servers.<name>]` (Codex's keys, read by
/// `mcp::config`). A server starts a program or reaches a URL: only the person's files and a
/// trusted project may declare one.
pub const MCP_SERVERS: &str = "mcp_servers";
/// What a project file may do with `[mcp_servers.<name>]`.
pub const MCP_SERVERS_RULE: ProjectRule = ProjectRule::Trusted;
/// The keys of one `[mcp_servers.<name>]` table.
pub const MCP_SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "enabled",
    "required",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "network",
];

const U32: u64 = u32::MAX as u64;

/// A key only a trusted project may set (the safe default for every new key).
const fn key(key: &'static str, kind: Kind, env: Option<EnvRule>) -> KeyDef {
    KeyDef { key, kind, env, secret: false, project: ProjectRule::Trusted }
}

/// A key any project may set.
const fn free(key: &'static str, kind: Kind, env: Option<EnvRule>) -> KeyDef {
    KeyDef { key, kind, env, secret: false, project: ProjectRule::Free }
}

/// A key an untrusted project may only narrow.
const fn narrow(key: &'static str, kind: Kind, env: Option<EnvRule>) -> KeyDef {
    KeyDef { key, kind, env, secret: false, project: ProjectRule::Narrow }
}

/// A key never taken from a project file.
const fn never(key: &'static str, kind: Kind, env: Option<EnvRule>) -> KeyDef {
    KeyDef { key, kind, env, secret: false, project: ProjectRule::Never }
}

const fn uint(min: u64, max: u64) -> Kind {
    Kind::UInt { min, max }
}

use EnvRule::{Negated, Plain, Presence};

/// Every key, in listing order.
pub static KEYS: &[KeyDef] = &[
    narrow(
        "limits.timeout_secs",
        Kind::Float { min: 0.0, max: 3600.0, open_min: true },
        Some(Plain("CORRAL_TIMEOUT_SECS")),
    ),
    narrow("limits.memory_mib", uint(16, 16384), Some(Plain("CORRAL_MEMORY_MIB"))),
    narrow("limits.max_output_kb", uint(1, 10240), Some(Plain("CORRAL_MAX_OUTPUT_KB"))),
    free("plugins.disabled", Kind::List, None),
    key("plugins.load", Kind::Paths, None),
    key("plugins.grants", Kind::ListMap(CAPABILITIES), None),
    never("plugins.policy", Kind::Path, Some(Plain("CORRAL_POLICY"))),
    narrow("workspace.read_guard", Kind::Bool, Some(Negated("CORRAL_NO_READ_GUARD"))),
    never("workspace.allow_git_writes", Kind::Bool, None),
    key("workspace.add_dirs", Kind::Paths, None),
    key("workspace.add_dirs_ro", Kind::Paths, None),
    // How much undo keeps: a larger bound makes the state folder grow, so only the person or a
    // trusted project sets it.
    key("undo.max_bytes", uint(0, 1 << 40), None),
    key("undo.keep", uint(1, 10_000), None),
    never("model.provider", Kind::Choice(PROVIDERS), Some(Plain("CORRAL_PROVIDER"))),
    free("model.name", Kind::Str, Some(Plain("CORRAL_MODEL"))),
    never("model.base_url", Kind::Str, Some(Plain("CORRAL_BASE_URL"))),
    KeyDef {
        key: "model.api_key",
        kind: Kind::Str,
        env: Some(Plain("CORRAL_API_KEY")),
        secret: true,
        project: ProjectRule::Never,
    },
    free("model.max_context_tokens", uint(1024, u64::MAX), Some(Plain("CORRAL_MAX_CONTEXT_TOKENS"))),
    free("model.max_output_tokens", uint(16, U32), None),
    free("model.temperature", Kind::Float { min: 0.0, max: 2.0, open_min: false }, None),
    free("model.retries", uint(1, 20), None),
    free("model.retry_base_ms", uint(0, 600_000), Some(Plain("CORRAL_RETRY_BASE_MS"))),
    free("model.timeout_secs", uint(1, 86_400), None),
    free("model.stream", Kind::Bool, None),
    free("model.reasoning_effort", Kind::Choice(EFFORTS), Some(Plain("CORRAL_REASONING_EFFORT"))),
    free("model.token_param", Kind::Choice(TOKEN_PARAMS), None),
    free("model.images", Kind::Choice(IMAGES), None),
    free("agent.max_turns", uint(1, U32), Some(Plain("CORRAL_MAX_TURNS"))),
    free("agent.history", Kind::Bool, None),
    free("agent.continue", Kind::Bool, None),
    free("agent.instructions", Kind::Bool, None),
    key("agent.system_prompt", Kind::Str, None),
    never("agent.audit_log", Kind::Str, Some(Plain("CORRAL_AUDIT_LOG"))),
    free("agent.proactive_summaries", Kind::Bool, None),
    free("agent.memory_full", Kind::Bool, None),
    narrow("agent.max_output_lines", uint(10, 1_000_000), Some(Plain("CORRAL_MAX_OUTPUT_LINES"))),
    narrow("agent.parallel_calls", uint(1, 16), None),
    // Saved sessions are the record of a run (and retention deletes them): the person's alone.
    never("sessions.save", Kind::Bool, None),
    never("sessions.keep", uint(1, 100_000), None),
    never("sessions.max_mb", uint(1, 1_000_000), None),
    never("sessions.max_file_mb", uint(1, 100_000), None),
    free("output.quiet", Kind::Bool, None),
    free("output.format", Kind::Choice(FORMATS), None),
    free("output.color", Kind::Choice(COLORS), Some(Presence("NO_COLOR", "never"))),
    free("output.verbose", Kind::Bool, None),
    narrow("network.mode", Kind::Choice(NETWORK_MODES), Some(Plain("CORRAL_NETWORK"))),
    narrow("network.allow_hosts", Kind::List, None),
    key("network.allow_private", Kind::List, None),
    key("network.hosts", Kind::Map, None),
    narrow("commands.mode", Kind::Choice(COMMAND_MODES), Some(Plain("CORRAL_COMMANDS"))),
    key("commands.allowed", Kind::List, None),
    key("commands.yolo", Kind::Bool, None),
    key("commands.env", Kind::List, None),
    never("commands.network", Kind::Bool, None),
    never("commands.read_paths", Kind::Paths, None),
    never("commands.write_paths", Kind::Paths, None),
    never("commands.unsandboxed", Kind::Bool, None),
];

/// The definition of `key` (`table.name`).
pub fn find(key: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.key == key)
}

/// The names allowed in `table`, in listing order.
pub fn names_in(table: &str) -> Vec<&'static str> {
    KEYS.iter().filter(|k| k.table() == table).map(|k| k.name()).collect()
}
