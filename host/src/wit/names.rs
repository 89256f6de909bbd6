//! Names of the contract's interfaces as components spell them (`corral:plugin/http@0.1.0`):
//! made from [`VERSION`], read back with their version, and checked against what corral knows.

use super::version::{PACKAGE, SUPPORTED, VERSION, Version};

/// `corral:plugin/<name>@<VERSION>`: the interface `name` of the contract this corral implements.
pub fn interface(name: &str) -> String {
    format!("{PACKAGE}/{name}@{VERSION}")
}

/// The `corral:plugin/{a,b,...}@0.1` pattern messages show for a list of interfaces.
pub fn pattern(names: &[&str]) -> String {
    format!("{PACKAGE}/{{{}}}@{}", names.join(","), VERSION.folder())
}

/// A `corral:plugin` interface name taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginName<'a> {
    /// The interface (`http`, `tool`, ...).
    pub interface: &'a str,
    /// The package version the component was built against; `None` when it is missing or
    /// not a version.
    pub version: Option<Version>,
}

impl PluginName<'_> {
    /// Whether this corral implements the version the name was built against.
    pub fn known(&self) -> bool {
        self.version.is_some_and(|v| SUPPORTED.iter().any(|s| v.compatible_with(*s)))
    }
}

/// `name` as a `corral:plugin` interface name; `None` when it is another package's.
pub fn parse(name: &str) -> Option<PluginName<'_>> {
    let rest = name.strip_prefix(PACKAGE)?.strip_prefix('/')?;
    let (interface, version) = match rest.split_once('@') {
        Some((i, v)) => (i, Version::parse(v)),
        None => (rest, None),
    };
    Some(PluginName { interface, version })
}

/// A component built against a version of the contract this corral does not implement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownVersion {
    /// The import or export that named it.
    pub name: String,
    pub found: Option<Version>,
}

impl std::fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let found = self.found.map_or_else(|| "no version of it".to_string(), |v| format!("{PACKAGE}@{v}"));
        let known: Vec<String> = SUPPORTED.iter().map(|v| v.folder()).collect();
        write!(
            f,
            "was built for {found} (it uses {}); this corral knows {PACKAGE} {}. Rebuild it against \
             the WIT that `corral plugin wit` of this corral writes, or upgrade corral",
            self.name,
            known.join(", ")
        )
    }
}

/// The first of `names` (a component's imports and exports) that is a `corral:plugin` name of
/// a version this corral does not implement.
pub fn unknown_version<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<UnknownVersion> {
    names.into_iter().find_map(|name| {
        let parsed = parse(name)?;
        (!parsed.known()).then(|| UnknownVersion { name: name.to_string(), found: parsed.version })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_and_read_back() {
        assert_eq!(interface("http"), "corral:plugin/http@0.1.0");
        assert_eq!(pattern(&["log", "kv"]), "corral:plugin/{log,kv}@0.1");
        let n = parse("corral:plugin/http@0.1.0").unwrap();
        assert_eq!((n.interface, n.version), ("http", Some(VERSION)));
        assert!(n.known());
        // A later patch of the same minor version links against this host.
        assert!(parse("corral:plugin/kv@0.1.7").unwrap().known());
        assert_eq!(parse("wasi:io/streams@0.2.6"), None);
        assert_eq!(parse("corral:pluginx/log@0.1.0"), None);
        let bare = parse("corral:plugin/log").unwrap();
        assert_eq!((bare.interface, bare.version), ("log", None));
        assert!(!bare.known());
        assert_eq!(Version::parse("0.1.0-rc1"), Some(VERSION));
        assert_eq!(Version::parse("0.1"), None);
        assert_eq!(Version::parse("0.1.0.4"), None);
    }

    #[test]
    fn versions_match_as_semver_does() {
        let v = |major, minor, patch| Version { major, minor, patch };
        assert!(v(0, 1, 3).compatible_with(v(0, 1, 0)));
        assert!(!v(0, 2, 0).compatible_with(v(0, 1, 0)), "before 1.0 a minor version breaks");
        assert!(v(1, 4, 0).compatible_with(v(1, 0, 0)));
        assert!(!v(2, 0, 0).compatible_with(v(1, 9, 9)));
    }

    #[test]
    fn an_unknown_version_is_named_with_what_to_do() {
        let names = ["wasi:cli/environment@0.2.6", "corral:plugin/log@0.1.0", "corral:plugin/kv@0.3.0"];
        let e = unknown_version(names).unwrap();
        assert_eq!(e.found, Some(Version { major: 0, minor: 3, patch: 0 }));
        assert_eq!(
            e.to_string(),
            "was built for corral:plugin@0.3.0 (it uses corral:plugin/kv@0.3.0); this corral knows \
             corral:plugin 0.1. Rebuild it against the WIT that `corral plugin wit` of this corral \
             writes, or upgrade corral"
        );
        assert_eq!(unknown_version(["corral:plugin/tool@0.1.0", "wasi:io/error@0.2.0"]), None);
    }
}
