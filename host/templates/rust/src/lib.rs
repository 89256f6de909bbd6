//! {{name}}: a corral tool plugin on corral's guest SDK (sdk/). corral calls `tools` once to
//! learn the tools, then `call` for each use, in a fresh sandboxed instance that sees the
//! workspace read-only.

use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, args, json};
use serde::Deserialize;

const TOOL: &str = "{{tool}}";

/// The tool's arguments as the model sends them; `args::parse` turns a missing, mistyped or
/// unknown field into an `invalid-args` error that names it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The file, relative to the workspace root or absolute inside it.
    path: String,
}

struct Tool;

impl Plugin for Tool {
    fn tools() -> Vec<Spec> {
        // Read-only, idempotent and needing no capability: `Spec::writes` and `Spec::needs`
        // declare more.
        vec![Spec::new(
            TOOL,
            "Counts the lines, words and bytes of a text file in the workspace. \
             Use it to size a file before reading it.",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file, relative to the workspace root or absolute inside it"
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )]
    }

    fn call(_name: &str, a: Value) -> Result<Output, ToolError> {
        let Args { path } = args::parse(a)?;
        // The roots are preopened at their absolute paths: resolve the model's path first.
        // `Resolver::of_host` asks the host for the roots only, which needs no grant.
        let file = Resolver::of_host().resolve(&path)?;
        let bytes = std::fs::read(&file).map_err(|e| io_error(&path, &e))?;
        let c = count(&bytes);
        // A tool can also return pictures: `Output::text(..).with_image("image/png", bytes)`.
        Ok(Output::text(format!("{path}: {} lines, {} words, {} bytes", c.lines, c.words, c.bytes)))
    }
}

corral_plugin_sdk::export_plugin!(Tool);

/// Lines (newline characters, plus a last line without one), words and bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct Counts {
    pub lines: usize,
    pub words: usize,
    pub bytes: usize,
}

pub fn count(bytes: &[u8]) -> Counts {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    let unterminated = usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    let words = bytes.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).count();
    Counts { lines: newlines + unterminated, words, bytes: bytes.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_words_and_bytes() {
        assert_eq!(count(b""), Counts { lines: 0, words: 0, bytes: 0 });
        assert_eq!(count(b"one two\nthree\n"), Counts { lines: 2, words: 3, bytes: 14 });
        assert_eq!(count(b"no newline at end"), Counts { lines: 1, words: 4, bytes: 17 });
        assert_eq!(count(b"  spaced\t\tout  \n\n"), Counts { lines: 2, words: 2, bytes: 17 });
    }

    #[test]
    fn arguments_are_typed() {
        let e = args::parse::<Args>(json!({"path": 7})).err().map(|e| e.message).unwrap_or_default();
        assert!(e.contains("expected a string"), "{e}");
        let e = args::parse::<Args>(json!({"file": "a"})).err().map(|e| e.message).unwrap_or_default();
        assert!(e.contains("unknown field `file`"), "{e}");
    }
}
