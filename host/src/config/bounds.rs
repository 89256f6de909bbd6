//! A policy file's `[bounds]`: under `--policy`, every setting that could widen what a run may
//! do and is not pinned elsewhere in the policy (roots, command environment, the model
//! endpoint, network extras, limits, the read guard, prompt additions, `.git` writes) is
//! either fixed here or refused at start.

use super::{Provenance, Settings};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a policy allows beyond its plugins, skills, network mode and commands. Anything
/// left out allows nothing beyond corral's defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// The only model endpoint (and provider) the run may use; unset: the person's flags,
    /// environment and user file decide (a project file never does).
    pub base_url: Option<String>,
    pub provider: Option<String>,
    /// Extra read-write roots the run may add.
    #[serde(default)]
    pub add_dirs: Vec<PathBuf>,
    /// Extra read-only roots the run may add (read-write ones may be added read-only too).
    #[serde(default)]
    pub add_dirs_ro: Vec<PathBuf>,
    /// Environment variables commands may be given besides the default set.
    #[serde(default)]
    pub command_env: Vec<String>,
    /// Hosts plugins may be limited to; when set, the run must name a subset (or gets these).
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Private addresses plugins may reach.
    #[serde(default)]
    pub allow_private: Vec<String>,
    /// Names the run may map to addresses, as `network.hosts` would.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// The largest tool-call timeout, memory and output cap.
    pub timeout_secs: Option<f64>,
    pub memory_mib: Option<u64>,
    pub max_output_kb: Option<u64>,
    /// Whether the run may turn the read guard off (default: no).
    #[serde(default)]
    pub read_guard_optional: bool,
    /// Whether the run may add text to the system prompt (default: no).
    #[serde(default)]
    pub system_prompt: bool,
    /// Whether tools may write `.git/` (default: no).
    #[serde(default)]
    pub allow_git_writes: bool,
    /// Whether commands may use the network (`commands.network`; default: no).
    #[serde(default)]
    pub command_network: bool,
    /// Folders commands may read or write beyond the roots (`commands.read_paths`,
    /// `commands.write_paths`).
    #[serde(default)]
    pub command_read_paths: Vec<PathBuf>,
    #[serde(default)]
    pub command_write_paths: Vec<PathBuf>,
    /// Accepts running commands unconfined where the kernel cannot sandbox them (default: no).
    #[serde(default)]
    pub unsandboxed_commands: bool,
}

/// A refusal: the key, and what was asked against what is allowed.
type Refused = (&'static str, String);

fn set_by_run(prov: &Provenance, key: &str) -> bool {
    prov.source(key).is_some_and(|src| src != "default")
}

fn subset<'a>(asked: &'a [String], allowed: &[String]) -> Option<&'a String> {
    asked.iter().find(|a| !allowed.contains(a))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    real(a) == real(b)
}

impl Bounds {
    /// Fixes `s` within these bounds, or names the first setting that goes past them.
    pub fn apply(&self, s: &mut Settings, prov: &Provenance) -> Result<(), Refused> {
        let m = &mut s.model;
        for (key, asked, fixed) in [
            ("model.base_url", &mut m.base_url, &self.base_url),
            ("model.provider", &mut m.provider, &self.provider),
        ] {
            let Some(fixed) = fixed else { continue };
            match asked {
                Some(a) if a != fixed && set_by_run(prov, key) => {
                    return Err((key, format!("{key} = {a:?}; it allows only {fixed:?}")));
                }
                _ => *asked = Some(fixed.clone()),
            }
        }
        for (path, writable) in &s.extra_roots {
            let rw = self.add_dirs.iter().any(|d| same_dir(d, path));
            let ro = self.add_dirs_ro.iter().any(|d| same_dir(d, path));
            if !(rw || (!writable && ro)) {
                let (key, kind) = if *writable {
                    ("workspace.add_dirs", "read-write")
                } else {
                    ("workspace.add_dirs_ro", "read-only")
                };
                return Err((
                    key,
                    format!("the {kind} root {}; it is not in [bounds] of the policy", path.display()),
                ));
            }
        }
        if let Some(extra) = subset(&s.commands.env, &self.command_env) {
            return Err((
                "commands.env",
                format!("commands.env {extra:?}; [bounds] command_env = {:?}", self.command_env),
            ));
        }
        let n = &mut s.network;
        if let Some(extra) = subset(&n.allow_private, &self.allow_private) {
            return Err((
                "network.allow_private",
                format!("network.allow_private {extra:?}; [bounds] allow_private = {:?}", self.allow_private),
            ));
        }
        if let Some(name) = n.hosts.keys().find(|h| !self.hosts.contains(h)) {
            return Err((
                "network.hosts",
                format!("network.hosts {name:?}; [bounds] hosts = {:?}", self.hosts),
            ));
        }
        if !self.allow_hosts.is_empty() {
            if n.allow_hosts.is_empty() {
                n.allow_hosts = self.allow_hosts.clone();
            } else if let Some(extra) = subset(&n.allow_hosts, &self.allow_hosts) {
                return Err((
                    "network.allow_hosts",
                    format!("network.allow_hosts {extra:?}; [bounds] allow_hosts = {:?}", self.allow_hosts),
                ));
            }
        }
        let l = &mut s.limits;
        if let Some(max) = self.timeout_secs {
            let max = Duration::from_secs_f64(max);
            if l.timeout > max {
                if set_by_run(prov, "limits.timeout_secs") {
                    return Err((
                        "limits.timeout_secs",
                        format!(
                            "limits.timeout_secs = {}; [bounds] timeout_secs = {}",
                            l.timeout.as_secs_f64(),
                            max.as_secs_f64()
                        ),
                    ));
                }
                l.timeout = max;
            }
        }
        for (key, max, value) in [
            ("limits.memory_mib", self.memory_mib, &mut l.memory_bytes),
            ("limits.max_output_kb", self.max_output_kb, &mut l.output_bytes),
        ] {
            let Some(max) = max else { continue };
            let shift = if key == "limits.memory_mib" { 20 } else { 10 };
            let max_bytes = (max as usize) << shift;
            if *value > max_bytes {
                if set_by_run(prov, key) {
                    return Err((key, format!("{key} = {}; [bounds] allows {max}", *value >> shift)));
                }
                *value = max_bytes;
            }
        }
        if !s.read_guard && !self.read_guard_optional {
            return Err((
                "workspace.read_guard",
                "workspace.read_guard = false; [bounds] read_guard_optional = false".into(),
            ));
        }
        if s.agent.system_prompt.is_some() && !self.system_prompt {
            return Err((
                "agent.system_prompt",
                "extra system-prompt text; [bounds] system_prompt = false".into(),
            ));
        }
        let c = &mut s.commands;
        if c.network && !self.command_network {
            return Err((
                "commands.network",
                "network for commands; [bounds] command_network = false".into(),
            ));
        }
        for (key, asked, allowed) in [
            ("commands.read_paths", &c.read_paths, &self.command_read_paths),
            ("commands.write_paths", &c.write_paths, &self.command_write_paths),
        ] {
            if let Some(p) = asked.iter().find(|p| !allowed.iter().any(|a| same_dir(a, p))) {
                return Err((key, format!("{key} {}; it is not in [bounds] of the policy", p.display())));
            }
        }
        if c.unsandboxed && !self.unsandboxed_commands && set_by_run(prov, "commands.unsandboxed") {
            return Err((
                "commands.unsandboxed",
                "running commands unconfined; [bounds] unsandboxed_commands = false".into(),
            ));
        }
        c.unsandboxed = c.unsandboxed || self.unsandboxed_commands;
        if s.allow_git_writes && !self.allow_git_writes {
            return Err((
                "workspace.allow_git_writes",
                "writes to .git/; [bounds] allow_git_writes = false".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Flags, Input, keys, load};

    fn run(flags: &[(&'static str, &'static str, &str)], bounds: &str) -> Result<Settings, String> {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("extra")).unwrap();
        let mut f = Flags::new(t.path());
        for (key, flag, v) in flags {
            let input = match keys::find(key).map(|d| d.kind) {
                Some(keys::Kind::Bool) => Input::Bool(*v == "true"),
                Some(keys::Kind::List | keys::Kind::Paths) => Input::Strs(vec![v.to_string()]),
                _ => Input::Text(v.to_string()),
            };
            f.set(key, flag, input);
        }
        let (mut s, p) = load(t.path(), None, &|_| None, &f, false).map_err(|e| e.to_string())?;
        let b: Bounds = toml::from_str(bounds).map_err(|e| e.to_string())?;
        b.apply(&mut s, &p).map_err(|(k, w)| format!("{k}: {w}"))?;
        Ok(s)
    }

    #[test]
    fn nothing_named_allows_nothing_beyond_the_defaults() {
        let e = run(&[("workspace.add_dirs_ro", "--add-dir-ro", "extra")], "").unwrap_err();
        assert!(e.starts_with("workspace.add_dirs_ro: the read-only root") && e.contains("[bounds]"), "{e}");
        let e = run(&[("commands.env", "--command-env", "AWS_SECRET_ACCESS_KEY")], "").unwrap_err();
        assert!(e.contains("AWS_SECRET_ACCESS_KEY"), "{e}");
        let e = run(&[("network.allow_private", "--x", "10.0.0.1")], "").unwrap_err();
        assert!(e.starts_with("network.allow_private"), "{e}");
        let e = run(&[("workspace.read_guard", "--no-read-guard", "false")], "").unwrap_err();
        assert!(e.starts_with("workspace.read_guard"), "{e}");
        let e = run(&[("agent.system_prompt", "--system-prompt", "obey the PR")], "").unwrap_err();
        assert!(e.starts_with("agent.system_prompt"), "{e}");
        let e = run(&[("commands.network", "--command-network", "true")], "").unwrap_err();
        assert!(e.starts_with("commands.network"), "{e}");
        let e = run(&[("commands.write_paths", "--command-write", "extra")], "").unwrap_err();
        assert!(e.starts_with("commands.write_paths"), "{e}");
        let e = run(&[("commands.unsandboxed", "--unsandboxed-commands", "true")], "").unwrap_err();
        assert!(e.starts_with("commands.unsandboxed"), "{e}");
        assert!(
            run(&[], "unsandboxed_commands = true\n").unwrap().commands.unsandboxed,
            "the policy may accept it"
        );
        let e = run(&[("workspace.allow_git_writes", "--allow-git-writes", "true")], "").unwrap_err();
        assert!(e.starts_with("workspace.allow_git_writes"), "{e}");
        assert!(run(&[], "").is_ok());
    }

    #[test]
    fn named_bounds_fix_or_allow() {
        let s = run(&[("workspace.add_dirs_ro", "--add-dir-ro", "extra")], "add_dirs = [\"extra\"]\n");
        assert!(s.is_err(), "relative bounds are compared as written: {s:?}");
        let s = run(&[], "base_url = \"http://127.0.0.1:1/v1\"\ntimeout_secs = 5\nmemory_mib = 64\nallow_hosts = [\"docs.rs\"]\n").unwrap();
        assert_eq!(s.model.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(s.limits.timeout, Duration::from_secs(5));
        assert_eq!(s.limits.memory_bytes, 64 << 20);
        assert_eq!(s.network.allow_hosts, ["docs.rs"]);
        let e = run(
            &[("model.base_url", "--base-url", "http://evil.test")],
            "base_url = \"http://127.0.0.1:1/v1\"\n",
        )
        .unwrap_err();
        assert!(e.contains("it allows only \"http://127.0.0.1:1/v1\""), "{e}");
        let e = run(&[("limits.timeout_secs", "--timeout", "600")], "timeout_secs = 60\n").unwrap_err();
        assert!(e.contains("limits.timeout_secs = 600; [bounds] timeout_secs = 60"), "{e}");
        assert!(run(&[("limits.timeout_secs", "--timeout", "10")], "timeout_secs = 60\n").is_ok());
        assert!(toml::from_str::<Bounds>("bogus = 1").is_err(), "unknown keys are refused");
    }
}
