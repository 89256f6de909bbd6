//! `[mcp_servers.<name>]`: one MCP server's settings (Codex's keys, plus `network`) checked
//! from the table as written, its identity (what a policy pins and the audit log names).

use crate::config::{McpTable, Policy, Source};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a server may take to start when the table says nothing (Codex's default).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take when the table says nothing (Codex's default).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout a table may ask for.
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// How corral reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout, run in the command sandbox.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        /// Its working directory; the workspace when unset.
        cwd: Option<PathBuf>,
        /// Whether the sandbox leaves it the network (`network = true`).
        network: bool,
    },
    /// A streamable-HTTP endpoint, reached under the network policy.
    Http {
        url: String,
        /// The variable holding the bearer token (never the token itself).
        bearer_token_env_var: Option<String>,
        http_headers: BTreeMap<String, String>,
    },
}

/// One server's checked settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    /// Start-up waits for it and fails when it cannot start.
    pub required: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// When set, only these tools are offered.
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    /// The file that declared it.
    pub source: Source,
}

/// A server table that cannot be used: which server, which file, what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("mcp_servers.{server} in {file}: {why}")]
pub struct ConfigError {
    pub server: String,
    pub file: String,
    pub why: String,
}

fn string(t: &toml::Table, key: &str) -> Result<Option<String>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!("{key} must be a string, not {}", v.type_str())),
    }
}

fn strings(t: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| format!("{key} must be a list of strings")))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(v) => Err(format!("{key} must be a list of strings, not {}", v.type_str())),
    }
}

fn map(t: &toml::Table, key: &str) -> Result<BTreeMap<String, String>, String> {
    match t.get(key) {
        None => Ok(BTreeMap::new()),
        Some(toml::Value::Table(m)) => m
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_string()))
                    .ok_or_else(|| format!("{key}.{k} must be a string"))
            })
            .collect(),
        Some(v) => {
            Err(format!("{key} must be a table of strings like {{ NAME = \"value\" }}, not {}", v.type_str()))
        }
    }
}

fn boolean(t: &toml::Table, key: &str, default: bool) -> Result<bool, String> {
    match t.get(key) {
        None => Ok(default),
        Some(toml::Value::Boolean(b)) => Ok(*b),
        Some(v) => Err(format!("{key} must be true or false, not {}", v.type_str())),
    }
}

fn seconds(t: &toml::Table, key: &str, default: Duration) -> Result<Duration, String> {
    let secs = match t.get(key) {
        None => return Ok(default),
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(toml::Value::Float(f)) => *f,
        Some(v) => return Err(format!("{key} must be a number of seconds, not {}", v.type_str())),
    };
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(format!(
            "{key} = {secs}: use a number of seconds above 0 and at most {MAX_TIMEOUT_SECS}"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Checks one table.
pub fn parse(name: &str, t: &McpTable) -> Result<ServerConfig, ConfigError> {
    let bad = |why: String| ConfigError { server: name.to_string(), file: t.source.to_string(), why };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(bad("a server name may use letters, digits, '_' and '-' only".into()));
    }
    let table = &t.table;
    let command = string(table, "command").map_err(bad)?;
    let url = string(table, "url").map_err(bad)?;
    let transport = match (command, url) {
        (Some(command), None) => {
            for k in ["bearer_token_env_var", "http_headers"] {
                if table.contains_key(k) {
                    return Err(bad(format!("{k} is for an HTTP server (url); this one has a command")));
                }
            }
            if command.trim().is_empty() {
                return Err(bad("command is empty".into()));
            }
            let cwd = string(table, "cwd").map_err(bad)?.map(|c| t.base.join(c));
            Transport::Stdio {
                command,
                args: strings(table, "args").map_err(bad)?.unwrap_or_default(),
                env: map(table, "env").map_err(bad)?,
                cwd,
                network: boolean(table, "network", false).map_err(bad)?,
            }
        }
        (None, Some(url)) => {
            for k in ["args", "env", "cwd", "network"] {
                if table.contains_key(k) {
                    return Err(bad(format!("{k} is for a stdio server (command); this one has a url")));
                }
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(format!("url = {url:?}: use an http:// or https:// address")));
            }
            Transport::Http {
                url,
                bearer_token_env_var: string(table, "bearer_token_env_var").map_err(bad)?,
                http_headers: map(table, "http_headers").map_err(bad)?,
            }
        }
        (Some(_), Some(_)) => return Err(bad("give either command (stdio) or url (HTTP), not both".into())),
        (None, None) => {
            return Err(bad(
                "give command = \"program\" (a stdio server) or url = \"https://...\" (HTTP)".into()
            ));
        }
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled: boolean(table, "enabled", true).map_err(bad)?,
        required: boolean(table, "required", false).map_err(bad)?,
        startup_timeout: seconds(table, "startup_timeout_sec", STARTUP_TIMEOUT).map_err(bad)?,
        tool_timeout: seconds(table, "tool_timeout_sec", TOOL_TIMEOUT).map_err(bad)?,
        enabled_tools: strings(table, "enabled_tools").map_err(bad)?,
        disabled_tools: strings(table, "disabled_tools").map_err(bad)?.unwrap_or_default(),
        source: t.source.clone(),
    })
}

/// Checks every table, in name order.
pub fn parse_all(tables: &crate::config::McpTables) -> Result<Vec<ServerConfig>, ConfigError> {
    tables.iter().map(|(name, t)| parse(name, t)).collect()
}

/// The hex SHA-256 of a stdio server's command and arguments (each ended by a NUL byte, so
/// `["a b"]` and `["a", "b"]` differ): what a policy pins.
pub fn command_digest(command: &str, args: &[String]) -> String {
    let mut h = Sha256::new();
    for part in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl ServerConfig {
    /// Who the server is, for the audit log and pins: `command sha256:<hex>` or `url <url>`.
    pub fn identity(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                format!("command sha256:{}", command_digest(command, args))
            }
            Transport::Http { url, .. } => format!("url {url}"),
        }
    }

    /// Whether the tool named `tool` (the server's own name) is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools.as_ref().is_none_or(|l| l.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// Refuses the server when a policy governs the run and does not pin it as it is.
    pub fn check_pin(&self, policy: Option<&Policy>) -> Result<(), String> {
        let Some(policy) = policy else { return Ok(()) };
        let file = policy.path.display();
        let lift = format!(
            "The person can pin it in the policy file {file} under [mcp_servers.{}] (values from `corral mcp get {}`), \
             or remove the server from their config",
            self.name, self.name
        );
        let Some(pin) = policy.mcp_servers.get(&self.name) else {
            return Err(format!(
                "refused by the policy pin rule: MCP server {} ({}) is not pinned in the policy file {file}, and a \
                 policy run starts only pinned servers. {lift}",
                self.name,
                self.identity()
            ));
        };
        let matches = match &self.transport {
            Transport::Stdio { command, args, .. } => {
                pin.command_sha256.as_deref() == Some(command_digest(command, args).as_str())
            }
            Transport::Http { url, .. } => pin.url.as_deref() == Some(url.as_str()),
        };
        if matches {
            return Ok(());
        }
        let pinned = match (&pin.command_sha256, &pin.url) {
            (Some(sha), _) => format!("command sha256:{sha}"),
            (_, Some(url)) => format!("url {url}"),
            _ => "nothing".to_string(),
        };
        Err(format!(
            "refused by the policy pin rule: MCP server {} is now {}, but the policy file pins {pinned}; a changed \
             server does not start in a policy run. {lift}",
            self.name,
            self.identity()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> McpTable {
        McpTable {
            table: toml::from_str(text).unwrap(),
            source: Source::UserFile("/u/config.toml".into()),
            base: "/u".into(),
        }
    }

    #[test]
    fn stdio_and_http_tables_are_read_with_codex_defaults() {
        let c =
            parse("docs", &table("command = \"node\"\nargs = [\"s.js\"]\nenv = { A = \"1\" }\ncwd = \"w\""))
                .unwrap();
        let Transport::Stdio { command, args, env, cwd, network } = &c.transport else { panic!() };
        assert_eq!((command.as_str(), args.as_slice(), network), ("node", &["s.js".to_string()][..], &false));
        assert_eq!(env["A"], "1");
        assert_eq!(cwd.as_deref(), Some(std::path::Path::new("/u/w")));
        assert!(c.enabled && !c.required);
        assert_eq!((c.startup_timeout, c.tool_timeout), (STARTUP_TIMEOUT, TOOL_TIMEOUT));
        let h = parse(
            "web",
            &table("url = \"https://x.dev/mcp\"\nbearer_token_env_var = \"TOK\"\ntool_timeout_sec = 2.5"),
        )
        .unwrap();
        assert_eq!(h.identity(), "url https://x.dev/mcp");
        assert_eq!(h.tool_timeout, Duration::from_millis(2500));
    }

    #[test]
    fn bad_tables_name_the_server_the_file_and_the_fix() {
        let e = parse("x", &table("command = \"a\"\nurl = \"https://b\"")).unwrap_err().to_string();
        assert!(e.contains("mcp_servers.x in user file /u/config.toml: give either command"), "{e}");
        let e = parse("x", &table("args = [\"a\"]")).unwrap_err().to_string();
        assert!(e.contains("give command = \"program\""), "{e}");
        let e = parse("x", &table("command = \"a\"\nargs = \"b\"")).unwrap_err().to_string();
        assert!(e.contains("args must be a list of strings"), "{e}");
        let e = parse("x", &table("url = \"https://b\"\nnetwork = true")).unwrap_err().to_string();
        assert!(e.contains("network is for a stdio server"), "{e}");
        let e = parse("x", &table("command = \"a\"\ntool_timeout_sec = 0")).unwrap_err().to_string();
        assert!(e.contains("above 0"), "{e}");
        assert!(parse("a.b", &table("command = \"a\"")).is_err());
    }

    #[test]
    fn tool_filters_and_digests() {
        let c =
            parse("s", &table("command = \"a\"\nenabled_tools = [\"x\", \"y\"]\ndisabled_tools = [\"y\"]"))
                .unwrap();
        assert!(c.offers("x") && !c.offers("y") && !c.offers("z"));
        assert_ne!(command_digest("a b", &[]), command_digest("a", &["b".into()]));
        assert_eq!(command_digest("a", &[]).len(), 64);
    }

    #[test]
    fn a_policy_starts_only_servers_pinned_as_they_are() {
        let c = parse("s", &table("command = \"node\"\nargs = [\"x.js\"]")).unwrap();
        assert!(c.check_pin(None).is_ok());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        let sha = command_digest("node", &["x.js".into()]);
        #[allow(clippy::disallowed_methods)]
        std::fs::write(&path, format!("[mcp_servers.s]\ncommand_sha256 = \"{sha}\"\n")).unwrap();
        let p = Policy::load(&path).unwrap();
        assert!(c.check_pin(Some(&p)).is_ok());
        let changed = parse("s", &table("command = \"node\"\nargs = [\"y.js\"]")).unwrap();
        let e = changed.check_pin(Some(&p)).unwrap_err();
        assert!(e.contains("refused by the policy pin rule") && e.contains("now command sha256:"), "{e}");
        let other = parse("t", &table("command = \"node\"")).unwrap();
        let e = other.check_pin(Some(&p)).unwrap_err();
        assert!(e.contains("is not pinned") && e.contains("[mcp_servers.t]"), "{e}");
    }
}
