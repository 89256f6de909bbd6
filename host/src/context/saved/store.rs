//! The sessions folder as a whole: listing the saved sessions newest first, finding one by
//! an id or a unique prefix of it, removing one, and the retention limits (count, total size).

use super::{EXT, FOLDER, SavedError, file_name, load};
use crate::capabilities::local::Local;
use std::time::SystemTime;

/// How many sessions are kept and how large they may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Most sessions kept (the newest).
    pub keep: usize,
    /// Most bytes all sessions together may take.
    pub max_total: u64,
    /// Most bytes one session may take.
    pub max_file: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { keep: 50, max_total: 200 << 20, max_file: 20 << 20 }
    }
}

/// One saved session, as listed.
#[derive(Debug, Clone)]
pub struct Summary {
    pub id: String,
    /// When it started (RFC 3339), from its header.
    pub created: String,
    /// When it was last written.
    pub modified: SystemTime,
    pub size: u64,
    pub turns: u32,
    /// The person's first message.
    pub task: Option<String>,
    pub model: String,
    /// Why the file cannot be read, when it cannot.
    pub problem: Option<String>,
}

/// The session files: (id, size, modified), newest first.
fn files(local: &Local) -> Result<Vec<(String, u64, SystemTime)>, SavedError> {
    let shown = local.shown(FOLDER);
    let io = |source| SavedError::Io { what: "list", file: shown.clone(), source };
    let dir = local.folder(FOLDER).map_err(io)?;
    let mut out = Vec::new();
    for entry in dir.entries().map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(EXT).filter(|id| super::valid_id(id)) else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let modified = meta.modified().map(|m| m.into_std()).unwrap_or(SystemTime::UNIX_EPOCH);
        out.push((id.to_string(), meta.len(), modified));
    }
    // Ids start with the start time, so they break ties of the clock.
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| b.0.cmp(&a.0)));
    Ok(out)
}

/// Every saved session, newest first; an unreadable one is listed with its problem.
pub fn list(local: &Local, max_file: u64) -> Result<Vec<Summary>, SavedError> {
    let mut out = Vec::new();
    for (id, size, modified) in files(local)? {
        let s = match load::load(local, &id, max_file) {
            Ok(l) => Summary {
                created: l.header.created,
                size,
                modified,
                turns: l.turns,
                task: l.first_task,
                model: l.model,
                problem: None,
                id,
            },
            Err(e) => Summary {
                // The row names the session already: its file is named without the folder.
                problem: Some(
                    e.to_string()
                        .replace(&local.shown(&format!("{FOLDER}/{}", file_name(&id))), &file_name(&id)),
                ),
                id,
                created: String::new(),
                modified,
                size,
                turns: 0,
                task: None,
                model: String::new(),
            },
        };
        out.push(s);
    }
    Ok(out)
}

/// The id `prefix` names (the whole id, or the start of exactly one), or with none the most
/// recently written session.
pub fn resolve(local: &Local, prefix: Option<&str>) -> Result<String, SavedError> {
    let all = files(local)?;
    let Some(prefix) = prefix else {
        return all.into_iter().next().map(|(id, ..)| id).ok_or(SavedError::NoSessions);
    };
    if !super::valid_id(prefix) {
        return Err(SavedError::BadId(prefix.to_string()));
    }
    if all.iter().any(|(id, ..)| id == prefix) {
        return Ok(prefix.to_string());
    }
    let matching: Vec<String> =
        all.into_iter().map(|(id, ..)| id).filter(|id| id.starts_with(prefix)).collect();
    match matching.len() {
        0 => Err(SavedError::NotFound(prefix.to_string())),
        1 => Ok(matching.into_iter().next().unwrap_or_default()),
        _ => Err(SavedError::Ambiguous { prefix: prefix.to_string(), candidates: matching }),
    }
}

/// Removes session `id`.
pub fn remove(local: &Local, id: &str) -> Result<(), SavedError> {
    if !super::valid_id(id) {
        return Err(SavedError::BadId(id.to_string()));
    }
    let shown = local.shown(&format!("{FOLDER}/{}", file_name(id)));
    let dir = local.folder(FOLDER).map_err(|source| SavedError::Io {
        what: "open",
        file: shown.clone(),
        source,
    })?;
    dir.remove_file(file_name(id)).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => SavedError::NotFound(id.to_string()),
        _ => SavedError::Io { what: "remove", file: shown, source },
    })
}

/// Deletes the oldest sessions until at most `r.keep` remain and they take at most
/// `r.max_total` bytes; `current` is never deleted. Returns the ids deleted.
pub fn prune(local: &Local, r: &Retention, current: &str) -> Result<Vec<String>, SavedError> {
    let all = files(local)?;
    let mut total: u64 = all.iter().map(|(_, size, _)| size).sum();
    let mut count = all.len();
    let mut gone = Vec::new();
    // Oldest first.
    for (id, size, _) in all.iter().rev() {
        if count <= r.keep.max(1) && total <= r.max_total {
            break;
        }
        if id == current {
            continue;
        }
        remove(local, id)?;
        count -= 1;
        total = total.saturating_sub(*size);
        gone.push(id.clone());
    }
    Ok(gone)
}
