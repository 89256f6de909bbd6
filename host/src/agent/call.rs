//! What one tool call gives back to the loop (its result text, images and typed effects), and
//! the argument and error texts shared by the dispatcher and `use_skill`.

use crate::capabilities::effects::{Effect, FileChange};
use crate::runtime::ToolError;
use serde_json::Value;
use std::time::Duration;

/// The result of one tool call, ready for the transcript.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The text the model sees.
    pub content: String,
    pub is_error: bool,
    /// The plugin that ran the call, when one did.
    pub plugin: Option<String>,
    pub duration: Duration,
    /// What the call did that the loop acts on, in the order it happened.
    pub effects: Vec<Effect>,
    /// Images the tool returned, before the provider's rules are applied.
    pub images: Vec<crate::runtime::Image>,
}

impl CallOutcome {
    /// The outcome of a host tool (`cron`, `undo`): its text, an error when `Err`.
    pub fn from_host(result: Result<String, String>, started: std::time::Instant) -> Self {
        let (content, is_error) = match result {
            Ok(t) => (t, false),
            Err(t) => (t, true),
        };
        CallOutcome {
            content,
            is_error,
            plugin: Some("(host)".into()),
            duration: started.elapsed(),
            effects: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A call refused before anything ran.
    pub fn refused(content: String) -> Self {
        CallOutcome {
            content,
            is_error: true,
            plugin: None,
            duration: Duration::ZERO,
            effects: Vec::new(),
            images: Vec::new(),
        }
    }

    /// The file the call changed, for display.
    pub fn file_change(&self) -> Option<&FileChange> {
        self.effects.iter().find_map(|e| match e {
            Effect::FileChanged(c) => Some(c),
            _ => None,
        })
    }

    /// Whether the call changed the todo list.
    pub fn changed_todo(&self) -> bool {
        self.effects.contains(&Effect::TodoChanged)
    }
}

/// Adds to a result the notes of changes it made that cannot be undone: a tool's own text
/// may say the change was made; it must not be taken to mean it can be reverted.
pub fn add_undo_notes(content: &mut String, effects: &[Effect]) {
    for e in effects {
        if let Effect::NotUndoable(note) = e {
            content.push('\n');
            content.push_str(note);
        }
    }
}

/// Parses the model's argument text. Empty means `{}`; a JSON object encoded as a string is
/// unwrapped. Anything else that is not an object is refused with a correction.
pub fn parse_arguments(raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        format!(
            "the arguments are not valid JSON ({e}). Send them again as one JSON object that matches \
             the tool's schema, with strings quoted and escaped"
        )
    })?;
    match value {
        Value::Object(_) => Ok(value),
        Value::String(inner) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err("the arguments must be a JSON object, not a string".to_string()),
        },
        other => Err(format!("the arguments must be a JSON object, not {}", kind_of(&other))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The text the model sees for a failed call.
pub fn tool_error_text(e: &ToolError) -> String {
    corral_contract::error::error_text(e.kind, &e.message, e.hint.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_parsed_leniently_but_must_be_objects() {
        assert_eq!(parse_arguments("  ").unwrap(), serde_json::json!({}));
        assert_eq!(parse_arguments(r#"{"a":1}"#).unwrap(), serde_json::json!({"a": 1}));
        assert_eq!(parse_arguments(r#""{\"a\":1}""#).unwrap(), serde_json::json!({"a": 1}));
        let e = parse_arguments(r#"{"a":"#).unwrap_err();
        assert!(e.contains("not valid JSON") && e.contains("Send them again"), "{e}");
        assert!(parse_arguments("[1]").unwrap_err().contains("not an array"));
        assert!(parse_arguments(r#""text""#).unwrap_err().contains("not a string"));
    }

    #[test]
    fn effects_answer_what_the_call_did() {
        let mut o = CallOutcome::refused("x".into());
        assert!(o.file_change().is_none() && !o.changed_todo());
        let c = FileChange { path: "a".into(), before: None, after: Some("b".into()) };
        o.effects = vec![Effect::TodoChanged, Effect::FileChanged(c.clone())];
        assert_eq!(o.file_change(), Some(&c));
        assert!(o.changed_todo());
    }
}
