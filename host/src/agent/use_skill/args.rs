//! Reading a `use_skill` call: the action, the skill name, and `args`, which is a list of
//! resource paths for `load` and a script name plus its arguments for `script`, given as a
//! string (comma-separated paths; a command line split like a shell would, without
//! expansion) or as an array of strings.

use corral_contract::words::{self, Syntax};
use serde_json::Value;

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Activate,
    /// Resource paths, in order, without repeats.
    Load(Vec<String>),
    /// Script name and its arguments.
    Script(String, Vec<String>),
}

/// The actions, as the schema lists them.
pub const ACTIONS: [&str; 3] = ["activate", "load", "script"];

/// A parsed call: the skill's name and the action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub name: String,
    pub action: Action,
}

/// Parses the arguments object. Errors are sentences for the model.
pub fn parse(args: &Value) -> Result<Request, String> {
    let obj = args.as_object().ok_or("the arguments must be a JSON object")?;
    if let Some(extra) = obj.keys().find(|k| !["name", "action", "args"].contains(&k.as_str())) {
        return Err(format!("unknown field '{extra}'; use_skill takes name, action and args"));
    }
    let name = match obj.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err("'name' is required: the skill's name".into());
        }
        Some(_) => return Err("'name' must be a string".into()),
    };
    let action = match obj.get("action") {
        // Weak models leave it out, or send it empty: activating is what they mean.
        None | Some(Value::Null) => "activate".to_string(),
        Some(Value::String(s)) if s.trim().is_empty() => "activate".to_string(),
        Some(Value::String(s)) => s.trim().to_ascii_lowercase(),
        Some(_) => return Err("'action' must be a string: one of activate, load, script".into()),
    };
    let raw = obj.get("args").filter(|v| !v.is_null());
    let action = match action.as_str() {
        "activate" => Action::Activate,
        "load" => {
            let paths = match raw {
                None => Vec::new(),
                Some(Value::String(s)) => s.split(',').map(|p| p.trim().to_string()).collect(),
                Some(Value::Array(a)) => strings(a)?,
                Some(_) => return Err("'args' must be a string or an array of strings".into()),
            };
            let mut unique: Vec<String> = Vec::new();
            for p in paths.into_iter().filter(|p| !p.is_empty()) {
                if !unique.contains(&p) {
                    unique.push(p);
                }
            }
            if unique.is_empty() {
                return Err("load needs 'args': the resource paths to load, comma-separated (as listed by \
                            activate), e.g. \"references/guide.md,assets/template.md\""
                    .into());
            }
            Action::Load(unique)
        }
        "script" => {
            let words = match raw {
                None => Vec::new(),
                Some(Value::String(s)) => split_words(s)?,
                Some(Value::Array(a)) => strings(a)?,
                Some(_) => return Err("'args' must be a string or an array of strings".into()),
            };
            let mut words = words.into_iter();
            let Some(script) = words.next().filter(|w| !w.is_empty()) else {
                return Err(
                    "script needs 'args': the script's name, then its arguments, e.g. \"toc README.md\""
                        .into(),
                );
            };
            Action::Script(script, words.collect())
        }
        other => {
            let shown: String = other.chars().take(40).collect();
            return Err(format!("unknown action '{shown}'; use one of activate, load, script"));
        }
    };
    Ok(Request { name, action })
}

fn strings(a: &[Value]) -> Result<Vec<String>, String> {
    a.iter()
        .map(|v| {
            v.as_str().map(str::to_string).ok_or_else(|| "every item of 'args' must be a string".to_string())
        })
        .collect()
}

/// Splits a script's command line into words by the contract's shell-word rules, with nothing
/// special but quotes and backslashes: the words go to the script, no shell sees them.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    words::split(line, Syntax::Literal).map_err(|e| format!("'args' has {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn actions_and_their_args() {
        let r = parse(&json!({"name": "md", "action": "activate"})).unwrap();
        assert_eq!(r, Request { name: "md".into(), action: Action::Activate });
        let r = parse(&json!({"name": "md", "action": "LOAD", "args": "a.md, b/c.md,,a.md"})).unwrap();
        assert_eq!(r.action, Action::Load(vec!["a.md".into(), "b/c.md".into()]));
        let r = parse(&json!({"name": "md", "action": "load", "args": ["x y.md"]})).unwrap();
        assert_eq!(r.action, Action::Load(vec!["x y.md".into()]));
        let r = parse(&json!({"name": "md", "action": "script", "args": "toc 'my file.md' --max-level 2"}))
            .unwrap();
        assert_eq!(
            r.action,
            Action::Script("toc".into(), vec!["my file.md".into(), "--max-level".into(), "2".into()])
        );
        let r = parse(&json!({"name": "md", "action": "script", "args": ["check-links", "a b"]})).unwrap();
        assert_eq!(r.action, Action::Script("check-links".into(), vec!["a b".into()]));
    }

    #[test]
    fn mistakes_get_corrections() {
        let e = |v: Value| parse(&v).unwrap_err();
        assert_eq!(e(json!({"action": "activate"})), "'name' is required: the skill's name");
        assert_eq!(parse(&json!({"name": "x"})).unwrap().action, Action::Activate, "activate is the default");
        assert_eq!(parse(&json!({"name": "x", "action": ""})).unwrap().action, Action::Activate);
        assert_eq!(
            e(json!({"name": "x", "action": "run"})),
            "unknown action 'run'; use one of activate, load, script"
        );
        assert!(e(json!({"name": "x", "action": "load"})).starts_with("load needs 'args'"));
        assert!(e(json!({"name": "x", "action": "script", "args": "  "})).starts_with("script needs 'args'"));
        assert_eq!(
            e(json!({"name": "x", "action": "load", "args": [1]})),
            "every item of 'args' must be a string"
        );
        assert_eq!(
            e(json!({"name": "x", "action": "activate", "path": "y"})),
            "unknown field 'path'; use_skill takes name, action and args"
        );
    }

    #[test]
    fn command_lines_split_without_expansion() {
        let w = split_words(r#"a "b c" 'd $HOME' e\ f "q\"x" ''"#).unwrap();
        assert_eq!(w, ["a", "b c", "d $HOME", "e f", "q\"x", ""]);
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("a 'b").unwrap_err(), "'args' has an unclosed single quote");
        assert_eq!(split_words("a \"b").unwrap_err(), "'args' has an unclosed double quote");
        let e = split_words("a b\\").unwrap_err();
        assert_eq!(e, "'args' has a backslash at the end that escapes nothing");
        assert_eq!(split_words("a|b $X").unwrap(), ["a|b", "$X"], "nothing is shell syntax here");
    }
}
