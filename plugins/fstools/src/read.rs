//! `read_file` and `read_multiple_files`: numbered lines from text files, with paging,
//! a checksum of the whole file, and directory listings for `read_file`. Both tools go
//! through [`read_one`], so a file reads the same way alone or in a batch.

use crate::common::{self, MAX_FILE_BYTES, MAX_OUTPUT_BYTES};
use corral_plugin_sdk::args::{opt_u64, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Lines read when the call gives no `limit`.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Most files one `read_multiple_files` call accepts.
pub const MAX_BATCH_FILES: usize = 20;
/// Room kept free under a byte budget for the trailer lines (hint and checksum).
const TRAILER_RESERVE: usize = 128;

pub fn spec() -> Spec {
    Spec::new(
        "read_file",
        "Read a text file as numbered lines (`N: text`, N is the 1-based line number), or list a \
         directory. Shows up to `limit` lines (default 2000) starting at line `offset` (default 1); \
         `tail: N` shows the last N lines instead (not together with `offset`). Output is capped at \
         50 KB and lines longer than 2000 characters are clipped; when lines remain, the last note \
         says which `offset` to continue from. Every file read ends with `[checksum=XXXXXXXX]` \
         (8 hex digits of the whole file's XXH3-64 hash, to tell versions apart; not a security hash). Binary and non-UTF-8 files are \
         refused. A .ipynb notebook is shown as its cells. A directory gives its entries sorted by name, subdirectories ending in `/`. \
         Read a file before editing or overwriting it.",
        json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "File or directory, relative to the workspace root or absolute"
                },
                "offset": {
                    "type": "integer", "minimum": 1,
                    "description": "First line to show, 1-based (default 1)"
                },
                "limit": {
                    "type": "integer", "minimum": 1,
                    "description": "Most lines to show (default 2000)"
                },
                "tail": {
                    "type": "integer", "minimum": 1,
                    "description": "Show the last N lines of the file instead of starting at `offset`"
                }
            },
            "required": ["file_path"],
            "additionalProperties": false
        }),
    )
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let input = req_str(args, "file_path")?;
    let request = Request::parse(args)?;
    let resolver = Resolver::new(ws);
    // An image file is returned as the image itself.
    if let Ok(path) = resolver.resolve(input)
        && std::fs::metadata(&path).is_ok_and(|m| m.is_file())
        && let Some(out) = crate::image::read_if_image(&path, input)?
    {
        ws.note_read(&path);
        return Ok(out);
    }
    let read = read_one(&resolver, input, &request, MAX_OUTPUT_BYTES, true)?;
    if read.is_file {
        ws.note_read(&read.abs);
    }
    Ok(Output::text(read.text).truncated(read.truncated))
}

pub fn multiple_spec() -> Spec {
    Spec::new(
        "read_multiple_files",
        "Read several text files in one call (at most 20). Each entry of `files` is a path, or an \
         object with `file_path` and optional `offset`, `limit` and `tail` that work as in \
         read_file. The result starts with a summary (files_succeeded, files_with_errors, \
         files_skipped, batch_truncated), then one `=== FILE: path ===` section per file with its \
         status and numbered lines ending in `[checksum=...]`, or the error for that file; one \
         failing file does not fail the others. All sections share one 50 KB output cap: when it \
         is reached the remaining files are skipped (read them in another call). Directories are \
         refused; use list_files for those.",
        json!({
            "type": "object",
            "properties": {
                "files": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_BATCH_FILES,
                    "description": "Files to read, in order",
                    "items": {
                        "anyOf": [
                            {"type": "string"},
                            {
                                "type": "object",
                                "properties": {
                                    "file_path": {"type": "string"},
                                    "offset": {"type": "integer", "minimum": 1},
                                    "limit": {"type": "integer", "minimum": 1},
                                    "tail": {"type": "integer", "minimum": 1}
                                },
                                "required": ["file_path"]
                            }
                        ]
                    }
                }
            },
            "required": ["files"],
            "additionalProperties": false
        }),
    )
}

pub fn multiple_run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let files = match args.get("files") {
        Some(Value::Array(files)) => files,
        None | Some(Value::Null) => return Err(ToolError::invalid_args("missing required field 'files'")),
        Some(_) => {
            return Err(ToolError::invalid_args(
                "'files' must be an array of paths or {file_path, offset, limit, tail} objects",
            ));
        }
    };
    if files.is_empty() {
        return Err(ToolError::invalid_args("'files' is empty; give at least one file"));
    }
    if files.len() > MAX_BATCH_FILES {
        return Err(ToolError::invalid_args(format!(
            "'files' has {} entries; at most {MAX_BATCH_FILES} files can be read in one call",
            files.len()
        ))
        .with_hint("split the files over several calls"));
    }

    let resolver = Resolver::new(ws);
    let (mut succeeded, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut batch_truncated = false;
    let mut body = String::new();
    let labels: Vec<String> = files.iter().enumerate().map(|(i, e)| entry_label(e, i)).collect();
    // What reporting a file as skipped takes, so that skipping the rest always fits.
    let skip_cost = |label: &String| label.len() + 16 + SKIPPED_STATUS.len();
    for (i, entry) in files.iter().enumerate() {
        let label = &labels[i];
        let mut section = format!("\n=== FILE: {label} ===\n");
        if skipped > 0 {
            skipped += 1;
            section.push_str(SKIPPED_STATUS);
            body.push_str(&section);
            continue;
        }
        let later: usize = labels[i + 1..].iter().map(skip_cost).sum();
        let budget = MAX_OUTPUT_BYTES.saturating_sub(body.len() + section.len() + HEADER_RESERVE + later);
        let result = parse_entry(entry)
            .and_then(|(input, request)| read_one(&resolver, input, &request, budget, false));
        match result {
            Ok(read) if succeeded > 0 && (read.over_budget || read.text.len() > budget) => {
                // It does not fit after the files before it: leave it and the rest for later.
                skipped += 1;
                batch_truncated = true;
                section.push_str(SKIPPED_STATUS);
            }
            Ok(read) => {
                ws.note_read(&read.abs);
                succeeded += 1;
                batch_truncated |= read.over_budget;
                section.push_str(if read.truncated { "status: ok (truncated)\n" } else { "status: ok\n" });
                section.push_str(&read.text);
            }
            Err(e) => {
                failed += 1;
                let _ = writeln!(section, "status: error\nerror: {e}");
            }
        }
        body.push_str(&section);
    }
    let mut text = format!(
        "files_succeeded: {succeeded}\nfiles_with_errors: {failed}\nfiles_skipped: {skipped}\n\
         batch_truncated: {batch_truncated}\n"
    );
    text.push_str(&body);
    Ok(Output::text(text).truncated(batch_truncated))
}

const SKIPPED_STATUS: &str =
    "status: skipped (the batch reached its 50 KB output cap; read this file in another call)\n";
/// Room kept for the summary lines at the top of a batch.
const HEADER_RESERVE: usize = 128;

/// The name a batch section is shown under.
fn entry_label(entry: &Value, index: usize) -> String {
    let path = match entry {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o.get("file_path").or_else(|| o.get("path")).and_then(Value::as_str),
        _ => None,
    };
    match path {
        Some(p) if !p.is_empty() => p.to_string(),
        _ => format!("(entry {})", index + 1),
    }
}

/// One entry of `files`: a bare path or an object with the read_file arguments.
fn parse_entry(entry: &Value) -> Result<(&str, Request), ToolError> {
    match entry {
        Value::String(s) => Ok((s.as_str(), Request::default())),
        Value::Object(o) => {
            let input = match (o.get("file_path"), o.get("path")) {
                (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => s.as_str(),
                _ => req_str(entry, "file_path")?,
            };
            Ok((input, Request::parse(entry)?))
        }
        _ => Err(ToolError::invalid_args(
            "each entry of 'files' must be a path string or an object with 'file_path'",
        )),
    }
}

/// Which lines of a file to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub tail: Option<u64>,
}

impl Request {
    /// Reads `offset`, `limit` and `tail` (or its alias `tail_lines`) from `args`.
    pub fn parse(args: &Value) -> Result<Request, ToolError> {
        let offset = opt_u64(args, "offset")?;
        let limit = opt_u64(args, "limit")?;
        let tail = match (opt_u64(args, "tail")?, opt_u64(args, "tail_lines")?) {
            (Some(a), Some(b)) if a != b => {
                return Err(ToolError::invalid_args("'tail' and 'tail_lines' disagree; give only 'tail'"));
            }
            (a, b) => a.or(b),
        };
        if limit == Some(0) {
            return Err(ToolError::invalid_args("'limit' must be at least 1"));
        }
        if tail == Some(0) {
            return Err(ToolError::invalid_args("'tail' must be at least 1"));
        }
        // `tail: 1` next to an offset is taken for a default some models always send.
        let tail = match (offset, tail) {
            (Some(_), Some(1)) => None,
            (Some(_), Some(_)) => {
                return Err(ToolError::invalid_args(
                    "'offset' and 'tail' cannot be used together; give one of them",
                ));
            }
            (_, t) => t,
        };
        Ok(Request { offset, limit, tail })
    }
}

/// What reading one path produced.
#[derive(Debug)]
pub struct Read {
    /// The resolved path.
    pub abs: PathBuf,
    /// Numbered lines and trailer notes (or a directory listing).
    pub text: String,
    /// It was a file (so the read counts for the read-before-write guard).
    pub is_file: bool,
    /// Something was left out: the byte budget, a clipped line, or lines past the default limit.
    pub truncated: bool,
    /// The byte budget stopped the output before the request was satisfied.
    pub over_budget: bool,
}

/// Reads `input` as `request` asks, keeping the text within about `budget` bytes (at
/// least one line is always shown). Directories are listed when `dirs` is true and
/// refused otherwise. Does not note the read; the caller does once it uses the text.
pub fn read_one(
    resolver: &Resolver,
    input: &str,
    request: &Request,
    budget: usize,
    dirs: bool,
) -> Result<Read, ToolError> {
    let abs = resolver.resolve(input)?;
    let meta = std::fs::metadata(&abs).map_err(|e| io_error(input, &e))?;
    if meta.is_dir() {
        if !dirs {
            return Err(ToolError::invalid_args(format!("'{input}' is a directory, not a file"))
                .with_hint("use list_files or read_file to see a directory's entries"));
        }
        let (text, over_budget) = list_dir(&abs, input, budget)?;
        return Ok(Read { abs, text, is_file: false, truncated: over_budget, over_budget });
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("'{input}' is not a regular file (it may be a FIFO, socket or device)"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "'{input}' is {} bytes; files over {} MB cannot be read",
                meta.len(),
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
        .with_hint("use grep to find the lines you need"));
    }
    let bytes = crate::common::fileio::read(&abs).map_err(|e| io_error(input, &e))?;
    // A notebook is shown as its cells (numbered lines of that view); the checksum stays the file's.
    let is_notebook = abs.extension().is_some_and(|e| e.eq_ignore_ascii_case("ipynb"));
    let rendered = match is_notebook.then(|| crate::notebook::view(&bytes, input).ok()).flatten() {
        Some(view) => render_lines_of(view.as_bytes(), &bytes, input, request, budget)?,
        None => render_lines(&bytes, input, request, budget)?,
    };
    Ok(Read {
        abs,
        text: rendered.text,
        is_file: true,
        truncated: rendered.truncated,
        over_budget: rendered.over_budget,
    })
}

struct Rendered {
    text: String,
    truncated: bool,
    over_budget: bool,
}

/// The numbered lines of `bytes` that `request` asks for, the continuation hint and the checksum.
fn render_lines(bytes: &[u8], shown: &str, request: &Request, budget: usize) -> Result<Rendered, ToolError> {
    render_lines_of(bytes, bytes, shown, request, budget)
}

/// [`render_lines`] of `bytes`, with the checksum of `file` (the file `bytes` is a view of).
fn render_lines_of(
    bytes: &[u8],
    file: &[u8],
    shown: &str,
    request: &Request,
    budget: usize,
) -> Result<Rendered, ToolError> {
    let text = common::text_of(bytes, shown)?;
    let checksum = common::checksum(file);
    let total = common::count_lines(text) as u64;
    if total == 0 {
        return Ok(Rendered {
            text: format!("(the file is empty)\n[checksum={checksum}]\n"),
            truncated: false,
            over_budget: false,
        });
    }
    let start = match request.tail {
        Some(n) => total.saturating_sub(n) + 1,
        None => request.offset.unwrap_or(1).max(1),
    };
    if start > total {
        let lines = if total == 1 { "line" } else { "lines" };
        return Err(ToolError::invalid_args(format!(
            "offset {start} is past the end of '{shown}', which has {total} {lines}"
        ))
        .with_hint(format!("use an offset from 1 to {total}")));
    }
    let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
    let limit_cap = budget.saturating_sub(TRAILER_RESERVE);
    let mut out = String::new();
    let mut clipped = false;
    let mut over_budget = false;
    let mut next = start;
    for line in text.lines().skip((start - 1) as usize) {
        if next - start >= limit {
            break;
        }
        let shown_line = common::clip_line(line);
        let before = out.len();
        let _ = writeln!(out, "{next}: {shown_line}");
        if out.len() > limit_cap && next > start {
            out.truncate(before);
            over_budget = true;
            break;
        }
        clipped |= matches!(shown_line, std::borrow::Cow::Owned(_));
        next += 1;
    }
    if out.len() > limit_cap {
        over_budget = true;
    }
    let remaining = total + 1 - next;
    if remaining > 0 {
        let lines = if remaining == 1 { "line" } else { "lines" };
        let _ = writeln!(out, "[{remaining} more {lines}, use offset={next} to continue]");
    }
    let _ = writeln!(out, "[checksum={checksum}]");
    let truncated = over_budget || clipped || (remaining > 0 && request.limit.is_none());
    Ok(Rendered { text: out, truncated, over_budget })
}

/// The entries of directory `abs`, sorted, subdirectories with a trailing `/`. Entries
/// that cannot be examined (for example symlinks leading out of the workspace) are left
/// out. Returns the text and whether the budget cut it.
fn list_dir(abs: &Path, shown: &str, budget: usize) -> Result<(String, bool), ToolError> {
    let reader = std::fs::read_dir(abs).map_err(|e| io_error(shown, &e))?;
    let mut names: Vec<String> = reader
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let meta = std::fs::metadata(entry.path()).ok()?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if meta.is_dir() {
                name.push('/');
            }
            Some(name)
        })
        .collect();
    if names.is_empty() {
        return Ok((format!("'{shown}' is an empty directory\n"), false));
    }
    names.sort();
    let cap = budget.saturating_sub(TRAILER_RESERVE);
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if out.len() + name.len() + 1 > cap && i > 0 {
            let _ = writeln!(
                out,
                "[{} more entries not shown; use list_files with a pattern to see them]",
                names.len() - i
            );
            return Ok((out, true));
        }
        out.push_str(name);
        out.push('\n');
    }
    Ok((out, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use corral_plugin_sdk::host::fake::FakeWorkspace;
    use std::fs;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn read(ws: &FakeWorkspace, args: Value) -> Result<Output, ToolError> {
        run(ws, &args)
    }

    #[test]
    fn lines_are_numbered_with_checksum() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
        let out = read(&ws, json!({"file_path": "a.txt"})).unwrap();
        let sum = common::checksum(b"alpha\nbeta\n");
        assert_eq!(out.text, format!("1: alpha\n2: beta\n[checksum={sum}]\n"));
        assert!(!out.truncated);
        assert!(ws.was_read(&dir.path().join("a.txt")));
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("w.txt"), "a\r\nb").unwrap();
        let out = read(&ws, json!({"file_path": "w.txt"})).unwrap();
        assert!(out.text.starts_with("1: a\n2: b\n[checksum="), "{}", out.text);
    }

    #[test]
    fn offset_and_limit_page_with_a_hint() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), numbered(10)).unwrap();
        let out = read(&ws, json!({"file_path": "f", "offset": 3, "limit": 2})).unwrap();
        let sum = common::checksum(numbered(10).as_bytes());
        assert_eq!(
            out.text,
            format!("3: line 3\n4: line 4\n[6 more lines, use offset=5 to continue]\n[checksum={sum}]\n")
        );
        assert!(!out.truncated, "an explicit limit is not a truncation");
        let out = read(&ws, json!({"file_path": "f", "offset": 9, "limit": 1})).unwrap();
        assert!(out.text.starts_with("9: line 9\n[1 more line, use offset=10 to continue]\n"));
        let out = read(&ws, json!({"file_path": "f", "offset": 10})).unwrap();
        assert_eq!(out.text, format!("10: line 10\n[checksum={sum}]\n"));
    }

    #[test]
    fn default_limit_is_2000_lines() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), "x\n".repeat(2500)).unwrap();
        let out = read(&ws, json!({"file_path": "f"})).unwrap();
        assert!(out.text.contains("\n2000: x\n[500 more lines, use offset=2001 to continue]\n"));
        assert!(!out.text.contains("2001: x"));
        assert!(out.truncated);
    }

    #[test]
    fn offset_past_the_end_says_how_long_the_file_is() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), numbered(3)).unwrap();
        let e = read(&ws, json!({"file_path": "f", "offset": 4})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert_eq!(e.message, "offset 4 is past the end of 'f', which has 3 lines");
        assert!(!ws.was_read(&dir.path().join("f")), "nothing shown, so not a read");
    }

    #[test]
    fn tail_shows_the_last_lines() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), numbered(10)).unwrap();
        let out = read(&ws, json!({"file_path": "f", "tail": 2})).unwrap();
        assert!(out.text.starts_with("9: line 9\n10: line 10\n[checksum="), "{}", out.text);
        let out = read(&ws, json!({"file_path": "f", "tail_lines": 3})).unwrap();
        assert!(out.text.starts_with("8: line 8\n9: line 9\n10: line 10\n[checksum="));
        let out = read(&ws, json!({"file_path": "f", "tail": 50})).unwrap();
        assert!(out.text.starts_with("1: line 1\n"));
        let out = read(&ws, json!({"file_path": "f", "tail": 4, "limit": 1})).unwrap();
        assert!(out.text.starts_with("7: line 7\n[3 more lines, use offset=8 to continue]\n"));
    }

    #[test]
    fn tail_with_offset_is_an_error_unless_tail_is_one() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), numbered(10)).unwrap();
        let e = read(&ws, json!({"file_path": "f", "tail": 2, "offset": 3})).unwrap_err();
        assert_eq!(e.message, "'offset' and 'tail' cannot be used together; give one of them");
        let out = read(&ws, json!({"file_path": "f", "tail_lines": 1, "offset": 3, "limit": 1})).unwrap();
        assert!(out.text.starts_with("3: line 3\n"));
    }

    #[test]
    fn bad_argument_types_are_refused() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("f"), numbered(3)).unwrap();
        let e = read(&ws, json!({"file_path": "f", "offset": true})).unwrap_err();
        assert_eq!(e.message, "'offset' must be a non-negative integer, got a boolean");
        let e = read(&ws, json!({"file_path": "f", "limit": 0})).unwrap_err();
        assert_eq!(e.message, "'limit' must be at least 1");
        let e = read(&ws, json!({"file_path": "f", "tail": 0})).unwrap_err();
        assert_eq!(e.message, "'tail' must be at least 1");
        let e = read(&ws, json!({})).unwrap_err();
        assert_eq!(e.message, "missing required field 'file_path'");
        let out = read(&ws, json!({"file_path": "f", "offset": 0})).unwrap();
        assert!(out.text.starts_with("1: line 1\n"), "offset 0 reads from the start");
    }

    #[test]
    fn output_is_capped_at_50_kb_with_a_hint() {
        let (dir, ws) = setup();
        let line = "y".repeat(99);
        let content: String = (0..1000).map(|_| format!("{line}\n")).collect();
        fs::write(dir.path().join("big"), &content).unwrap();
        let out = read(&ws, json!({"file_path": "big"})).unwrap();
        assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
        assert!(out.truncated);
        // Each line is "N: " + 99 chars + newline; find the last shown line.
        let shown = out.text.lines().filter(|l| l.ends_with(&line)).count();
        assert!(shown > 400 && shown < 1000, "{shown}");
        let hint = format!("[{} more lines, use offset={} to continue]", 1000 - shown, shown + 1);
        assert!(out.text.contains(&hint), "{hint} not in tail: {}", &out.text[out.text.len() - 200..]);
        assert!(ws.was_read(&dir.path().join("big")));
    }

    #[test]
    fn long_lines_are_clipped() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("long"), format!("{}\nshort\n", "z".repeat(2010))).unwrap();
        let out = read(&ws, json!({"file_path": "long"})).unwrap();
        assert!(out.text.starts_with(&format!("1: {} [+10 chars]\n2: short\n", "z".repeat(2000))));
        assert!(out.truncated);
    }

    #[test]
    fn empty_file_has_a_checksum_and_counts_as_read() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("e"), "").unwrap();
        let out = read(&ws, json!({"file_path": "e", "offset": 5})).unwrap();
        assert_eq!(out.text, format!("(the file is empty)\n[checksum={}]\n", common::checksum(b"")));
        assert!(ws.was_read(&dir.path().join("e")));
    }

    #[test]
    fn directories_are_listed_sorted_with_slashes() {
        let (dir, ws) = setup();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("b.txt"), "").unwrap();
        fs::write(dir.path().join("a.txt"), "").unwrap();
        fs::create_dir(dir.path().join("sub/inner")).unwrap();
        let out = read(&ws, json!({"file_path": "."})).unwrap();
        assert_eq!(out.text, "a.txt\nb.txt\nsub/\n");
        let out = read(&ws, json!({"file_path": "sub"})).unwrap();
        assert_eq!(out.text, "inner/\n");
        assert!(!ws.was_read(&dir.path().join("sub")));
        let out = read(&ws, json!({"file_path": "sub/inner"})).unwrap();
        assert_eq!(out.text, "'sub/inner' is an empty directory\n");
    }

    #[cfg(unix)]
    #[test]
    fn directory_listing_skips_entries_it_cannot_stat() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("real"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("missing"), dir.path().join("dangling")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        let out = read(&ws, json!({"file_path": "."})).unwrap();
        assert_eq!(out.text, "link\nreal\n");
    }

    #[test]
    fn binary_and_non_utf8_files_are_refused() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("bin"), b"abc\0def").unwrap();
        let e = read(&ws, json!({"file_path": "bin"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert_eq!(e.message, "'bin' is a binary file; it cannot be shown as text");
        fs::write(dir.path().join("latin1"), b"caf\xe9\n").unwrap();
        let e = read(&ws, json!({"file_path": "latin1"})).unwrap_err();
        assert_eq!(
            e.message,
            "'latin1' is not valid UTF-8 (first bad byte at offset 3); only UTF-8 text can be read"
        );
        assert!(!ws.was_read(&dir.path().join("bin")));
        assert!(!ws.was_read(&dir.path().join("latin1")));
    }

    #[test]
    fn missing_and_outside_paths() {
        let (_dir, ws) = setup();
        let e = read(&ws, json!({"file_path": "nope.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(e.message, "'nope.txt' does not exist");
        let e = read(&ws, json!({"file_path": "../x"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
    }

    // ---- read_multiple_files ----

    fn multi(ws: &FakeWorkspace, args: Value) -> Result<Output, ToolError> {
        multiple_run(ws, &args)
    }

    #[test]
    fn batch_reads_each_file_and_reports_errors_per_file() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("a"), "one\ntwo\n").unwrap();
        fs::write(dir.path().join("b"), numbered(5)).unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        let out = multi(
            &ws,
            json!({"files": ["a", {"file_path": "b", "offset": 2, "limit": 1}, "missing", "d", 7]}),
        )
        .unwrap();
        let a = common::checksum(b"one\ntwo\n");
        let b = common::checksum(numbered(5).as_bytes());
        assert_eq!(
            out.text,
            format!(
                "files_succeeded: 2\nfiles_with_errors: 3\nfiles_skipped: 0\nbatch_truncated: false\n\
                 \n=== FILE: a ===\nstatus: ok\n1: one\n2: two\n[checksum={a}]\n\
                 \n=== FILE: b ===\nstatus: ok\n2: line 2\n[3 more lines, use offset=3 to continue]\n[checksum={b}]\n\
                 \n=== FILE: missing ===\nstatus: error\nerror: 'missing' does not exist\n\
                 \n=== FILE: d ===\nstatus: error\nerror: 'd' is a directory, not a file (use list_files or read_file to see a directory's entries)\n\
                 \n=== FILE: (entry 5) ===\nstatus: error\nerror: each entry of 'files' must be a path string or an object with 'file_path'\n"
            )
        );
        assert!(!out.truncated);
        assert!(ws.was_read(&dir.path().join("a")));
        assert!(ws.was_read(&dir.path().join("b")));
    }

    #[test]
    fn batch_entry_arguments_are_checked_per_file() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("a"), numbered(3)).unwrap();
        let out = multi(&ws, json!({"files": [{"file_path": "a", "tail": 2, "offset": 2}, {"file_path": "a", "tail_lines": 1}]}))
            .unwrap();
        assert!(out.text.starts_with("files_succeeded: 1\nfiles_with_errors: 1\n"), "{}", out.text);
        assert!(out.text.contains(
            "=== FILE: a ===\nstatus: error\nerror: 'offset' and 'tail' cannot be used together; give one of them\n"
        ));
        assert!(out.text.contains("=== FILE: a ===\nstatus: ok\n3: line 3\n[checksum="));
    }

    #[test]
    fn batch_argument_errors() {
        let (_dir, ws) = setup();
        assert_eq!(multi(&ws, json!({})).unwrap_err().message, "missing required field 'files'");
        assert_eq!(
            multi(&ws, json!({"files": []})).unwrap_err().message,
            "'files' is empty; give at least one file"
        );
        let many: Vec<String> = (0..21).map(|i| format!("f{i}")).collect();
        assert_eq!(
            multi(&ws, json!({"files": many})).unwrap_err().message,
            "'files' has 21 entries; at most 20 files can be read in one call"
        );
        assert_eq!(multi(&ws, json!({"files": "a"})).unwrap_err().kind, ErrorKind::InvalidArgs);
    }

    #[test]
    fn batch_cap_skips_the_rest() {
        let (dir, ws) = setup();
        let line = "q".repeat(99);
        let chunk: String = (0..200).map(|_| format!("{line}\n")).collect(); // ~20 KB
        for name in ["a", "b", "c", "d"] {
            fs::write(dir.path().join(name), &chunk).unwrap();
        }
        fs::write(dir.path().join("tiny"), "t\n").unwrap();
        let out = multi(&ws, json!({"files": ["a", "b", "c", "tiny", "d"]})).unwrap();
        assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
        assert!(
            out.text.starts_with(
                "files_succeeded: 2\nfiles_with_errors: 0\nfiles_skipped: 3\nbatch_truncated: true\n"
            ),
            "{}",
            &out.text[..120]
        );
        assert!(out.text.contains(&format!("\n=== FILE: c ===\n{SKIPPED_STATUS}")));
        assert!(out.text.contains(&format!("\n=== FILE: tiny ===\n{SKIPPED_STATUS}")));
        assert!(out.text.ends_with(&format!("\n=== FILE: d ===\n{SKIPPED_STATUS}")));
        assert!(out.truncated);
        assert!(ws.was_read(&dir.path().join("b")));
        assert!(!ws.was_read(&dir.path().join("c")), "a skipped file was not read");
    }

    #[test]
    fn an_oversized_first_file_is_still_shown_truncated() {
        let (dir, ws) = setup();
        let line = "w".repeat(99);
        let big: String = (0..1000).map(|_| format!("{line}\n")).collect(); // ~100 KB
        fs::write(dir.path().join("big"), &big).unwrap();
        fs::write(dir.path().join("small"), "s\n".repeat(500)).unwrap();
        let out = multi(&ws, json!({"files": ["big", "small"]})).unwrap();
        assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
        assert!(out.text.contains("=== FILE: big ===\nstatus: ok (truncated)\n1: www"));
        assert!(out.text.contains("more lines, use offset="));
        assert!(out.text.contains(&format!("[checksum={}]", common::checksum(big.as_bytes()))));
        assert!(out.text.ends_with(&format!("\n=== FILE: small ===\n{SKIPPED_STATUS}")));
        assert!(out.text.starts_with(
            "files_succeeded: 1\nfiles_with_errors: 0\nfiles_skipped: 1\nbatch_truncated: true\n"
        ));
        assert!(ws.was_read(&dir.path().join("big")));
    }

    #[test]
    fn batch_and_single_reads_render_the_same() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("x"), numbered(4)).unwrap();
        let single = read(&ws, json!({"file_path": "x", "tail": 2})).unwrap().text;
        let batch = multi(&ws, json!({"files": [{"file_path": "x", "tail": 2}]})).unwrap().text;
        assert!(batch.ends_with(&format!("status: ok\n{single}")), "{batch}");
    }
}
