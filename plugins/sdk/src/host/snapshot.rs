//! Snapshots of the agent's own context, and project memory notes: what the `snapshot` and
//! `memory_write` tools ask of the host (the `snapshot-*` and `memory-append` functions of
//! the WIT `context` interface), behind traits so their logic is tested natively with
//! [`FakeSnapshots`] and [`FakeMemory`].

use super::Host;
use std::cell::RefCell;

/// The snapshot state the host reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotState {
    /// The active checkpoint's label.
    pub checkpoint: Option<String>,
    /// Tools that changed something in the current scope.
    pub dirty: Vec<String>,
    /// Restores done this session.
    pub restores: u32,
    /// Labels of completed snapshots, oldest first.
    pub completed: Vec<String>,
}

/// The host's snapshot service.
pub trait Snapshots {
    /// Sets a checkpoint at the reply making this call.
    fn save(&self, label: &str) -> Result<(), String>;
    /// Asks for the scope to be collapsed into `summary` once the call returns.
    fn restore(&self, label: Option<&str>, summary: &str, force: bool) -> Result<(), String>;
    /// Clears the checkpoint; returns its label.
    fn cancel(&self) -> Result<String, String>;
    fn status(&self) -> SnapshotState;
}

/// The host's project memory.
pub trait Memory {
    /// Appends `entry` to `.corral/memory/MEMORY.md`; returns the file's new size in bytes.
    fn append(&self, entry: &str) -> Result<u64, String>;
}

#[cfg(target_arch = "wasm32")]
mod imports {
    use super::*;
    use crate::bindings::corral::plugin::context as c;

    impl Snapshots for Host {
        fn save(&self, label: &str) -> Result<(), String> {
            c::snapshot_save(label)
        }
        fn restore(&self, label: Option<&str>, summary: &str, force: bool) -> Result<(), String> {
            c::snapshot_restore(label, summary, force)
        }
        fn cancel(&self) -> Result<String, String> {
            c::snapshot_cancel()
        }
        fn status(&self) -> SnapshotState {
            let s = c::snapshot_status();
            SnapshotState {
                checkpoint: s.checkpoint,
                dirty: s.dirty,
                restores: s.restores,
                completed: s.completed,
            }
        }
    }

    impl Memory for Host {
        fn append(&self, entry: &str) -> Result<u64, String> {
            c::memory_append(entry)
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imports {
    //! Outside a component there is no host: every request fails.
    use super::*;

    const NO_HOST: &str = "not running inside corral";

    impl Snapshots for Host {
        fn save(&self, _: &str) -> Result<(), String> {
            Err(NO_HOST.into())
        }
        fn restore(&self, _: Option<&str>, _: &str, _: bool) -> Result<(), String> {
            Err(NO_HOST.into())
        }
        fn cancel(&self) -> Result<String, String> {
            Err(NO_HOST.into())
        }
        fn status(&self) -> SnapshotState {
            SnapshotState::default()
        }
    }

    impl Memory for Host {
        fn append(&self, _: &str) -> Result<u64, String> {
            Err(NO_HOST.into())
        }
    }
}

/// A stand-in for the host's snapshot desk: one checkpoint at a time, a scripted dirty
/// scope, and a log of every request.
#[derive(Debug, Default)]
pub struct FakeSnapshots {
    pub state: RefCell<SnapshotState>,
    /// Every request, as `save:label`, `restore:label:summary:force`, `cancel`.
    pub log: RefCell<Vec<String>>,
}

impl Snapshots for FakeSnapshots {
    fn save(&self, label: &str) -> Result<(), String> {
        self.log.borrow_mut().push(format!("save:{label}"));
        let mut s = self.state.borrow_mut();
        if let Some(c) = &s.checkpoint {
            return Err(format!("checkpoint '{c}' is already set"));
        }
        s.checkpoint = Some(label.to_string());
        Ok(())
    }
    fn restore(&self, label: Option<&str>, summary: &str, force: bool) -> Result<(), String> {
        self.log.borrow_mut().push(format!("restore:{}:{summary}:{force}", label.unwrap_or("-")));
        let mut s = self.state.borrow_mut();
        if !s.dirty.is_empty() && !force {
            return Err(format!("the scope is dirty: {}", s.dirty.join(", ")));
        }
        let label =
            label.map(str::to_string).or(s.checkpoint.take()).unwrap_or_else(|| "investigation".into());
        s.completed.push(label);
        s.restores += 1;
        s.dirty.clear();
        Ok(())
    }
    fn cancel(&self) -> Result<String, String> {
        self.log.borrow_mut().push("cancel".into());
        self.state.borrow_mut().checkpoint.take().ok_or_else(|| "there is no checkpoint to cancel".into())
    }
    fn status(&self) -> SnapshotState {
        self.state.borrow().clone()
    }
}

/// A stand-in for the memory file: entries appended in memory.
#[derive(Debug, Default)]
pub struct FakeMemory {
    pub text: RefCell<String>,
    /// When set, `append` fails with this message.
    pub fail: RefCell<Option<String>>,
}

impl Memory for FakeMemory {
    fn append(&self, entry: &str) -> Result<u64, String> {
        if let Some(m) = self.fail.borrow().as_ref() {
            return Err(m.clone());
        }
        let mut t = self.text.borrow_mut();
        if !t.is_empty() {
            t.push('\n');
        }
        t.push_str(entry.trim());
        t.push('\n');
        Ok(t.len() as u64)
    }
}
