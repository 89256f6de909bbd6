//! What one tool call did that the agent loop must act on, recorded as it happens into that
//! call's own sink (so calls running side by side never see each other's effects).

use super::snapshot::Restore;
use std::sync::{Arc, Mutex};

/// A file a tool changed, with its text before and after when small enough to show as a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// One thing a call did beyond its result text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A file the call named changed (recorded by the dispatcher, for display).
    FileChanged(FileChange),
    /// The `todo` section was set: the list changed, so the reminder starts over.
    TodoChanged,
    /// The call asked to collapse the snapshot scope into a summary; the loop applies it
    /// once the call has returned (`context.snapshot-restore`).
    SnapshotRestore(Restore),
    /// A change the call made cannot be undone (too big for the checkpoint, or the checkpoint
    /// could not be saved); the note is added to the call's result, so no one counts on it.
    NotUndoable(String),
    /// The read guard refused a change to a file not read in this session (`ErrorCode::
    /// NotRead`); `corral tool`, where each call is a session of its own, says how to get past it.
    Unread,
}

/// Where the host functions of one call record its effects; a fresh sink per call.
#[derive(Debug, Clone, Default)]
pub struct Sink(Arc<Mutex<Vec<Effect>>>);

impl Sink {
    pub fn push(&self, effect: Effect) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(effect);
    }

    /// Whether this call already asked for a restore (one per call).
    pub fn has_restore(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|e| matches!(e, Effect::SnapshotRestore(_)))
    }

    /// The effects recorded so far, leaving the sink empty.
    pub fn take(&self) -> Vec<Effect> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_keeps_effects_in_order_and_hands_them_over_once() {
        let s = Sink::default();
        let seen_by_host = s.clone();
        seen_by_host.push(Effect::TodoChanged);
        assert!(!s.has_restore());
        let r = Restore { label: "l".into(), summary: "s".into(), from: None };
        seen_by_host.push(Effect::SnapshotRestore(r.clone()));
        assert!(s.has_restore());
        assert_eq!(s.take(), vec![Effect::TodoChanged, Effect::SnapshotRestore(r)]);
        assert!(s.take().is_empty());
    }
}
