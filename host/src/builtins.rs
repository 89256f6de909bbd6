//! The built-in plugins and the shipped skills, compiled to components (or, for `SKILL.md`
//! folders, read file by file) by `build.rs` and embedded in the binary.

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

/// One file of a shipped `SKILL.md` folder.
#[derive(Debug)]
pub struct ShippedFile {
    /// Relative path inside the folder, `/`-separated.
    pub path: &'static str,
    pub bytes: &'static [u8],
}

/// A `SKILL.md` folder shipped with corral.
#[derive(Debug)]
pub struct ShippedFolder {
    /// The folder's name (also the skill's name).
    pub name: &'static str,
    /// SHA-256 over the folder's paths and contents, lowercase hex, computed at build time.
    pub sha256: &'static str,
    pub files: &'static [ShippedFile],
}

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));
