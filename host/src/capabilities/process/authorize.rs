//! Whether a plugin may run a command now: its grant, the mode, the allowlist, and in `ask`
//! mode the person's answer (remembered when it is "always").

use super::{Code, Mode, ProcError, Request, View, approve, argrules, resolve, shown};
use crate::capabilities::grant::Capability;
use std::path::PathBuf;

const ENABLE: &str = "the user can enable commands with --allowed-commands LIST, --commands ask or --yolo";

/// Approves a command that is not on the allowlist in `ask` mode (remembering "always").
fn approve(session: &View<'_>, shown: &str, bucket: &str, cwd: Option<&str>) -> Result<(), ProcError> {
    let p = session.commands;
    if p.approvals.contains(bucket) {
        return Ok(());
    }
    let answer = approve::ask(session.ask, shown, bucket, cwd.unwrap_or("the workspace root"))
        .map_err(|m| ProcError::new(Code::Denied, m))?;
    if answer == approve::Answer::Always
        && let Err(e) = p.approvals.add(session.local, bucket)
    {
        session.log.push("host", "warn", &format!("cannot save the approval of `{bucket}`: {e}"));
    }
    Ok(())
}

/// Checks that `plugin` may run `req` now and returns the program to execute. In `ask` mode
/// this may wait for the person.
pub fn authorize(session: &View<'_>, plugin: &str, req: &Request) -> Result<PathBuf, ProcError> {
    session.granted.check(plugin, Capability::Process).map_err(|m| ProcError::new(Code::Denied, m))?;
    let p = session.commands;
    if p.mode == Mode::Off {
        return Err(ProcError::new(Code::Denied, format!("running commands is off; {ENABLE}")));
    }
    // Programs that run what their arguments name: refused in allowlist mode, asked (for
    // this exact command line) in ask mode.
    let rule = if p.yolo { None } else { argrules::check(&req.program, &req.args) };
    let line = shown(&req.program, &req.args);
    let listed = p.listed(&req.program);
    if let (Some(why), Some(_)) = (&rule, listed)
        && p.mode != Mode::Ask
    {
        return Err(ProcError::new(
            Code::Denied,
            format!(
                "refused: `{line}`: {why}. The person can run it themselves, start corral with --commands ask to \
                 be asked for such commands, or --yolo"
            ),
        ));
    }
    if let Some(path) = listed {
        if rule.is_some() {
            approve(session, &line, &format!("exact: {line}"), req.cwd.as_deref())?;
        }
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
        let bucket =
            if rule.is_some() { format!("exact: {line}") } else { approve::bucket(&req.program, &req.args) };
        approve(session, &line, &bucket, req.cwd.as_deref())?;
    }
    Ok(path)
}

/// Checks that `plugin` may run the shell line `line` (yolo only; asked in `ask` mode).
pub fn authorize_shell(
    session: &View<'_>,
    plugin: &str,
    line: &str,
    cwd: Option<&str>,
) -> Result<(), ProcError> {
    session.granted.check(plugin, Capability::Process).map_err(|m| ProcError::new(Code::Denied, m))?;
    let p = session.commands;
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
