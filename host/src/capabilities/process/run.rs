//! Running an authorized command: the working directory opened through the roots, the
//! program run in its own task, and its output cleaned, capped and spilled when long.

use super::{
    Code, DEFAULT_TIMEOUT, MAX_TIMEOUT, Output, ProcError, Request, View, clean, confine, shown, spawn,
};
use crate::capabilities::{ErrorCode, WsError};
use std::path::PathBuf;

/// Opens the working directory through the roots (escapes refused) and shows it.
fn open_cwd(session: &View<'_>, cwd: Option<&str>) -> Result<(cap_std::fs::Dir, String), ProcError> {
    let roots = session.roots;
    let Some(input) = cwd.filter(|c| !c.is_empty() && *c != ".") else {
        let dir = roots.workspace().dir.try_clone().map_err(|e| ProcError::new(Code::Io, e.to_string()))?;
        return Ok((dir, ".".into()));
    };
    let refused = |e: WsError| {
        let code = match e.code {
            ErrorCode::NotFound => Code::NotFound,
            ErrorCode::InvalidPath | ErrorCode::IsDirectory => Code::Invalid,
            ErrorCode::Io => Code::Io,
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
        _ => refused(WsError::from_io(input, &e)),
    })?;
    Ok((dir, shown))
}

/// Turns what the program wrote into the inline output, saving all of it when it is long.
fn shape(session: &View<'_>, title: &str, f: spawn::Finished) -> Result<Output, ProcError> {
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
pub async fn run(session: &View<'_>, program: PathBuf, req: Request) -> Result<Output, ProcError> {
    let timeout = match req.timeout {
        Some(t) if t.is_zero() => {
            return Err(ProcError::new(Code::Invalid, "the timeout must be at least 1 ms"));
        }
        Some(t) => t.min(MAX_TIMEOUT),
        None => DEFAULT_TIMEOUT,
    };
    let (cwd, _) = open_cwd(session, req.cwd.as_deref())?;
    let title = shown(&req.program, &req.args);
    let (sandbox, scratch) = confine::prepare(session, &program)?;
    let mut env = session.commands.env.clone();
    env.retain(|(k, _)| k != "TMPDIR");
    env.push(("TMPDIR".into(), scratch.path().into()));
    let spec = spawn::Spec {
        program,
        arg0: req.program.clone(),
        args: req.args,
        cwd,
        env,
        stdin: req.stdin,
        timeout,
        sandbox,
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
    shape(session, &title, finished)
}
