//! The command line: parse flags, set up the session, run one command, and map every
//! failure to a message that says what to do and an exit code.

// The command line is where corral talks to the person: printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod asker;
mod audit;
mod commands;
mod cron;
mod cron_settings;
mod doctor;
mod firstrun;
mod jsonout;
mod markdown;
mod mcp;
mod mcp_config;
mod mcp_config_edit;
mod parse;
mod plugin;
mod render;
mod repl;
mod report;
mod session;
mod sessions;
mod setup;
mod slash;
mod style;
mod trust;
mod trustask;
mod undo;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use parse::parse;
pub use setup::{Env, SetupError};

/// corral: a coding agent whose tools are sandboxed WebAssembly components.
#[derive(Debug, Parser)]
///
/// With a task, corral works on it and prints the final answer on stdout. With no task and a
/// terminal, it starts an interactive session; a task can also come on stdin.
#[command(name = "corral", version, about, long_about = None, propagate_version = true)]
#[command(after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The task for the agent, e.g. "make the tests pass"; `-` reads it from stdin
    pub task: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

const EXIT_CODES: &str = "Exit codes of an agent run:\n  0    done: the model gave its final answer\n  \
                          1    error: setup, configuration or the model provider failed\n  \
                          2    the turn limit (--max-turns) was reached; a continue-here note is saved\n  \
                          130  interrupted: Ctrl-C (or SIGTERM with no one at the terminal) stopped it; the\n       \
                          commands it started are ended and a continue-here note is saved";

/// A subcommand's help: its own arguments and the sandbox options (those without a heading);
/// the agent, model, capability and output options are listed by `corral --help` only.
const SUB_HELP: &str = "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}\n\n\
                        The agent, model, capability and output options: corral --help";

/// Options every command takes. Each one but `--workspace` and the session choices
/// (`--resume`, `--continue`, `--fork`) is also a settings key (see `corral config`); a flag
/// beats the environment, which beats the files.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// The workspace root [default: nearest ancestor with .git or corral.toml, else the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Add a read-write root (repeatable) [key: workspace.add_dirs]
    #[arg(long = "add-dir", global = true, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Add a read-only root (repeatable) [key: workspace.add_dirs_ro]
    #[arg(long = "add-dir-ro", global = true, value_name = "DIR")]
    pub add_dir_ro: Vec<PathBuf>,
    /// Load an extra plugin component (repeatable) [key: plugins.load]
    #[arg(long = "plugin", global = true, value_name = "PATH")]
    pub plugin: Vec<PathBuf>,
    /// Do not load a plugin: its name, origin:name or file path (repeatable) [key: plugins.disabled]
    #[arg(long = "disable-plugin", global = true, value_name = "NAME")]
    pub disable_plugin: Vec<String>,
    /// Allow changing existing files that were not read first in this session [key: workspace.read_guard]
    #[arg(long, global = true)]
    pub no_read_guard: bool,
    /// Let tools change .git/ (hooks and git config run code at your next git command); a project file cannot set this [key: workspace.allow_git_writes]
    #[arg(long, global = true)]
    pub allow_git_writes: bool,
    /// Wall-clock limit per tool call, in seconds [default: 30]
    #[arg(long, global = true, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Memory limit per tool call, in MiB [default: 256]
    #[arg(long, global = true, value_name = "MIB")]
    pub memory_mib: Option<u64>,
    /// Cap on one tool result, in KB [default: 50]
    #[arg(long, global = true, value_name = "KB")]
    pub max_output_kb: Option<u64>,
    /// Cap on one tool result, in lines [default: 2000] [key: agent.max_output_lines]
    #[arg(long, global = true, value_name = "LINES")]
    pub max_output_lines: Option<u64>,
    /// What plugins may reach: off, llm-only (only the model endpoint; plugins get no network)
    /// or on (plugins granted http, through the SSRF checks) [default: llm-only] [key: network.mode]
    #[arg(long, global = true, value_name = "MODE",
          value_parser = clap::builder::PossibleValuesParser::new(crate::config::keys::NETWORK_MODES.iter().copied()))]
    pub network: Option<String>,
    /// Grant a plugin capabilities: PLUGIN=CAP[,CAP...] (workspace-write, kv, http, process,
    /// context); repeatable. The plugin gets exactly the list [key: plugins.grants]
    #[arg(long, global = true, value_name = "PLUGIN=CAPS", help_heading = "Capabilities")]
    pub grant: Vec<String>,
    /// A policy file that pins plugins by sha256 and bounds grants, network and commands
    /// (see docs/ci.md) [env: CORRAL_POLICY] [key: plugins.policy]
    #[arg(long, global = true, value_name = "FILE", help_heading = "Capabilities")]
    pub policy: Option<PathBuf>,
    /// Programs the model may run (comma-separated), resolved on PATH at start-up; enables
    /// run_command [key: commands.allowed]
    #[arg(
        long,
        alias = "allow-commands",
        global = true,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Capabilities"
    )]
    pub allowed_commands: Vec<String>,
    /// off: no commands; allowlist: only --allowed-commands; ask: those, and anything else
    /// once the person approves it [default: allowlist] [key: commands.mode]
    #[arg(long, global = true, value_name = "MODE", help_heading = "Capabilities",
          value_parser = clap::builder::PossibleValuesParser::new(crate::config::keys::COMMAND_MODES.iter().copied()))]
    pub commands: Option<String>,
    /// Let the model run any program and shell strings through /bin/sh -c [key: commands.yolo]
    #[arg(long, global = true, help_heading = "Capabilities")]
    pub yolo: bool,
    /// Pass this environment variable to commands too (repeatable) [key: commands.env]
    #[arg(long, global = true, value_name = "NAME", help_heading = "Capabilities")]
    pub command_env: Vec<String>,
    /// Let commands use the network (off by default: no TCP, UDP or other sockets) [key: commands.network]
    #[arg(long, global = true, help_heading = "Capabilities")]
    pub command_network: bool,
    /// Let commands read this folder too (repeatable) [key: commands.read_paths]
    #[arg(long, global = true, value_name = "DIR", help_heading = "Capabilities")]
    pub command_read: Vec<PathBuf>,
    /// Let commands change this folder too (repeatable) [key: commands.write_paths]
    #[arg(long, global = true, value_name = "DIR", help_heading = "Capabilities")]
    pub command_write: Vec<PathBuf>,
    /// Run commands without the operating-system sandbox where this system cannot provide it [key: commands.unsandboxed]
    #[arg(long, global = true, help_heading = "Capabilities")]
    pub unsandboxed_commands: bool,

    /// The model provider [env: CORRAL_PROVIDER]
    #[arg(long, global = true, value_name = "NAME", help_heading = "Model",
          value_parser = clap::builder::PossibleValuesParser::new(crate::config::keys::PROVIDERS.iter().copied()))]
    pub provider: Option<String>,
    /// The model's name [env: CORRAL_MODEL]
    #[arg(long, global = true, value_name = "NAME", help_heading = "Model")]
    pub model: Option<String>,
    /// The provider's base URL [env: CORRAL_BASE_URL]
    #[arg(long, global = true, value_name = "URL", help_heading = "Model")]
    pub base_url: Option<String>,
    /// The API key [env: CORRAL_API_KEY, then the provider's own variable]
    #[arg(long, global = true, value_name = "KEY", help_heading = "Model")]
    pub api_key: Option<String>,
    /// The model's context window, in tokens (at least 1024) [env: CORRAL_MAX_CONTEXT_TOKENS]
    #[arg(long, global = true, value_name = "TOKENS", help_heading = "Model")]
    pub max_context_tokens: Option<u64>,
    /// Cap on one model reply, in tokens [default: 32768]
    #[arg(long, global = true, value_name = "TOKENS", help_heading = "Model")]
    pub max_output_tokens: Option<u32>,
    /// How hard the model thinks: off, low, medium or high, mapped to the provider's setting
    /// [env: CORRAL_REASONING_EFFORT] [default: the provider's]
    #[arg(long, global = true, alias = "thinking", value_name = "LEVEL", help_heading = "Model")]
    pub reasoning_effort: Option<String>,
    /// The reply-cap field for OpenAI-compatible servers: max_tokens or max_completion_tokens
    /// [default: by server and model family]
    #[arg(long, global = true, value_name = "FIELD", help_heading = "Model")]
    pub token_param: Option<String>,
    /// Whether tool images go to the model: auto, true or false [default: auto]
    #[arg(long, global = true, value_name = "WHEN", help_heading = "Model")]
    pub images: Option<String>,
    /// Sampling temperature, 0 to 2 [default: the provider's]
    #[arg(long, global = true, value_name = "T", help_heading = "Model")]
    pub temperature: Option<f32>,
    /// Attempts per model request, 1 to 20 [default: 5]
    #[arg(long, global = true, value_name = "N", help_heading = "Model")]
    pub retries: Option<u32>,
    /// First retry delay in milliseconds, doubled each attempt [default: 1000]
    #[arg(long, global = true, value_name = "MS", hide = true)]
    pub retry_base_ms: Option<u64>,
    /// Seconds the model server may stay silent (before replying or mid-stream) [default: 600]
    #[arg(long, global = true, value_name = "SECS", help_heading = "Model")]
    pub provider_timeout: Option<u64>,
    /// Ask for whole replies instead of streamed ones
    #[arg(long, global = true, help_heading = "Model")]
    pub no_stream: bool,

    /// Most model turns in one run [default: 100] [env: CORRAL_MAX_TURNS]
    #[arg(long, global = true, value_name = "N", help_heading = "Agent")]
    pub max_turns: Option<u32>,
    /// Most read-only calls of one reply run at the same time, never more than the cores;
    /// 1 runs every call in turn [default: 8] [key: agent.parallel_calls]
    #[arg(long, global = true, value_name = "N", help_heading = "Agent")]
    pub parallel_calls: Option<u64>,
    /// Do not append to HISTORY.md
    #[arg(long, global = true, help_heading = "Agent")]
    pub no_history: bool,
    /// Do not read or write the continue-here note an unfinished run leaves (not about
    /// --continue, which resumes a saved session)
    #[arg(long, global = true, help_heading = "Agent")]
    pub no_continue: bool,
    /// Do not load AGENTS.md / CLAUDE.md instructions
    #[arg(long, global = true, help_heading = "Agent")]
    pub no_instructions: bool,
    /// Replace the built-in role text of the system prompt
    #[arg(long, global = true, value_name = "TEXT", help_heading = "Agent")]
    pub system_prompt: Option<String>,
    /// CI mode (as `corral exec`): never prompt, no interactive session, write the audit log
    #[arg(long, global = true, help_heading = "Agent")]
    pub ci: bool,
    /// Where CI mode writes its audit log [default: .corral/audit.jsonl]
    #[arg(long, global = true, value_name = "PATH", help_heading = "Agent")]
    pub audit_log: Option<String>,
    /// Summarise the work every 10 turns, for recaps when compaction drops turns
    #[arg(long, global = true, help_heading = "Agent")]
    pub proactive_summaries: bool,
    /// Show all of .corral/memory/MEMORY.md (bounded) instead of the entries relevant to the task
    #[arg(long, global = true, help_heading = "Agent")]
    pub memory_full: bool,

    /// Resume a saved session, by its id or a unique start of it (`corral sessions` lists
    /// them); without an id, the most recent. Then the task, or the interactive session
    #[arg(long, global = true, value_name = "ID", num_args = 0..=1, default_missing_value = "",
          help_heading = "Sessions", conflicts_with_all = ["continue_last", "fork"])]
    pub resume: Option<String>,
    /// Resume this workspace's last saved session (`corral --continue "next task"`)
    #[arg(long = "continue", global = true, help_heading = "Sessions", conflicts_with = "fork")]
    pub continue_last: bool,
    /// Start a new session from a copy of a saved one; the saved one is left as it is
    #[arg(long, global = true, value_name = "ID", help_heading = "Sessions")]
    pub fork: Option<String>,

    /// Print only the final answer
    #[arg(short, long, global = true, help_heading = "Output")]
    pub quiet: bool,
    /// How to print results [default: text]
    #[arg(long, global = true, value_name = "FORMAT", help_heading = "Output",
          value_parser = clap::builder::PossibleValuesParser::new(crate::config::keys::FORMATS.iter().copied()))]
    pub output_format: Option<String>,
    /// When to use colour [default: auto; never when NO_COLOR is set]
    #[arg(long, global = true, value_name = "WHEN", help_heading = "Output",
          value_parser = clap::builder::PossibleValuesParser::new(crate::config::keys::COLORS.iter().copied()))]
    pub color: Option<String>,
    /// Show plugin log lines and cache activity on stderr
    #[arg(short, long, global = true, help_heading = "Output")]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every tool: its name, its plugin and what it does
    #[command(help_template = SUB_HELP)]
    Tools {
        /// Print JSON (name, plugin, description, input schema, hints) instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Call one tool in the sandbox against the workspace and print its output
    ///
    /// Exits 0 on success, 1 when the tool reports an error, 2 on a usage or setup error.
    #[command(after_help = "Examples:\n  corral tool read_file '{\"file_path\": \"README.md\"}'\n  \
                            echo '{\"pattern\": \"TODO\"}' | corral tool grep -")]
    #[command(help_template = SUB_HELP)]
    Tool {
        /// The tool's name (see `corral tools`)
        name: String,
        /// The arguments as a JSON object; `-` reads them from stdin
        #[arg(default_value = "{}")]
        args: String,
    },
    /// List plugins: source, sha256, size, tools, capabilities, and whether they were cached
    #[command(help_template = SUB_HELP)]
    Plugins {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// List the skills: name, description, source (project, user, shipped), kind and path
    ///
    /// Skills come from .corral/skills/ in the project, skills/ in corral's user folder
    /// (~/.config/corral/skills/), and corral itself; a project skill hides a user skill of
    /// the same name, which hides a shipped one. Each folder holds SKILL.md folders and
    /// skill components (*.wasm).
    #[command(help_template = SUB_HELP)]
    Skills {
        /// Print JSON ({"skills":[..],"hidden":[..],"warnings":[..]}) instead of text
        #[arg(long)]
        json: bool,
    },
    /// Create, build, inspect and install plugins (see docs/authoring.md)
    #[command(help_template = SUB_HELP)]
    Plugin {
        #[command(subcommand)]
        command: plugin::PluginCommand,
    },
    /// Show every setting, its value and where it came from, and the files consulted
    ///
    /// Settings come from, lowest priority first: defaults, the user file
    /// (~/.config/corral/config.toml), the project file (corral.toml), environment
    /// variables, flags. Lists such as plugins.disabled accumulate across layers.
    #[command(help_template = SUB_HELP)]
    Config {
        /// Print JSON ({"schema_version":1,"settings":{..},"files":[..]}) instead of text
        #[arg(long)]
        json: bool,
    },
    /// Trust this workspace's own corral.toml, .corral/ plugins and skills (or --show, --revoke)
    ///
    /// Until you trust a workspace, its project files may only narrow what corral may do;
    /// keys that widen it (commands, grants, network, roots, ...) and its plugins and skills
    /// are ignored. Trust is kept in your user folder for this path and these exact files,
    /// and asked again when they change. Under `corral exec`, --ci or a policy file no
    /// project is trusted.
    Trust {
        /// Show what the project asks for and whether it is trusted; change nothing
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Stop trusting this workspace
        #[arg(long)]
        revoke: bool,
    },
    /// Report what the command sandbox can enforce on this system, and whether commands would
    /// run confined with these settings
    Doctor {
        /// JSON output
        #[arg(long)]
        json: bool,
    },
    /// Find a model server (a local Ollama, LM Studio or llama.cpp, or an API key in the
    /// environment), pick a model, and write your user file
    Setup,
    /// Write a commented corral.toml for this project (it never overwrites one)
    Init,
    /// MCP both ways: serve this workspace's tools to MCP clients (Claude Code, Codex, Zed,
    /// Cursor, ...), and list, show, add or remove the MCP servers whose tools corral uses; see docs/mcp.md
    #[command(help_template = SUB_HELP)]
    Mcp(McpArgs),
    /// Scheduled jobs the model made with the cron tool: list them, or run the due ones
    #[command(help_template = SUB_HELP)]
    Cron {
        #[command(subcommand)]
        command: cron::CronCommand,
    },
    /// Put back the files corral's tools changed: the latest checkpoint (one per model turn that
    /// changed files), or every one from N on; --list shows them
    ///
    /// Works without git and on untracked files: the checkpoints are kept in corral's state
    /// folder for this workspace. A file changed outside corral since its checkpoint is not
    /// overwritten (nothing is restored, the files are named) unless --force.
    #[command(help_template = SUB_HELP)]
    Undo {
        /// List the checkpoints (number, time, turn, tools, files); change nothing
        #[arg(long, conflicts_with_all = ["to", "force"])]
        list: bool,
        /// Restore the workspace to before checkpoint N (undoing it and every later one)
        #[arg(long, value_name = "N")]
        to: Option<u64>,
        /// Restore even files changed outside corral since the checkpoint (those changes are lost)
        #[arg(long)]
        force: bool,
    },
    /// List this workspace's saved sessions, newest first (`corral sessions rm ID` removes one)
    ///
    /// Every run is saved as it goes (setting sessions.save) in corral's state folder for the
    /// workspace; `corral --resume ID`, `--continue` and `--fork ID` go on from one.
    #[command(help_template = SUB_HELP)]
    Sessions {
        /// Print JSON ({"schema_version":1,"sessions":[..]}) instead of a table
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        command: Option<sessions::SessionsCommand>,
    },
    /// Run one task unattended for CI: never prompt, no network for plugins unless granted,
    /// and an audit log of every tool and model call (.corral/audit.jsonl or --audit-log)
    Exec {
        /// The task; read from stdin when absent
        task: Option<String>,
    },
}

/// `corral mcp`: the Model Context Protocol.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve the workspace's tools over stdio (default) or streamable HTTP on a loopback address
    ///
    /// Every call runs as in an agent run: the same sandbox, grants, limits, read guard,
    /// protected paths, policy pins (--policy) and audit log (--audit-log, or --ci). An
    /// untrusted project's plugins and skills are not served; `question` and `snapshot` never are.
    #[command(help_template = SUB_HELP)]
    Serve(ServeArgs),
    #[command(flatten)]
    Servers(mcp_config::McpCommand),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at this loopback address (127.0.0.1:PORT, [::1]:PORT or
    /// localhost:PORT; port 0 picks one) at /mcp instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Take the HTTP bearer token from this environment variable (at least 16 characters);
    /// without it corral makes one and prints it on stderr
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
}

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let code = rt.block_on(async move {
        let command = match cli.command {
            None => return session::run(&cli.global, cli.task, cli.global.ci).await,
            Some(Command::Exec { task }) => return session::run(&cli.global, task.or(cli.task), true).await,
            Some(c) => c,
        };
        match commands::dispatch(command, &cli.global).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {}", crate::redact::text(&e.to_string()));
                2
            }
        }
    });
    // A plugin's blocking file call left behind by a timeout (an open of a FIFO no one writes
    // to) must not keep corral from exiting: do not wait for it.
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}
