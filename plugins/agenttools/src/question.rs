//! `question`: asks the person running corral and returns their answer. When no one can
//! answer (one-shot and CI runs) the call fails with the host's message, which tells the
//! model to go on with its own judgement.

use crate::text::json_list_in_string;
use corral_plugin_sdk::args::req_str;
use corral_plugin_sdk::host::Asker;
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};

/// Longest question, in characters.
pub const MAX_QUESTION_CHARS: usize = 2000;
/// Most answer choices.
pub const MAX_OPTIONS: usize = 10;

pub fn spec() -> Spec {
    Spec::new(
        "question",
        "Ask the person running corral a question and wait for the answer. Use it only when you \
         cannot go on sensibly without their decision: an ambiguous requirement, a choice between \
         approaches with real trade-offs, or before something risky or hard to undo. Do not ask for \
         what you can find out yourself. Give `options` when the answer is one of a few choices. In \
         non-interactive runs no one can answer: the call fails, and you should decide on your own \
         judgement, say what you assumed, and carry on.",
        json!({
            "type": "object",
            "properties": {
                "question": {
                    "type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS,
                    "description": "The question, complete enough to answer without seeing the conversation"
                },
                "options": {
                    "type": "array", "maxItems": MAX_OPTIONS,
                    "items": {"type": "string", "minLength": 1},
                    "description": "Choices to offer (up to 10); leave out for a free-text answer"
                }
            },
            "required": ["question"],
            "additionalProperties": false
        }),
    )
    .needs(Capability::Context)
    .idempotent(false)
}

/// `options` as a list of non-empty, trimmed strings (a JSON-encoded list is unwrapped).
fn options(args: &Value) -> Result<Vec<String>, ToolError> {
    let not_a_list = || ToolError::invalid_args("'options' must be a list of strings");
    let items = match args.get("options") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => json_list_in_string(s).ok_or_else(not_a_list)?,
        Some(_) => return Err(not_a_list()),
    };
    if items.len() > MAX_OPTIONS {
        return Err(ToolError::invalid_args(format!(
            "'options' has {} entries; at most {MAX_OPTIONS} are allowed",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Value::String(_) => Err(ToolError::invalid_args(format!("option {} is empty", i + 1))),
            _ => Err(ToolError::invalid_args(format!("option {} must be a string", i + 1))),
        })
        .collect()
}

pub fn run(asker: &dyn Asker, args: &Value) -> Result<Output, ToolError> {
    let question = req_str(args, "question")?.trim();
    if question.is_empty() {
        return Err(ToolError::invalid_args("'question' is empty: write the question to ask"));
    }
    let chars = question.chars().count();
    if chars > MAX_QUESTION_CHARS {
        return Err(ToolError::invalid_args(format!(
            "'question' is {chars} characters long; the limit is {MAX_QUESTION_CHARS}"
        ))
        .with_hint("ask a shorter question"));
    }
    let options = options(args)?;
    match asker.ask(question, &options) {
        Ok(answer) if answer.trim().is_empty() => Ok(Output::text("The person gave an empty answer.")),
        Ok(answer) => Ok(Output::text(format!("The person answered: {}", answer.trim()))),
        // No one to ask: there is no `unavailable` kind, and `unsupported` says "not possible here".
        Err(message) => Err(ToolError::new(ErrorKind::Unsupported, message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::host::fake::FakeAsker;

    #[test]
    fn spec_declares_context_and_hints() {
        let sp = spec();
        assert_eq!(sp.name, "question");
        assert_eq!(sp.capabilities, vec![Capability::Context]);
        assert!(sp.read_only && !sp.destructive && !sp.idempotent && !sp.open_world);
        assert_eq!(sp.schema["required"], json!(["question"]));
    }

    #[test]
    fn the_answer_comes_back_as_text() {
        let a = FakeAsker::answering("  main  ");
        let out = run(&a, &json!({"question": " Which branch? "})).unwrap();
        assert_eq!(out.text, "The person answered: main");
        assert_eq!(a.asked.borrow()[0], ("Which branch?".to_string(), Vec::new()));
    }

    #[test]
    fn options_are_passed_on() {
        let a = FakeAsker::answering("later");
        run(&a, &json!({"question": "Run migrations now?", "options": ["yes", " no ", "later"]})).unwrap();
        assert_eq!(a.asked.borrow()[0].1, vec!["yes", "no", "later"]);
        let a = FakeAsker::answering("b");
        run(&a, &json!({"question": "pick", "options": "[\"a\", \"b\"]"})).unwrap();
        assert_eq!(a.asked.borrow()[0].1, vec!["a", "b"]);
    }

    #[test]
    fn an_empty_answer_is_said_plainly() {
        let out = run(&FakeAsker::answering(" "), &json!({"question": "q"})).unwrap();
        assert_eq!(out.text, "The person gave an empty answer.");
    }

    #[test]
    fn nobody_to_ask_is_an_error_with_the_hosts_message() {
        let msg = "no one can answer questions in this run; decide using your best judgement";
        let e = run(&FakeAsker::nobody(msg), &json!({"question": "q", "options": ["a"]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert_eq!(e.message, msg);
    }

    #[test]
    fn the_question_is_checked_before_anyone_is_asked() {
        let a = FakeAsker::answering("x");
        let cases = [
            (json!({}), "missing required field 'question'"),
            (json!({"question": "   "}), "'question' is empty"),
            (json!({"question": "x".repeat(MAX_QUESTION_CHARS + 1)}), "the limit is 2000"),
            (json!({"question": "q", "options": "yes"}), "must be a list of strings"),
            (json!({"question": "q", "options": 3}), "must be a list of strings"),
            (json!({"question": "q", "options": ["a", " "]}), "option 2 is empty"),
            (json!({"question": "q", "options": ["a", 1]}), "option 2 must be a string"),
            (json!({"question": "q", "options": vec!["o"; MAX_OPTIONS + 1]}), "at most 10"),
        ];
        for (args, want) in cases {
            let e = run(&a, &args).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidArgs);
            assert!(e.message.contains(want), "{args}: {}", e.message);
        }
        assert!(a.asked.borrow().is_empty());
        assert!(
            run(&a, &json!({"question": "x".repeat(MAX_QUESTION_CHARS), "options": vec!["o"; 10]})).is_ok()
        );
    }
}
