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
    /// The component compiled by `build.rs` under the runtime's engine Config for this
    /// target's baseline ISA, x86-64-v2 on x86-64 (see `runtime::engine_config`).
    pub precompiled: &'static [u8],
    /// What the component imports and describes, found by running its `describe` at build
    /// time (None for skills, and when the build could not run it, e.g. cross-compiling).
    pub description: Option<BuiltDescription>,
    /// A shipped component skill's answer to `describe`, found by running it at build time
    /// (None for tools and the folder server, and when the build could not run it).
    pub skill: Option<BuiltSkill>,
}

/// A shipped skill's name and description, as it answers `describe`, known at build time so
/// that a start (even with an empty cache) runs none of its code to list it.
#[derive(Debug)]
pub struct BuiltSkill {
    pub name: &'static str,
    pub description: &'static str,
}

/// A built-in tool plugin described at build time (see `build/describe.rs`).
#[derive(Debug)]
pub struct BuiltDescription {
    /// Each import's name and the functions it brings.
    pub imports: &'static [(&'static str, &'static [&'static str])],
    pub tools: &'static [BuiltTool],
}

/// One tool as the component's `describe` returned it.
#[derive(Debug)]
pub struct BuiltTool {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: &'static str,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// Capability names as the WIT enum spells them (`workspace-write`).
    pub capabilities: &'static [&'static str],
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
    /// What the folder server answers to `describe` for this folder: its `SKILL.md` read at
    /// build time by the server's own reader (contract/src/frontmatter.rs).
    pub skill: BuiltSkill,
}

impl ShippedFolder {
    /// The folder's `SKILL.md`, as embedded.
    pub fn skill_md(&self) -> Option<&'static [u8]> {
        self.files.iter().find(|f| f.path == "SKILL.md").map(|f| f.bytes)
    }
}

/// A precompiled artifact's storage: page-aligned, as wasmtime needs its code to be when it
/// runs it where it lies (see `runtime::in_place`).
#[repr(C, align(4096))]
pub struct Code<const N: usize>(pub [u8; N]);

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// Every embedded component: the built-in tools, the skill server and the shipped skills.
fn all() -> impl Iterator<Item = &'static Builtin> {
    BUILTINS.iter().chain([&SKILL_SERVER]).chain(SHIPPED_SKILLS)
}

/// Every precompiled artifact embedded in the binary.
pub fn all_precompiled() -> impl Iterator<Item = &'static [u8]> {
    all().map(|b| b.precompiled)
}

/// The build-time compiled artifact of the embedded component with this SHA-256, if any.
pub fn precompiled(sha256: &str) -> Option<&'static [u8]> {
    all().find(|b| b.sha256 == sha256).map(|b| b.precompiled)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The components' own bytes lie together, and none of the constants a start reads
    /// (names, digests, the built-time descriptions) lies among them: a page of those
    /// would bring megabytes of never-read component bytes into every session's resident
    /// set with it (the kernel maps the neighbours of a page it faults in).
    #[test]
    fn component_bytes_lie_apart_from_what_a_start_reads() {
        let span = |s: &[u8]| (s.as_ptr() as usize, s.as_ptr() as usize + s.len());
        let blobs: Vec<(usize, usize)> = all().map(|b| span(b.bytes)).collect();
        let low = blobs.iter().map(|b| b.0).min().unwrap();
        let high = blobs.iter().map(|b| b.1).max().unwrap();
        let total: usize = blobs.iter().map(|b| b.1 - b.0).sum();
        // Together: the span holds little but the bytes themselves.
        assert!(
            high - low < total + (64 << 10),
            "the component bytes are spread out: {total} bytes over {}",
            high - low
        );
        let mut read_at_start: Vec<(&str, (usize, usize))> = Vec::new();
        for b in all() {
            read_at_start.push((b.name, span(b.name.as_bytes())));
            read_at_start.push((b.name, span(b.sha256.as_bytes())));
            if let Some(d) = &b.description {
                for t in d.tools {
                    read_at_start.push((b.name, span(t.name.as_bytes())));
                    read_at_start.push((b.name, span(t.description.as_bytes())));
                    read_at_start.push((b.name, span(t.input_schema.as_bytes())));
                }
            }
        }
        for (name, (start, end)) in read_at_start {
            assert!(end <= low || start >= high, "a constant of {name} lies among the component bytes");
        }
    }
}
