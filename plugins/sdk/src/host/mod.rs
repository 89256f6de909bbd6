//! What a plugin can ask of the host: the workspace roots, file changes, logging, session
//! state, durable context sections, snapshots and memory notes, questions to the person,
//! fetches, commands and settings. [`Host`]
//! calls the real imports; the fakes in [`fake`] and [`FakeNet`] / [`FakeHostInfo`] stand in
//! for native unit tests of tool logic.

use crate::{ErrorKind, ToolError};
use std::path::{Path, PathBuf};

/// A directory the plugin can see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub writable: bool,
}

/// Why the host refused a change (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsErrorCode {
    OutsideRoots,
    Protected,
    NotRead,
    NotFound,
    IsDirectory,
    InvalidPath,
    Io,
}

/// A refused or failed change, with the host's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    pub code: FsErrorCode,
    pub message: String,
}

impl From<FsError> for ToolError {
    fn from(e: FsError) -> ToolError {
        let (kind, hint) = match e.code {
            FsErrorCode::OutsideRoots => {
                (ErrorKind::PermissionDenied, Some("only paths inside the workspace roots can be changed"))
            }
            FsErrorCode::Protected => (ErrorKind::PermissionDenied, None),
            FsErrorCode::NotRead => {
                (ErrorKind::Conflict, Some("read the file with read_file first, then retry"))
            }
            FsErrorCode::NotFound => (ErrorKind::NotFound, None),
            FsErrorCode::IsDirectory => (ErrorKind::InvalidArgs, None),
            FsErrorCode::InvalidPath => (ErrorKind::InvalidArgs, None),
            FsErrorCode::Io => (ErrorKind::Io, None),
        };
        let err = ToolError::new(kind, e.message);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    }
}

/// What a write or move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteInfo {
    pub path: String,
    pub bytes: u64,
    pub existed: bool,
}

/// Where a trashed file went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrashInfo {
    pub id: String,
    pub location: String,
}

/// The host's file-changing services. Reads go straight through WASI.
pub trait Workspace {
    /// The roots, workspace root first.
    fn roots(&self) -> Vec<Root>;
    /// Records that the session read `path` (for the read-before-write guard).
    fn note_read(&self, path: &Path);
    /// Atomically replaces or creates `path`.
    fn write(&self, path: &Path, contents: &[u8]) -> Result<WriteInfo, FsError>;
    /// Renames `from` to `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<WriteInfo, FsError>;
    /// Moves `path` to the trash.
    fn trash(&self, path: &Path) -> Result<TrashInfo, FsError>;
    /// The entries of directory `dir` whose names are not UTF-8, escaped (`\xNN`); a WASI
    /// listing cannot return them. None by default (fakes, hosts without the function).
    fn undecodable_names(&self, dir: &Path) -> Vec<String> {
        let _ = dir;
        Vec::new()
    }
}

/// The real host, through the component's imports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

pub use imports::roots;

#[cfg(target_arch = "wasm32")]
mod imports {
    use super::*;
    use crate::bindings::corral::plugin::workspace as w;

    fn err(e: w::Error) -> FsError {
        let code = match e.code {
            w::ErrorCode::OutsideRoots => FsErrorCode::OutsideRoots,
            w::ErrorCode::Protected => FsErrorCode::Protected,
            w::ErrorCode::NotRead => FsErrorCode::NotRead,
            w::ErrorCode::NotFound => FsErrorCode::NotFound,
            w::ErrorCode::IsDirectory => FsErrorCode::IsDirectory,
            w::ErrorCode::InvalidPath => FsErrorCode::InvalidPath,
            w::ErrorCode::Io => FsErrorCode::Io,
        };
        FsError { code, message: e.message }
    }

    fn info(i: w::WriteInfo) -> WriteInfo {
        WriteInfo { path: i.path, bytes: i.bytes, existed: i.existed }
    }

    /// The roots, asked of the host alone: a plugin that calls only this imports no
    /// function that needs a grant (a `&dyn Workspace` links them all).
    pub fn roots() -> Vec<Root> {
        w::roots().into_iter().map(|r| Root { path: PathBuf::from(r.path), writable: r.writable }).collect()
    }

    impl Workspace for Host {
        fn roots(&self) -> Vec<Root> {
            roots()
        }
        fn note_read(&self, path: &Path) {
            w::note_read(&path.to_string_lossy());
        }
        fn undecodable_names(&self, dir: &Path) -> Vec<String> {
            w::undecodable_names(&dir.to_string_lossy()).unwrap_or_default()
        }
        fn write(&self, path: &Path, contents: &[u8]) -> Result<WriteInfo, FsError> {
            w::write(&path.to_string_lossy(), contents).map(info).map_err(err)
        }
        fn rename(&self, from: &Path, to: &Path) -> Result<WriteInfo, FsError> {
            w::move_(&from.to_string_lossy(), &to.to_string_lossy()).map(info).map_err(err)
        }
        fn trash(&self, path: &Path) -> Result<TrashInfo, FsError> {
            w::trash(&path.to_string_lossy())
                .map(|t| TrashInfo { id: t.id, location: t.location })
                .map_err(err)
        }
    }

    pub fn log(level: super::Level, message: &str) {
        use crate::bindings::corral::plugin::log as l;
        let level = match level {
            super::Level::Debug => l::Level::Debug,
            super::Level::Info => l::Level::Info,
            super::Level::Warn => l::Level::Warn,
            super::Level::Error => l::Level::Error,
        };
        l::log(level, message);
    }

    pub fn kv_get(key: &str) -> Option<String> {
        crate::bindings::corral::plugin::kv::get(key)
    }
    pub fn kv_set(key: &str, value: &str) -> Result<(), String> {
        crate::bindings::corral::plugin::kv::set(key, value)
    }
    pub fn kv_delete(key: &str) {
        crate::bindings::corral::plugin::kv::delete(key)
    }
    pub fn kv_keys(prefix: &str) -> Vec<String> {
        crate::bindings::corral::plugin::kv::keys(prefix)
    }

    pub fn set_section(name: &str, body: &str) -> Result<(), String> {
        crate::bindings::corral::plugin::context::set_section(name, body)
    }
    pub fn section(name: &str) -> Option<String> {
        crate::bindings::corral::plugin::context::section(name)
    }
    pub fn ask(question: &str, choices: &[String]) -> Result<String, String> {
        crate::bindings::corral::plugin::context::ask(question, choices)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imports {
    //! Outside a component there is no host: changes fail, logs go to stderr, state is
    //! kept in this process so native tests of stateful tools still work.
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    fn no_host() -> FsError {
        FsError { code: FsErrorCode::Io, message: "not running inside corral".into() }
    }

    /// No roots outside a component.
    pub fn roots() -> Vec<Root> {
        Vec::new()
    }

    impl Workspace for Host {
        fn roots(&self) -> Vec<Root> {
            roots()
        }
        fn note_read(&self, _path: &Path) {}
        fn write(&self, _: &Path, _: &[u8]) -> Result<WriteInfo, FsError> {
            Err(no_host())
        }
        fn rename(&self, _: &Path, _: &Path) -> Result<WriteInfo, FsError> {
            Err(no_host())
        }
        fn trash(&self, _: &Path) -> Result<TrashInfo, FsError> {
            Err(no_host())
        }
    }

    pub fn log(level: super::Level, message: &str) {
        eprintln!("[{level:?}] {message}");
    }

    thread_local! {
        static KV: RefCell<BTreeMap<String, String>> = const { RefCell::new(BTreeMap::new()) };
        static SECTIONS: RefCell<BTreeMap<String, String>> = const { RefCell::new(BTreeMap::new()) };
    }
    pub fn kv_get(key: &str) -> Option<String> {
        KV.with(|kv| kv.borrow().get(key).cloned())
    }
    pub fn kv_set(key: &str, value: &str) -> Result<(), String> {
        KV.with(|kv| kv.borrow_mut().insert(key.to_string(), value.to_string()));
        Ok(())
    }
    pub fn kv_delete(key: &str) {
        KV.with(|kv| kv.borrow_mut().remove(key));
    }
    pub fn kv_keys(prefix: &str) -> Vec<String> {
        KV.with(|kv| kv.borrow().keys().filter(|k| k.starts_with(prefix)).cloned().collect())
    }

    pub fn set_section(name: &str, body: &str) -> Result<(), String> {
        super::context::check_section(name, body)?;
        SECTIONS.with(|s| {
            let mut s = s.borrow_mut();
            if body.trim().is_empty() {
                s.remove(name);
            } else {
                s.insert(name.to_string(), body.to_string());
            }
        });
        Ok(())
    }
    pub fn section(name: &str) -> Option<String> {
        SECTIONS.with(|s| s.borrow().get(name).cloned())
    }
    pub fn ask(_question: &str, _choices: &[String]) -> Result<String, String> {
        Err("not running inside corral: no one can answer questions".to_string())
    }
}

/// Log levels for [`log`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// Writes a diagnostic line for the user (never shown to the model).
pub fn log(level: Level, message: &str) {
    imports::log(level, message)
}

/// Session state private to this plugin.
pub mod kv {
    /// The value under `key`.
    pub fn get(key: &str) -> Option<String> {
        super::imports::kv_get(key)
    }
    /// Stores `value` under `key`.
    pub fn set(key: &str, value: &str) -> Result<(), String> {
        super::imports::kv_set(key, value)
    }
    /// Removes `key`.
    pub fn delete(key: &str) {
        super::imports::kv_delete(key)
    }
    /// The keys that start with `prefix`, sorted.
    pub fn keys(prefix: &str) -> Vec<String> {
        super::imports::kv_keys(prefix)
    }
}

/// Durable notes for the model (shown in every system prompt, kept through compaction)
/// and questions to the person running corral.
pub mod context {
    /// The largest section body the host accepts, in bytes.
    pub const MAX_SECTION_BYTES: usize = 16 * 1024;

    /// Replaces section `name` with `body` (markdown); an empty body removes it. The host
    /// mirrors section `todo` to `.corral/todo.md` and counts its `- [ ]` lines as open work.
    pub fn set_section(name: &str, body: &str) -> Result<(), String> {
        super::imports::set_section(name, body)
    }
    /// The current body of section `name`, if it is set.
    pub fn section(name: &str) -> Option<String> {
        super::imports::section(name)
    }
    /// Asks the person `question` (with `choices`, or free text when empty) and waits for
    /// the answer. Fails with a message for the model when no one can answer.
    pub fn ask(question: &str, choices: &[String]) -> Result<String, String> {
        super::imports::ask(question, choices)
    }

    /// The host's rules for a section: the name is 1 to 64 of `a-z0-9-_`, the body at most
    /// [`MAX_SECTION_BYTES`]. The error says which rule was broken.
    pub fn check_section(name: &str, body: &str) -> Result<(), String> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !valid {
            return Err(format!(
                "invalid section name '{name}': use 1 to 64 lowercase letters, digits, '-' or '_'"
            ));
        }
        if body.len() > MAX_SECTION_BYTES {
            return Err(format!(
                "section '{name}' is {} bytes; the limit is {MAX_SECTION_BYTES}",
                body.len()
            ));
        }
        Ok(())
    }
}

mod state;
pub use state::{Asker, State, load_json, save_json};

mod snapshot;
pub use snapshot::{FakeMemory, FakeSnapshots, Memory, SnapshotState, Snapshots};

mod web;
pub use web::{FakeHostInfo, FakeNet, HostInfo, HttpError, HttpErrorCode, HttpRequest, HttpResponse, Net};

pub mod process;
pub use process::{Call, Command, FakeProc, Proc, ProcError, ProcErrorCode, ProcOutput};

pub mod fake;
