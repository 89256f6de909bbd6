//! The person's side of undo: `corral undo [--list] [--to N] [--force]` from the shell, and the
//! REPL's `/undo` and `/rewind [N]` (which also trims the conversation to match).

use super::GlobalArgs;
use crate::agent::Agent;
use crate::agent::undo_tool::report;
use crate::capabilities::Session;
use crate::capabilities::undo::{self, Checkpoint, Restored, Target, UndoError};

/// The checkpoints, one line each: number, local time, turn, tools and files.
pub fn listing(cps: &[Checkpoint]) -> String {
    if cps.is_empty() {
        return "No checkpoints: corral has not changed any file in this workspace yet (or they were dropped).\n"
            .to_string();
    }
    let mut out = String::new();
    for cp in cps {
        out.push_str(&format!("{:>4}  {}  {}\n", cp.n, local_time(cp.time), undo::describe(cp)));
    }
    out.push_str("Undo the latest with `corral undo` (/undo), or go back to before N with `corral undo --to N` (/rewind N).\n");
    crate::termtext::clean(&out)
}

fn local_time(secs: i64) -> String {
    match jiff::Timestamp::from_second(secs) {
        Ok(t) => t.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => secs.to_string(),
    }
}

/// Runs `corral undo`; returns the exit code (1 when refused or nothing to undo).
pub fn run(list: bool, to: Option<u64>, force: bool, g: &GlobalArgs) -> i32 {
    let base = match super::setup::base(g, false, false) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e.to_string()));
            return 2;
        }
    };
    let s = &base.session;
    if list {
        return match undo::list(&s.undo()) {
            Ok(cps) => super::report::print(&listing(&cps)),
            Err(e) => refused(&e),
        };
    }
    let target = to.map_or(Target::Latest, Target::To);
    match undo::restore(&s.undo(), target, force) {
        Ok(r) => super::report::print(&crate::termtext::clean(&report(&r))),
        Err(e) => refused(&e),
    }
}

fn refused(e: &UndoError) -> i32 {
    eprintln!("error: {}", crate::redact::text(&crate::termtext::clean(&e.to_string())));
    match e {
        UndoError::NoState | UndoError::Io(_) => 2,
        _ => 1,
    }
}

/// Restores `target` for the REPL, asking `confirm` before overwriting files changed outside
/// corral. `Ok(None)`: the person said no.
fn restore_asking(
    s: &Session,
    target: Target,
    confirm: &mut dyn FnMut(&str) -> bool,
) -> Result<Option<Restored>, UndoError> {
    match undo::restore(&s.undo(), target, false) {
        Err(UndoError::Changed { files, .. }) => {
            let question = format!(
                "{} changed outside corral since: {}. Restore anyway, losing those changes? [y/N] ",
                if files.len() == 1 { "This file" } else { "These files" },
                crate::termtext::clean(&files.join(", "))
            );
            if confirm(&question) { undo::restore(&s.undo(), target, true).map(Some) } else { Ok(None) }
        }
        other => other.map(Some),
    }
}

/// `/undo` and `/rewind [N]` in the REPL: what to print.
pub fn repl(
    agent: &mut Agent<'_>,
    rewind: Option<Option<u64>>,
    confirm: &mut dyn FnMut(&str) -> bool,
) -> String {
    let session = agent.tools().session.clone();
    let target = match rewind {
        None => Target::Latest,
        Some(None) => {
            return match undo::list(&session.undo()) {
                Ok(cps) => listing(&cps),
                Err(e) => format!("error: {e}\n"),
            };
        }
        Some(Some(n)) => Target::To(n),
    };
    let r = match restore_asking(&session, target, confirm) {
        Ok(Some(r)) => r,
        Ok(None) => return "Nothing was restored.\n".to_string(),
        Err(e) => return format!("error: {}\n", crate::termtext::clean(&e.to_string())),
    };
    let mut out = crate::termtext::clean(&report(&r));
    let trimmed = match (rewind, r.checkpoints.first()) {
        (Some(_), Some(first)) => agent.rewind_conversation(first),
        _ => None,
    };
    match trimmed {
        Some(n) => out
            .push_str(&format!("The conversation was trimmed to before that turn ({n} messages removed).\n")),
        None => agent.tell_model(&format!(
            "The person reverted files with undo; they are now as before the turn(s) listed:\n{}",
            report(&r)
        )),
    }
    out
}
