//! Splitting a command line into words as a POSIX shell would, without running one: the host's
//! `use_skill` script arguments and the guest's `run_command` line follow the same rules.
//!
//! The rules: blanks (space, tab, newline) separate words; `'...'` is taken literally; in
//! `"..."` a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline (any other backslash
//! stays); outside quotes a backslash escapes the next character; a backslash before a newline
//! joins the lines. `''` and `""` are empty words. An unclosed quote and a backslash at the
//! very end are errors that say so. Nothing is expanded: with [`Syntax::Refuse`] anything a
//! shell would interpret (pipes, redirections, `$`, globs, ...) is named in the error instead.

use std::fmt;

/// What the characters a shell would interpret mean to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// They are ordinary characters: the words go to a program directly, no shell sees them.
    Literal,
    /// They are refused, naming the first one: only a shell could run the line.
    Refuse,
}

/// Why a line is not a list of words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordsError {
    /// A `'` or `"` quote that is never closed.
    Unclosed(char),
    /// A backslash at the very end, escaping nothing.
    TrailingBackslash,
    /// Something only a shell could run (with [`Syntax::Refuse`]): `|`, `&&`, `$`, `*`, ...
    Shell(String),
}

impl fmt::Display for WordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WordsError::Unclosed('\'') => f.write_str("an unclosed single quote"),
            WordsError::Unclosed(_) => f.write_str("an unclosed double quote"),
            WordsError::TrailingBackslash => f.write_str("a backslash at the end that escapes nothing"),
            WordsError::Shell(s) => write!(f, "shell syntax ({s})"),
        }
    }
}

impl std::error::Error for WordsError {}

/// The shell construct starting with `c` (outside quotes), if it is one.
fn construct(c: char, next: Option<char>, word_start: bool) -> Option<String> {
    match c {
        '|' | '&' | ';' | '<' | '>' => Some(if next == Some(c) { format!("{c}{c}") } else { c.to_string() }),
        '(' | ')' | '`' | '*' | '?' | '[' | ']' | '{' | '}' | '\n' => Some(c.escape_default().to_string()),
        '$' => Some("$".into()),
        '~' | '#' if word_start => Some(c.to_string()),
        _ => None,
    }
}

/// Splits `line` into words (see the module's rules).
pub fn split(line: &str, syntax: Syntax) -> Result<Vec<String>, WordsError> {
    let refuse = syntax == Syntax::Refuse;
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' if refuse => return Err(WordsError::Shell("\\n".into())),
            ' ' | '\t' | '\n' => {
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
                        None => return Err(WordsError::Unclosed('\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => {}
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(WordsError::Unclosed('"')),
                        },
                        Some(ch @ ('$' | '`')) if refuse => return Err(WordsError::Shell(ch.to_string())),
                        Some(ch) => word.push(ch),
                        None => return Err(WordsError::Unclosed('"')),
                    }
                }
            }
            '\\' => match chars.next() {
                // A joined line: neither a character nor a separator.
                Some('\n') => {}
                Some(ch) => {
                    in_word = true;
                    word.push(ch);
                }
                None => return Err(WordsError::TrailingBackslash),
            },
            c => {
                if refuse && let Some(found) = construct(c, chars.peek().copied(), !in_word) {
                    return Err(WordsError::Shell(found));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(line: &str) -> Result<Vec<String>, WordsError> {
        split(line, Syntax::Literal)
    }

    fn words(w: &[&str]) -> Result<Vec<String>, WordsError> {
        Ok(w.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn blanks_separate_and_runs_of_them_count_once() {
        assert_eq!(lit("  a \t b\nc  "), words(&["a", "b", "c"]));
        assert_eq!(lit(""), words(&[]));
        assert_eq!(lit(" \t "), words(&[]));
        // Only blanks separate, as in a shell: a no-break space is part of the word.
        assert_eq!(lit("a\u{a0}b"), words(&["a\u{a0}b"]));
    }

    #[test]
    fn single_quotes_are_literal() {
        assert_eq!(lit(r#"'a b' 'c\d' '"' '$HOME'"#), words(&["a b", r"c\d", "\"", "$HOME"]));
        assert_eq!(lit("x'y z'w"), words(&["xy zw"]));
    }

    #[test]
    fn double_quotes_escape_only_what_a_shell_escapes_there() {
        assert_eq!(lit(r#""a b" "q\"x" "b\\s" "\$" "\`""#), words(&["a b", "q\"x", r"b\s", "$", "`"]));
        assert_eq!(lit(r#""a\nb" "\x""#), words(&[r"a\nb", r"\x"]));
        assert_eq!(lit("\"a\\\nb\""), words(&["ab"]), "a backslash-newline joins the lines");
        assert_eq!(lit(r#""'""#), words(&["'"]));
    }

    #[test]
    fn a_backslash_outside_quotes_escapes_the_next_character() {
        assert_eq!(lit(r"a\ b c\'d \\"), words(&["a b", "c'd", "\\"]));
        assert_eq!(lit("a\\\nb"), words(&["ab"]), "a backslash-newline joins the lines");
        assert_eq!(lit("a \\\n b"), words(&["a", "b"]));
    }

    #[test]
    fn empty_quotes_are_empty_words() {
        assert_eq!(lit(r#"a '' "" b"#), words(&["a", "", "", "b"]));
        assert_eq!(lit("''"), words(&[""]));
    }

    #[test]
    fn an_unclosed_quote_or_a_trailing_backslash_is_an_error_that_says_so() {
        assert_eq!(lit("a 'b"), Err(WordsError::Unclosed('\'')));
        assert_eq!(lit("a \"b"), Err(WordsError::Unclosed('"')));
        assert_eq!(lit("a \"b\\"), Err(WordsError::Unclosed('"')));
        assert_eq!(lit("a\\"), Err(WordsError::TrailingBackslash));
        assert_eq!(WordsError::Unclosed('\'').to_string(), "an unclosed single quote");
        assert_eq!(WordsError::Unclosed('"').to_string(), "an unclosed double quote");
        assert_eq!(WordsError::TrailingBackslash.to_string(), "a backslash at the end that escapes nothing");
        assert_eq!(split("a 'b", Syntax::Refuse), Err(WordsError::Unclosed('\'')));
    }

    #[test]
    fn literal_words_keep_what_a_shell_would_interpret() {
        assert_eq!(lit("a|b $HOME *.rs ~/x #c"), words(&["a|b", "$HOME", "*.rs", "~/x", "#c"]));
        assert_eq!(lit(r#""$HOME""#), words(&["$HOME"]));
    }

    #[test]
    fn refused_syntax_is_named() {
        let cases = [
            ("ls | wc -l", "|"),
            ("a || b", "||"),
            ("make && make test", "&&"),
            ("sleep 1 &", "&"),
            ("echo hi > out.txt", ">"),
            ("sort < in", "<"),
            ("a; b", ";"),
            ("echo $HOME", "$"),
            ("echo \"$HOME\"", "$"),
            ("echo \"`id`\"", "`"),
            ("echo `id`", "`"),
            ("ls *.rs", "*"),
            ("ls a?", "?"),
            ("ls [ab]", "["),
            ("echo {a,b}", "{"),
            ("(cd x)", "("),
            ("cat ~/.ssh/id_rsa", "~"),
            ("ls # comment", "#"),
            ("a\nb", "\\n"),
        ];
        for (line, found) in cases {
            assert_eq!(split(line, Syntax::Refuse), Err(WordsError::Shell(found.into())), "{line}");
        }
        assert_eq!(WordsError::Shell("|".into()).to_string(), "shell syntax (|)");
    }

    #[test]
    fn quoted_or_escaped_syntax_is_not_refused() {
        let ok = split(r#"echo 'a|b' "*" x#y a~b \$ "\$" \; --opt='A B'"#, Syntax::Refuse);
        assert_eq!(ok, words(&["echo", "a|b", "*", "x#y", "a~b", "$", "$", ";", "--opt=A B"]));
        assert_eq!(split("a \\\n b", Syntax::Refuse), words(&["a", "b"]));
    }
}
