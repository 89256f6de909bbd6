//! Writes a saved session as it goes: each sync compares the conversation with what the file
//! already says and appends only the difference (new messages, or one compaction record when
//! the context manager rewrote it), plus the state beside it when that changed.

use super::record::{Header, Record, Saved, State};
use super::{FOLDER, SavedError, file_name};
use crate::capabilities::local::Local;
use crate::context::Entry;
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{File, OpenOptions, OpenOptionsExt};
use std::collections::HashMap;
use std::io::Write;

/// An open session file.
#[derive(Debug)]
pub struct Journal {
    file: File,
    id: String,
    /// The file's path, for messages.
    shown: String,
    /// The conversation as the file has it.
    written: Vec<Saved>,
    /// The state beside it as the file has it.
    state: State,
    size: u64,
    limit: u64,
    /// The limit was reached: nothing more is written.
    full: bool,
}

fn io<'a>(what: &'static str, file: &'a str) -> impl FnOnce(std::io::Error) -> SavedError + 'a {
    move |source| SavedError::Io { what, file: file.to_string(), source }
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.append(true).follow(FollowSymlinks::No).mode(0o600);
    o
}

/// Whether the saved entry says what `e` is (its token count aside, which is a cache).
fn same(w: &Saved, e: &Entry) -> bool {
    w.id == e.id && w.mutated == e.mutated && w.recap == e.recap && w.message == e.msg
}

/// One record as a redacted line.
fn line(r: &Record) -> Result<String, serde_json::Error> {
    Ok(format!("{}\n", crate::redact::text(&serde_json::to_string(r)?)))
}

impl Journal {
    /// Starts the file of a new session (`header.id`) in `local`'s sessions folder.
    pub fn create(local: &Local, header: &Header, limit: u64) -> Result<Journal, SavedError> {
        let name = file_name(&header.id);
        let shown = local.shown(&format!("{FOLDER}/{name}"));
        let dir = local.folder(FOLDER).map_err(io("open the folder of", &shown))?;
        let file = dir.open_with(&name, options().create_new(true)).map_err(io("create", &shown))?;
        let head = format!("{}\n", crate::redact::text(&serde_json::to_string(header).unwrap_or_default()));
        let mut j = Journal {
            file,
            id: header.id.clone(),
            shown,
            written: Vec::new(),
            state: State::default(),
            size: 0,
            limit,
            full: false,
        };
        j.write(&head)?;
        Ok(j)
    }

    /// Reopens the file `loaded` was read from to go on with it (a torn last line is cut off
    /// first), noting that it was resumed and by which model.
    pub fn reopen(
        local: &Local,
        loaded: &super::Loaded,
        model: &str,
        provider: &str,
        limit: u64,
    ) -> Result<Journal, SavedError> {
        let name = file_name(&loaded.header.id);
        let shown = local.shown(&format!("{FOLDER}/{name}"));
        let dir = local.folder(FOLDER).map_err(io("open the folder of", &shown))?;
        let file = dir.open_with(&name, &options()).map_err(io("open", &shown))?;
        let size = file.metadata().map_err(io("read", &shown))?.len();
        if size > loaded.valid_len {
            file.set_len(loaded.valid_len).map_err(io("cut the torn last line of", &shown))?;
        }
        let mut j = Journal {
            file,
            id: loaded.header.id.clone(),
            shown,
            written: loaded.entries.clone(),
            state: loaded.state.clone(),
            size: loaded.valid_len,
            limit,
            full: false,
        };
        let r = Record::Resumed {
            time: jiff::Timestamp::now().to_string(),
            model: model.to_string(),
            provider: provider.to_string(),
        };
        j.append(&[r])?;
        Ok(j)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file's path, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Brings the file up to date with the conversation `entries` and the `state` beside it.
    pub fn sync(&mut self, entries: &[Entry], state: State) -> Result<(), SavedError> {
        let mut records = Vec::new();
        let n = self.written.len();
        let appended = n <= entries.len() && self.written.iter().zip(entries).all(|(w, e)| same(w, e));
        if appended {
            records.extend(entries[n..].iter().map(|e| Record::Message(Saved::of(e))));
        } else {
            let old: HashMap<u64, &Saved> = self.written.iter().map(|w| (w.id, w)).collect();
            let changed = entries.iter().filter(|e| !old.get(&e.id).is_some_and(|w| same(w, e)));
            records.push(Record::Compaction {
                order: entries.iter().map(|e| e.id).collect(),
                entries: changed.map(Saved::of).collect(),
            });
        }
        let state_changed = state != self.state;
        if state_changed {
            records.push(Record::State(state.clone()));
        }
        if records.is_empty() {
            return Ok(());
        }
        self.append(&records)?;
        if appended {
            self.written.extend(entries[n..].iter().map(Saved::of));
        } else {
            self.written = entries.iter().map(Saved::of).collect();
        }
        if state_changed {
            self.state = state;
        }
        Ok(())
    }

    /// Records the end of a task: its outcome, why it stopped early if it did, its turns.
    pub fn end(&mut self, outcome: &str, reason: Option<&str>, turns: u32) -> Result<(), SavedError> {
        let reason = reason.map(|r| r.chars().take(500).collect());
        self.append(&[Record::End { outcome: outcome.to_string(), reason, turns }])
    }

    fn append(&mut self, records: &[Record]) -> Result<(), SavedError> {
        let mut text = String::new();
        for r in records {
            let l = line(r).map_err(|e| SavedError::Malformed {
                file: self.shown.clone(),
                line: 0,
                why: format!("cannot encode a record: {e}"),
            })?;
            text.push_str(&l);
        }
        self.write(&text)
    }

    /// Appends `text` (whole lines) in one write, unless it would pass the size limit.
    fn write(&mut self, text: &str) -> Result<(), SavedError> {
        if self.full {
            return Ok(());
        }
        let len = text.len() as u64;
        if self.size + len > self.limit {
            self.full = true;
            return Err(SavedError::Full { file: self.shown.clone(), limit: self.limit });
        }
        self.file.write_all(text.as_bytes()).map_err(io("write", &self.shown))?;
        self.size += len;
        Ok(())
    }
}
