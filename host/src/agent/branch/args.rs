//! The `branch` call's arguments: the description, the turn budget (default 10, 1 to 50) and
//! whether the write tools are offered; every mistake is a correction for the model.

use crate::agent::call::parse_arguments;
use serde_json::Value;

const DEFAULT_TURNS: u64 = 10;
/// The most turns a branch may be given.
pub const MAX_TURNS: u64 = 50;

/// A branch call's checked arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub description: String,
    pub max_turns: u32,
    pub allow_writes: bool,
}

/// Checks the arguments; Err is a correction for the model.
pub fn parse(raw: &str) -> Result<Args, String> {
    let v = parse_arguments(raw)?;
    let description = match v.get("description") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        _ => return Err("'description' is required: say what the branch should find out".into()),
    };
    let max_turns = match v.get("max_turns") {
        None | Some(Value::Null) => DEFAULT_TURNS,
        Some(n) => match n.as_u64() {
            Some(n) if (1..=MAX_TURNS).contains(&n) => n,
            _ => return Err(format!("'max_turns' must be a whole number from 1 to {MAX_TURNS}")),
        },
    };
    let allow_writes = match v.get("allow_writes") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("'allow_writes' must be true or false".into()),
    };
    Ok(Args { description, max_turns: u32::try_from(max_turns).unwrap_or(10), allow_writes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_have_defaults_and_bounds() {
        let a = parse(r#"{"description":"  find the parser "}"#).unwrap();
        assert_eq!(a, Args { description: "find the parser".into(), max_turns: 10, allow_writes: false });
        let a = parse(r#"{"description":"x","max_turns":1,"allow_writes":true}"#).unwrap();
        assert_eq!((a.max_turns, a.allow_writes), (1, true));
        assert!(parse(r#"{"description":" "}"#).unwrap_err().contains("'description' is required"));
        assert!(parse(r#"{}"#).unwrap_err().contains("'description' is required"));
        assert!(parse(r#"{"description":"x","max_turns":0}"#).unwrap_err().contains("from 1 to 50"));
        assert!(parse(r#"{"description":"x","max_turns":2.5}"#).unwrap_err().contains("whole number"));
        assert!(parse(r#"{"description":"x","allow_writes":"yes"}"#).unwrap_err().contains("true or false"));
    }
}
