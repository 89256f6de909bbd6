//! Reading the `command` argument: an argument array, a JSON-encoded array in a string, or a
//! plain string split into words the way a shell would split it, as long as it uses nothing
//! a shell would interpret (pipes, redirections, variables, globs, ...).

use corral_plugin_sdk::{ToolError, Value};

/// What the model asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A program and its arguments.
    Argv(Vec<String>),
    /// A line that needs a shell; `syntax` is the first shell construct found.
    Shell { line: String, syntax: String },
}

/// The shell construct at the start of `rest`, if any (outside quotes).
fn construct(c: char, next: Option<char>, word_start: bool) -> Option<String> {
    match c {
        '|' | '&' | ';' | '<' | '>' => Some(if next == Some(c) { format!("{c}{c}") } else { c.to_string() }),
        '(' | ')' | '`' | '*' | '?' | '[' | ']' | '{' | '}' | '\n' => Some(c.escape_default().to_string()),
        '$' => Some("$".into()),
        '~' | '#' if word_start => Some(c.to_string()),
        _ => None,
    }
}

/// Splits `line` into words, honouring single quotes, double quotes and backslashes as a
/// POSIX shell does. `Err` names the first construct only a shell could run.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("an unclosed ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\')) => word.push(e),
                            Some('$') | Some('`') => return Err("a \\$ or \\` escape".into()),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("an unclosed \" quote".into()),
                        },
                        Some(ch @ ('$' | '`')) => return Err(ch.to_string()),
                        Some(ch) => word.push(ch),
                        None => return Err("an unclosed \" quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => return Err("a trailing \\".into()),
                    Some(ch) => word.push(ch),
                }
            }
            c => {
                if let Some(found) = construct(c, chars.peek().copied(), !in_word) {
                    return Err(found);
                }
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
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
            match split(line) {
                Ok(words) => {
                    strings(&words.into_iter().map(Value::String).collect::<Vec<_>>()).map(Command::Argv)
                }
                Err(syntax) => Ok(Command::Shell { line: line.to_string(), syntax }),
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
            ("echo 'unclosed", "an unclosed ' quote"),
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
