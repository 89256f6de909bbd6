//! The version of the WIT contract this corral implements, in one place: the host's import
//! checks and messages, `build.rs` (which embeds `wit/<major>.<minor>/`) and the tests read it.

/// A WIT package version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

/// The contract's package name, without its version.
pub const PACKAGE: &str = "corral:plugin";

/// The contract version this corral implements, and the one `corral plugin wit` writes.
pub const VERSION: Version = Version { major: 0, minor: 1, patch: 0 };

/// Every contract version whose plugins this corral loads, newest first. When 0.2 is added,
/// 0.1 stays here while the host still adapts it (docs/wit-versions.md).
pub const SUPPORTED: &[Version] = &[VERSION];

impl Version {
    /// The folder under `wit/` that holds this version's frozen WIT (`0.1`): one folder per
    /// `major.minor`, since a plugin built for 0.1.x links against any 0.1 host.
    pub fn folder(self) -> String {
        format!("{}.{}", self.major, self.minor)
    }

    /// Whether a plugin built against `self` links against a host that implements `host`:
    /// the same `major.minor` before 1.0, the same major after, as wasmtime's linker matches
    /// semver-compatible names.
    pub fn compatible_with(self, host: Version) -> bool {
        self.major == host.major && (self.major > 0 || self.minor == host.minor)
    }

    /// Parses `major.minor.patch`, ignoring a pre-release or build suffix (`0.1.0-rc1`).
    pub fn parse(text: &str) -> Option<Version> {
        let core = text.split(['-', '+']).next().unwrap_or(text);
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let (Some(Some(major)), Some(Some(minor)), Some(Some(patch)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        Some(Version { major, minor, patch })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}
