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
    /// The "derive with the model" step the tool declares, if any (see [`Derive`]).
    pub derive: Option<Derive>,
}

/// The key of a tool's input schema that declares a derive step. The host takes it out of
/// the schema before the model sees it.
pub const DERIVE_KEY: &str = "x-corral-derive";

/// A derive step, declared in the input schema as
/// `"x-corral-derive": {"argument": "prompt", "purpose": "web_prompt"}`: when a call gives
/// a non-empty string in `argument` and the tool succeeds, the host has the model answer
/// that string from the tool's result alone, in a separate request audited with `purpose`,
/// and returns the answer in place of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derive {
    pub argument: String,
    pub purpose: String,
}

/// Takes the derive declaration out of `schema` and checks it: `argument` names a string
/// property of the schema, `purpose` is 1 to 32 lowercase ASCII letters, digits or `_`.
fn take_derive(schema: &mut serde_json::Value) -> Result<Option<Derive>, String> {
    let Some(decl) = schema.as_object_mut().and_then(|o| o.remove(DERIVE_KEY)) else { return Ok(None) };
    let field = |k: &str| decl.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let (Some(argument), Some(purpose)) = (field("argument"), field("purpose")) else {
        return Err(format!(
            "\"{DERIVE_KEY}\" must be an object with string fields \"argument\" and \"purpose\""
        ));
    };
    let is_string_property = schema
        .pointer(&format!("/properties/{}/type", argument.replace('~', "~0").replace('/', "~1")))
        .and_then(|t| t.as_str())
        == Some("string");
    if !is_string_property {
        return Err(format!(
            "\"{DERIVE_KEY}\" names the argument '{argument}', which is not a string property"
        ));
    }
    let purpose_ok = (1..=32).contains(&purpose.len())
        && purpose.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !purpose_ok {
        return Err(format!("\"{DERIVE_KEY}\" purpose must be 1 to 32 of a-z, 0-9 and '_'"));
    }
    Ok(Some(Derive { argument, purpose }))
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
    let mut schema: serde_json::Value = serde_json::from_str(&spec.input_schema)
        .map_err(|e| bad(&format!("the input schema is not valid JSON: {e}")))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(bad("the input schema must be a JSON Schema with \"type\": \"object\""));
    }
    let derive = take_derive(&mut schema).map_err(|why| bad(&why))?;
    Ok(ToolSpec {
        name: spec.name,
        description: spec.description,
        schema,
        read_only: spec.hints.read_only,
        destructive: spec.hints.destructive,
        idempotent: spec.hints.idempotent,
        open_world: spec.hints.open_world,
        capabilities: spec.capabilities.into_iter().map(capability).collect(),
        derive,
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

    #[test]
    fn a_derive_step_is_declared_checked_and_taken_out_of_the_schema() {
        let schema = r#"{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},
            "x-corral-derive":{"argument":"q","purpose":"web_prompt"}}"#;
        let ok = check_spec("p", spec("t", schema)).unwrap();
        assert_eq!(ok.derive, Some(Derive { argument: "q".into(), purpose: "web_prompt".into() }));
        assert!(ok.schema.get(DERIVE_KEY).is_none(), "the model never sees the declaration");
        assert_eq!(check_spec("p", spec("t", r#"{"type":"object"}"#)).unwrap().derive, None);
        for (bad, why) in [
            (r#"{"argument":"n","purpose":"x"}"#, "not a string property"),
            (r#"{"argument":"gone","purpose":"x"}"#, "not a string property"),
            (r#"{"argument":"q","purpose":"Web Prompt"}"#, "purpose must be"),
            (r#"{"argument":"q"}"#, "must be an object"),
            (r#""q""#, "must be an object"),
        ] {
            let schema = format!(
                r#"{{"type":"object","properties":{{"q":{{"type":"string"}},"n":{{"type":"integer"}}}},"x-corral-derive":{bad}}}"#
            );
            let e = check_spec("p", spec("t", &schema)).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
