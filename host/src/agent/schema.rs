//! Checks a tool call's arguments against the tool's JSON Schema before the plugin runs, so
//! the model gets a precise correction instead of a plugin error. Covers the subset tools use.

use serde_json::Value;

/// Every problem found in `args` against `schema`, as readable lines (empty when valid).
pub fn validate(schema: &Value, args: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, args, "", &mut errors);
    errors.truncate(8);
    errors
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn matches_type(want: &str, v: &Value) -> bool {
    match want {
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        other => type_name(v) == other,
    }
}

fn at(path: &str) -> String {
    if path.is_empty() { "the arguments".to_string() } else { format!("'{path}'") }
}

fn check(schema: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else { return };
    if let Some(t) = s.get("type") {
        let wanted: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !wanted.is_empty() && !wanted.iter().any(|w| matches_type(w, v)) {
            errors.push(format!("{} must be {}, not {}", at(path), wanted.join(" or "), type_name(v)));
            return;
        }
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        errors.push(format!("{} must be one of {}, not {v}", at(path), list.join(", ")));
    }
    if let Some(any) = s.get("anyOf").or_else(|| s.get("oneOf")).and_then(Value::as_array)
        && !any.iter().any(|alt| validate(alt, v).is_empty())
    {
        errors.push(format!("{} does not match any of the allowed forms", at(path)));
    }
    match v {
        Value::Object(map) => {
            let props = s.get("properties").and_then(Value::as_object);
            for req in s.get("required").and_then(Value::as_array).into_iter().flatten() {
                if let Some(name) = req.as_str()
                    && !map.contains_key(name)
                {
                    errors.push(format!("missing required property '{}'", join(path, name)));
                }
            }
            for (k, val) in map {
                match props.and_then(|p| p.get(k)) {
                    Some(sub) => check(sub, val, &join(path, k), errors),
                    None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let known: Vec<&str> =
                            props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        errors.push(format!(
                            "unknown property '{}'; the properties are: {}",
                            join(path, k),
                            known.join(", ")
                        ));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                errors.push(format!("{} has {} items; at most {max} are allowed", at(path), items.len()));
            }
            if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                errors.push(format!("{} needs at least {min} items", at(path)));
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"), errors);
                }
            }
        }
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if let Some(min) = s.get("minimum").and_then(Value::as_f64)
                && f < min
            {
                errors.push(format!("{} must be at least {min}", at(path)));
            }
            if let Some(max) = s.get("maximum").and_then(Value::as_f64)
                && f > max
            {
                errors.push(format!("{} must be at most {max}", at(path)));
            }
        }
        Value::String(text) => {
            let len = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                errors.push(format!("{} must be at least {min} characters", at(path)));
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                errors.push(format!("{} must be at most {max} characters", at(path)));
            }
        }
        _ => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "minLength": 1},
                "offset": {"type": "integer", "minimum": 1},
                "mode": {"enum": ["a", "b"]},
                "files": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "opt": {"type": ["string", "null"]}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_pass() {
        let ok = json!({"file_path": "a", "offset": 3, "mode": "b", "files": ["x"], "opt": null});
        assert!(validate(&schema(), &ok).is_empty());
        assert!(validate(&schema(), &json!({"file_path": "a", "offset": 2.0})).is_empty());
    }

    #[test]
    fn each_rule_reports_its_problem() {
        let cases = [
            (json!({}), "missing required property 'file_path'"),
            (json!({"file_path": 3}), "'file_path' must be string, not integer"),
            (json!({"file_path": ""}), "'file_path' must be at least 1 characters"),
            (json!({"file_path": "a", "offset": 0}), "'offset' must be at least 1"),
            (json!({"file_path": "a", "offset": 1.5}), "'offset' must be integer, not number"),
            (json!({"file_path": "a", "mode": "c"}), "'mode' must be one of \"a\", \"b\""),
            (json!({"file_path": "a", "files": ["1", "2", "3"]}), "'files' has 3 items; at most 2"),
            (json!({"file_path": "a", "files": [1]}), "'files[0]' must be string"),
            (json!({"file_path": "a", "bogus": 1}), "unknown property 'bogus'; the properties are: "),
            (json!([]), "the arguments must be object, not array"),
        ];
        for (args, want) in cases {
            let errs = validate(&schema(), &args);
            assert!(errs.iter().any(|e| e.contains(want)), "{args}: {errs:?} lacks {want}");
        }
    }
}
