//! The live side of undo: before a change the workspace functions capture what the path was,
//! after it they commit it into the checkpoint of the model turn in progress (one per turn).

use super::View;
use super::store::{Bounds, Checkpoint, Entry, State, Store, hash};
use crate::capabilities::Located;
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use std::io::{self, Read};
use std::path::Path;
use std::sync::Mutex;

/// The model turn whose changes go into one checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label {
    /// The turn's number in the session.
    pub turn: u64,
    /// The transcript id of the model's reply.
    pub reply: u64,
}

/// The session's recorder: the turn in progress and its checkpoint, once something changed.
#[derive(Debug)]
pub struct Journal {
    session: String,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    label: Option<Label>,
    open: Option<Checkpoint>,
    /// Changes committed into `open`, and how many of them a tool was named for.
    changes: usize,
    attributed: usize,
    /// The tool of the call running alone, named on the checkpoint with its first change so
    /// that the index is written once ([`Journal::calling`]).
    calling: Option<String>,
    store: Option<Store>,
}

impl Default for Journal {
    fn default() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut h = blake3::Hasher::new();
        h.update(&nanos.to_le_bytes());
        h.update(&std::process::id().to_le_bytes());
        Journal { session: h.finalize().to_hex()[..16].to_string(), inner: Mutex::new(Inner::default()) }
    }
}

/// What a path was before a change, captured for [`commit`].
#[derive(Debug)]
pub struct Captured {
    loc: Located,
    path: String,
    /// None: the turn's checkpoint already holds this path (its first state counts).
    first: Option<First>,
}

#[derive(Debug)]
struct First {
    state: State,
    contents: Option<Vec<u8>>,
    why: Option<String>,
    /// The missing folders above a path that did not exist (see [`Entry::made`]).
    made: Vec<String>,
}

impl Journal {
    /// This session's id, as its checkpoints record it.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A model turn starts: its changes, if any, make one checkpoint.
    pub fn begin(&self, label: Label) {
        let mut g = self.lock();
        g.label = Some(label);
        g.open = None;
        g.changes = 0;
        g.attributed = 0;
        g.calling = None;
    }

    /// The turn ended (or was undone): later changes make a new checkpoint.
    pub fn end(&self) {
        let mut g = self.lock();
        g.label = None;
        g.open = None;
        g.calling = None;
    }

    /// A restore closes the checkpoint in progress; changes later in the same turn start a
    /// new one (the one undone stays undone).
    pub(super) fn close(&self) {
        self.lock().open = None;
    }

    /// A call of `tool` starts and runs alone (no other call runs until
    /// [`Journal::attribute`]): the changes it makes name it on the checkpoint as they are
    /// saved, and `attribute` has nothing left to write.
    pub fn calling(&self, tool: &str) {
        self.lock().calling = Some(tool.to_string());
    }

    /// Names `tool` on the turn's checkpoint when it changed something since the last call.
    pub fn attribute(&self, tool: &str) {
        let mut g = self.lock();
        g.calling = None;
        if g.changes == g.attributed {
            return;
        }
        g.attributed = g.changes;
        let Inner { open, store, .. } = &mut *g;
        if let (Some(cp), Some(store)) = (open.as_mut(), store.as_ref())
            && !cp.tools.iter().any(|t| t == tool)
        {
            cp.tools.push(tool.to_string());
            let _ = store.save(cp);
        }
    }
}

/// The folders above `rel` (inside the root) that do not exist, as `shown` names them,
/// deepest first: the ones a write of `rel` is about to create.
fn missing_folders(dir: &Dir, rel: &Path, shown: &str) -> Vec<String> {
    let shown = Path::new(shown);
    let mut made = Vec::new();
    // Pair each folder above `rel` with the same folder above the shown path.
    for (r, sh) in rel.ancestors().skip(1).zip(shown.ancestors().skip(1)) {
        if r.as_os_str().is_empty() {
            break;
        }
        match dir.symlink_metadata(r) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => made.push(sh.to_string_lossy().into_owned()),
            _ => break,
        }
    }
    made
}

/// Reads what `rel` is now without following a final link; a regular file's contents are
/// returned when at most `keep` bytes, otherwise only hashed.
pub(super) fn observe(dir: &Dir, rel: &Path, keep: u64) -> io::Result<(State, Option<Vec<u8>>)> {
    let meta = match dir.symlink_metadata(rel) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((State::Missing, None)),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let target = dir.read_link_contents(rel)?;
        return match target.to_str() {
            Some(t) => Ok((State::Link { target: t.to_string() }, None)),
            None => Ok((State::Other, None)),
        };
    }
    if !meta.is_file() {
        return Ok((State::Other, None));
    }
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let mut file = dir.open_with(rel, &opts)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok((State::Other, None));
    }
    use cap_std::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if meta.len() <= keep {
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut bytes)?;
        let state = State::File { mode, size: bytes.len() as u64, hash: hash(&bytes) };
        return Ok((state, Some(bytes)));
    }
    let mut h = blake3::Hasher::new();
    let size = io::copy(&mut file, &mut h)?;
    Ok((State::File { mode, size, hash: h.finalize().to_hex().to_string() }, None))
}

/// Captures what `loc` is before a change. Nothing is kept when the workspace has no state
/// folder (then nothing can be undone and no tool offers it).
pub fn capture(s: &View<'_>, loc: &Located, shown: &str) -> Option<Captured> {
    s.local.path()?;
    let g = s.journal.lock();
    let path = shown.to_string();
    if g.open.as_ref().is_some_and(|cp| cp.entry(&path).is_some()) {
        return Some(Captured { loc: loc.clone(), path, first: None });
    }
    let bounds: Bounds = s.bounds;
    let used = g.open.as_ref().map_or(0, Checkpoint::bytes);
    let room = bounds.max_bytes.saturating_sub(used);
    drop(g);
    let dir = &s.roots.all()[loc.root].dir;
    let first = if s.roots.absolute(loc).to_str().is_none() {
        First {
            state: State::Other,
            contents: None,
            why: Some("its name is not UTF-8".into()),
            made: Vec::new(),
        }
    } else {
        match observe(dir, &loc.rel, room) {
            Ok((state @ State::File { size, .. }, None)) => First {
                state,
                contents: None,
                why: Some(format!(
                    "it is {size} bytes, more than undo.max_bytes ({}) leaves for this turn's checkpoint",
                    bounds.max_bytes
                )),
                made: Vec::new(),
            },
            Ok((State::Missing, contents)) => First {
                state: State::Missing,
                contents,
                why: None,
                made: missing_folders(dir, &loc.rel, shown),
            },
            Ok((state, contents)) => First { state, contents, why: None, made: Vec::new() },
            Err(e) => First {
                state: State::Other,
                contents: None,
                why: Some(format!("it could not be read ({e})")),
                made: Vec::new(),
            },
        }
    };
    Some(Captured { loc: loc.clone(), path, first: Some(first) })
}

/// Records the changes just made to the captured paths in the turn's checkpoint (making it
/// on the first change). Returns a note for the tool's result when a change cannot be undone.
pub fn commit(s: &View<'_>, captured: Vec<Captured>) -> Option<String> {
    if captured.is_empty() {
        return None;
    }
    let mut g = s.journal.lock();
    let result = commit_locked(s, &mut g, &captured);
    if g.label.is_none() {
        // A change outside a model turn is a checkpoint of its own.
        g.open = None;
    }
    drop(g);
    match result {
        Ok(notes) if notes.is_empty() => None,
        Ok(notes) => Some(notes.join("\n")),
        Err(e) => {
            s.log.push("host", "warn", &format!("cannot save an undo checkpoint: {e}"));
            let paths: Vec<&str> = captured.iter().map(|c| c.path.as_str()).collect();
            Some(format!(
                "note: this change to {} cannot be undone: its checkpoint could not be saved in {} ({e})",
                paths.join(", "),
                s.local.shown(super::store::DIR)
            ))
        }
    }
}

fn commit_locked(s: &View<'_>, g: &mut Inner, captured: &[Captured]) -> io::Result<Vec<String>> {
    if g.store.is_none() {
        g.store = Store::open(s.local)?;
    }
    let Some(store) = g.store.as_ref() else { return Ok(Vec::new()) };
    if g.open.is_none() {
        let n = store.create()?;
        g.open = Some(Checkpoint {
            n,
            time: jiff::Timestamp::now().as_second(),
            turn: g.label.map(|l| l.turn),
            session: s.journal.session.clone(),
            reply: g.label.map(|l| l.reply),
            tools: Vec::new(),
            undone: false,
            entries: Vec::new(),
        });
    }
    let Some(cp) = g.open.as_mut() else { return Ok(Vec::new()) };
    let mut notes = Vec::new();
    for c in captured {
        if let Some(first) = &c.first {
            let mut kept = first.why.is_none();
            if let (State::File { hash, .. }, Some(bytes)) = (&first.state, &first.contents) {
                store.put_blob(cp.n, hash, bytes)?;
            } else if matches!(first.state, State::File { .. } | State::Other) {
                kept = false;
            }
            let why =
                if kept { None } else { first.why.clone().or(Some("it is not a file or a link".into())) };
            cp.entries.push(Entry {
                path: c.path.clone(),
                before: first.state.clone(),
                kept,
                why,
                after: State::Other,
                made: first.made.clone(),
            });
        }
        let dir = &s.roots.all()[c.loc.root].dir;
        if let Some(e) = cp.entries.iter_mut().find(|e| e.path == c.path) {
            if e.kept {
                e.after = observe(dir, &c.loc.rel, 0).map(|(st, _)| st).unwrap_or(State::Other);
            } else if let Some(why) = &e.why {
                notes.push(format!("note: this change to '{}' cannot be undone: {why}", c.path));
            }
        }
    }
    if let Some(tool) = &g.calling
        && !cp.tools.contains(tool)
    {
        cp.tools.push(tool.clone());
    }
    store.save(cp)?;
    g.changes += 1;
    let dropped = store.enforce(&s.bounds, Some(cp.n));
    if let Err(e) = dropped {
        s.log.push("host", "warn", &format!("cannot drop old undo checkpoints: {e}"));
    }
    Ok(notes)
}
