//! The `undo` tool and the rewind of the conversation: the checkpoints are host state (the
//! workspace's local state), so the host answers the tool itself, as it does `cron`.

use super::Agent;
use super::call::{CallOutcome, parse_arguments};
use crate::capabilities::Session;
use crate::capabilities::undo::{self, Checkpoint, Restored, Target, UndoError};
use crate::llm::ToolDef;
use corral_contract::{ErrorKind, error::error_text};
use std::time::Instant;

pub const NAME: &str = "undo";

const DESCRIPTION: &str = "Revert your most recent turn that changed files (the latest checkpoint not yet undone): \
every file it wrote, created, deleted or moved goes back to what it was before that turn (created files are \
deleted, deleted and moved ones come back). Call it again to undo the turn before. It changes nothing and says \
which files when one was changed outside corral since; then tell the person, who decides. Works without git.";

pub fn def() -> ToolDef {
    ToolDef {
        name: NAME.into(),
        description: DESCRIPTION.into(),
        parameters: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
    }
}

/// Runs one `undo` call: the latest checkpoint, never forced (only the person may overwrite
/// changes made outside corral). Never fails: every problem is an error message for the model.
pub fn call(session: &Session, raw_args: &str) -> CallOutcome {
    let started = Instant::now();
    let result = parse_arguments(raw_args)
        .map_err(|e| error_text(ErrorKind::InvalidArgs, &e.to_string(), None))
        .and_then(|_| undo::restore(&session.undo(), Target::Latest, false).map_err(|e| refusal(&e)));
    CallOutcome::from_host(result.map(|r| report(&r)), started)
}

fn refusal(e: &UndoError) -> String {
    match e {
        UndoError::Changed { .. } => error_text(
            ErrorKind::Conflict,
            &e.to_string(),
            Some("you cannot force an undo; tell the person which files changed and let them decide"),
        ),
        UndoError::Nothing | UndoError::NoSuch(_) => error_text(ErrorKind::NotFound, &e.to_string(), None),
        _ => error_text(ErrorKind::Io, &e.to_string(), None),
    }
}

/// What a restore did, for the model and the person.
pub fn report(r: &Restored) -> String {
    let which: Vec<String> =
        r.checkpoints.iter().map(|c| format!("{} ({})", c.n, undo::describe(c))).collect();
    let mut out =
        format!("Undid checkpoint{} {}.\n", if which.len() == 1 { "" } else { "s" }, which.join(", "));
    for f in &r.files {
        out.push_str(&format!("  {f}\n"));
    }
    if !r.not_restored.is_empty() {
        out.push_str("Not restored (their changes were reported as not undoable):\n");
        for f in &r.not_restored {
            out.push_str(&format!("  {f}\n"));
        }
    }
    out
}

impl Agent<'_> {
    /// Trims the conversation to before the reply that made `cp`, when this session made it
    /// and the reply is still in the conversation; a person's message left without an answer
    /// goes too. Returns the number of messages removed.
    pub fn rewind_conversation(&mut self, cp: &Checkpoint) -> Option<usize> {
        if cp.session != self.tools.session.journal().session_id() {
            return None;
        }
        let mut at = self.transcript.position(cp.reply?)?;
        while at > 0 && self.transcript.entries()[at - 1].is_person() {
            at -= 1;
        }
        let removed = self.transcript.len() - at;
        self.transcript.splice(at..self.transcript.len(), Vec::new());
        Some(removed)
    }

    /// Adds a note to the conversation that the model reads with the next request (what the
    /// person did to the files behind its back).
    pub fn tell_model(&mut self, text: &str) {
        self.transcript.push(crate::llm::Message::nudge(text));
    }
}
