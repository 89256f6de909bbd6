//! The host side of the WIT `process` interface: allow-listed programs (resolved to absolute
//! paths outside the roots at start-up) run with an argument list, never a shell unless the
//! user said `--yolo`, in a working directory inside the roots, with an allowlisted
//! environment, a timeout that kills the whole process group, and cleaned, bounded output.
//!
//! The path of one call: [`authorize`] checks the plugin's grant and the policy (asking the
//! person in `ask` mode) and returns the program to execute; [`run`] opens the working
//! directory through the roots, runs it ([`spawn`]) and shapes the output ([`clean`]).

pub mod approve;
pub mod clean;
pub mod resolve;
pub mod spawn;

use super::Session;
use super::grant::Capability;
use crate::config::CommandSettings;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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

/// What plugins granted `process` may run, fixed at start-up.
#[derive(Debug, Default)]
pub struct CommandPolicy {
    pub mode: Mode,
    /// Allowed program name -> the path executed for it.
    pub allowed: BTreeMap<String, PathBuf>,
    /// Shell strings allowed, and programs beyond the allowlist without asking.
    pub yolo: bool,
    /// The environment every command gets.
    pub env: Vec<(OsString, OsString)>,
    /// corral's PATH, for programs resolved at call time (`ask`, `yolo`).
    pub path: Option<OsString>,
    /// Buckets approved with "always".
    pub approvals: approve::Approvals,
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

const ENABLE: &str = "the user can enable commands with --allowed-commands LIST, --commands ask or --yolo";

impl CommandPolicy {
    /// Builds the policy from the settings: every allowed name is resolved on `PATH` now,
    /// and one that is missing or lives inside a root is a start-up error that says why.
    pub fn from_settings(
        s: &CommandSettings,
        roots: &[PathBuf],
        workspace: &cap_std::fs::Dir,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<CommandPolicy, String> {
        let mode = match (s.enabled(), s.mode.as_str()) {
            (false, _) => return Ok(CommandPolicy::default()),
            (true, "ask") => Mode::Ask,
            _ => Mode::Allowlist,
        };
        let path = env("PATH");
        let mut allowed = BTreeMap::new();
        for name in &s.allowed {
            let found = resolve::program(name, path.as_deref(), roots).map_err(|why| match why {
                resolve::Unusable::Missing(_) => format!(
                    "allowed command '{name}' was not found on PATH; install it, or remove it from \
                     commands.allowed (--allowed-commands)"
                ),
                resolve::Unusable::Relative => format!(
                    "allowed command '{name}' is a relative path; give a program name found on PATH or an \
                     absolute path"
                ),
                resolve::Unusable::InsideRoot { shown, root } => format!(
                    "allowed command '{name}' resolves to {}, inside {}: tools can change files there, so the \
                     model could rewrite the program and then run it. Install it outside the workspace, or \
                     remove it from commands.allowed (--allowed-commands)",
                    shown.display(),
                    root.display()
                ),
            })?;
            allowed.insert(name.clone(), found);
        }
        let mut names: Vec<&str> = DEFAULT_ENV.to_vec();
        for n in &s.env {
            if n.is_empty() || n.contains('=') || n.contains('\0') {
                return Err(format!("commands.env: '{n}' is not an environment variable name"));
            }
            names.push(n);
        }
        names.sort_unstable();
        names.dedup();
        let env = names.into_iter().filter_map(|n| env(n).map(|v| (OsString::from(n), v))).collect();
        let approvals = if mode == Mode::Ask {
            approve::Approvals::load(workspace)
        } else {
            approve::Approvals::default()
        };
        Ok(CommandPolicy { mode, allowed, yolo: s.yolo, env, path, approvals })
    }

    /// The allow-listed program `program` names (its name or its resolved path).
    fn listed(&self, program: &str) -> Option<&PathBuf> {
        self.allowed
            .get(program)
            .or_else(|| self.allowed.values().find(|p| p.as_os_str() == OsStr::new(program)))
    }

    fn allowed_names(&self) -> String {
        if self.allowed.is_empty() {
            "none".into()
        } else {
            self.allowed.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    }
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

/// Approves a command that is not on the allowlist in `ask` mode (remembering "always").
fn approve(session: &Session, shown: &str, bucket: &str, cwd: Option<&str>) -> Result<(), ProcError> {
    let p = &session.commands;
    if p.approvals.contains(bucket) {
        return Ok(());
    }
    let answer = approve::ask(&session.ask, shown, bucket, cwd.unwrap_or("the workspace root"))
        .map_err(|m| ProcError::new(Code::Denied, m))?;
    if answer == approve::Answer::Always
        && let Err(e) = p.approvals.add(&session.roots.workspace().dir, bucket)
    {
        session.log.push("host", "warn", &format!("cannot save the approval of `{bucket}`: {e}"));
    }
    Ok(())
}

/// Checks that `plugin` may run `req` now and returns the program to execute. In `ask` mode
/// this may wait for the person.
pub fn authorize(session: &Session, plugin: &str, req: &Request) -> Result<PathBuf, ProcError> {
    session.granted.check(plugin, Capability::Process).map_err(|m| ProcError::new(Code::Denied, m))?;
    let p = &session.commands;
    if p.mode == Mode::Off {
        return Err(ProcError::new(Code::Denied, format!("running commands is off; {ENABLE}")));
    }
    if let Some(path) = p.listed(&req.program) {
        return Ok(path.clone());
    }
    let not_listed = || {
        ProcError::new(
            Code::Denied,
            format!(
                "'{}' is not an allowed command (allowed: {}); the user can add it with --allowed-commands",
                req.program,
                p.allowed_names()
            ),
        )
    };
    if p.mode != Mode::Ask && !p.yolo {
        return Err(not_listed());
    }
    let roots: Vec<PathBuf> =
        if p.yolo { Vec::new() } else { session.roots.all().iter().map(|r| r.path.clone()).collect() };
    let path = resolve::program(&req.program, p.path.as_deref(), &roots).map_err(|why| match why {
        resolve::Unusable::Missing(_) => {
            ProcError::new(Code::NotFound, format!("'{}' was not found on PATH", req.program))
        }
        resolve::Unusable::Relative => ProcError::new(
            Code::Invalid,
            format!("'{}' is a relative path; name a program on PATH or give an absolute path", req.program),
        ),
        resolve::Unusable::InsideRoot { shown, .. } => ProcError::new(
            Code::Denied,
            format!(
                "'{}' is {}, inside the workspace roots; programs there can be rewritten by tools, so they are \
                 not run",
                req.program,
                shown.display()
            ),
        ),
    })?;
    if p.mode == Mode::Ask {
        let bucket = approve::bucket(&req.program, &req.args);
        approve(session, &shown(&req.program, &req.args), &bucket, req.cwd.as_deref())?;
    }
    Ok(path)
}

/// Checks that `plugin` may run the shell line `line` (yolo only; asked in `ask` mode).
pub fn authorize_shell(
    session: &Session,
    plugin: &str,
    line: &str,
    cwd: Option<&str>,
) -> Result<(), ProcError> {
    session.granted.check(plugin, Capability::Process).map_err(|m| ProcError::new(Code::Denied, m))?;
    let p = &session.commands;
    if p.mode == Mode::Off {
        return Err(ProcError::new(Code::Denied, format!("running commands is off; {ENABLE}")));
    }
    if !p.yolo {
        return Err(ProcError::new(
            Code::Denied,
            "shell command lines are refused: pass the program and its arguments as a list instead \
             (the user can allow shell lines with --yolo)",
        ));
    }
    if line.trim().is_empty() || line.contains('\0') {
        return Err(ProcError::new(Code::Invalid, "the command line is empty or contains a NUL byte"));
    }
    if p.mode == Mode::Ask {
        approve(session, line.trim(), &approve::shell_bucket(line), cwd)?;
    }
    Ok(())
}

/// Opens the working directory through the roots (escapes refused) and shows it.
fn open_cwd(session: &Session, cwd: Option<&str>) -> Result<(cap_std::fs::Dir, String), ProcError> {
    let roots = &session.roots;
    let Some(input) = cwd.filter(|c| !c.is_empty() && *c != ".") else {
        let dir = roots.workspace().dir.try_clone().map_err(|e| ProcError::new(Code::Io, e.to_string()))?;
        return Ok((dir, ".".into()));
    };
    let refused = |e: super::WsError| {
        let code = match e.code {
            super::ErrorCode::NotFound => Code::NotFound,
            super::ErrorCode::InvalidPath | super::ErrorCode::IsDirectory => Code::Invalid,
            super::ErrorCode::Io => Code::Io,
            _ => Code::Denied,
        };
        ProcError::new(code, format!("working directory: {}", e.message))
    };
    let loc = roots.resolve(input, true).map_err(refused)?;
    let shown = roots.display(&loc);
    let root = &roots.all()[loc.root];
    let dir = if loc.rel.as_os_str().is_empty() { root.dir.try_clone() } else { root.dir.open_dir(&loc.rel) };
    let dir = dir.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotADirectory => {
            ProcError::new(Code::Invalid, format!("working directory: '{shown}' is not a directory"))
        }
        _ => refused(super::WsError::from_io(input, &e)),
    })?;
    Ok((dir, shown))
}

/// Turns what the program wrote into the inline output, saving all of it when it is long.
fn shape(session: &Session, title: &str, f: spawn::Finished) -> Result<Output, ProcError> {
    let out = clean::strip_controls(&String::from_utf8_lossy(&f.stdout.bytes));
    let err = clean::strip_controls(&String::from_utf8_lossy(&f.stderr.bytes));
    let mut spilled = None;
    let (mut stdout, mut stderr) = (out.clone(), err.clone());
    if out.len() + err.len() > clean::INLINE_BYTES {
        let dropped = |c: &spawn::Capture, name: &str| {
            let lost = c.total.saturating_sub(c.bytes.len() as u64);
            if lost > 0 {
                format!("\n[... {lost} more bytes of {name} were not kept]\n")
            } else {
                String::new()
            }
        };
        let status = match (f.exit_code, f.timed_out) {
            (_, true) => "timed out".to_string(),
            (Some(c), _) => format!("exit code {c}"),
            (None, _) => format!("killed by signal {}", f.signal.unwrap_or(0)),
        };
        let whole = format!(
            "$ {title}\n[{status}]\n--- stdout ---\n{out}{}\n--- stderr ---\n{err}{}",
            dropped(&f.stdout, "stdout"),
            dropped(&f.stderr, "stderr")
        );
        let path = clean::spill(&session.roots.workspace().dir, &whole).map_err(|e| {
            ProcError::new(Code::Io, format!("cannot save the long output under .corral/: {e}"))
        })?;
        let (a, b) = clean::budgets(out.len(), err.len());
        stdout = clean::preview(&out, a, &path);
        stderr = clean::preview(&err, b, &path);
        spilled = Some(path);
    }
    Ok(Output { exit_code: f.exit_code, stdout, stderr, timed_out: f.timed_out, spilled })
}

/// Aborts the spawned run when the plugin call that awaits it is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `program` (from [`authorize`]) with `req`'s arguments, working directory, stdin and
/// timeout. The work runs as its own task; dropping the call kills the process group.
pub async fn run(session: Arc<Session>, program: PathBuf, req: Request) -> Result<Output, ProcError> {
    let timeout = match req.timeout {
        Some(t) if t.is_zero() => {
            return Err(ProcError::new(Code::Invalid, "the timeout must be at least 1 ms"));
        }
        Some(t) => t.min(MAX_TIMEOUT),
        None => DEFAULT_TIMEOUT,
    };
    let (cwd, _) = open_cwd(&session, req.cwd.as_deref())?;
    let title = shown(&req.program, &req.args);
    let spec = spawn::Spec {
        program,
        arg0: req.program.clone(),
        args: req.args,
        cwd,
        env: session.commands.env.clone(),
        stdin: req.stdin,
        timeout,
    };
    let mut task = AbortOnDrop(tokio::spawn(spawn::run(spec)));
    let finished = match (&mut task.0).await {
        Ok(Ok(f)) => f,
        Ok(Err(e)) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound { Code::NotFound } else { Code::Io };
            return Err(ProcError::new(code, format!("cannot start '{}': {e}", req.program)));
        }
        Err(e) => return Err(ProcError::new(Code::Io, format!("the command failed inside the host: {e}"))),
    };
    shape(&session, &title, finished)
}
