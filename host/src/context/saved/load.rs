//! Reads a saved session back as untrusted input: a size limit, every line checked, a clear
//! error naming the file and line, a newer format refused, and a torn last line (a run killed
//! while writing it) skipped with a warning.

use super::record::{Header, Record, Saved, State};
use super::{FOLDER, SCHEMA_VERSION, SavedError, file_name};
use crate::capabilities::local::Local;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A saved session as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub header: Header,
    /// The conversation as it was last (compactions applied).
    pub entries: Vec<Saved>,
    pub state: State,
    /// Things the person should know (a torn last line).
    pub warnings: Vec<String>,
    /// The bytes of whole, good lines: a resumed session appends from here.
    pub valid_len: u64,
    /// The model and provider last used (the header's, or the last resume's).
    pub model: String,
    pub provider: String,
    /// Model turns over all ended tasks.
    pub turns: u32,
    /// The person's first message.
    pub first_task: Option<String>,
}

/// Reads session `id` from `local`'s sessions folder; files over `max` bytes are refused.
pub fn load(local: &Local, id: &str, max: u64) -> Result<Loaded, SavedError> {
    if !super::valid_id(id) {
        return Err(SavedError::BadId(id.to_string()));
    }
    let name = file_name(id);
    let shown = local.shown(&format!("{FOLDER}/{name}"));
    let io = |source| SavedError::Io { what: "read", file: shown.clone(), source };
    let dir = local.folder(FOLDER).map_err(io)?;
    let capped = crate::capabilities::hostread::read_regular(&dir, Path::new(&name), max)
        .map_err(io)?
        .ok_or_else(|| SavedError::NotFound(id.to_string()))?;
    if capped.size > max {
        return Err(SavedError::TooLarge { file: shown, size: capped.size, limit: max });
    }
    parse(&capped.bytes, &shown)
}

/// Parses a session file's bytes; `file` names it in errors.
pub fn parse(bytes: &[u8], file: &str) -> Result<Loaded, SavedError> {
    let bad = |line: usize, why: String| SavedError::Malformed { file: file.to_string(), line, why };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|b| **b == b'\n').count() + 1;
        bad(line, "not UTF-8 text".to_string())
    })?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut warnings = Vec::new();
    let mut valid_len = bytes.len() as u64;
    // A last line without its newline is one a run was killed while writing.
    if lines.len() > 1 && lines.last().is_some_and(|l| !l.ends_with('\n')) {
        let torn = lines.pop().unwrap_or_default();
        valid_len -= torn.len() as u64;
        warnings.push(format!(
            "{file} line {}: the last line is incomplete (the run was stopped while writing it); it is skipped",
            lines.len() + 1
        ));
    }
    let first = lines.first().ok_or_else(|| bad(1, "the file is empty".to_string()))?;
    let header = header(first).map_err(|e| match e {
        HeaderError::Newer(found) => SavedError::Newer { file: file.to_string(), found },
        HeaderError::Bad(why) => bad(1, why),
    })?;
    let mut loaded = Loaded {
        model: header.model.clone(),
        provider: header.provider.clone(),
        header,
        entries: Vec::new(),
        state: State::default(),
        warnings,
        valid_len,
        turns: 0,
        first_task: None,
    };
    let mut ids: HashSet<u64> = HashSet::new();
    for (i, l) in lines.iter().enumerate().skip(1) {
        let n = i + 1;
        if l.trim().is_empty() {
            continue;
        }
        let record: Record =
            serde_json::from_str(l).map_err(|e| bad(n, format!("not a session record: {e}")))?;
        apply(&mut loaded, &mut ids, record).map_err(|why| bad(n, why))?;
    }
    Ok(loaded)
}

enum HeaderError {
    Newer(u64),
    Bad(String),
}

fn header(line: &str) -> Result<Header, HeaderError> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| HeaderError::Bad(format!("not a session header: {e}")))?;
    let version = v
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| HeaderError::Bad("the header has no schema_version".to_string()))?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(HeaderError::Newer(version));
    }
    let h: Header =
        serde_json::from_value(v).map_err(|e| HeaderError::Bad(format!("not a session header: {e}")))?;
    if !super::valid_id(&h.id) {
        return Err(HeaderError::Bad(format!("'{}' is not a session id", h.id)));
    }
    Ok(h)
}

/// Applies one record to the session being rebuilt.
fn apply(s: &mut Loaded, ids: &mut HashSet<u64>, record: Record) -> Result<(), String> {
    match record {
        Record::Message(m) => {
            if !ids.insert(m.id) {
                return Err(format!("message id {} is used twice", m.id));
            }
            if s.first_task.is_none()
                && let crate::llm::Message::User { text, synthetic: false } = &m.message
            {
                s.first_task = Some(text.clone());
            }
            s.entries.push(m);
        }
        Record::Compaction { order, entries } => {
            let mut changed: HashMap<u64, Saved> = HashMap::new();
            for e in entries {
                let id = e.id;
                if changed.insert(id, e).is_some() {
                    return Err(format!("the compaction lists message id {id} twice"));
                }
            }
            let mut old: HashMap<u64, Saved> = s.entries.drain(..).map(|e| (e.id, e)).collect();
            let mut seen = HashSet::new();
            for id in order {
                if !seen.insert(id) {
                    return Err(format!("the compaction orders message id {id} twice"));
                }
                let e = changed.remove(&id).or_else(|| old.remove(&id)).ok_or_else(|| {
                    format!("the compaction keeps message id {id}, which the session does not have")
                })?;
                ids.insert(id);
                s.entries.push(e);
            }
            if let Some(id) = changed.keys().next() {
                return Err(format!("the compaction gives message id {id}, which it does not order"));
            }
        }
        Record::State(state) => s.state = state,
        Record::Resumed { model, provider, .. } => {
            s.model = model;
            s.provider = provider;
        }
        Record::End { turns, .. } => s.turns = s.turns.saturating_add(turns),
    }
    Ok(())
}
