//! Questions from plugins (`question`) answered at the terminal: the question and its choices
//! drawn escaped on stderr, the answer read with line editing; a number picks a choice.

use crate::capabilities::context::Asker;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::Write;

/// Asks the person at the terminal; numbered choices may be answered by number.
pub struct TerminalAsker;

impl Asker for TerminalAsker {
    fn ask(&self, question: &str, choices: &[String]) -> Result<String, String> {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "\n? {}", crate::termtext::clean(question));
        for (i, c) in choices.iter().enumerate() {
            let _ = writeln!(err, "  {}. {}", i + 1, crate::termtext::escaped(c));
        }
        drop(err);
        let mut editor = DefaultEditor::new().map_err(|e| format!("cannot read the answer: {e}"))?;
        match editor.readline("answer› ") {
            Ok(line) => Ok(resolve_choice(line.trim(), choices)),
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => {
                Err("the person declined to answer; proceed on your own judgement".to_string())
            }
            Err(e) => Err(format!("cannot read the answer: {e}")),
        }
    }
}

/// A number picks that choice; anything else is taken as typed.
fn resolve_choice(answer: &str, choices: &[String]) -> String {
    match answer.parse::<usize>() {
        Ok(n) if n >= 1 && n <= choices.len() => choices[n - 1].clone(),
        _ => answer.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_answers_pick_choices() {
        let c = vec!["yes".to_string(), "no".to_string()];
        assert_eq!(resolve_choice("2", &c), "no");
        assert_eq!(resolve_choice("3", &c), "3");
        assert_eq!(resolve_choice("maybe", &c), "maybe");
    }
}
