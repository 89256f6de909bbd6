//! What may run, fixed at start-up from `[commands]`: the mode, every allowed program
//! resolved to the path to execute, the environment commands get, and saved approvals.

use super::{DEFAULT_ENV, Mode, approve, confine, resolve};
use crate::config::CommandSettings;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// What plugins granted `process` may run, fixed at start-up.
#[derive(Debug, Default)]
pub struct CommandPolicy {
    pub mode: Mode,
    /// Allowed program name -> the path executed for it.
    pub allowed: BTreeMap<String, PathBuf>,
    /// Shell strings allowed, and programs beyond the allowlist without asking.
    pub yolo: bool,
    /// The environment every command gets.
    pub env: Vec<(OsString, OsString)>,
    /// corral's PATH, for programs resolved at call time (`ask`, `yolo`).
    pub path: Option<OsString>,
    /// Buckets approved with "always".
    pub approvals: approve::Approvals,
    /// The operating-system sandbox commands run in.
    pub confine: confine::Confinement,
}

impl CommandPolicy {
    /// Builds the policy from the settings: every allowed name is resolved on `PATH` now,
    /// and one that is missing or lives inside a root is a start-up error that says why.
    pub fn from_settings(
        s: &CommandSettings,
        roots: &[PathBuf],
        local: &crate::capabilities::local::Local,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<CommandPolicy, String> {
        let mode = match (s.enabled(), s.mode.as_str()) {
            (false, _) => return Ok(CommandPolicy::default()),
            (true, "ask") => Mode::Ask,
            _ => Mode::Allowlist,
        };
        let path = env("PATH");
        let mut allowed = BTreeMap::new();
        for name in &s.allowed {
            let found = resolve::program(name, path.as_deref(), roots).map_err(|why| match why {
                resolve::Unusable::Missing(_) => format!(
                    "allowed command '{name}' was not found on PATH; install it, or remove it from \
                     commands.allowed (--allowed-commands)"
                ),
                resolve::Unusable::Relative => format!(
                    "allowed command '{name}' is a relative path; give a program name found on PATH or an \
                     absolute path"
                ),
                resolve::Unusable::InsideRoot { shown, root } => format!(
                    "allowed command '{name}' resolves to {}, inside {}: tools can change files there, so the \
                     model could rewrite the program and then run it. Install it outside the workspace, or \
                     remove it from commands.allowed (--allowed-commands)",
                    shown.display(),
                    root.display()
                ),
            })?;
            allowed.insert(name.clone(), found);
        }
        let mut names: Vec<&str> = DEFAULT_ENV.to_vec();
        for n in &s.env {
            if n.is_empty() || n.contains('=') || n.contains('\0') {
                return Err(format!("commands.env: '{n}' is not an environment variable name"));
            }
            if confine::is_secret_env(n) {
                return Err(format!(
                    "commands.env: '{n}' holds a model credential, and commands never get one (a command could send \
                     it anywhere its output goes); remove it from commands.env (--command-env)"
                ));
            }
            names.push(n);
        }
        names.sort_unstable();
        names.dedup();
        let confine = confine::Confinement::new(s, env);
        let env = names.into_iter().filter_map(|n| env(n).map(|v| (OsString::from(n), v))).collect();
        let approvals =
            if mode == Mode::Ask { approve::Approvals::load(local) } else { approve::Approvals::default() };
        Ok(CommandPolicy { mode, allowed, yolo: s.yolo, env, path, approvals, confine })
    }

    /// The allow-listed program `program` names (its name or its resolved path).
    pub(super) fn listed(&self, program: &str) -> Option<&PathBuf> {
        self.allowed
            .get(program)
            .or_else(|| self.allowed.values().find(|p| p.as_os_str() == OsStr::new(program)))
    }

    pub(super) fn allowed_names(&self) -> String {
        if self.allowed.is_empty() {
            "none".into()
        } else {
            self.allowed.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    }
}
