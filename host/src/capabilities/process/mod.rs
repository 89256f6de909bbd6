//! The host side of the WIT `process` interface: allow-listed programs (resolved to absolute
//! paths outside the roots at start-up) run with an argument list, never a shell unless the
//! user said `--yolo`, in a working directory inside the roots, with an allowlisted
//! environment, a timeout that kills the whole process group, and cleaned, bounded output.
//!
//! At start-up [`CommandPolicy`] fixes what may run. The path of one call: [`authorize`]
//! checks the plugin's grant and the policy (asking the person in `ask` mode) and returns the
//! program to execute; [`run`] opens the working directory through the roots, runs it
//! ([`spawn`]) and shapes the output ([`clean`]).

pub mod approve;
mod argrules;
mod authorize;
pub mod clean;
pub mod confine;
mod policy;
pub mod resolve;
mod run;
pub mod spawn;
pub mod tempdir;

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests;

pub use authorize::{authorize, authorize_shell};
pub use policy::CommandPolicy;
pub use run::run;

use super::context::AskChannel;
use super::grant::Granted;
use super::local::Local;
use super::log::Sink;
use super::roots::Roots;
use std::time::Duration;

/// What the `process` interface may touch (`Session::process`): the plugins' grants, the
/// command policy, the person (approvals) and where "always" answers are kept, the roots
/// (working directories, the sandbox) and the log.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub roots: &'a Roots,
    pub commands: &'a CommandPolicy,
    pub granted: &'a Granted,
    pub ask: &'a AskChannel,
    pub local: &'a Local,
    pub log: &'a Sink,
}

/// The timeout when a call gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// Environment variables commands get from corral's environment, besides `commands.env`.
pub const DEFAULT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "TMPDIR",
];

/// How commands are allowed (`commands.mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Nothing runs.
    #[default]
    Off,
    /// Only allow-listed programs (any program with `yolo`).
    Allowlist,
    /// Allow-listed programs run; anything else after the person approves its bucket.
    Ask,
}

/// Why a command was refused or failed (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Denied,
    NotFound,
    Invalid,
    Io,
}

/// A refused or failed command, with a message for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProcError {
    pub code: Code,
    pub message: String,
}

impl ProcError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        ProcError { code, message: message.into() }
    }
}

/// A command from a plugin.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub timeout: Option<Duration>,
    pub stdin: Option<Vec<u8>>,
}

/// What a command did, ready for the plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// The workspace path of the file with the whole output, when it was too long.
    pub spilled: Option<String>,
}

/// `program args...` with arguments quoted where a shell would need it, for messages.
pub fn shown(program: &str, args: &[String]) -> String {
    let quote = |a: &str| {
        if !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    std::iter::once(program).chain(args.iter().map(String::as_str)).map(quote).collect::<Vec<_>>().join(" ")
}
