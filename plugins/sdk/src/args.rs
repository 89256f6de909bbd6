//! Strict readers for tool arguments: a wrong type is an error that names the field,
//! never a silent default. Booleans are not accepted where integers are expected.

use crate::{ToolError, Value};

/// A required string field.
pub fn req_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(ToolError::invalid_args(format!("missing required field '{key}'"))),
        Some(other) => Err(type_error(key, "a string", other)),
    }
}

/// An optional string field.
pub fn opt_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(type_error(key, "a string", other)),
    }
}

/// An optional non-negative integer field; integral floats (`3.0`) and numeric strings are accepted.
pub fn opt_u64(args: &Value, key: &str) -> Result<Option<u64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(v) = n.as_u64() {
                Ok(Some(v))
            } else if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15) {
                Ok(Some(f as u64))
            } else {
                Err(ToolError::invalid_args(format!("'{key}' must be a non-negative integer, got {n}")))
            }
        }
        Some(Value::String(s)) => s.trim().parse::<u64>().map(Some).map_err(|_| {
            ToolError::invalid_args(format!("'{key}' must be a non-negative integer, got \"{s}\""))
        }),
        Some(other) => Err(type_error(key, "a non-negative integer", other)),
    }
}

/// An optional boolean field; the strings "true" and "false" are accepted.
pub fn opt_bool(args: &Value, key: &str) -> Result<Option<bool>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(other) => Err(type_error(key, "true or false", other)),
    }
}

/// The whole arguments object read into a typed struct (`#[derive(serde::Deserialize)]`); a
/// missing field, a wrong type or an unknown field (with `#[serde(deny_unknown_fields)]`) is an
/// `invalid-args` error that quotes serde's reason, which names the field.
pub fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::invalid_args(format!("the arguments do not fit this tool's schema: {e}"))
            .with_hint("send the fields its input schema lists, with their types")
    })
}

fn type_error(key: &str, want: &str, got: &Value) -> ToolError {
    let kind = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    ToolError::invalid_args(format!("'{key}' must be {want}, got {kind}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bool_is_not_an_integer() {
        let e = opt_u64(&json!({"offset": true}), "offset").unwrap_err();
        assert_eq!(e.message, "'offset' must be a non-negative integer, got a boolean");
    }

    #[test]
    fn integers_in_several_spellings() {
        assert_eq!(opt_u64(&json!({"n": 3}), "n").unwrap(), Some(3));
        assert_eq!(opt_u64(&json!({"n": 3.0}), "n").unwrap(), Some(3));
        assert_eq!(opt_u64(&json!({"n": " 7 "}), "n").unwrap(), Some(7));
        assert!(opt_u64(&json!({"n": -1}), "n").is_err());
        assert!(opt_u64(&json!({"n": 1.5}), "n").is_err());
        assert_eq!(opt_u64(&json!({}), "n").unwrap(), None);
    }

    #[test]
    fn required_string_missing_names_the_field() {
        assert_eq!(
            req_str(&json!({}), "file_path").unwrap_err().message,
            "missing required field 'file_path'"
        );
        assert!(req_str(&json!({"file_path": 1}), "file_path").is_err());
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Typed {
        path: String,
        limit: Option<u32>,
    }

    #[test]
    fn typed_arguments_name_what_is_wrong() {
        let t: Typed = parse(json!({"path": "a.txt"})).unwrap();
        assert_eq!((t.path.as_str(), t.limit), ("a.txt", None));
        let missing = parse::<Typed>(json!({})).unwrap_err();
        assert!(missing.message.contains("missing field `path`"), "{}", missing.message);
        let unknown = parse::<Typed>(json!({"path": "a", "colour": 1})).unwrap_err();
        assert!(unknown.message.contains("unknown field `colour`"), "{}", unknown.message);
        let wrong = parse::<Typed>(json!({"path": 3})).unwrap_err();
        assert!(wrong.message.contains("expected a string"), "{}", wrong.message);
    }

    #[test]
    fn bool_strings() {
        assert_eq!(opt_bool(&json!({"b": "TRUE"}), "b").unwrap(), Some(true));
        assert!(opt_bool(&json!({"b": 1}), "b").is_err());
    }
}
