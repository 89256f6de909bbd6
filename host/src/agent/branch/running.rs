//! The branches running now, shared with the front end for `/status`: each registered by its
//! id while it runs and removed when it ends or is cancelled (its entry is dropped).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One running branch, for `/status`.
#[derive(Debug, Clone)]
pub struct RunningBranch {
    pub description: String,
    pub started: Instant,
    pub turns: u32,
}

/// The branches running now, shared with the front end (`/status`), and the id counter.
#[derive(Debug, Clone, Default)]
pub struct Running(Arc<(Mutex<BTreeMap<u64, RunningBranch>>, AtomicU64)>);

impl Running {
    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<u64, RunningBranch>) -> T) -> T {
        f(&mut self.0.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Registers a branch; it is removed when the returned entry is dropped.
    pub(super) fn begin(&self, description: &str) -> Entry {
        let n = self.0.1.fetch_add(1, Ordering::SeqCst) + 1;
        let shown: String = description.chars().take(80).collect();
        self.with(|m| m.insert(n, RunningBranch { description: shown, started: Instant::now(), turns: 0 }));
        Entry { running: self.clone(), n }
    }

    /// The running branches, oldest first, with their ids.
    pub fn list(&self) -> Vec<(String, RunningBranch)> {
        self.with(|m| m.iter().map(|(n, b)| (id_of(*n), b.clone())).collect())
    }
}

fn id_of(n: u64) -> String {
    format!("branch-{n}")
}

/// A branch's place in [`Running`], given up when it ends or is cancelled.
pub(super) struct Entry {
    running: Running,
    n: u64,
}

impl Entry {
    pub(super) fn id(&self) -> String {
        id_of(self.n)
    }

    pub(super) fn turn(&self, turns: u32) {
        self.running.with(|m| {
            if let Some(b) = m.get_mut(&self.n) {
                b.turns = turns;
            }
        });
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.running.with(|m| m.remove(&self.n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_branches_are_listed_until_they_end() {
        let r = Running::default();
        let a = r.begin("first");
        let b = r.begin(&"long ".repeat(40));
        b.turn(3);
        let list = r.list();
        assert_eq!(list.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["branch-1", "branch-2"]);
        assert_eq!((list[1].1.turns, list[1].1.description.chars().count()), (3, 80));
        drop(a);
        assert_eq!(r.list().len(), 1);
        drop(b);
        assert!(r.list().is_empty());
        assert_eq!(r.begin("third").id(), "branch-3", "ids are not reused");
    }
}
