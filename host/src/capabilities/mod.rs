//! The host side of every WIT import a plugin may be granted: the workspace (through
//! cap-std), session key-value state, durable context sections, logging, the SSRF-safe
//! http client and the process runner. One [`Session`] is shared by all calls; each
//! interface sees only its narrow view of it (`session.rs`).

// Workspace access goes through cap-std handles: the ambient std::fs calls that clippy.toml
// lists are refused here (a use that is right says why, with an allow).
#![deny(clippy::disallowed_methods)]

mod atomic;
pub mod context;
pub mod effects;
pub mod grant;
mod guard;
mod host_impl;
pub mod hostread;
pub mod http;
pub mod kv;
mod listing;
pub mod local;
pub mod log;
mod parallel;
pub mod process;
pub mod roots;
pub mod sandbox;
pub mod scratch;
mod session;
pub mod snapshot;
pub mod state;
pub mod trash;
pub mod undo;
pub mod workspace;

pub use guard::ReadGuard;
pub use host_impl::{PauseClock, PluginCtx};
pub use parallel::{Ran, SubCalls};
pub use roots::{Located, Roots, find_workspace_root};
pub use session::{PluginSettings, Preopens, Session};

use std::io;

/// Why a workspace change was refused (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    OutsideRoots,
    Protected,
    NotRead,
    NotFound,
    IsDirectory,
    InvalidPath,
    Io,
}

/// A refused or failed workspace change, with a message for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WsError {
    pub code: ErrorCode,
    pub message: String,
}

impl WsError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WsError { code, message: message.into() }
    }

    pub fn outside(shown: &str) -> Self {
        Self::new(
            ErrorCode::OutsideRoots,
            format!("'{shown}' is outside the workspace roots; tools cannot reach it by any path or link"),
        )
    }

    pub fn protected(message: String) -> Self {
        Self::new(ErrorCode::Protected, message)
    }

    pub fn invalid_path(shown: &str, why: &str) -> Self {
        let shown: String = shown.chars().take(200).collect();
        Self::new(ErrorCode::InvalidPath, format!("invalid path '{}': {why}", shown.replace('\0', "\\0")))
    }

    /// Classifies an I/O error on `shown`. cap-std reports escapes as PermissionDenied.
    pub fn from_io(shown: &str, e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::PermissionDenied => Self::outside(shown),
            io::ErrorKind::NotFound => Self::new(ErrorCode::NotFound, format!("'{shown}' does not exist")),
            io::ErrorKind::IsADirectory => {
                Self::new(ErrorCode::IsDirectory, format!("'{shown}' is a directory"))
            }
            io::ErrorKind::NotADirectory => {
                Self::new(ErrorCode::NotFound, format!("'{shown}': a parent of this path is not a directory"))
            }
            io::ErrorKind::InvalidFilename => {
                Self::invalid_path(shown, "the name is too long or not allowed")
            }
            _ => Self::new(ErrorCode::Io, format!("'{shown}': {e}")),
        }
    }
}

/// Session-wide policy for the workspace interface.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Refuse changes to existing files the session has not read.
    pub read_guard: bool,
    /// Trash retention.
    pub trash: trash::Retention,
    /// How much the undo checkpoints keep.
    pub undo: undo::Bounds,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { read_guard: true, trash: trash::Retention::default(), undo: undo::Bounds::default() }
    }
}
