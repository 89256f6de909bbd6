//! The built-in plugins, compiled to components by `build.rs` and embedded in the binary.

/// One embedded component.
#[derive(Debug)]
pub struct Builtin {
    /// Plugin name (also the component's file stem).
    pub name: &'static str,
    /// The component's bytes.
    pub bytes: &'static [u8],
    /// SHA-256 of `bytes`, lowercase hex, computed at build time.
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));
