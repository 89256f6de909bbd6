//! The process import behind a trait: [`Proc`] runs programs through the host, which checks
//! the user's allowlist, confines the working directory and bounds the output; [`FakeProc`]
//! answers from a script and records every call, for native tests of tool logic.

use super::Host;
use crate::{ErrorKind, ToolError};
use std::cell::RefCell;
use std::collections::VecDeque;

/// A program and its arguments, never a shell line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// A name on the user's allowlist, or its absolute path.
    pub program: String,
    pub args: Vec<String>,
    /// Inside the workspace roots; the workspace root when unset.
    pub cwd: Option<String>,
    /// The host's default (30 s) when unset; at most 120 s.
    pub timeout_ms: Option<u32>,
    pub stdin: Option<Vec<u8>>,
}

/// What a command did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcOutput {
    /// None when a signal ended it.
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The timeout was reached and the process group killed.
    pub timed_out: bool,
    /// The workspace path of the whole output, when it was too long to return inline.
    pub spilled: Option<String>,
}

/// Why the host refused or failed a command (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcErrorCode {
    Denied,
    NotFound,
    Invalid,
    Io,
}

/// A refused or failed command, with the host's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcError {
    pub code: ProcErrorCode,
    pub message: String,
}

impl From<ProcError> for ToolError {
    fn from(e: ProcError) -> ToolError {
        match e.code {
            ProcErrorCode::Denied => ToolError::new(ErrorKind::PermissionDenied, e.message)
                .with_hint("the user's command policy refused this; do not retry it unchanged"),
            ProcErrorCode::NotFound => ToolError::new(ErrorKind::NotFound, e.message),
            ProcErrorCode::Invalid => ToolError::new(ErrorKind::InvalidArgs, e.message),
            ProcErrorCode::Io => ToolError::new(ErrorKind::Io, e.message),
        }
    }
}

/// The host's command runner.
pub trait Proc {
    /// Runs `cmd` (an argument list, no shell).
    fn run(&self, cmd: &Command) -> Result<ProcOutput, ProcError>;
    /// Runs `line` through `/bin/sh -c`; the host refuses unless the user allowed shell lines.
    fn run_shell(
        &self,
        line: &str,
        cwd: Option<&str>,
        timeout_ms: Option<u32>,
    ) -> Result<ProcOutput, ProcError>;
}

#[cfg(target_arch = "wasm32")]
mod imports {
    use super::*;
    use crate::bindings::corral::plugin::process as p;

    fn output(o: p::Output) -> ProcOutput {
        ProcOutput {
            exit_code: o.exit_code,
            stdout: o.stdout,
            stderr: o.stderr,
            timed_out: o.timed_out,
            spilled: o.spilled,
        }
    }

    fn error(e: p::Error) -> ProcError {
        let code = match e.code {
            p::ErrorCode::Denied => ProcErrorCode::Denied,
            p::ErrorCode::NotFound => ProcErrorCode::NotFound,
            p::ErrorCode::Invalid => ProcErrorCode::Invalid,
            p::ErrorCode::Io => ProcErrorCode::Io,
        };
        ProcError { code, message: e.message }
    }

    impl Proc for Host {
        fn run(&self, cmd: &Command) -> Result<ProcOutput, ProcError> {
            let wit = p::Command {
                program: cmd.program.clone(),
                args: cmd.args.clone(),
                cwd: cmd.cwd.clone(),
                timeout_ms: cmd.timeout_ms,
                stdin: cmd.stdin.clone(),
            };
            p::run(&wit).map(output).map_err(error)
        }

        fn run_shell(
            &self,
            line: &str,
            cwd: Option<&str>,
            timeout_ms: Option<u32>,
        ) -> Result<ProcOutput, ProcError> {
            p::run_shell(line, cwd, timeout_ms).map(output).map_err(error)
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imports {
    //! Outside a component there is no host: every command is refused.
    use super::*;

    fn none() -> ProcError {
        ProcError { code: ProcErrorCode::Denied, message: "not running inside corral".into() }
    }

    impl Proc for Host {
        fn run(&self, _cmd: &Command) -> Result<ProcOutput, ProcError> {
            Err(none())
        }
        fn run_shell(&self, _: &str, _: Option<&str>, _: Option<u32>) -> Result<ProcOutput, ProcError> {
            Err(none())
        }
    }
}

/// One call a [`FakeProc`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Run(Command),
    Shell { line: String, cwd: Option<String>, timeout_ms: Option<u32> },
}

/// A scripted runner: answers calls in order from its queue and records them.
#[derive(Debug, Default)]
pub struct FakeProc {
    answers: RefCell<VecDeque<Result<ProcOutput, ProcError>>>,
    /// Every call, in order.
    pub calls: RefCell<Vec<Call>>,
}

impl FakeProc {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues an answer.
    pub fn answer(self, r: Result<ProcOutput, ProcError>) -> Self {
        self.answers.borrow_mut().push_back(r);
        self
    }

    /// Queues a successful run with exit code `code` and `stdout`.
    pub fn exits(self, code: i32, stdout: &str) -> Self {
        self.answer(Ok(ProcOutput { exit_code: Some(code), stdout: stdout.into(), ..ProcOutput::default() }))
    }

    fn next(&self) -> Result<ProcOutput, ProcError> {
        self.answers.borrow_mut().pop_front().unwrap_or_else(|| {
            Err(ProcError { code: ProcErrorCode::Io, message: "the fake runner has no answer left".into() })
        })
    }
}

impl Proc for FakeProc {
    fn run(&self, cmd: &Command) -> Result<ProcOutput, ProcError> {
        self.calls.borrow_mut().push(Call::Run(cmd.clone()));
        self.next()
    }

    fn run_shell(
        &self,
        line: &str,
        cwd: Option<&str>,
        timeout_ms: Option<u32>,
    ) -> Result<ProcOutput, ProcError> {
        self.calls.borrow_mut().push(Call::Shell {
            line: line.into(),
            cwd: cwd.map(String::from),
            timeout_ms,
        });
        self.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_answers_in_order_and_records_calls() {
        let p = FakeProc::new().exits(0, "one").exits(2, "two");
        let cmd = Command { program: "ls".into(), ..Command::default() };
        assert_eq!(p.run(&cmd).unwrap().stdout, "one");
        assert_eq!(p.run_shell("ls | wc", None, Some(5)).unwrap().exit_code, Some(2));
        assert_eq!(p.run(&cmd).unwrap_err().code, ProcErrorCode::Io);
        assert_eq!(p.calls.borrow().len(), 3);
        assert_eq!(
            p.calls.borrow()[1],
            Call::Shell { line: "ls | wc".into(), cwd: None, timeout_ms: Some(5) }
        );
    }

    #[test]
    fn refusals_become_permission_errors() {
        let t: ToolError = ProcError { code: ProcErrorCode::Denied, message: "no".into() }.into();
        assert_eq!((t.kind, t.message.as_str()), (ErrorKind::PermissionDenied, "no"));
        let t: ToolError = ProcError { code: ProcErrorCode::Invalid, message: "bad".into() }.into();
        assert_eq!(t.kind, ErrorKind::InvalidArgs);
    }
}
