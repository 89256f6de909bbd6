//! The host side of the `snapshot-*` functions of the WIT `context` interface: the checkpoint,
//! which tools have dirtied the scope, the restore a call asks for (handed to the loop as the
//! call's effect), and the completed summaries. The agent tells the desk where it is and what ran.

use std::sync::Mutex;

/// Longest checkpoint label, in characters.
pub const MAX_LABEL_CHARS: usize = 100;
/// Longest restore summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 4000;

/// An explicit checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub label: String,
    /// The entry id of the reply that set it (the scope starts there).
    pub at: u64,
}

/// A restore the agent must apply when the call that asked for it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restore {
    pub label: String,
    pub summary: String,
    /// The checkpoint's entry id, or None for the natural boundary.
    pub from: Option<u64>,
}

/// What `snapshot-status` reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    pub checkpoint: Option<String>,
    /// Tools that changed things in the current scope.
    pub dirty: Vec<String>,
    pub restores: u32,
    /// Labels of completed snapshots, oldest first (the last 10).
    pub completed: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    /// The entry id of the reply whose tools are running.
    current: u64,
    checkpoint: Option<Checkpoint>,
    /// Mutating tools since the checkpoint was set.
    dirty_since_checkpoint: Vec<String>,
    /// Mutating tools since the person's last message or the last restore.
    dirty_since_boundary: Vec<String>,
    /// Completed summaries, oldest first: (label, summary).
    history: Vec<(String, String)>,
    restores: u32,
}

/// The session's snapshot state.
#[derive(Debug, Default)]
pub struct Desk(Mutex<State>);

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

impl Desk {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// `snapshot-save`: sets the checkpoint at the reply now running.
    pub fn save(&self, label: &str) -> Result<(), String> {
        let label = check_label(label)?;
        self.with(|s| {
            if let Some(c) = &s.checkpoint {
                return Err(format!(
                    "checkpoint '{}' is already set; restore it (collapse the work since it) or cancel it before \
                     saving another",
                    c.label
                ));
            }
            s.checkpoint = Some(Checkpoint { label, at: s.current });
            s.dirty_since_checkpoint.clear();
            Ok(())
        })
    }

    /// `snapshot-restore`: checks the request and returns the restore for the agent to apply
    /// after the call (it travels as the call's [`super::effects::Effect::SnapshotRestore`]).
    pub fn restore(&self, label: Option<&str>, summary: &str, force: bool) -> Result<Restore, String> {
        let summary = summary.trim();
        if summary.is_empty() {
            return Err(
                "the summary is empty: write what you learned (paths, names, facts, what is left to do); it \
                        replaces the turns being collapsed"
                    .into(),
            );
        }
        let n = summary.chars().count();
        if n > MAX_SUMMARY_CHARS {
            return Err(format!(
                "the summary is {n} characters; the limit is {MAX_SUMMARY_CHARS}: shorten it"
            ));
        }
        let label = label.map(check_label).transpose()?;
        self.with(|s| {
            let dirty = if s.checkpoint.is_some() { &s.dirty_since_checkpoint } else { &s.dirty_since_boundary };
            if !dirty.is_empty() && !force {
                return Err(format!(
                    "the scope is dirty: {} changed things since {}. Collapsing would hide those changes from \
                     you; call snapshot restore again with force=true and say in the summary what changed, or \
                     call snapshot cancel",
                    dirty.join(", "),
                    if s.checkpoint.is_some() { "the checkpoint" } else { "the person's last message" }
                ));
            }
            let label = label
                .or_else(|| s.checkpoint.as_ref().map(|c| c.label.clone()))
                .unwrap_or_else(|| "investigation".to_string());
            Ok(Restore { label, summary: summary.to_string(), from: s.checkpoint.as_ref().map(|c| c.at) })
        })
    }

    /// `snapshot-cancel`: clears the checkpoint; returns its label.
    pub fn cancel(&self) -> Result<String, String> {
        self.with(|s| {
            s.dirty_since_checkpoint.clear();
            s.checkpoint.take().map(|c| c.label).ok_or_else(|| "there is no checkpoint to cancel".to_string())
        })
    }

    /// `snapshot-status`.
    pub fn status(&self) -> Status {
        self.with(|s| Status {
            checkpoint: s.checkpoint.as_ref().map(|c| c.label.clone()),
            dirty: if s.checkpoint.is_some() {
                s.dirty_since_checkpoint.clone()
            } else {
                s.dirty_since_boundary.clone()
            },
            restores: s.restores,
            completed: s.history.iter().rev().take(10).rev().map(|(l, _)| l.clone()).collect(),
        })
    }

    /// The agent: the reply with entry id `id` is about to run its tools.
    pub fn set_current(&self, id: u64) {
        self.with(|s| s.current = id);
    }

    /// The agent: tool `name` ran; `read_only` from its hints.
    pub fn note_call(&self, name: &str, read_only: bool) {
        if !read_only {
            self.with(|s| {
                push_unique(&mut s.dirty_since_checkpoint, name);
                push_unique(&mut s.dirty_since_boundary, name);
            });
        }
    }

    /// The agent: the person wrote a message (a new natural boundary).
    pub fn person_spoke(&self) {
        self.with(|s| s.dirty_since_boundary.clear());
    }

    /// The agent: a restore was applied; its summary joins the history.
    pub fn restored(&self, label: &str, summary: &str) {
        self.with(|s| {
            s.history.push((label.to_string(), summary.to_string()));
            s.restores += 1;
            s.checkpoint = None;
            s.dirty_since_checkpoint.clear();
            s.dirty_since_boundary.clear();
        });
    }

    /// The checkpoint, if one is set.
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        self.with(|s| s.checkpoint.clone())
    }

    /// Completed summaries, oldest first.
    pub fn history(&self) -> Vec<(String, String)> {
        self.with(|s| s.history.clone())
    }

    /// Forgets everything (`/clear`).
    pub fn reset(&self) {
        self.with(|s| *s = State::default());
    }
}

fn check_label(label: &str) -> Result<String, String> {
    let label = label.trim();
    if label.is_empty() {
        return Err("the label is empty: name the work this checkpoint starts, in a few words".into());
    }
    let n = label.chars().count();
    if n > MAX_LABEL_CHARS {
        return Err(format!("the label is {n} characters; the limit is {MAX_LABEL_CHARS}"));
    }
    Ok(label.to_string())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    #[test]
    fn save_restore_cancel_and_status() {
        let d = Desk::default();
        d.set_current(7);
        assert!(d.save("  ").unwrap_err().contains("label is empty"));
        assert!(d.save(&"l".repeat(101)).unwrap_err().contains("limit is 100"));
        d.save("auth bug").unwrap();
        assert!(d.save("again").unwrap_err().contains("already set"));
        assert_eq!(d.checkpoint(), Some(Checkpoint { label: "auth bug".into(), at: 7 }));
        assert!(d.restore(None, " ", false).unwrap_err().contains("summary is empty"));
        assert!(d.restore(None, &"s".repeat(4001), false).unwrap_err().contains("limit is 4000"));
        let p = d.restore(None, "found it", false).unwrap();
        assert_eq!(p, Restore { label: "auth bug".into(), summary: "found it".into(), from: Some(7) });
        d.restored(&p.label, &p.summary);
        let st = d.status();
        assert_eq!((st.checkpoint, st.restores, st.completed), (None, 1, vec!["auth bug".to_string()]));
        assert!(d.cancel().unwrap_err().contains("no checkpoint"));
        d.save("x").unwrap();
        assert_eq!(d.cancel().unwrap(), "x");
    }

    #[test]
    fn mutations_dirty_the_scope_until_forced() {
        let d = Desk::default();
        d.note_call("read_file", true);
        d.note_call("edit_file", false);
        d.note_call("edit_file", false);
        let e = d.restore(None, "s", false).unwrap_err();
        assert!(
            e.contains("dirty: edit_file changed things since the person's last message")
                && e.contains("force=true"),
            "{e}"
        );
        d.save("cp").unwrap();
        assert_eq!(d.restore(None, "s", false).unwrap().label, "cp", "a fresh checkpoint is clean");
        d.note_call("write_file", false);
        assert!(d.restore(Some("named"), "s", false).is_err());
        assert_eq!(d.restore(Some("named"), "s", true).unwrap().label, "named");
        d.person_spoke();
        d.cancel().unwrap();
        assert!(d.status().dirty.is_empty(), "a new message from the person starts a clean scope");
        d.reset();
        assert_eq!(d.status(), Status::default());
    }
}
