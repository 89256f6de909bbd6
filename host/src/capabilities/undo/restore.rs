//! Putting the workspace back as it was before one or more checkpoints: every path is checked
//! first (reachable, writable, unchanged since, contents intact), then all are written, through
//! the roots' cap-std handles, never through a link.

use super::View;
use super::store::{Checkpoint, State, Store};
use crate::capabilities::WsError;
use crate::capabilities::atomic::{atomic_replace_mode, open_parent};
use std::path::Path;

/// Which checkpoints to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The newest one not yet undone.
    Latest,
    /// Back to before checkpoint `n`: it and every later one not yet undone.
    To(u64),
}

/// Why nothing was restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    #[error(
        "corral keeps no state for this workspace (no HOME or CORRAL_STATE_DIR), so there are no checkpoints; \
         set one of them for undo to work"
    )]
    NoState,
    #[error(
        "there is nothing to undo: no change made by corral in this workspace is kept and not yet undone"
    )]
    Nothing,
    #[error("there is no checkpoint {0}; `corral undo --list` shows the checkpoints kept")]
    NoSuch(u64),
    #[error("{}", changed_text(*.n, *.to, .files))]
    Changed { n: u64, to: bool, files: Vec<String> },
    #[error("nothing was restored: {}", .0.join("; "))]
    Refused(Vec<String>),
    #[error("{0}")]
    Io(String),
}

/// The refusal for files changed outside corral since checkpoint `n` (`to`: a rewind).
fn changed_text(n: u64, to: bool, files: &[String]) -> String {
    format!(
        "nothing was restored: {} changed outside corral since checkpoint {n}: {}. Restoring would lose those \
         changes; look at them first, then restore anyway with `corral undo --force{}`",
        if files.len() == 1 { "a file" } else { "files" },
        files.join(", "),
        if to { format!(" --to {n}") } else { String::new() }
    )
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The checkpoints undone, oldest first.
    pub checkpoints: Vec<Checkpoint>,
    /// One line per path put back.
    pub files: Vec<String>,
    /// Paths that could not be put back, and why (their change was reported as not undoable).
    pub not_restored: Vec<String>,
}

/// One path's way back.
struct Step {
    path: String,
    /// What the newest checkpoint left there.
    expect: State,
    /// What it was before the oldest one, and the checkpoint holding its contents; `Err` with
    /// why it cannot be put back.
    target: Result<(State, u64), String>,
    /// The folders the oldest change made for the path (see `Entry::made`).
    made: Vec<String>,
}

/// The checkpoints kept, oldest first.
pub fn list(s: &View<'_>) -> Result<Vec<Checkpoint>, UndoError> {
    let store = open(s)?;
    store.list().map_err(|e| io_error(s, &e))
}

fn open(s: &View<'_>) -> Result<Store, UndoError> {
    Store::open(s.local).map_err(|e| io_error(s, &e))?.ok_or(UndoError::NoState)
}

fn io_error(s: &View<'_>, e: &std::io::Error) -> UndoError {
    UndoError::Io(format!("cannot read the checkpoints in {}: {e}", s.local.shown(super::store::DIR)))
}

/// Undoes `target`: all or nothing, refused when a file changed outside corral since (unless
/// `force`).
pub fn restore(s: &View<'_>, target: Target, force: bool) -> Result<Restored, UndoError> {
    let store = open(s)?;
    s.journal.close();
    let all = store.list().map_err(|e| io_error(s, &e))?;
    let chosen: Vec<&Checkpoint> = match target {
        Target::Latest => all.iter().rev().find(|c| !c.undone).into_iter().collect(),
        Target::To(n) => {
            if !all.iter().any(|c| c.n == n) {
                return Err(UndoError::NoSuch(n));
            }
            all.iter().filter(|c| c.n >= n && !c.undone).collect()
        }
    };
    let Some(oldest) = chosen.first() else { return Err(UndoError::Nothing) };
    let steps = plan(&chosen);
    let writes = check(s, &store, &steps, force, oldest.n, matches!(target, Target::To(_)))?;
    let mut done = Restored { checkpoints: Vec::new(), files: Vec::new(), not_restored: Vec::new() };
    for step in &steps {
        if let Err(why) = &step.target {
            done.not_restored.push(format!("{}: {why}", step.path));
        }
    }
    let mut failed = Vec::new();
    let mut made: Vec<String> = Vec::new();
    for w in writes {
        match apply(s, &w) {
            Ok(line) => done.files.push(line),
            Err(e) => failed.push(format!("{}: {e}", w.path)),
        }
        if w.to == State::Missing {
            made.extend(w.made.iter().filter(|f| !made.contains(f)).cloned().collect::<Vec<_>>());
        }
    }
    let folders = remove_made_folders(s, made);
    if !folders.is_empty() {
        done.files.push(format!("removed the folders made for them: {}", folders.join(", ")));
    }
    if !failed.is_empty() {
        return Err(UndoError::Io(format!(
            "the restore stopped part way: {}{}. Fix that, then run the undo again (with --force, as the files \
             restored already differ from the checkpoint)",
            if done.files.is_empty() { String::new() } else { format!("{}; but ", done.files.join(", ")) },
            failed.join("; ")
        )));
    }
    for cp in &chosen {
        let mut cp = (*cp).clone();
        cp.undone = true;
        if let Err(e) = store.save(&cp) {
            s.log.push("host", "warn", &format!("cannot mark checkpoint {} undone: {e}", cp.n));
        }
        done.checkpoints.push(cp);
    }
    Ok(done)
}

/// Each path's expected state now (from the newest checkpoint touching it) and its state
/// before the oldest one.
fn plan(chosen: &[&Checkpoint]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for cp in chosen.iter().rev() {
        for e in &cp.entries {
            let target = if e.kept {
                Ok((e.before.clone(), cp.n))
            } else {
                Err(e.why.clone().unwrap_or_else(|| "its earlier state was not kept".into()))
            };
            match steps.iter_mut().find(|s| s.path == e.path) {
                Some(step) => {
                    step.target = target;
                    step.made = e.made.clone();
                }
                None => steps.push(Step {
                    path: e.path.clone(),
                    expect: e.after.clone(),
                    target,
                    made: e.made.clone(),
                }),
            }
        }
    }
    steps
}

/// One write of a restore, checked.
struct Write {
    path: String,
    to: State,
    contents: Option<Vec<u8>>,
    now: State,
    made: Vec<String>,
}

/// Checks every step before anything is written.
fn check(
    s: &View<'_>,
    store: &Store,
    steps: &[Step],
    force: bool,
    oldest: u64,
    to: bool,
) -> Result<Vec<Write>, UndoError> {
    let mut refused = Vec::new();
    let mut changed = Vec::new();
    let mut writes = Vec::new();
    for step in steps {
        let Ok((before, n)) = &step.target else { continue };
        let (loc, _) = match s.roots.resolve_writable(&step.path, false) {
            Ok(l) => l,
            Err(e) => {
                refused.push(format!("'{}' cannot be written ({e})", step.path));
                continue;
            }
        };
        let dir = &s.roots.all()[loc.root].dir;
        let now = match super::journal::observe(dir, &loc.rel, 0) {
            Ok((st, _)) => st,
            Err(e) => match e.kind() {
                // A parent that is not a folder any more.
                std::io::ErrorKind::NotADirectory => State::Other,
                _ => {
                    refused.push(format!(
                        "'{}' cannot be read ({})",
                        step.path,
                        WsError::from_io(&step.path, &e)
                    ));
                    continue;
                }
            },
        };
        if now == State::Other {
            refused.push(format!(
                "'{}' is now a folder or a special file; corral puts back files and links only, never over a folder",
                step.path
            ));
            continue;
        }
        if !force && !now.same(&step.expect) {
            changed.push(format!("'{}' ({})", step.path, how(&step.expect, &now)));
        }
        let contents = match before {
            State::File { hash, size, .. } if !now.same(before) => match store.blob(*n, hash, *size) {
                Ok(b) => Some(b),
                Err(e) => {
                    refused.push(format!("'{}' cannot be put back: {e}", step.path));
                    continue;
                }
            },
            _ => None,
        };
        writes.push(Write {
            path: step.path.clone(),
            to: before.clone(),
            contents,
            now,
            made: step.made.clone(),
        });
    }
    if !refused.is_empty() {
        return Err(UndoError::Refused(refused));
    }
    if !changed.is_empty() {
        return Err(UndoError::Changed { n: oldest, to, files: changed });
    }
    Ok(writes)
}

/// How `now` differs from what the checkpoint left.
fn how(expect: &State, now: &State) -> &'static str {
    match (expect, now) {
        (_, State::Missing) => "deleted since",
        (State::Missing, _) => "created since",
        (_, State::Link { .. }) => "replaced by a link since",
        _ => "edited since",
    }
}

/// Removes the folders the undone changes made, deepest first, each only when empty:
/// anything put in one since stays, with the folders that hold it. Returns those removed.
fn remove_made_folders(s: &View<'_>, mut made: Vec<String>) -> Vec<String> {
    made.sort_by_key(|f| std::cmp::Reverse(Path::new(f).components().count()));
    let mut removed = Vec::new();
    for folder in made {
        let Ok((loc, _)) = s.roots.resolve_writable(&folder, false) else { continue };
        // remove_dir takes only an empty folder, and never follows a link planted there.
        if s.roots.all()[loc.root].dir.remove_dir(&loc.rel).is_ok() {
            removed.push(folder);
        }
    }
    removed
}

/// Puts one path back; the line says what was done.
fn apply(s: &View<'_>, w: &Write) -> Result<String, String> {
    if w.now.same(&w.to) && w.contents.is_none() {
        return Ok(format!("{} (already as it was)", w.path));
    }
    let (loc, _) = s.roots.resolve_writable(&w.path, false).map_err(|e| e.to_string())?;
    let root = &s.roots.all()[loc.root].dir;
    let name = loc.rel.file_name().map(Path::new).ok_or("no file name")?;
    let create = w.to != State::Missing;
    let parent = match open_parent(root, &loc.rel, create) {
        Ok(p) => p,
        Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!("{} (already gone)", w.path));
        }
        Err(e) => return Err(e.to_string()),
    };
    let remove = |what: &str| match parent.remove_file(name) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove the {what}: {e}")),
    };
    match &w.to {
        State::Missing => {
            remove("file")?;
            Ok(format!("deleted {} (it did not exist before)", w.path))
        }
        State::File { mode, .. } => {
            let bytes = w.contents.as_deref().unwrap_or_default();
            if matches!(w.now, State::Link { .. }) {
                // Replaced, never followed: the rename below would do so too, this says it.
                remove("link")?;
            }
            atomic_replace_mode(&parent, name, bytes, Some(*mode)).map_err(|e| e.to_string())?;
            Ok(match w.now {
                State::Missing => format!("re-created {}", w.path),
                _ => format!("restored {}", w.path),
            })
        }
        State::Link { target } => {
            remove("file")?;
            parent.symlink_contents(target, name).map_err(|e| e.to_string())?;
            Ok(format!("restored the link {} -> {target}", w.path))
        }
        State::Other => Err("its earlier state cannot be put back".into()),
    }
}
