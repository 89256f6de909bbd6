//! Acting on what a tool call did (its typed effects, see `capabilities::effects`): a snapshot
//! restore collapses the transcript; a todo change is read by the batch for the reminder.

use super::{Agent, CallOutcome, Stats};
use crate::capabilities::effects::Effect;
use crate::capabilities::snapshot::Restore;
use crate::context::snapshot;
use corral_contract::{ErrorKind, error::error_text};

impl Agent<'_> {
    /// Applies the effects of a call of the reply `reply_id` that change the conversation:
    /// a requested snapshot restore collapses its scope, and its report replaces the tool's
    /// own text.
    pub(super) fn apply_effects(
        &mut self,
        reply_id: u64,
        mut outcome: CallOutcome,
        stats: &mut Stats,
    ) -> CallOutcome {
        let restores: Vec<Restore> = outcome
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::SnapshotRestore(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        for restore in restores {
            self.restore_snapshot(reply_id, &restore, &mut outcome, stats);
        }
        outcome
    }

    /// Collapses the scope of `restore`, which ends before the reply `reply_id`.
    fn restore_snapshot(
        &mut self,
        reply_id: u64,
        restore: &Restore,
        outcome: &mut CallOutcome,
        stats: &mut Stats,
    ) {
        let result =
            self.transcript.position(reply_id).ok_or_else(|| "the reply is gone".to_string()).and_then(
                |end| {
                    let start = snapshot::scope_start(&self.transcript, restore.from, end)?;
                    snapshot::collapse(&mut self.transcript, start, end, &restore.label, &restore.summary)
                },
            );
        match result {
            Ok(c) => {
                self.tools.session.snapshot().restored(&restore.label, &restore.summary);
                stats.snapshot_restores += 1;
                outcome.content = format!(
                    "Collapsed {} turns into your summary '{}' (saved ~{} tokens). The summary is also kept in the \
                     system prompt. Carry on from it.",
                    c.turns, restore.label, c.saved
                );
                outcome.is_error = false;
            }
            Err(e) => {
                outcome.content = error_text(ErrorKind::Conflict, &e.to_string(), None);
                outcome.is_error = true;
            }
        }
    }
}
