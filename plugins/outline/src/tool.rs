//! The `outline` tool: its description and arguments, and the text it returns for a file,
//! a list of files, or every source file under a folder, within the output cap.

use crate::items::{self, Outline};
use crate::lang::{Lang, SUPPORTED};
use crate::survey;
use corral_plugin_sdk::args::{opt_str, opt_u64};
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// Cap on one result, in bytes (as the other file tools).
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;
/// Largest file parsed.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Most entries of `files`.
pub const MAX_FILES: usize = 20;
/// Most files of a folder outlined in one call.
pub const MAX_FOLDER_FILES: usize = 100;
/// Nesting levels: 1 is the top level only.
pub const MAX_DEPTH: u64 = 3;

pub fn spec() -> Spec {
    Spec::new(
        "outline",
        "Show the structure of source files without reading them whole: classes, functions, methods and \
         types, each with its line range (`start-end`, as read_file numbers lines) and its declaration on \
         one line, members indented. Rust, Python, JavaScript, TypeScript, Go, C, C++, Java (tree-sitter). \
         `file_path` may be a folder: every such file under it (.gitignore respected, 100 at most). \
         `depth` 1-3 (default 2 for a file, 1 for a folder).",
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "A source file or a folder"},
                "files": {
                    "type": "array", "maxItems": MAX_FILES,
                    "description": "Several files instead: paths, or {file_path, depth}",
                    "items": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "object", "properties": {
                                "file_path": {"type": "string"},
                                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH}
                            }, "required": ["file_path"]}
                        ]
                    }
                },
                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": "Levels shown"}
            },
            "additionalProperties": false
        }),
    )
}

/// Runs the tool over the running plugin's roots.
pub fn run(args: &Value) -> Result<Output, ToolError> {
    run_in(&Resolver::of_host(), args)
}

/// Runs the tool with paths resolved by `resolver`.
pub fn run_in(resolver: &Resolver, args: &Value) -> Result<Output, ToolError> {
    let depth = opt_u64(args, "depth")?;
    let file_path = opt_str(args, "file_path")?.filter(|p| !p.trim().is_empty());
    let files = args.get("files").filter(|f| !f.is_null() && f.as_array().is_none_or(|a| !a.is_empty()));
    let mut out = Text::default();
    match (file_path, files) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_args("give either `file_path` or `files`, not both"));
        }
        (None, None) => {
            return Err(ToolError::invalid_args("`file_path` is missing")
                .with_hint("give a source file or a folder, e.g. {\"file_path\": \"src\"}"));
        }
        (Some(input), None) => {
            let path = resolver.resolve(input)?;
            let meta = std::fs::metadata(&path).map_err(|e| io_error(input, &e))?;
            if meta.is_dir() {
                folder(resolver, &path, level(depth, 1), &mut out);
            } else {
                let block = file(&path, &resolver.display(&path), level(depth, 2))?;
                out.push(&block, true);
            }
        }
        (None, Some(list)) => {
            let list = list.as_array().ok_or_else(|| ToolError::invalid_args("`files` must be an array"))?;
            if list.len() > MAX_FILES {
                return Err(ToolError::invalid_args(format!(
                    "`files` has {} entries; the limit is {MAX_FILES}",
                    list.len()
                ))
                .with_hint("outline a folder instead, or split the list"));
            }
            for (i, entry) in list.iter().enumerate() {
                let (input, own_depth) = match entry {
                    Value::String(s) => (s.as_str(), None),
                    Value::Object(_) => {
                        (opt_str(entry, "file_path")?.unwrap_or(""), opt_u64(entry, "depth")?)
                    }
                    _ => {
                        return Err(ToolError::invalid_args(format!(
                            "`files[{i}]` must be a path or an object"
                        )));
                    }
                };
                let block = resolver
                    .resolve(input)
                    .and_then(|p| file(&p, &resolver.display(&p), level(own_depth.or(depth), 2)))
                    .unwrap_or_else(|e| format!("{input}: {}\n", e.message));
                if !out.push(&block, i == 0) {
                    out.capped(&format!(
                        "{} more files not shown; outline fewer at a time",
                        list.len() - i - 1
                    ));
                    break;
                }
            }
        }
    }
    Ok(Output::text(out.text).truncated(out.cut))
}

/// `depth` within 1..=3, or `default`.
fn level(depth: Option<u64>, default: u64) -> usize {
    usize::try_from(depth.unwrap_or(default).clamp(1, MAX_DEPTH)).unwrap_or(1)
}

/// Every supported source file under `dir`, one block each, within the caps.
fn folder(resolver: &Resolver, dir: &Path, depth: usize, out: &mut Text) {
    let found = survey::sources(dir);
    let shown = resolver.display(dir);
    if found.files.is_empty() {
        out.push(&format!("{shown}: no {SUPPORTED} source files here (hidden, ignored and dependency folders are skipped)\n"), true);
        return;
    }
    let total = found.files.len();
    let _ = writeln!(
        out.text,
        "{total} source file{} under {shown}, depth {depth}:\n",
        if total == 1 { "" } else { "s" }
    );
    for (i, path) in found.files.iter().enumerate() {
        if i == MAX_FOLDER_FILES {
            out.note(&format!(
                "{} more files not shown (at most {MAX_FOLDER_FILES} per call); outline a subfolder",
                total - i
            ));
            return;
        }
        let name = resolver.display(path);
        let block = file(path, &name, depth).unwrap_or_else(|e| format!("{name}: skipped: {}\n", e.message));
        if !out.push(&format!("{block}\n"), i == 0) {
            out.capped(&format!(
                "{} more files not shown; outline a subfolder or use depth 1",
                total - i - 1
            ));
            return;
        }
    }
    if found.capped {
        out.note(&format!("the walk stopped after {} entries; outline a subfolder", survey::MAX_WALK));
    }
}

/// One file's block: a title line, then one line per item.
fn file(path: &Path, shown: &str, depth: usize) -> Result<String, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "'{shown}' is a folder; give it as `file_path` to outline every file in it"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "'{shown}' is {} KB; outline parses files up to {} KB",
                meta.len() / 1024,
                MAX_FILE_BYTES / 1024
            ),
        )
        .with_hint("use grep to find definitions in it, then read_file with offset and limit"));
    }
    let Some(lang) = Lang::of(path, "") else {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!(
                "'{shown}' is not a source file outline knows; it parses {SUPPORTED} (by file extension)"
            ),
        )
        .with_hint("use grep to find definitions, or read_file"));
    };
    let bytes = std::fs::read(path).map_err(|e| io_error(shown, &e))?;
    let text = text_of(&bytes, shown)?;
    // A `.h` file's language depends on its text.
    let lang = Lang::of(path, text).unwrap_or(lang);
    let outline = items::outline(lang, text, depth).map_err(|e| ToolError::new(ErrorKind::Internal, e))?;
    Ok(render(shown, lang, text, &outline))
}

fn text_of<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, ToolError> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(ToolError::new(ErrorKind::Unsupported, format!("'{shown}' is a binary file")));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorKind::Unsupported,
            format!(
                "'{shown}' is not valid UTF-8 (first bad byte at offset {}); only UTF-8 text is parsed",
                e.valid_up_to()
            ),
        )
    })
}

/// The block of one file: `path (Language, N lines)`, the items with their ranges aligned.
pub fn render(shown: &str, lang: Lang, text: &str, outline: &Outline) -> String {
    let lines = text.lines().count();
    let mut block = format!("{shown} ({}, {lines} line{})\n", lang.name(), if lines == 1 { "" } else { "s" });
    if let Some(line) = outline.error_line {
        let _ = writeln!(block, "  (syntax errors from line {line}: items near them may be missing)");
    }
    if outline.items.is_empty() {
        block.push_str("  (no classes, functions or types found)\n");
        return block;
    }
    let ranges: Vec<String> = outline.items.iter().map(|i| format!("{}-{}", i.start, i.end)).collect();
    let width = ranges.iter().map(String::len).max().unwrap_or(0);
    for (item, range) in outline.items.iter().zip(&ranges) {
        let _ = writeln!(block, "  {range:<width$}  {}{}", "  ".repeat(item.level), item.header);
    }
    block
}

/// The result being built, kept under [`MAX_OUTPUT_BYTES`].
#[derive(Default)]
struct Text {
    text: String,
    cut: bool,
}

impl Text {
    /// Appends `block` whole if it fits; if not, and `may_cut` (the first block), as many of
    /// its lines as fit, with a note. Returns false when the block was not appended whole.
    fn push(&mut self, block: &str, may_cut: bool) -> bool {
        let room = MAX_OUTPUT_BYTES.saturating_sub(self.text.len() + 200);
        if block.len() <= room {
            self.text.push_str(block);
            return true;
        }
        if may_cut {
            let mut end = 0;
            for line in block.split_inclusive('\n') {
                if end + line.len() + 4 > room {
                    break;
                }
                end += line.len();
            }
            self.text.push_str(&block[..end]);
            self.text.push_str("...\n");
            let rest = block[end..].lines().count();
            self.capped(&format!(
                "{rest} more lines of this outline not shown; use depth 1, or read_file with offset"
            ));
        }
        false
    }

    /// A closing note in brackets: something was left out.
    fn note(&mut self, what: &str) {
        self.cut = true;
        let _ = writeln!(self.text, "[{what}]");
    }

    fn capped(&mut self, what: &str) {
        self.note(&format!("output capped at {} KB: {what}", MAX_OUTPUT_BYTES / 1024));
    }
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
