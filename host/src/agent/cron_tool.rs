//! The `cron` tool as the agent offers it: the job store is host state, so the host answers it
//! (as it does `use_skill`); the actions themselves are in `crate::cron::tool`.

use super::call::{CallOutcome, parse_arguments};
use crate::cron::{Ceiling, tool};
use crate::llm::ToolDef;
use corral_contract::{ErrorKind, error::error_text};
use std::path::PathBuf;
use std::time::Instant;

pub use tool::NAME;

/// What the tool needs from the session: where the store is, the person's settings now (saved
/// with a new job), and whether this is a CI run.
#[derive(Debug, Clone)]
pub struct CronHost {
    pub dir: PathBuf,
    pub ceiling: Ceiling,
    pub ci: bool,
}

pub fn def() -> ToolDef {
    ToolDef { name: NAME.into(), description: tool::DESCRIPTION.into(), parameters: tool::schema() }
}

/// Runs one `cron` call. Never fails: every problem is an error message for the model.
pub fn call(host: &CronHost, raw_args: &str) -> CallOutcome {
    let started = Instant::now();
    let result = parse_arguments(raw_args)
        .map_err(|e| error_text(ErrorKind::InvalidArgs, &e.to_string(), None))
        .and_then(|args| {
            let now = crate::cron::now().map_err(|e| error_text(ErrorKind::Io, &e.to_string(), None))?;
            let ctx = tool::Ctx { dir: &host.dir, ceiling: &host.ceiling, ci: host.ci, now };
            tool::run(&ctx, &args)
        });
    CallOutcome::from_host(result, started)
}
