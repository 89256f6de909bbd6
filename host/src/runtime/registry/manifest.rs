//! A component's description, kept beside its compiled entry: what it imports and which of
//! those imports need a capability, and the tools its `describe` returned. The contract says
//! `describe` depends on nothing but the component, so the answer is keyed like the compiled
//! code (the component's SHA-256 and the engine key, which includes corral's version). With
//! it a start decides grants and offers tools without loading any compiled code; the code
//! is loaded when a tool is first called, and its imports are checked against this file then.
//! A file that cannot be read or parsed, or whose keyed tag (first line, under the user's
//! cache secret, bound to the component's SHA-256) is not valid, is ignored: the plugin is
//! loaded and described again. So a planted description cannot offer tools or hide imports.

use super::grants::Need;
use super::spec;
use crate::builtins::{BuiltDescription, BuiltTool};
use crate::capabilities::grant::Capability;
use crate::runtime::Cache;
use crate::wit::types as wit;
use serde::{Deserialize, Serialize};

/// Bumped when the file's shape changes.
const LAYOUT: u32 = 1;
const EXT: &str = "describe.json";
/// The tag's domain.
const DOMAIN: &str = "corral description v1";

#[derive(Debug, Serialize, Deserialize)]
struct File {
    layout: u32,
    imports: Vec<String>,
    needs: Vec<NeedEntry>,
    tools: Vec<ToolEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct NeedEntry {
    capability: String,
    import: String,
    function: String,
}

/// A tool exactly as `describe` returned it (it is checked again when read).
#[derive(Debug, Serialize, Deserialize)]
struct ToolEntry {
    name: String,
    description: String,
    input_schema: String,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    capabilities: Vec<String>,
}

impl ToolEntry {
    /// The tool as the WIT types hold it; None when a capability name is unknown.
    fn into_spec(self) -> Option<wit::ToolSpec> {
        let capabilities =
            self.capabilities.iter().map(|c| Capability::parse(c).map(to_wit)).collect::<Option<Vec<_>>>()?;
        Some(wit::ToolSpec {
            name: self.name,
            description: self.description,
            input_schema: self.input_schema,
            hints: wit::ToolHints {
                read_only: self.read_only,
                destructive: self.destructive,
                idempotent: self.idempotent,
                open_world: self.open_world,
            },
            capabilities,
        })
    }
}

impl From<&BuiltTool> for ToolEntry {
    fn from(t: &BuiltTool) -> ToolEntry {
        ToolEntry {
            name: t.name.into(),
            description: t.description.into(),
            input_schema: t.input_schema.into(),
            read_only: t.read_only,
            destructive: t.destructive,
            idempotent: t.idempotent,
            open_world: t.open_world,
            capabilities: t.capabilities.iter().map(|c| c.to_string()).collect(),
        }
    }
}

/// What a component imports and describes.
#[derive(Debug, Clone)]
pub struct Described {
    pub imports: Vec<String>,
    pub needs: Vec<Need>,
    pub tools: Vec<wit::ToolSpec>,
}

/// The WIT side of a capability (the inverse of [`spec::capability`]).
fn to_wit(c: Capability) -> wit::Capability {
    match c {
        Capability::WorkspaceWrite => wit::Capability::WorkspaceWrite,
        Capability::Kv => wit::Capability::Kv,
        Capability::Http => wit::Capability::Http,
        Capability::Process => wit::Capability::Process,
        Capability::Context => wit::Capability::Context,
    }
}

impl Described {
    fn to_file(&self) -> File {
        File {
            layout: LAYOUT,
            imports: self.imports.clone(),
            needs: self
                .needs
                .iter()
                .map(|n| NeedEntry {
                    capability: n.cap.as_str().into(),
                    import: n.import.clone(),
                    function: n.function.clone(),
                })
                .collect(),
            tools: self
                .tools
                .iter()
                .map(|t| ToolEntry {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    read_only: t.hints.read_only,
                    destructive: t.hints.destructive,
                    idempotent: t.hints.idempotent,
                    open_world: t.hints.open_world,
                    capabilities: t
                        .capabilities
                        .iter()
                        .map(|&c| spec::capability(c).as_str().into())
                        .collect(),
                })
                .collect(),
        }
    }

    fn from_file(f: File) -> Option<Described> {
        if f.layout != LAYOUT {
            return None;
        }
        let needs = f
            .needs
            .into_iter()
            .map(|n| {
                Some(Need { cap: Capability::parse(&n.capability)?, import: n.import, function: n.function })
            })
            .collect::<Option<Vec<_>>>()?;
        let tools = f.tools.into_iter().map(ToolEntry::into_spec).collect::<Option<Vec<_>>>()?;
        Some(Described { imports: f.imports, needs, tools })
    }
}

/// The description kept for the component with this SHA-256, if there is a readable one
/// with a valid tag.
pub fn read(cache: &Cache, sha256: &str) -> Option<Described> {
    let json = cache.read_tagged(DOMAIN, sha256, EXT)?;
    Described::from_file(serde_json::from_slice(&json).ok()?)
}

/// Keeps the description beside the compiled entry (best effort: without it the next start
/// describes the component again).
pub fn write(cache: &Cache, sha256: &str, d: &Described) {
    if let Ok(json) = serde_json::to_vec(&d.to_file()) {
        cache.write_tagged(DOMAIN, sha256, EXT, &json);
    }
}

/// A built-in's description made at build time (`build/describe.rs`): trusted like the
/// component it was made from, which is embedded beside it. The capabilities its imports need
/// are worked out here, by the same rule as for a component loaded at run time.
pub fn built(b: &BuiltDescription) -> Option<Described> {
    let mut needs = Vec::new();
    for (import, functions) in b.imports {
        let Some(name) = crate::wit::parse(import) else { continue };
        for function in *functions {
            if let Some(cap) = crate::capabilities::grant::needed_by(name.interface, function) {
                needs.push(Need { cap, import: import.to_string(), function: function.to_string() });
            }
        }
    }
    let tools = b.tools.iter().map(|t| ToolEntry::from(t).into_spec()).collect::<Option<Vec<_>>>()?;
    Some(Described { imports: b.imports.iter().map(|(i, _)| i.to_string()).collect(), needs, tools })
}

/// Removes the kept description (it did not match the component).
pub fn forget(cache: &Cache, sha256: &str) {
    if let Some(path) = cache.sidecar_path(sha256, EXT) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Described {
        Described {
            imports: vec!["wasi:io/streams@0.2.6".into(), "corral:plugin/kv@0.1.0".into()],
            needs: vec![Need {
                cap: Capability::Kv,
                import: "corral:plugin/kv@0.1.0".into(),
                function: "get".into(),
            }],
            tools: vec![wit::ToolSpec {
                name: "t".into(),
                description: "does t".into(),
                input_schema: r#"{"type":"object"}"#.into(),
                hints: wit::ToolHints {
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: false,
                },
                capabilities: vec![wit::Capability::Kv, wit::Capability::WorkspaceWrite],
            }],
        }
    }

    /// What was read, comparable (the generated WIT types have no `PartialEq`).
    fn read_back(cache: &Cache, sha256: &str) -> Option<String> {
        read(cache, sha256).map(|d| format!("{d:?}"))
    }

    fn cache(dir: &std::path::Path) -> Cache {
        let engine = wasmtime::Engine::default();
        let secret = crate::runtime::secret::Secret::from_bytes([3; 32]);
        Cache::with_secret(&engine, Some(dir.to_path_buf()), Some(secret), None)
    }

    #[test]
    fn a_description_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        std::fs::create_dir_all(dir.path().join("components")).unwrap();
        assert_eq!(read_back(&cache, "abc"), None);
        write(&cache, "abc", &sample());
        assert_eq!(read_back(&cache, "abc"), Some(format!("{:?}", sample())));
        assert_eq!(read_back(&cache, "abd"), None);
        forget(&cache, "abc");
        assert_eq!(read_back(&cache, "abc"), None);
    }

    #[test]
    fn damaged_or_foreign_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        std::fs::create_dir_all(dir.path().join("components")).unwrap();
        let put = |json: &[u8]| cache.write_tagged(DOMAIN, "abc", EXT, json);
        put(b"{\"layout\":1,");
        assert_eq!(read_back(&cache, "abc"), None);
        let mut file = sample().to_file();
        file.tools[0].capabilities.push("teleport".into());
        put(&serde_json::to_vec(&file).unwrap());
        assert_eq!(read_back(&cache, "abc"), None);
        let mut file = sample().to_file();
        file.layout = LAYOUT + 1;
        put(&serde_json::to_vec(&file).unwrap());
        assert_eq!(read_back(&cache, "abc"), None);
        put(&serde_json::to_vec(&sample().to_file()).unwrap());
        assert!(read_back(&cache, "abc").is_some(), "the control: a tagged file is read");
    }

    #[test]
    fn a_planted_or_moved_description_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        std::fs::create_dir_all(dir.path().join("components")).unwrap();
        let json = serde_json::to_vec(&sample().to_file()).unwrap();
        // No tag, a plain digest, or another user's key.
        let path = cache.sidecar_path("abc", EXT).unwrap();
        std::fs::write(&path, &json).unwrap();
        assert_eq!(read_back(&cache, "abc"), None);
        let digest = blake3::hash(&json).to_hex().to_string();
        std::fs::write(&path, [format!("tag {digest}\n").as_bytes(), &json].concat()).unwrap();
        assert_eq!(read_back(&cache, "abc"), None);
        let engine = wasmtime::Engine::default();
        let theirs = crate::runtime::secret::Secret::from_bytes([4; 32]);
        let other = Cache::with_secret(&engine, Some(dir.path().to_path_buf()), Some(theirs), None);
        write(&other, "abc", &sample());
        assert_eq!(read_back(&cache, "abc"), None);
        // A valid description moved to another component's name.
        write(&cache, "abc", &sample());
        std::fs::copy(&path, cache.sidecar_path("abd", EXT).unwrap()).unwrap();
        assert!(read_back(&cache, "abc").is_some());
        assert_eq!(read_back(&cache, "abd"), None);
    }
}
