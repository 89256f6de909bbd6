//! The `process` import behind a trait: [`Commands`] runs a program through the host, which
//! applies run_command's policy (off unless the user enabled commands, allow-listed programs
//! only). [`super::Host`] is the real thing; [`FakeCommands`] stands in for native tests.

use super::Host;
use std::cell::RefCell;

/// A program to run, with its arguments (there is no shell).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// A program name on the user's allowlist.
    pub program: String,
    pub args: Vec<String>,
    /// Working directory inside the roots; the workspace root when unset.
    pub cwd: Option<String>,
    /// Milliseconds; the host's default (30 s) when unset.
    pub timeout_ms: Option<u32>,
}

/// What a finished program printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit status, when the program exited (not killed by a signal).
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// Where the whole output was saved when it was too long to return inline.
    pub spilled: Option<String>,
}

/// Why the host did not run a program (mirrors the WIT `process.error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandErrorCode {
    /// Refused by policy: commands are off, the program is not allowed, shell syntax.
    Denied,
    NotFound,
    Invalid,
    Io,
}

/// A refused or failed run, with the host's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandError {
    pub code: CommandErrorCode,
    pub message: String,
}

/// The host's command runner.
pub trait Commands {
    fn run(&self, cmd: &Command) -> Result<CommandOutput, CommandError>;
}

#[cfg(target_arch = "wasm32")]
mod imports {
    use super::*;
    use crate::bindings::corral::plugin::process as p;

    impl Commands for Host {
        fn run(&self, cmd: &Command) -> Result<CommandOutput, CommandError> {
            let wit = p::Command {
                program: cmd.program.clone(),
                args: cmd.args.clone(),
                cwd: cmd.cwd.clone(),
                timeout_ms: cmd.timeout_ms,
                stdin: None,
            };
            match p::run(&wit) {
                Ok(o) => Ok(CommandOutput {
                    exit_code: o.exit_code,
                    stdout: o.stdout,
                    stderr: o.stderr,
                    timed_out: o.timed_out,
                    spilled: o.spilled,
                }),
                Err(e) => {
                    let code = match e.code {
                        p::ErrorCode::Denied => CommandErrorCode::Denied,
                        p::ErrorCode::NotFound => CommandErrorCode::NotFound,
                        p::ErrorCode::Invalid => CommandErrorCode::Invalid,
                        p::ErrorCode::Io => CommandErrorCode::Io,
                    };
                    Err(CommandError { code, message: e.message })
                }
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imports {
    use super::*;

    impl Commands for Host {
        fn run(&self, _cmd: &Command) -> Result<CommandOutput, CommandError> {
            Err(CommandError {
                code: CommandErrorCode::Denied,
                message: "not running inside corral: no commands can run".into(),
            })
        }
    }
}

/// A scripted command runner for native tests: answers every run with `reply` and records
/// the commands it was given.
#[derive(Debug)]
pub struct FakeCommands {
    pub reply: Result<CommandOutput, CommandError>,
    pub calls: RefCell<Vec<Command>>,
}

impl FakeCommands {
    /// A runner that refuses everything with `message`, as the host does when commands are off.
    pub fn denying(message: &str) -> Self {
        FakeCommands {
            reply: Err(CommandError { code: CommandErrorCode::Denied, message: message.into() }),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// A runner whose programs all exit with `code` after printing `stdout`.
    pub fn exiting(code: i32, stdout: &str) -> Self {
        FakeCommands {
            reply: Ok(CommandOutput { exit_code: Some(code), stdout: stdout.into(), ..Default::default() }),
            calls: RefCell::new(Vec::new()),
        }
    }
}

impl Commands for FakeCommands {
    fn run(&self, cmd: &Command) -> Result<CommandOutput, CommandError> {
        self.calls.borrow_mut().push(cmd.clone());
        self.reply.clone()
    }
}
