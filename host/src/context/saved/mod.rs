//! Saved sessions: every run's conversation written as JSONL in the workspace's local state as
//! it goes (`sessions/<id>.jsonl`), and read back to resume or fork it.
//!
//! A file is a header line and records ([`record`]): messages as they join, compactions as
//! what the context manager replaced, the state beside the conversation (todo list, snapshot
//! summaries), task ends. [`journal`] writes them (redacted, one line per record, so a kill
//! loses at most the line being written); [`load`] reads a file back as untrusted input;
//! [`store`] lists, resolves ids, and applies the retention limits.

pub mod journal;
pub mod load;
pub mod record;
pub mod state;
pub mod store;
#[cfg(test)]
mod tests;

pub use journal::Journal;
pub use load::Loaded;
pub use record::{Header, Record, State};
pub use store::{Retention, Summary};

/// The file format's version; a file from a newer one is refused.
pub const SCHEMA_VERSION: u32 = 1;
/// The folder of saved sessions in the workspace's local state.
pub const FOLDER: &str = "sessions";
/// The file name extension.
pub const EXT: &str = ".jsonl";

/// What went wrong with a saved session.
#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    #[error("cannot {what} {file}: {source}")]
    Io {
        what: &'static str,
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{file} line {line}: {why}; the file is not a saved session corral can read (remove it with `corral sessions rm`)"
    )]
    Malformed { file: String, line: usize, why: String },
    #[error(
        "{file} was written by a newer corral (session format {found}, this one reads {SCHEMA_VERSION}); \
         resume it with that version, or upgrade corral"
    )]
    Newer { file: String, found: u64 },
    #[error(
        "{file} is {size} bytes, over the {limit}-byte limit for one session (setting sessions.max_file_mb)"
    )]
    TooLarge { file: String, size: u64, limit: u64 },
    #[error(
        "{file} reached the {limit}-byte limit for one session (setting sessions.max_file_mb); the rest of this session is not saved"
    )]
    Full { file: String, limit: u64 },
    #[error("no saved session matches '{0}'; `corral sessions` lists them")]
    NotFound(String),
    #[error("'{prefix}' matches several saved sessions ({}); give more of the id", .candidates.join(", "))]
    Ambiguous { prefix: String, candidates: Vec<String> },
    #[error("no saved session in this workspace yet; start one with `corral \"a task\"`")]
    NoSessions,
    #[error("'{0}' is not a session id: ids are letters, digits and '-' (see `corral sessions`)")]
    BadId(String),
}

/// A session id: the UTC start time and a random suffix (`20260102-153012-a1b2c3`), so names
/// sort by age and a prefix is enough to name one.
pub fn new_id() -> String {
    let now = jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S");
    let mut raw = [0u8; 3];
    // Without randomness the clock alone names it; `Journal::create` never reuses a name.
    let _ = getrandom::fill(&mut raw);
    format!("{now}-{:02x}{:02x}{:02x}", raw[0], raw[1], raw[2])
}

/// The file name of session `id`.
pub fn file_name(id: &str) -> String {
    format!("{id}{EXT}")
}

/// Whether `id` may name a file: nothing but ASCII letters, digits and '-', 1 to 64 of them.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}
