//! The settings a job was created under that decide what it may reach (network, commands,
//! grants, roots, the read guard), saved with the job; a run gets the meet of these and the
//! person's current ones, so a job never runs wider than when it was made, nor wider than now.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a run may reach. Every field orders from narrow to wide.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ceiling {
    /// `off` < `llm-only` < `on`.
    pub network: String,
    /// `off` < `allowlist` < `ask`.
    pub commands_mode: String,
    pub allowed_commands: Vec<String>,
    pub yolo: bool,
    pub command_network: bool,
    pub command_env: Vec<String>,
    pub command_read: Vec<PathBuf>,
    pub command_write: Vec<PathBuf>,
    pub unsandboxed: bool,
    /// Plugin -> the capabilities granted beyond its defaults.
    pub grants: BTreeMap<String, Vec<String>>,
    /// Extra roots: (path, writable).
    pub extra_roots: Vec<(PathBuf, bool)>,
    pub allow_git_writes: bool,
    /// Whether the read guard may be off (a wider setting than on).
    pub no_read_guard: bool,
}

const NETWORK: &[&str] = &["off", "llm-only", "on"];
const COMMANDS: &[&str] = &["off", "allowlist", "ask"];

/// The narrower of two levels; an unknown level counts as the narrowest.
fn lower<'a>(order: &[&'a str], a: &str, b: &str) -> &'a str {
    let rank = |x: &str| order.iter().position(|o| *o == x).unwrap_or(0);
    order[rank(a).min(rank(b))]
}

fn both<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter().filter(|x| b.contains(x)).cloned().collect()
}

impl Ceiling {
    /// What both allow.
    pub fn meet(&self, other: &Ceiling) -> Ceiling {
        let grants = self
            .grants
            .iter()
            .filter_map(|(plugin, caps)| {
                other.grants.get(plugin).map(|theirs| (plugin.clone(), both(caps, theirs)))
            })
            .collect();
        let extra_roots = self
            .extra_roots
            .iter()
            .filter_map(|(path, rw)| {
                other.extra_roots.iter().find(|(p, _)| p == path).map(|(_, rw2)| (path.clone(), *rw && *rw2))
            })
            .collect();
        Ceiling {
            network: lower(NETWORK, &self.network, &other.network).to_string(),
            commands_mode: lower(COMMANDS, &self.commands_mode, &other.commands_mode).to_string(),
            allowed_commands: both(&self.allowed_commands, &other.allowed_commands),
            yolo: self.yolo && other.yolo,
            command_network: self.command_network && other.command_network,
            command_env: both(&self.command_env, &other.command_env),
            command_read: both(&self.command_read, &other.command_read),
            command_write: both(&self.command_write, &other.command_write),
            unsandboxed: self.unsandboxed && other.unsandboxed,
            grants,
            extra_roots,
            allow_git_writes: self.allow_git_writes && other.allow_git_writes,
            no_read_guard: self.no_read_guard && other.no_read_guard,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meet_is_never_wider_than_either_side() {
        let saved = Ceiling {
            network: "on".into(),
            commands_mode: "allowlist".into(),
            allowed_commands: vec!["git".into(), "cargo".into()],
            yolo: false,
            command_network: true,
            grants: [("fetcher".to_string(), vec!["http".to_string(), "kv".to_string()])].into(),
            extra_roots: vec![("/data".into(), true)],
            no_read_guard: true,
            ..Ceiling::default()
        };
        let now = Ceiling {
            network: "llm-only".into(),
            commands_mode: "ask".into(),
            allowed_commands: vec!["git".into(), "make".into()],
            yolo: true,
            command_network: false,
            grants: [
                ("fetcher".to_string(), vec!["http".to_string()]),
                ("other".to_string(), vec!["process".to_string()]),
            ]
            .into(),
            extra_roots: vec![("/data".into(), false), ("/more".into(), true)],
            no_read_guard: true,
            ..Ceiling::default()
        };
        let m = saved.meet(&now);
        assert_eq!(m.network, "llm-only");
        assert_eq!(m.commands_mode, "allowlist");
        assert_eq!(m.allowed_commands, vec!["git".to_string()]);
        assert!(!m.yolo && !m.command_network && m.no_read_guard);
        assert_eq!(m.grants, [("fetcher".to_string(), vec!["http".to_string()])].into());
        assert_eq!(m.extra_roots, vec![(PathBuf::from("/data"), false)]);
        assert_eq!(m, now.meet(&saved), "the meet does not depend on the order");
        // An unknown level (a newer corral's) counts as the narrowest.
        let odd = Ceiling { network: "lan".into(), commands_mode: "maybe".into(), ..saved.clone() };
        assert_eq!(odd.meet(&saved).network, "off");
        assert_eq!(odd.meet(&saved).commands_mode, "off");
    }
}
