//! The capabilities a plugin may be granted beyond reading the roots, with the names used in
//! settings, specs and messages (they mirror the WIT `capability` enum).

use std::fmt;

/// Something a plugin may do beyond reading the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    WorkspaceWrite,
    Kv,
    Http,
    Process,
    Context,
}

impl Capability {
    pub const ALL: [Capability; 5] = [
        Capability::WorkspaceWrite,
        Capability::Kv,
        Capability::Http,
        Capability::Process,
        Capability::Context,
    ];

    /// The name used in settings, specs and messages (`workspace-write`, `http`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::WorkspaceWrite => "workspace-write",
            Capability::Kv => "kv",
            Capability::Http => "http",
            Capability::Process => "process",
            Capability::Context => "context",
        }
    }

    pub fn parse(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for c in Capability::ALL {
            assert_eq!(Capability::parse(c.as_str()), Some(c));
        }
        assert_eq!(Capability::WorkspaceWrite.to_string(), "workspace-write");
        assert_eq!(Capability::parse("network"), None);
    }
}
