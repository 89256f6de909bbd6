//! Putting one command in the operating-system sandbox: what it may read and write (roots,
//! toolchains, the person's additions, a scratch folder), and what happens when this system
//! cannot confine it (a warning once, or a refusal in CI and under a policy).

use super::tempdir::Scratch;
use super::{Code, ProcError, View};
use crate::capabilities::sandbox::{Sandbox, SandboxError, SandboxSpec, paths};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Environment variable names never passed to commands: they hold model credentials.
pub const SECRET_ENV: &[&str] = &[
    "CORRAL_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
];

/// Whether `name` may not be passed to commands (a model credential).
pub fn is_secret_env(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_ENV.contains(&upper.as_str()) || upper.ends_with("_API_KEY") || upper == "API_KEY"
}

/// How commands are confined, fixed at start-up.
#[derive(Debug, Default)]
pub struct Confinement {
    /// Commands may use the network (`commands.network`).
    pub network: bool,
    /// Read paths besides the roots: system, toolchains, the person's `commands.read_paths`.
    pub read: Vec<PathBuf>,
    /// The person's `commands.write_paths`.
    pub write: Vec<PathBuf>,
    /// Never granted: the person's secrets and corral's own folders.
    pub hidden: Vec<PathBuf>,
    /// The person accepts running commands unconfined where the sandbox is unavailable.
    pub unsandboxed: bool,
    /// Refuse to run unconfined unless accepted (CI and policy runs).
    pub required: bool,
    /// The "unavailable" warning was given.
    warned: AtomicBool,
}

impl Confinement {
    pub fn new(s: &crate::config::CommandSettings, env: &dyn Fn(&str) -> Option<OsString>) -> Confinement {
        let home = env("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
        let mut read = paths::default_read(home.as_deref(), env);
        read.extend(s.read_paths.iter().cloned());
        Confinement {
            network: s.network,
            read,
            write: s.write_paths.clone(),
            hidden: paths::secrets(home.as_deref(), &[]),
            unsandboxed: s.unsandboxed,
            required: false,
            warned: AtomicBool::new(false),
        }
    }
}

/// The sandbox spec of `program` run in `session` with scratch folder `scratch`.
pub fn spec(session: &View<'_>, program: &Path, scratch: &Path) -> Result<SandboxSpec, ProcError> {
    let c = &session.commands.confine;
    let roots = session.roots.all();
    let mut spec = SandboxSpec {
        read: roots.iter().map(|r| r.path.clone()).chain(c.read.iter().cloned()).collect(),
        write: roots.iter().filter(|r| r.writable).map(|r| r.path.clone()).collect(),
        protected: Vec::new(),
        hidden: c.hidden.clone(),
        network: c.network,
    };
    spec.write.extend(c.write.iter().cloned());
    // The program itself (an allow-listed script may live outside every read folder).
    spec.read.push(program.to_path_buf());
    for root in roots.iter().filter(|r| r.writable) {
        let found = paths::protected_in(&root.path, session.roots.protects_git())
            .map_err(|e| ProcError::new(Code::Io, e))?;
        spec.protected.extend(found);
    }
    spec.write.push(scratch.to_path_buf());
    Ok(spec)
}

/// The sandbox for one command and its scratch folder; `None` for the sandbox when it is
/// unavailable and running unconfined is allowed (warned about once).
pub fn prepare(session: &View<'_>, program: &Path) -> Result<(Option<Arc<Sandbox>>, Scratch), ProcError> {
    let scratch = Scratch::create()
        .map_err(|e| ProcError::new(Code::Io, format!("cannot make the command's temp folder: {e}")))?;
    let c = &session.commands.confine;
    let spec = spec(session, program, scratch.path())?;
    match Sandbox::prepare(&spec) {
        Ok(s) => Ok((Some(Arc::new(s)), scratch)),
        Err(SandboxError::Unavailable(why)) => {
            if c.required && !c.unsandboxed {
                return Err(ProcError::new(
                    Code::Denied,
                    format!(
                        "refused by the command sandbox rule: this run is locked down (CI or a policy file) and the \
                         sandbox is unavailable here ({why}), so commands would run with the person's full rights. \
                         The person can accept that with commands.unsandboxed = true in their config or the policy, or \
                         --unsandboxed-commands; `corral doctor` shows what this system supports"
                    ),
                ));
            }
            if !c.warned.swap(true, Ordering::Relaxed) {
                let accepted = if c.unsandboxed { " (accepted by commands.unsandboxed)" } else { "" };
                session.log.push(
                    "host",
                    "warn",
                    &format!(
                        "commands run WITHOUT the operating-system sandbox{accepted}: {why}. See `corral doctor`."
                    ),
                );
            }
            Ok((None, scratch))
        }
        Err(e @ SandboxError::Prepare(_)) => Err(ProcError::new(Code::Io, e.to_string())),
    }
}
