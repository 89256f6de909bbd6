//! `edit_file`: replaces `old_string` with `new_string` in an existing text file.
//!
//! Rules beyond the matching passes (see [`matching`]):
//! - CRLF files (every line break is `\r\n`) are edited as LF text, with `old_string` and
//!   `new_string` normalized the same way, and written back with `\r\n`. Files with mixed
//!   line endings are edited as they are; the trimmed pass tolerates the stray `\r`.
//! - Trailing newline absorption: when `old_string` does not end in `\n` but `new_string`
//!   does, the model is thinking in whole lines, and the `\n` of `new_string` stands for the
//!   line break that already follows the match. So when `\n` follows the match it is
//!   replaced too (no blank line appears), and when the match ends the file, which has no
//!   final newline, `new_string`'s last `\n` is dropped (the file still ends without one)
//!   unless that `\n` is all the edit adds (`new_string == old_string + "\n"`), which asks
//!   for a final newline.
//!   This never fires for `new_string == ""`: to delete whole lines, include their `\n` in
//!   `old_string`.
//! - The write goes through the host, which enforces the read-before-write guard.

mod matching;

use crate::common;
use corral_plugin_sdk::args::{opt_bool, opt_str, opt_u64, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use matching::{Choice, Lines, Pass, Span};

/// Largest file edit_file works on.
pub const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;
/// Most lines of diff shown after an edit.
const MAX_DIFF_LINES: usize = 40;
/// Diff lines are cut to this many characters.
const DIFF_LINE_CHARS: usize = 200;

pub fn spec() -> Spec {
    Spec::new(
        "edit_file",
        "Replace text in an existing file: old_string is replaced by new_string. Copy old_string from \
         read_file output (without the line-number prefixes) with enough surrounding lines to be unique. \
         If the exact text is not found, whole lines are compared ignoring leading/trailing whitespace, then \
         also ignoring typographic quotes, dashes, ellipses and Unicode spaces; such a match replaces the \
         file's whole lines. When old_string matches several places the call fails unless replace_all=true \
         (replace every match) or line_number points at the one you mean. To delete lines, include their \
         trailing newline in old_string and set new_string to \"\". The file must have been read in this \
         session. The result has the new checksum and a short diff.",
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file to edit, relative to the workspace root or absolute."},
                "old_string": {"type": "string", "description": "The text to replace; must not be empty."},
                "new_string": {"type": "string", "description": "The replacement; must differ from old_string."},
                "replace_all": {"type": "boolean", "description": "Replace every match instead of requiring exactly one. Default false."},
                "line_number": {"type": "integer", "minimum": 1, "description": "A 1-based line inside the intended match, to choose among several matches."},
                "checksum": {"type": "string", "description": "The [checksum=...] value from your last read or edit of this file; the edit is refused if the file has changed since."}
            },
            "required": ["file_path", "old_string", "new_string"]
        }),
    )
    .writes(true, false)
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let file_path = req_str(args, "file_path")?;
    let old = req_str(args, "old_string")?;
    let new = req_str(args, "new_string")?;
    let replace_all = opt_bool(args, "replace_all")?.unwrap_or(false);
    let line_number = match opt_u64(args, "line_number")? {
        Some(0) => return Err(ToolError::invalid_args("'line_number' is 1-based; 0 is not a line")),
        Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        None => None,
    };
    let expected = opt_str(args, "checksum")?;
    if old.is_empty() {
        return Err(ToolError::invalid_args("old_string is empty; it must be the text to replace")
            .with_hint("to create a file or replace all of it, use write_file"));
    }
    if old == new {
        return Err(ToolError::invalid_args(
            "old_string and new_string are the same; the edit would change nothing",
        ));
    }

    let resolver = Resolver::new(ws);
    let path = resolver.resolve(file_path)?;
    let shown = resolver.display(&path);
    let meta = std::fs::metadata(&path).map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!("'{shown}' is a directory; edit_file edits one file")));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "'{shown}' is {} bytes; edit_file works on files up to {MAX_EDIT_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    let bytes = crate::common::fileio::read(&path).map_err(|e| io_error(&shown, &e))?;
    if common::is_binary(&bytes) {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("'{shown}' is a binary file; edit_file only edits text"),
        )
        .with_hint("use write_file to replace it whole"));
    }
    let text = common::decode_text(&bytes, &shown)?;
    let current = common::checksum(&bytes);
    if let Some(want) = expected.map(str::trim).filter(|c| is_checksum(c))
        && !want.eq_ignore_ascii_case(&current)
    {
        return Err(ToolError::new(
            ErrorKind::Conflict,
            format!("'{shown}' has changed since you read it: its checksum is {current}, not {want}"),
        )
        .with_hint("read the file again and redo the edit against its current text"));
    }

    let crlf = is_crlf(&text);
    let (view, old, new) = if crlf {
        (text.replace("\r\n", "\n"), old.replace("\r\n", "\n"), new.replace("\r\n", "\n"))
    } else {
        (text, old.to_string(), new.to_string())
    };
    let lines = Lines::new(&view);
    let (pass, spans) = matching::choose(&view, &lines, &old, Choice { replace_all, line_number }, &shown)?;
    matching::check_clipped(&view, &lines, &spans, &shown)?;
    let edits = absorb(&view, &spans, &old, &new);
    let (edited, hunks) = apply(&view, &lines, &edits);
    if edited == view {
        return Ok(Output::text(format!(
            "'{shown}' already has this text where old_string matched; nothing was written\n[checksum={current}]"
        )));
    }
    let out = if crlf { edited.replace('\n', "\r\n") } else { edited };
    ws.write(&path, out.as_bytes())?;

    let n = edits.len();
    let mut text = format!(
        "Edited {shown} ({n} replacement{})\n[checksum={}]",
        if n == 1 { "" } else { "s" },
        common::checksum(out.as_bytes())
    );
    match pass {
        Pass::Exact => {}
        Pass::Trimmed => text.push_str(
            "\nNote: old_string matched only with whitespace trimmed on each line; the whole lines were replaced.",
        ),
        Pass::Normalized => text.push_str(
            "\nNote: old_string matched only with whitespace trimmed and typographic characters normalized; \
             the whole lines were replaced.",
        ),
    }
    let diff = render(&hunks);
    if !diff.is_empty() {
        text.push('\n');
        text.push_str(&diff);
    }
    Ok(Output::text(text))
}

/// Eight hex digits, the form of `[checksum=...]`.
fn is_checksum(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every line break is `\r\n` (and there is at least one).
fn is_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && text.matches("\r\n").count() == lf
}

/// One replacement: bytes `start..end` of the text become `with`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Edit<'a> {
    start: usize,
    end: usize,
    with: &'a str,
}

/// Turns matched spans into replacements, applying trailing newline absorption.
fn absorb<'a>(text: &str, spans: &[Span], old: &str, new: &'a str) -> Vec<Edit<'a>> {
    let absorbing = !old.ends_with('\n') && new.ends_with('\n');
    let shorter = new.strip_suffix('\n').unwrap_or(new);
    spans
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let next = spans.get(k + 1).map_or(usize::MAX, |n| n.start);
            if !absorbing {
                Edit { start: s.start, end: s.end, with: new }
            } else if text.as_bytes().get(s.end) == Some(&b'\n') && s.end < next {
                Edit { start: s.start, end: s.end + 1, with: new }
            } else if s.end == text.len() && shorter != old {
                Edit { start: s.start, end: s.end, with: shorter }
            } else {
                Edit { start: s.start, end: s.end, with: new }
            }
        })
        .collect()
}

/// A changed run of lines: where it starts (1-based) in the old and new text, and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old_first: usize,
    new_first: usize,
    old: Vec<String>,
    new: Vec<String>,
}

/// Applies `edits` (sorted, not overlapping) and describes the changed lines. Edits whose
/// lines touch share a hunk.
fn apply(text: &str, lines: &Lines, edits: &[Edit<'_>]) -> (String, Vec<Hunk>) {
    let mut out = String::with_capacity(text.len());
    let mut hunks = Vec::new();
    let mut copied = 0; // `text` is in `out` up to here
    let mut shift: isize = 0; // new line number minus old line number, so far
    let mut k = 0;
    while let Some(first) = edits.get(k) {
        // The hunk covers whole lines, from the line of the first edit to the end of the
        // line where the last grouped edit ends.
        let region_start = lines.range(lines.line_of(first.start)).0;
        let mut end = region_end(text, lines, first);
        let mut group_end = k + 1;
        while let Some(e) = edits.get(group_end) {
            if lines.range(lines.line_of(e.start)).0 >= end {
                break;
            }
            end = end.max(region_end(text, lines, e));
            group_end += 1;
        }
        let group = edits.get(k..group_end).unwrap_or_default();
        let mut replaced = String::new();
        let mut cursor = region_start;
        for e in group {
            replaced.push_str(text.get(cursor..e.start).unwrap_or_default());
            replaced.push_str(e.with);
            cursor = e.end;
        }
        replaced.push_str(text.get(cursor..end).unwrap_or_default());
        let original = text.get(region_start..end).unwrap_or_default();

        out.push_str(text.get(copied..region_start).unwrap_or_default());
        out.push_str(&replaced);
        copied = end;

        let old_first = lines.line_of(region_start) + 1;
        let new_first = old_first.saturating_add_signed(shift);
        shift += replaced.matches('\n').count() as isize - original.matches('\n').count() as isize;
        hunks.push(hunk(old_first, new_first, original, &replaced));
        k = group_end;
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    (out, hunks)
}

/// The end of the lines an edit touches, past the last line's `\n` when it has one.
fn region_end(text: &str, lines: &Lines, e: &Edit<'_>) -> usize {
    if e.end > e.start && text.as_bytes().get(e.end - 1) == Some(&b'\n') {
        return e.end;
    }
    let last = lines.line_of(e.end.max(e.start + 1) - 1);
    lines.next_start(last).max(e.end)
}

/// A hunk without the lines the old and new text share at either end.
fn hunk(old_first: usize, new_first: usize, original: &str, replaced: &str) -> Hunk {
    let split = |s: &str| -> Vec<String> { s.lines().map(str::to_string).collect() };
    let (mut old, mut new) = (split(original), split(replaced));
    let same_head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    old.drain(..same_head);
    new.drain(..same_head);
    let same_tail = old.iter().rev().zip(new.iter().rev()).take_while(|(a, b)| a == b).count();
    old.truncate(old.len() - same_tail);
    new.truncate(new.len() - same_tail);
    Hunk { old_first: old_first + same_head, new_first: new_first + same_head, old, new }
}

/// The hunks as a unified diff without context lines, at most [`MAX_DIFF_LINES`] lines.
fn render(hunks: &[Hunk]) -> String {
    let mut rows = Vec::new();
    for h in hunks.iter().filter(|h| !h.old.is_empty() || !h.new.is_empty()) {
        rows.push(format!("@@ -{},{} +{},{} @@", h.old_first, h.old.len(), h.new_first, h.new.len()));
        rows.extend(h.old.iter().map(|l| format!("-{}", clip(l))));
        rows.extend(h.new.iter().map(|l| format!("+{}", clip(l))));
    }
    let extra = rows.len().saturating_sub(MAX_DIFF_LINES);
    rows.truncate(MAX_DIFF_LINES);
    if extra > 0 {
        rows.push(format!("... ({extra} more diff lines)"));
    }
    rows.join("\n")
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(DIFF_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!("{} [+{} chars]", &line[..cut], line[cut..].chars().count()),
    }
}

#[cfg(test)]
mod tests;
