//! The loop's side of saved sessions: the journal is brought up to date before each request,
//! after each tool result and at the end of a task; a resumed session's conversation and the
//! state beside it are put back before the next task.

use super::{Agent, Observer, Outcome};
use crate::context::saved::{self, Journal, Loaded};

impl Agent<'_> {
    /// Saves the session from now on to `journal` (None: stops saving); returns the one before.
    pub fn set_journal(&mut self, journal: Option<Journal>) -> Option<Journal> {
        std::mem::replace(&mut self.journal, journal)
    }

    /// The id of the session being saved, if it is.
    pub fn session_id(&self) -> Option<&str> {
        self.journal.as_ref().map(Journal::id)
    }

    /// Writes what changed since the last save. A failure is told once and ends the saving:
    /// the task goes on.
    pub fn save_session(&mut self, obs: &mut dyn Observer) {
        let Some(j) = self.journal.as_mut() else { return };
        let state = saved::state::capture(self.tools.session);
        if let Err(e) = j.sync(self.transcript.entries(), state) {
            obs.notice(&format!("the session is no longer saved: {e}"));
            self.journal = None;
        }
    }

    /// Saves the session and records how the task ended.
    pub(super) fn save_end(
        &mut self,
        outcome: &Outcome,
        error: Option<&str>,
        turns: u32,
        obs: &mut dyn Observer,
    ) {
        self.save_session(obs);
        let Some(j) = self.journal.as_mut() else { return };
        let outcome = match outcome {
            Outcome::Done => "done",
            Outcome::MaxTurns => "max_turns",
            Outcome::Interrupted => "interrupted",
            Outcome::Error => "error",
        };
        if let Err(e) = j.end(outcome, error, turns) {
            obs.notice(&format!("the session is no longer saved: {e}"));
            self.journal = None;
        }
    }

    /// Replaces the conversation and everything kept beside it with a saved session's.
    /// Returns what could not be put back, for the person.
    pub fn resume_from(&mut self, loaded: &Loaded) -> Vec<String> {
        self.clear();
        self.transcript.restore(loaded.entries.iter().cloned().map(|e| e.into_parts()).collect());
        self.checkpoints.clear(self.transcript.next_id());
        saved::state::restore(self.tools.session, &loaded.state)
    }
}
