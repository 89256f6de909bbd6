//! Undo and rewind: every change a tool makes through the workspace functions is recorded in
//! a checkpoint per model turn (what each path was before, what it became), kept in the
//! workspace's local state so it outlives the session, and put back on request.

mod journal;
mod restore;
mod store;
#[cfg(test)]
mod tests;

pub use journal::{Captured, Journal, Label, capture, commit};
pub use restore::{Restored, Target, UndoError, list, restore};
pub use store::{Bounds, Checkpoint, Entry, State};

use super::local::Local;
use super::log::Sink;
use super::roots::Roots;

/// What undo may touch (`Session::undo`): the roots it reads and puts back, the journal of
/// the turn in progress, and the checkpoints kept in the local state, within `bounds`.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub roots: &'a Roots,
    pub bounds: Bounds,
    pub journal: &'a Journal,
    pub local: &'a Local,
    pub log: &'a Sink,
}

/// One line describing checkpoint `cp` (without its time, which the front end formats).
pub fn describe(cp: &Checkpoint) -> String {
    let when = match cp.turn {
        Some(t) => format!("turn {t}"),
        None => "outside a turn".to_string(),
    };
    let tools = if cp.tools.is_empty() { String::new() } else { format!(" by {}", cp.tools.join(", ")) };
    let files: Vec<&str> = cp.entries.iter().map(|e| e.path.as_str()).collect();
    let undone = if cp.undone { " (undone)" } else { "" };
    format!("{when}{tools}: {}{undone}", files.join(", "))
}
