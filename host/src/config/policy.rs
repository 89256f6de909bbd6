//! The policy file (`--policy FILE`) for locked-down runs: it pins the plugins allowed to load
//! by sha256 and fixes the grants, network mode and commands; settings may narrow, never widen.
//!
//! ```toml
//! network = "llm-only"            # off | llm-only | on
//! commands = "allowlist"          # off | allowlist | ask
//! allowed_commands = ["git", "cargo"]
//! yolo = false
//!
//! [plugins.read_file]
//! sha256 = "9f2c..."
//! grants = []
//!
//! [plugins.write_file]
//! sha256 = "41ab..."
//! grants = ["workspace-write"]
//!
//! [skills.code-review]            # as `corral skills --json` shows it
//! sha256 = "77d0..."
//!
//! [mcp_servers.docs]              # as `corral mcp get docs` shows it
//! command_sha256 = "5e1c..."      # a stdio server: its command and arguments
//! # url = "https://mcp.example.com/mcp"   # an HTTP server: its URL
//!
//! [bounds]                        # everything else that could widen a run (see bounds.rs)
//! base_url = "https://api.openai.com/v1"
//! add_dirs_ro = ["/ci/cache"]
//! command_env = ["CARGO_HOME"]
//! timeout_secs = 60
//! ```

use super::keys::{CAPABILITIES, COMMAND_MODES, NETWORK_MODES};
use super::{ConfigError, Provenance, Settings};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pinned {
    /// The hex sha256 of the component file (as `corral plugins` shows it).
    pub sha256: String,
    /// Everything the plugin may be granted.
    #[serde(default)]
    pub grants: Vec<String>,
}

/// One pinned skill: the SHA-256 of its component file, or of its folder's listing.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedSkill {
    pub sha256: String,
}

/// One pinned MCP server: the digest of its command and arguments (stdio), or its URL (HTTP).
/// A server of a policy run that is not pinned, or not as pinned, does not start.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedServer {
    pub command_sha256: Option<String>,
    pub url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    network: Option<String>,
    commands: Option<String>,
    #[serde(default)]
    allowed_commands: Vec<String>,
    #[serde(default)]
    yolo: bool,
    #[serde(default)]
    plugins: BTreeMap<String, Pinned>,
    #[serde(default)]
    skills: BTreeMap<String, PinnedSkill>,
    #[serde(default)]
    mcp_servers: BTreeMap<String, PinnedServer>,
    #[serde(default)]
    bounds: super::bounds::Bounds,
}

/// A loaded, checked policy file.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub path: PathBuf,
    /// The sha256 of the file itself, for the audit log.
    pub sha256: String,
    /// The widest network mode (default `llm-only`).
    pub network: String,
    /// The widest command mode (default `off`).
    pub commands: String,
    pub allowed_commands: Vec<String>,
    pub yolo: bool,
    /// Plugin name -> pin.
    pub plugins: BTreeMap<String, Pinned>,
    /// Skill name -> pin. Skills not named here are not loaded.
    pub skills: BTreeMap<String, PinnedSkill>,
    /// MCP server name -> pin. Servers not named here do not start.
    pub mcp_servers: BTreeMap<String, PinnedServer>,
    /// Bounds on the other settings that could widen a run.
    pub bounds: super::bounds::Bounds,
}

fn rank(order: &[&str], v: &str) -> usize {
    order.iter().position(|o| *o == v).unwrap_or(usize::MAX)
}

fn hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Policy {
    /// Reads and checks the policy file at `path`.
    pub fn load(path: &Path) -> Result<Policy, ConfigError> {
        let bad = |why: String| ConfigError::Policy { path: path.to_path_buf(), why };
        let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        let text = String::from_utf8(bytes.clone()).map_err(|_| bad("it is not UTF-8 text".into()))?;
        let raw: Raw = toml::from_str(&text).map_err(|e| bad(e.to_string().trim().to_string()))?;
        Policy::from_raw(raw, path, hex(&bytes)).map_err(bad)
    }

    fn from_raw(raw: Raw, path: &Path, sha256: String) -> Result<Policy, String> {
        let network = raw.network.unwrap_or_else(|| "llm-only".into());
        if !NETWORK_MODES.contains(&network.as_str()) {
            return Err(format!("network = {network:?}: expected one of {}", NETWORK_MODES.join(", ")));
        }
        let commands = raw.commands.unwrap_or_else(|| "off".into());
        if !COMMAND_MODES.contains(&commands.as_str()) {
            return Err(format!("commands = {commands:?}: expected one of {}", COMMAND_MODES.join(", ")));
        }
        if raw.yolo && commands == "off" {
            return Err("yolo = true needs commands = \"allowlist\" or \"ask\"".into());
        }
        let valid =
            |sha: &str| sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        for (name, pin) in &raw.skills {
            if !valid(&pin.sha256) {
                return Err(format!(
                    "skills.{name}.sha256 = {:?}: expected 64 lowercase hex digits (see `corral skills --json`)",
                    pin.sha256
                ));
            }
        }
        for (name, pin) in &raw.plugins {
            if !valid(&pin.sha256) {
                return Err(format!(
                    "plugins.{name}.sha256 = {:?}: expected 64 lowercase hex digits (see `corral plugins`)",
                    pin.sha256
                ));
            }
            if let Some(c) = pin.grants.iter().find(|c| !CAPABILITIES.contains(&c.as_str())) {
                return Err(format!(
                    "plugins.{name}.grants: unknown capability {c:?}; capabilities: {}",
                    CAPABILITIES.join(", ")
                ));
            }
        }
        for (name, pin) in &raw.mcp_servers {
            let ok = match (&pin.command_sha256, &pin.url) {
                (Some(sha), None) => valid(sha),
                (None, Some(url)) => !url.trim().is_empty(),
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "mcp_servers.{name}: give exactly one of command_sha256 (64 lowercase hex digits) or url, as \
                     `corral mcp get {name}` shows them"
                ));
            }
        }
        Ok(Policy {
            path: path.to_path_buf(),
            sha256,
            network,
            commands,
            allowed_commands: raw.allowed_commands,
            yolo: raw.yolo,
            plugins: raw.plugins,
            skills: raw.skills,
            mcp_servers: raw.mcp_servers,
            bounds: raw.bounds,
        })
    }

    /// Fixes `s` to the policy: a setting nothing set takes the policy's value; one that
    /// was set may be narrower, and is kept, but never wider (an error naming where it came
    /// from and the file).
    pub fn apply(&self, s: &mut Settings, prov: &Provenance) -> Result<(), ConfigError> {
        let is_default = |key: &str| prov.source(key).is_none_or(|src| src == "default");
        let wider = |key: &str, label: &str, shown: String, allowed: String| ConfigError::PolicyWider {
            path: self.path.clone(),
            what: format!(
                "{label} = {shown} (from {}); it allows {allowed}",
                prov.source(key).unwrap_or_default()
            ),
        };
        if is_default("network.mode") {
            s.network.mode = self.network.clone();
        } else if rank(NETWORK_MODES, &s.network.mode) > rank(NETWORK_MODES, &self.network) {
            let (shown, allowed) = (format!("{:?}", s.network.mode), format!("network = {:?}", self.network));
            return Err(wider("network.mode", "network.mode", shown, allowed));
        }
        if is_default("commands.mode") {
            s.commands.mode = self.commands.clone();
        }
        if is_default("commands.allowed") {
            s.commands.allowed = self.allowed_commands.clone();
        } else if let Some(extra) = s.commands.allowed.iter().find(|c| !self.allowed_commands.contains(c)) {
            let shown = format!("{:?}", s.commands.allowed);
            let allowed = format!("allowed_commands = {:?}; {extra:?} is not in it", self.allowed_commands);
            return Err(wider("commands.allowed", "commands.allowed", shown, allowed));
        }
        if is_default("commands.yolo") {
            s.commands.yolo = self.yolo;
        } else if s.commands.yolo && !self.yolo {
            return Err(wider("commands.yolo", "commands.yolo", "true".into(), "yolo = false".into()));
        }
        if s.commands.enabled() && rank(COMMAND_MODES, &s.commands.mode) > rank(COMMAND_MODES, &self.commands)
        {
            let (shown, allowed) =
                (format!("{:?}", s.commands.mode), format!("commands = {:?}", self.commands));
            return Err(wider("commands.mode", "commands.mode", shown, allowed));
        }
        for (plugin, caps) in &s.grants {
            let allowed = self.plugins.get(plugin).map(|p| p.grants.as_slice()).unwrap_or_default();
            if let Some(extra) = caps.iter().find(|c| !allowed.contains(c)) {
                let why = if self.plugins.contains_key(plugin) {
                    format!("plugins.{plugin}.grants = {allowed:?}; {extra:?} is not in it")
                } else {
                    format!("{plugin} is not in its [plugins]")
                };
                let label = format!("plugins.grants.{plugin}");
                return Err(wider("plugins.grants", &label, format!("{caps:?}"), why));
            }
        }
        for (plugin, pin) in &self.plugins {
            s.grants.entry(plugin.clone()).or_insert_with(|| pin.grants.clone());
        }
        self.bounds.apply(s, prov).map_err(|(key, what)| {
            let from = prov.source(key).unwrap_or_default();
            let what = if what.starts_with(key) { what } else { format!("{key}: {what}") };
            ConfigError::PolicyWider { path: self.path.clone(), what: format!("{what} (from {from})") }
        })
    }

    /// Plugin name -> pinned sha256.
    pub fn pins(&self) -> BTreeMap<String, String> {
        self.plugins.iter().map(|(n, p)| (n.clone(), p.sha256.clone())).collect()
    }
}
