//! The command line: parse flags, set up the session, run one command, and map every
//! failure to a message that says what to do and an exit code.

mod commands;
mod setup;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use setup::{Env, SetupError};

/// corral: a coding agent whose tools are sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "corral", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// The workspace root [default: nearest ancestor with .git or corral.toml, else the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Add a read-write root (repeatable)
    #[arg(long = "add-dir", global = true, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Add a read-only root (repeatable)
    #[arg(long = "add-dir-ro", global = true, value_name = "DIR")]
    pub add_dir_ro: Vec<PathBuf>,
    /// Load an extra plugin component (repeatable)
    #[arg(long = "plugin", global = true, value_name = "PATH")]
    pub plugin: Vec<PathBuf>,
    /// Allow changing existing files that were not read first in this session
    #[arg(long, global = true)]
    pub no_read_guard: bool,
    /// Wall-clock limit per tool call, in seconds [default: 30]
    #[arg(long, global = true, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Memory limit per tool call, in MiB [default: 256]
    #[arg(long, global = true, value_name = "MIB")]
    pub memory_mib: Option<u64>,
    /// Cap on one tool result, in KB [default: 50]
    #[arg(long, global = true, value_name = "KB")]
    pub max_output_kb: Option<u64>,
    /// Show plugin log lines and cache activity on stderr
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every tool: its name, its plugin and what it does
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
    Tool {
        /// The tool's name (see `corral tools`)
        name: String,
        /// The arguments as a JSON object; `-` reads them from stdin
        #[arg(default_value = "{}")]
        args: String,
    },
    /// List plugins: source, sha256, size, tools, capabilities, and whether they were cached
    Plugins {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
}

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    rt.block_on(async move {
        match commands::dispatch(cli).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {e}");
                2
            }
        }
    })
}
