//! The REPL's slash commands as words: Tab completion of a `/` command at the start of the
//! line, and the nearest command for one mistyped.

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// Every slash command, as typed.
pub const COMMANDS: &[&str] = &[
    "/help", "/status", "/tools", "/mcp", "/compact", "/save", "/restore", "/unsave", "/undo", "/rewind",
    "/resume", "/clear", "/exit", "/quit",
];

/// The commands `typed` (a line starting with `/`, no space yet) can complete to.
pub fn completions(typed: &str) -> Vec<String> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    COMMANDS.iter().filter(|c| c.starts_with(typed)).map(|c| c.to_string()).collect()
}

/// The command nearest to the mistyped `typed` (its first word), when one is close enough.
pub fn did_you_mean(typed: &str) -> Option<&'static str> {
    let word = typed.split_whitespace().next().unwrap_or(typed).to_ascii_lowercase();
    let (distance, best) =
        COMMANDS.iter().map(|c| (crate::runtime::registry::edit_distance(&word, c), *c)).min()?;
    let prefix = word.len() > 1 && best.starts_with(&word);
    (distance <= 2 || prefix).then_some(best)
}

/// The line editor's helper: completes slash commands, nothing else.
pub struct SlashHelper;

impl Completer for SlashHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok((0, completions(line.get(..pos).unwrap_or(line))))
    }
}

impl Hinter for SlashHelper {
    type Hint = String;
}

impl Highlighter for SlashHelper {}

impl Validator for SlashHelper {}

impl Helper for SlashHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_complete_and_mistypes_are_matched() {
        assert_eq!(completions("/st"), ["/status"]);
        assert_eq!(completions("/"), COMMANDS.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        assert!(completions("/save x").is_empty() && completions("fix /st").is_empty());
        assert_eq!(did_you_mean("/stauts"), Some("/status"));
        assert_eq!(did_you_mean("/comapct --drop"), Some("/compact"));
        assert_eq!(did_you_mean("/ex"), Some("/exit"));
        assert_eq!(did_you_mean("/frobnicate"), None);
    }
}
