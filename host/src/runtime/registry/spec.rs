//! Checking what a plugin says about its tools: names, descriptions, input schemas, and the
//! capabilities each tool declares it needs.

use super::RegistryError;
use crate::capabilities::grant::{CapSet, Capability};
use crate::wit::types as wit;

/// A tool as a plugin described it, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub schema: serde_json::Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    pub capabilities: CapSet,
}

/// The host side of a WIT capability.
pub(super) fn capability(c: wit::Capability) -> Capability {
    match c {
        wit::Capability::WorkspaceWrite => Capability::WorkspaceWrite,
        wit::Capability::Kv => Capability::Kv,
        wit::Capability::Http => Capability::Http,
        wit::Capability::Process => Capability::Process,
        wit::Capability::Context => Capability::Context,
    }
}

/// Checks one described tool and converts it.
pub fn check_spec(location: &str, spec: wit::ToolSpec) -> Result<ToolSpec, RegistryError> {
    let bad = |why: &str| RegistryError::BadSpec {
        location: location.into(),
        tool: spec.name.clone(),
        why: why.into(),
    };
    let valid_name = !spec.name.is_empty()
        && spec.name.len() <= 64
        && spec.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(bad("names must be 1 to 64 ASCII letters, digits, '_' or '-'"));
    }
    if spec.description.trim().is_empty() {
        return Err(bad("the description is empty"));
    }
    let schema: serde_json::Value = serde_json::from_str(&spec.input_schema)
        .map_err(|e| bad(&format!("the input schema is not valid JSON: {e}")))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(bad("the input schema must be a JSON Schema with \"type\": \"object\""));
    }
    Ok(ToolSpec {
        name: spec.name,
        description: spec.description,
        schema,
        read_only: spec.hints.read_only,
        destructive: spec.hints.destructive,
        idempotent: spec.hints.idempotent,
        open_world: spec.hints.open_world,
        capabilities: spec.capabilities.into_iter().map(capability).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, schema: &str) -> wit::ToolSpec {
        wit::ToolSpec {
            name: name.into(),
            description: "d".into(),
            input_schema: schema.into(),
            hints: wit::ToolHints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            capabilities: vec![wit::Capability::Kv, wit::Capability::Process],
        }
    }

    #[test]
    fn specs_are_checked() {
        let ok = check_spec("p", spec("ok_name", r#"{"type":"object"}"#)).unwrap();
        assert_eq!(ok.capabilities.names(), vec!["kv", "process"]);
        let e = check_spec("p", spec("bad name", r#"{"type":"object"}"#)).unwrap_err().to_string();
        assert!(e.contains("names must be"), "{e}");
        let e = check_spec("p", spec("t", "{nope")).unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        let e = check_spec("p", spec("t", r#"{"type":"string"}"#)).unwrap_err().to_string();
        assert!(e.contains("\"type\": \"object\""), "{e}");
    }
}
