//! Reading the `command` argument: an argument array, a JSON-encoded array in a string, or a
//! plain string split into words the way a shell would split it (the contract's shell words),
//! as long as it uses nothing a shell would interpret (pipes, redirections, variables, globs, ...).

use corral_plugin_sdk::contract::words::{self, Syntax, WordsError};
use corral_plugin_sdk::{ToolError, Value};

/// What the model asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A program and its arguments.
    Argv(Vec<String>),
    /// A line that needs a shell; `syntax` is the first shell construct found.
    Shell { line: String, syntax: String },
}

fn strings(items: &[Value]) -> Result<Vec<String>, ToolError> {
    let argv: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(ToolError::invalid_args(format!("'command' item {} must be a string", i + 1))),
        })
        .collect::<Result<_, _>>()?;
    if argv.is_empty() || argv[0].trim().is_empty() {
        return Err(ToolError::invalid_args(
            "'command' is empty: give the program and its arguments, like [\"ls\", \"-la\"]",
        ));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(ToolError::invalid_args("'command' contains a NUL byte"));
    }
    Ok(argv)
}

/// Reads the `command` argument.
pub fn parse(command: &Value) -> Result<Command, ToolError> {
    match command {
        Value::Array(items) => strings(items).map(Command::Argv),
        Value::String(s) => {
            let line = s.trim();
            if line.starts_with('[')
                && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(line)
            {
                return strings(&items).map(Command::Argv);
            }
            if line.is_empty() {
                return Err(ToolError::invalid_args("'command' is empty"));
            }
            match words::split(line, Syntax::Refuse) {
                Ok(words) => {
                    strings(&words.into_iter().map(Value::String).collect::<Vec<_>>()).map(Command::Argv)
                }
                Err(WordsError::Shell(syntax)) => Ok(Command::Shell { line: line.to_string(), syntax }),
                Err(e) => Err(ToolError::invalid_args(format!("'command' has {e}"))
                    .with_hint("close the quote (or escape the backslash), or pass the command as an array")),
            }
        }
        _ => {
            Err(ToolError::invalid_args("'command' must be an array of strings, like [\"git\", \"status\"]"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::json;

    fn argv(words: &[&str]) -> Command {
        Command::Argv(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn arrays_and_json_strings_are_argument_lists() {
        assert_eq!(parse(&json!(["ls", "-la", "a b"])).unwrap(), argv(&["ls", "-la", "a b"]));
        assert_eq!(parse(&json!("[\"git\", \"log\", \"-1\"]")).unwrap(), argv(&["git", "log", "-1"]));
        assert_eq!(parse(&json!(["head", "-n", 5])).unwrap(), argv(&["head", "-n", "5"]));
        assert!(parse(&json!([])).unwrap_err().message.contains("empty"));
        assert!(parse(&json!([true])).unwrap_err().message.contains("item 1"));
        assert!(parse(&json!({"a": 1})).unwrap_err().message.contains("array of strings"));
    }

    #[test]
    fn plain_strings_are_split_like_a_shell_would() {
        assert_eq!(parse(&json!("  cargo test  -p x ")).unwrap(), argv(&["cargo", "test", "-p", "x"]));
        assert_eq!(
            parse(&json!(r#"git commit -m "fix: the bug" --author='A B'"#)).unwrap(),
            argv(&["git", "commit", "-m", "fix: the bug", "--author=A B"])
        );
        assert_eq!(parse(&json!(r"echo a\ b x#y")).unwrap(), argv(&["echo", "a b", "x#y"]));
        assert_eq!(parse(&json!("echo 'a|b' \"*\"")).unwrap(), argv(&["echo", "a|b", "*"]));
        assert_eq!(parse(&json!("echo \"\"")).unwrap(), argv(&["echo", ""]));
    }

    #[test]
    fn an_unclosed_quote_is_a_mistake_to_fix_not_shell_syntax() {
        let e = parse(&json!("echo 'unclosed")).unwrap_err();
        assert_eq!(e.message, "'command' has an unclosed single quote");
        assert!(e.hint.unwrap().contains("as an array"));
        let e = parse(&json!(r"echo a\")).unwrap_err();
        assert_eq!(e.message, "'command' has a backslash at the end that escapes nothing");
    }

    #[test]
    fn shell_syntax_is_recognised_and_named() {
        let cases = [
            ("ls | wc -l", "|"),
            ("make && make test", "&&"),
            ("echo hi > out.txt", ">"),
            ("echo $HOME", "$"),
            ("echo \"$HOME\"", "$"),
            ("ls *.rs", "*"),
            ("cat ~/.ssh/id_rsa", "~"),
            ("echo `id`", "`"),
            ("a; b", ";"),
            ("ls # comment", "#"),
        ];
        for (line, syntax) in cases {
            assert_eq!(
                parse(&json!(line)).unwrap(),
                Command::Shell { line: line.to_string(), syntax: syntax.to_string() },
                "{line}"
            );
        }
    }
}
