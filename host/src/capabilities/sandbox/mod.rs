//! The operating-system sandbox around every process corral starts (commands, skill scripts,
//! later MCP servers): what a [`SandboxSpec`] allows, prepared once per spawn in the parent.
//!
//! On Linux a [`Sandbox`] is a Landlock ruleset (files: read the roots, the system and toolchain
//! folders; write the writable roots and a scratch folder), a user + mount namespace that
//! remounts the protected paths inside the writable roots read-only, a network namespace and a
//! seccomp filter when the network is off, and no new privileges. [`Sandbox::apply_to`] hooks
//! it into a `Command`; the child only makes async-signal-safe system calls before exec.

#[cfg(target_os = "linux")]
mod linux;
pub mod paths;
#[cfg(target_os = "linux")]
mod seccomp;
mod support;
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests;

pub use support::{MIN_LANDLOCK_ABI, Support, probe};

/// The lowest Landlock ABI the sandbox relies on.
pub fn support_min_abi() -> i32 {
    MIN_LANDLOCK_ABI
}

use std::path::PathBuf;

/// What one process may reach.
#[derive(Debug, Clone, Default)]
pub struct SandboxSpec {
    /// Folders and files it may read and execute.
    pub read: Vec<PathBuf>,
    /// Folders and files it may change (they are readable too).
    pub write: Vec<PathBuf>,
    /// Paths inside `write` that stay read-only (existing `.git/`, `corral.toml`, `.corral/`).
    pub protected: Vec<PathBuf>,
    /// Paths never granted, even inside `read` (the person's secrets).
    pub hidden: Vec<PathBuf>,
    /// Whether it may use the network (TCP, UDP, any socket).
    pub network: bool,
}

/// Why a sandbox could not be prepared or applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the command sandbox is unavailable on this system ({0}); run `corral doctor` to see what it can \
         enforce here. To run commands unconfined anyway, the person can set commands.unsandboxed = true in \
         their config or pass --unsandboxed-commands"
    )]
    Unavailable(String),
    #[error("cannot prepare the command sandbox: {0}")]
    Prepare(String),
}

/// A prepared sandbox: everything the child needs, built in the parent.
#[derive(Debug)]
pub struct Sandbox {
    #[cfg(target_os = "linux")]
    inner: linux::Prepared,
}

impl Sandbox {
    /// Builds the sandbox for `spec` (opens the rule paths, builds the filter).
    pub fn prepare(spec: &SandboxSpec) -> Result<Sandbox, SandboxError> {
        #[cfg(target_os = "linux")]
        {
            Ok(Sandbox { inner: linux::Prepared::new(spec)? })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = spec;
            Err(SandboxError::Unavailable(
                "only Linux (Landlock) is supported so far; macOS Seatbelt is designed, not built".into(),
            ))
        }
    }

    /// Makes `cmd` enter the sandbox between fork and exec, in a new session (its own process
    /// group, no controlling terminal). The sandbox must outlive the spawn: keep it (or an
    /// `Arc` of it) until `spawn` returned.
    pub fn apply_to(self: &std::sync::Arc<Self>, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook only makes async-signal-safe system calls (see `hook`).
        unsafe {
            cmd.pre_exec(self.hook());
        }
    }

    /// The function to give to `pre_exec` (for `tokio::process::Command`, which has its own);
    /// it enters the sandbox with async-signal-safe system calls only and allocates nothing.
    pub fn hook(self: &std::sync::Arc<Self>) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        #[cfg(target_os = "linux")]
        {
            linux::hook(self.clone())
        }
        #[cfg(not(target_os = "linux"))]
        {
            || Err(std::io::Error::other("sandbox unavailable"))
        }
    }

    /// Whether the mount namespace keeps the protected paths read-only (else they are left out
    /// of the write rules, see docs/security.md).
    pub fn uses_namespaces(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.inner.namespaces
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }
}
