//! `corral mcp list|get|add|remove`: the person's `[mcp_servers]` in their config file, edited
//! in place (comments kept); and the session's side: starting the servers, the `/mcp` text.

use super::mcp_config_edit::{Edit, add_to, new_table, remove_from};
use super::setup::{self, Env};
use super::{GlobalArgs, SetupError};
use crate::mcp::client::{Manager, Status};
use crate::mcp::config::{self as mcp_config, ServerConfig, Transport};
use std::path::{Path, PathBuf};

/// `corral mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// List the MCP servers of your config (and of a trusted project): name, how it is
    /// reached, whether it is enabled, its identity (what a policy pins)
    List {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Show one server's settings and its identity (the values a policy file pins)
    Get {
        name: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Add a server to your config file: `corral mcp add docs -- npx -y some-server`, or
    /// `corral mcp add web --url https://example.com/mcp`
    Add {
        /// The server's name: letters, digits, '_' and '-'; its tools appear as NAME__tool
        name: String,
        /// An HTTP server's URL (streamable HTTP) instead of a command
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// The environment variable holding the HTTP server's bearer token
        #[arg(long, requires = "url")]
        bearer_token_env_var: Option<String>,
        /// A variable for a stdio server, KEY=VALUE (repeatable)
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// Let a stdio server use the network (`network = true`; it runs in the command sandbox
        /// without by default)
        #[arg(long)]
        allow_network: bool,
        /// The program and its arguments, after `--`
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server from your config file
    Remove { name: String },
}

/// Why a `corral mcp` command failed.
#[derive(Debug, thiserror::Error)]
pub enum McpCliError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("no user config folder: set CORRAL_CONFIG_DIR or HOME")]
    NoUserDir,
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source} (the file is unchanged)")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid TOML ({why}); fix it first, nothing was changed")]
    Parse { path: PathBuf, why: String },
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] mcp_config::ConfigError),
}

/// Runs `corral mcp ...`; Ok is the exit code.
pub fn run(args: McpArgs, global: &GlobalArgs) -> Result<i32, McpCliError> {
    match args.command {
        McpCommand::List { json } => {
            let servers = configured(global)?;
            if json {
                let list: Vec<_> = servers.iter().map(to_json).collect();
                println!("{}", serde_json::json!({ "servers": list }));
            } else if servers.is_empty() {
                println!(
                    "no MCP servers; add one with `corral mcp add NAME -- COMMAND ARGS...` or --url URL"
                );
            } else {
                for s in &servers {
                    let on = if s.enabled { "" } else { " (disabled)" };
                    println!("{:16} {}{on}  {}", s.name, reach(s), s.identity());
                }
            }
            Ok(0)
        }
        McpCommand::Get { name, json } => {
            let servers = configured(global)?;
            let Some(s) = servers.iter().find(|s| s.name == name) else {
                return Err(McpCliError::Usage(format!(
                    "no MCP server named {name}; `corral mcp list` shows them"
                )));
            };
            if json {
                println!("{}", to_json(s));
            } else {
                println!("{}", describe(s));
            }
            Ok(0)
        }
        McpCommand::Add { name, url, bearer_token_env_var, env, allow_network, command } => {
            let path = user_file()?;
            let text = read(&path)?;
            let table = new_table(&url, bearer_token_env_var, &env, allow_network, &command)
                .map_err(McpCliError::Usage)?;
            // The same checks a session makes, before anything is written.
            let check = crate::config::McpTable {
                table: toml::from_str(&table.to_string())
                    .map_err(|e| McpCliError::Usage(format!("internal error building the table: {e}")))?,
                source: crate::config::Source::UserFile(path.clone()),
                base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            };
            mcp_config::parse(&name, &check)?;
            let out = add_to(&text, &name, table).map_err(|why| match why {
                Edit::Parse(why) => McpCliError::Parse { path: path.clone(), why },
                Edit::Other(why) => McpCliError::Usage(why),
            })?;
            write(&path, &out)?;
            println!("added MCP server {name} to {}", path.display());
            Ok(0)
        }
        McpCommand::Remove { name } => {
            let path = user_file()?;
            let text = read(&path)?;
            let out = remove_from(&text, &name).map_err(|why| match why {
                Edit::Parse(why) => McpCliError::Parse { path: path.clone(), why },
                Edit::Other(why) => McpCliError::Usage(format!("{why} in {}", path.display())),
            })?;
            write(&path, &out)?;
            println!("removed MCP server {name} from {}", path.display());
            Ok(0)
        }
    }
}

fn user_file() -> Result<PathBuf, McpCliError> {
    Ok(crate::config::user_dir().ok_or(McpCliError::NoUserDir)?.join(crate::config::USER_FILE))
}

fn read(path: &Path) -> Result<String, McpCliError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(McpCliError::Read { path: path.to_path_buf(), source }),
    }
}

/// Writes `text` to `path` through a temporary file in the same folder, so a failure leaves
/// the old file whole.
#[allow(clippy::disallowed_methods)] // the person's own config file, outside every root
fn write(path: &Path, text: &str) -> Result<(), McpCliError> {
    let bad = |source| McpCliError::Write { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(bad)?;
    }
    let tmp = path.with_extension(format!("toml.tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(bad)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        bad(e)
    })
}

/// The servers the settings declare (user file, and a trusted project's).
fn configured(global: &GlobalArgs) -> Result<Vec<ServerConfig>, McpCliError> {
    let resolved = setup::resolve(global, global.ci, false)?;
    Ok(mcp_config::parse_all(&resolved.settings.mcp_servers)?)
}

fn reach(s: &ServerConfig) -> String {
    match &s.transport {
        Transport::Stdio { command, args, .. } => {
            let mut parts = vec![command.clone()];
            parts.extend(args.iter().cloned());
            format!("stdio: {}", parts.join(" "))
        }
        Transport::Http { url, .. } => format!("http: {url}"),
    }
}

fn to_json(s: &ServerConfig) -> serde_json::Value {
    let (pin_key, pin) = match &s.transport {
        Transport::Stdio { command, args, .. } => {
            ("command_sha256", mcp_config::command_digest(command, args))
        }
        Transport::Http { url, .. } => ("url", url.clone()),
    };
    let transport = match &s.transport {
        Transport::Stdio { command, args, env, cwd, network } => serde_json::json!({
            "type": "stdio", "command": command, "args": args,
            "env": env.keys().collect::<Vec<_>>(),
            "cwd": cwd.as_ref().map(|c| c.display().to_string()), "network": network,
        }),
        Transport::Http { url, bearer_token_env_var, http_headers } => serde_json::json!({
            "type": "http", "url": url, "bearer_token_env_var": bearer_token_env_var,
            "http_headers": http_headers.keys().collect::<Vec<_>>(),
        }),
    };
    serde_json::json!({
        "name": s.name,
        "transport": transport,
        "enabled": s.enabled,
        "required": s.required,
        "startup_timeout_sec": s.startup_timeout.as_secs_f64(),
        "tool_timeout_sec": s.tool_timeout.as_secs_f64(),
        "enabled_tools": s.enabled_tools,
        "disabled_tools": s.disabled_tools,
        "identity": s.identity(),
        "pin": { pin_key: pin },
        "source": s.source.to_string(),
    })
}

fn describe(s: &ServerConfig) -> String {
    let mut lines = vec![format!("{} ({})", s.name, s.source), format!("  {}", reach(s))];
    if let Transport::Stdio { env, network, .. } = &s.transport {
        if !env.is_empty() {
            lines.push(format!("  env: {}", env.keys().cloned().collect::<Vec<_>>().join(", ")));
        }
        lines.push(format!("  network: {network}"));
    }
    lines.push(format!("  enabled: {}, required: {}", s.enabled, s.required));
    lines.push(format!(
        "  startup_timeout_sec: {}, tool_timeout_sec: {}",
        s.startup_timeout.as_secs_f64(),
        s.tool_timeout.as_secs_f64()
    ));
    lines.push(format!("  identity: {}", s.identity()));
    let pin = match &s.transport {
        Transport::Stdio { command, args, .. } => {
            format!("command_sha256 = \"{}\"", mcp_config::command_digest(command, args))
        }
        Transport::Http { url, .. } => format!("url = \"{url}\""),
    };
    lines.push(format!("  policy pin: [mcp_servers.{}] {pin}", s.name));
    lines.join("\n")
}

/// Starts the session's MCP servers (none configured: `None`). Err when a table is wrong or a
/// required server did not start.
pub async fn start_servers(env: &Env) -> Result<Option<Manager>, String> {
    if env.settings.mcp_servers.is_empty() {
        return Ok(None);
    }
    let servers = mcp_config::parse_all(&env.settings.mcp_servers).map_err(|e| e.to_string())?;
    // Servers are confined as commands are, whether or not the model may run commands.
    let confine = crate::capabilities::process::confine::Confinement::new(&env.settings.commands, &|k| {
        std::env::var_os(k)
    });
    let m = Manager::start(servers, env.session.clone(), confine, env.policy.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(m))
}

/// What `/mcp` prints: each server's state and, when ready, its tools.
pub fn status_text(mcp: Option<&Manager>) -> String {
    let Some(m) = mcp.filter(|m| !m.is_empty()) else {
        return "no MCP servers are configured; add one with `corral mcp add` (see docs/mcp-client.md)\n"
            .into();
    };
    let mut out = String::new();
    for (name, identity, status) in m.statuses() {
        out.push_str(&crate::termtext::clean(&format!("{name}: {} [{identity}]\n", status.label())));
        if let Status::Ready(tools) = status {
            for t in tools {
                out.push_str(&format!("  {t}\n"));
            }
        }
    }
    out
}
