//! Capabilities: which host function needs which one, sets of them, and the session's table
//! of what each loaded plugin was granted, which every host function checks before acting.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::RwLock;

/// Something a plugin may do beyond reading the roots (mirrors the WIT `capability` enum);
/// its names are shared with the guest SDK through the contract crate.
pub use corral_contract::Capability;

/// The bit of `c` in a [`CapSet`].
fn bit(c: Capability) -> u8 {
    1 << (c as u8)
}

/// The capability a call to `function` of the host interface `interface` (`workspace`,
/// `kv`, ...; the part between `corral:plugin/` and `@`) needs; `None` when every plugin
/// may call it (logging, settings, scratch files and the roots).
pub fn needed_by(interface: &str, function: &str) -> Option<Capability> {
    match (interface, function) {
        // Marking a file as read lets a writer pass the read guard: it is part of writing.
        ("workspace", "write" | "move" | "trash" | "note-read") => Some(Capability::WorkspaceWrite),
        ("kv", _) => Some(Capability::Kv),
        ("context", _) => Some(Capability::Context),
        ("http", _) => Some(Capability::Http),
        ("process", _) => Some(Capability::Process),
        _ => None,
    }
}

/// A set of capabilities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CapSet(u8);

impl CapSet {
    pub const EMPTY: CapSet = CapSet(0);

    /// Every capability.
    pub fn all() -> CapSet {
        Capability::ALL.into_iter().collect()
    }

    pub fn insert(&mut self, c: Capability) {
        self.0 |= bit(c);
    }

    pub fn contains(self, c: Capability) -> bool {
        self.0 & bit(c) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in the order of [`Capability::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |c| self.contains(*c))
    }

    /// Members of `self` that `other` lacks.
    pub fn minus(self, other: CapSet) -> CapSet {
        CapSet(self.0 & !other.0)
    }

    pub fn union(self, other: CapSet) -> CapSet {
        CapSet(self.0 | other.0)
    }

    /// The names, in order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Capability::as_str).collect()
    }

    /// Parses capability names; unknown ones are returned as the error.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<CapSet, String> {
        let mut set = CapSet::EMPTY;
        for n in names {
            set.insert(Capability::parse(n.as_ref()).ok_or_else(|| n.as_ref().to_string())?);
        }
        Ok(set)
    }
}

impl FromIterator<Capability> for CapSet {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        let mut set = CapSet::EMPTY;
        for c in iter {
            set.insert(c);
        }
        set
    }
}

impl fmt::Display for CapSet {
    /// `http, kv`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() { f.write_str("none") } else { f.write_str(&self.names().join(", ")) }
    }
}

/// What each loaded plugin was granted, by plugin name. Written once per plugin by the
/// registry; read by every host function.
#[derive(Debug, Default)]
pub struct Granted(RwLock<HashMap<String, CapSet>>, RwLock<HashSet<String>>);

impl Granted {
    pub fn set(&self, plugin: &str, caps: CapSet) {
        if let Ok(mut m) = self.0.write() {
            m.insert(plugin.to_string(), caps);
        }
    }

    /// What `plugin` was granted (nothing when it is unknown).
    pub fn get(&self, plugin: &str) -> CapSet {
        self.0.read().ok().and_then(|m| m.get(plugin).copied()).unwrap_or_default()
    }

    /// Records that `plugin` is one of corral's built-ins (known by its sha256), whose readers
    /// may mark files as read without workspace-write: they mark only what they read.
    pub fn set_builtin(&self, plugin: &str) {
        if let Ok(mut s) = self.1.write() {
            s.insert(plugin.to_string());
        }
    }

    /// `Err` with a message when `plugin` may not mark files as read (note-read): only a
    /// plugin granted workspace-write, or a built-in, may.
    pub fn check_note_read(&self, plugin: &str) -> Result<(), String> {
        if self.1.read().is_ok_and(|s| s.contains(plugin)) {
            return Ok(());
        }
        self.check(plugin, Capability::WorkspaceWrite)
    }

    /// `Err` with a message for the model when `plugin` lacks `cap`.
    pub fn check(&self, plugin: &str, cap: Capability) -> Result<(), String> {
        if self.get(plugin).contains(cap) {
            return Ok(());
        }
        Err(format!(
            "plugin '{plugin}' was not granted the '{cap}' capability, so the host refused this call; \
             the user can grant it with --grant {plugin}={cap} or [plugins.grants] in corral.toml"
        ))
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    #[test]
    fn functions_map_to_capabilities() {
        assert_eq!(needed_by("workspace", "write"), Some(Capability::WorkspaceWrite));
        assert_eq!(needed_by("workspace", "move"), Some(Capability::WorkspaceWrite));
        assert_eq!(needed_by("workspace", "trash"), Some(Capability::WorkspaceWrite));
        assert_eq!(needed_by("workspace", "roots"), None);
        assert_eq!(needed_by("workspace", "note-read"), Some(Capability::WorkspaceWrite));
        assert_eq!(needed_by("kv", "get"), Some(Capability::Kv));
        assert_eq!(needed_by("context", "ask"), Some(Capability::Context));
        assert_eq!(needed_by("http", "fetch"), Some(Capability::Http));
        assert_eq!(needed_by("process", "run-shell"), Some(Capability::Process));
        assert_eq!(needed_by("log", "log"), None);
        assert_eq!(needed_by("host-info", "save-output"), None);
    }

    #[test]
    fn sets_parse_print_and_subtract() {
        let s = CapSet::parse(&["kv", "http"]).unwrap();
        assert!(
            s.contains(Capability::Kv) && s.contains(Capability::Http) && !s.contains(Capability::Process)
        );
        assert_eq!(s.to_string(), "kv, http");
        assert_eq!(CapSet::EMPTY.to_string(), "none");
        assert_eq!(CapSet::parse(&["kv", "htp"]).unwrap_err(), "htp");
        let k: CapSet = [Capability::Kv].into_iter().collect();
        assert_eq!(s.minus(k).names(), vec!["http"]);
        assert_eq!(k.union(s), s);
    }

    #[test]
    fn the_table_refuses_what_was_not_granted() {
        let g = Granted::default();
        assert!(g.check("p", Capability::Kv).is_err());
        assert!(g.check_note_read("p").is_err() && g.check_note_read("reader").is_err());
        g.set_builtin("reader");
        assert!(
            g.check_note_read("reader").is_ok() && g.check("reader", Capability::WorkspaceWrite).is_err()
        );
        g.set("p", CapSet::parse(&["kv"]).unwrap());
        assert!(g.check("p", Capability::Kv).is_ok());
        let e = g.check("p", Capability::Http).unwrap_err();
        assert!(
            e.contains("'p' was not granted the 'http' capability") && e.contains("--grant p=http"),
            "{e}"
        );
    }
}
