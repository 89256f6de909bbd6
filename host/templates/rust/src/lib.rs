//! {{name}}: a corral tool plugin. corral calls `describe` once to learn the tools, then
//! `invoke` for each call, in a fresh sandboxed instance that sees the workspace read-only.

wit_bindgen::generate!({ path: "wit", world: "tool-plugin" });

use corral::plugin::types::{ContentPart, ErrorKind, ToolError, ToolHints, ToolOutput, ToolSpec};
use corral::plugin::workspace;
use exports::corral::plugin::tool::Guest;
use std::path::{Path, PathBuf};

const TOOL: &str = "{{tool}}";

struct Plugin;

export!(Plugin);

impl Guest for Plugin {
    fn describe() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: TOOL.to_string(),
            description: "Counts the lines, words and bytes of a text file in the workspace. \
                          Use it to size a file before reading it."
                .to_string(),
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file, relative to the workspace root or absolute inside it"
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            })
            .to_string(),
            hints: ToolHints { read_only: true, destructive: false, idempotent: true, open_world: false },
            // This tool only reads; a tool that writes would list Capability::WorkspaceWrite.
            capabilities: vec![],
        }]
    }

    fn invoke(name: String, args_json: String) -> Result<ToolOutput, ToolError> {
        if name != TOOL {
            return Err(error(ErrorKind::NotFound, format!("this plugin has no tool named '{name}'"), None));
        }
        let args: serde_json::Value = serde_json::from_str(&args_json)
            .map_err(|e| error(ErrorKind::InvalidArgs, format!("the arguments are not JSON: {e}"), None))?;
        let path = args.get("path").and_then(|p| p.as_str()).filter(|p| !p.is_empty()).ok_or_else(|| {
            error(
                ErrorKind::InvalidArgs,
                "'path' is required".into(),
                Some("pass a file path relative to the workspace root, e.g. {\"path\": \"README.md\"}"),
            )
        })?;
        // Reads go straight through WASI: the workspace is preopened read-only.
        let bytes = std::fs::read(resolve(path)).map_err(|e| io_error(path, &e))?;
        let c = count(&bytes);
        let text = format!("{path}: {} lines, {} words, {} bytes", c.lines, c.words, c.bytes);
        Ok(ToolOutput { content: vec![ContentPart::Text(text)], truncated: false })
    }
}

/// Relative paths start at the workspace root: the first root the host reports.
fn resolve(path: &str) -> PathBuf {
    if Path::new(path).is_absolute() {
        return PathBuf::from(path);
    }
    let root = workspace::roots().into_iter().next().map(|r| r.path).unwrap_or_else(|| "/".into());
    Path::new(&root).join(path)
}

fn error(kind: ErrorKind, message: String, hint: Option<&str>) -> ToolError {
    ToolError { kind, message, hint: hint.map(str::to_string) }
}

/// A tool error a model can act on, for a failed read of `path`.
fn io_error(path: &str, e: &std::io::Error) -> ToolError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => error(
            ErrorKind::NotFound,
            format!("'{path}' does not exist"),
            Some("check the path with list_files; paths are relative to the workspace root"),
        ),
        K::IsADirectory => error(ErrorKind::InvalidArgs, format!("'{path}' is a directory, not a file"), None),
        K::PermissionDenied => error(
            ErrorKind::PermissionDenied,
            format!("'{path}' is outside the workspace"),
            Some("only files inside the workspace can be read"),
        ),
        _ => error(ErrorKind::Io, format!("cannot read '{path}': {e}"), None),
    }
}

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
}
