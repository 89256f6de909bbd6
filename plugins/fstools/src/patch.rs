//! `patch`: applies a unified diff to one or many files, all or nothing.
//!
//! Every file's result is planned in memory first (hunks placed exactly, at an offset, or
//! with fuzz, see [`parse::place`]); if any hunk of any file fails, nothing is written.
//! Then the plan is applied through the host (atomic writes, read-before-write guard,
//! protected paths): changed and created files, then renames, then deletions (to the
//! trash, last because they are the hardest to take back). If a step fails, the steps
//! already taken are undone through the same interface (old contents written back,
//! renames reversed, created files moved to the trash), so the guarantee is: all or
//! nothing, unless the undo itself is refused, which the error then says.

mod parse;

use crate::common;
use corral_plugin_sdk::args::req_str;
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use parse::{FilePatch, Hunk};
use std::path::PathBuf;

/// Largest file patched.
const MAX_PATCH_FILE_BYTES: u64 = 32 * 1024 * 1024;

pub fn spec() -> Spec {
    Spec::new(
        "patch",
        "Apply a unified diff (as `git diff` or `diff -u` print it) to one or more files: hunks with context, \
         file creation (--- /dev/null), deletion (+++ /dev/null) and git renames. A hunk may land at an offset \
         or with small fuzz; the result says where each landed. All or nothing: if any hunk fails, no file is \
         changed. Files changed must have been read in this session.",
        json!({
            "type": "object",
            "properties": {
                "diff": {"type": "string", "description": "The unified diff text."}
            },
            "required": ["diff"]
        }),
    )
    .writes(true, true)
}

/// What one file becomes.
struct Planned {
    /// Where it is now (`None`: created).
    from: Option<PathBuf>,
    /// Where it ends (`None`: deleted).
    to: Option<PathBuf>,
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
    report: Vec<String>,
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let diff = req_str(args, "diff")?;
    let patches = parse::parse(diff).map_err(|e| {
        ToolError::invalid_args(format!("cannot read the diff at its line {}: {}", e.line, e.message))
            .with_hint("give a unified diff as `git diff` or `diff -u` prints it")
    })?;
    let resolver = Resolver::new(ws);
    let mut plan = Vec::with_capacity(patches.len());
    for p in &patches {
        let planned = plan_file(&resolver, p)?;
        // Each plan starts from the file on disk, so a file may appear once only.
        let touched = |q: &Planned| [q.from.clone(), q.to.clone()].into_iter().flatten().collect::<Vec<_>>();
        if let Some(path) =
            touched(&planned).into_iter().find(|x| plan.iter().any(|q: &Planned| touched(q).contains(x)))
        {
            return Err(ToolError::invalid_args(format!(
                "the diff changes '{}' in two places; nothing was changed",
                resolver.display(&path)
            ))
            .with_hint("merge that file's hunks under one ---/+++ header"));
        }
        plan.push(planned);
    }
    apply(ws, &resolver, &plan)?;
    let mut text =
        format!("Applied the patch to {} file{}:", plan.len(), if plan.len() == 1 { "" } else { "s" });
    for p in &plan {
        for line in &p.report {
            text.push_str("\n  ");
            text.push_str(line);
        }
    }
    Ok(Output::text(text))
}

fn name(p: &FilePatch) -> &str {
    p.new.as_deref().or(p.old.as_deref()).unwrap_or("?")
}

fn plan_file(resolver: &Resolver, p: &FilePatch) -> Result<Planned, ToolError> {
    let shown = name(p);
    if p.binary {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!(
                "'{shown}': the diff holds a binary change, which patch does not apply; nothing was changed"
            ),
        )
        .with_hint("use write_file for binary files, and send the text files' diff without them"));
    }
    let from = p.old.as_deref().map(|o| resolver.resolve(o)).transpose()?;
    let to = p.new.as_deref().map(|n| resolver.resolve(n)).transpose()?;
    let before = match &from {
        None => {
            if let Some(t) = &to
                && std::fs::symlink_metadata(t).is_ok()
            {
                return Err(conflict(format!(
                    "'{shown}' already exists, but the diff creates it (--- /dev/null)"
                )));
            }
            None
        }
        Some(f) => {
            let disp = resolver.display(f);
            let meta = std::fs::metadata(f).map_err(|e| io_error(&disp, &e))?;
            if !meta.is_file() {
                return Err(ToolError::invalid_args(format!("'{disp}' is not a regular file")));
            }
            if meta.len() > MAX_PATCH_FILE_BYTES {
                return Err(ToolError::new(
                    ErrorKind::TooLarge,
                    format!(
                        "'{disp}' is {} bytes; patch works on files up to {MAX_PATCH_FILE_BYTES}",
                        meta.len()
                    ),
                ));
            }
            Some(common::fileio::read(f).map_err(|e| io_error(&disp, &e))?)
        }
    };
    if let (Some(f), Some(t)) = (&from, &to)
        && f != t
        && std::fs::symlink_metadata(t).is_ok()
    {
        return Err(conflict(format!(
            "'{}' already exists; the diff renames a file onto it",
            resolver.display(t)
        )));
    }
    let old_text = match &before {
        None => String::new(),
        Some(b) if common::is_binary(b) => {
            return Err(ToolError::new(
                ErrorKind::Unsupported,
                format!("'{shown}' is a binary file; patch only changes text"),
            ));
        }
        Some(b) => common::decode_text(b, shown)?,
    };
    let crlf = old_text.contains("\r\n") && !old_text.replace("\r\n", "").contains('\n');
    let (mut lines, mut final_nl) = split(&old_text);
    let mut report = Vec::new();
    let mut offset: isize = 0;
    let mut from_line = 0;
    for (n, h) in p.hunks.iter().enumerate() {
        let placed = place_hunk(&lines, h, offset, from_line).ok_or_else(|| no_fit(shown, n, h, &lines))?;
        let old_len = h.old_lines().len() - placed.trim_front - placed.trim_back;
        let repl = replacement(h, &placed, &lines);
        let expected = h.old_start.saturating_sub(1) as isize + offset;
        let landed = placed.at as isize - placed.trim_front as isize;
        let mut note = format!("{shown}: hunk {} at line {}", n + 1, placed.at + 1);
        if landed != expected {
            note.push_str(&format!(" (offset {:+})", landed - expected));
        }
        if placed.fuzz > 0 {
            note.push_str(&format!(" (fuzz {})", placed.fuzz));
        }
        report.push(note);
        offset += repl.len() as isize - old_len as isize;
        from_line = placed.at + repl.len();
        lines.splice(placed.at..placed.at + old_len, repl);
        // `\ No newline at end of file` after the new side takes the final newline away;
        // after the old side only, the hunk adds it.
        if h.new_no_eol {
            final_nl = false;
        } else if h.old_no_eol {
            final_nl = true;
        }
    }
    if p.hunks.is_empty() {
        report.push(match (&p.old, &p.new) {
            (Some(o), Some(n)) => format!("{o} -> {n}"),
            _ => format!("{shown}: no hunks"),
        });
    } else if let (Some(o), Some(n)) = (&p.old, &p.new)
        && o != n
    {
        report.push(format!("{o} -> {n}"));
    }
    let after = match &to {
        None => {
            if lines.iter().any(|l| !l.is_empty()) {
                return Err(conflict(format!(
                    "the diff deletes '{shown}', but its hunks leave {} lines in it",
                    lines.len()
                )));
            }
            report.push(format!("{shown}: deleted (to the trash)"));
            None
        }
        Some(_) => {
            let use_crlf = crlf || (before.is_none() && p.hunks.iter().all(|h| h.crlf));
            Some(join(&lines, final_nl, use_crlf).into_bytes())
        }
    };
    if before.is_none() {
        report.push(format!("{shown}: created"));
    }
    Ok(Planned { from, to, before, after, report })
}

/// The lines that replace the matched ones: the hunk's `+` lines, and its context lines as
/// the file has them (fuzz may have matched them loosely); dropped outer context is left out.
fn replacement(h: &Hunk, placed: &parse::Placement, lines: &[String]) -> Vec<String> {
    let n = h.lines.len();
    let body = &h.lines[placed.trim_front..n - placed.trim_back];
    let mut old_i = placed.at;
    let mut out = Vec::with_capacity(body.len());
    for (kind, text) in body {
        match kind {
            ' ' => {
                out.push(lines.get(old_i).cloned().unwrap_or_else(|| text.clone()));
                old_i += 1;
            }
            '-' => old_i += 1,
            _ => out.push(text.clone()),
        }
    }
    out
}

fn conflict(msg: String) -> ToolError {
    ToolError::new(ErrorKind::Conflict, format!("{msg}; nothing was changed"))
}

/// A text's lines without their `\n` (a CRLF text's without `\r\n`), and whether it ends in a newline.
fn split(text: &str) -> (Vec<String>, bool) {
    if text.is_empty() {
        return (Vec::new(), true);
    }
    let final_nl = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    (lines, final_nl)
}

fn join(lines: &[String], final_nl: bool, crlf: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if final_nl && !lines.is_empty() {
        s.push_str(eol);
    }
    s
}

fn place_hunk(lines: &[String], h: &Hunk, offset: isize, from: usize) -> Option<parse::Placement> {
    let old = h.old_lines();
    let kinds: Vec<char> = h.lines.iter().filter(|(k, _)| *k != '+').map(|(k, _)| *k).collect();
    // A hunk with no old lines inserts after line old_start (0: at the top).
    let start = if old.is_empty() { h.old_start } else { h.old_start.saturating_sub(1) };
    let expected = usize::try_from(start as isize + offset).unwrap_or(0);
    if old.is_empty() {
        let at = expected.min(lines.len()).max(from.min(lines.len()));
        return Some(parse::Placement { at, fuzz: 0, trim_front: 0, trim_back: 0 });
    }
    parse::place(lines, &old, &kinds, expected, from)
}

fn no_fit(shown: &str, n: usize, h: &Hunk, lines: &[String]) -> ToolError {
    let old = h.old_lines();
    let mut msg = format!(
        "hunk {} of '{shown}' (at line {} in the diff's header) does not match the file",
        n + 1,
        h.old_start
    );
    match parse::nearest(lines, &old) {
        Some((at, agree)) => {
            msg.push_str(&format!(
                "; the nearest match is at line {} where {agree} of its {} lines agree:",
                at + 1,
                old.len()
            ));
            for (i, l) in lines.iter().enumerate().skip(at).take(old.len().min(12)) {
                msg.push_str(&format!("\n{}: {}", i + 1, common::clip_line(l)));
            }
        }
        None => msg.push_str("; no line of it was found in the file"),
    }
    msg.push_str("\nNothing was changed.");
    ToolError::new(ErrorKind::Conflict, msg)
        .with_hint("read the file again and make the hunk's context and '-' lines match its current text")
}

/// One step taken, and how to take it back.
enum Undo {
    Write(PathBuf, Vec<u8>),
    Trash(PathBuf),
    Rename(PathBuf, PathBuf),
}

fn apply(ws: &dyn Workspace, resolver: &Resolver, plan: &[Planned]) -> Result<(), ToolError> {
    let mut done: Vec<Undo> = Vec::new();
    let result = (|| -> Result<(), ToolError> {
        // 1. Contents, at the file's current place.
        for p in plan {
            match (&p.from, &p.after, &p.before) {
                (Some(f), Some(after), Some(before)) if after != before => {
                    ws.write(f, after)?;
                    done.push(Undo::Write(f.clone(), before.clone()));
                }
                (None, Some(after), _) => {
                    let Some(t) = &p.to else { continue };
                    ws.write(t, after)?;
                    done.push(Undo::Trash(t.clone()));
                }
                _ => {}
            }
        }
        // 2. Renames.
        for p in plan {
            if let (Some(f), Some(t)) = (&p.from, &p.to)
                && f != t
            {
                ws.rename(f, t)?;
                done.push(Undo::Rename(t.clone(), f.clone()));
            }
        }
        // 3. Deletions.
        for p in plan {
            if let (Some(f), None) = (&p.from, &p.to) {
                ws.trash(f)?;
            }
        }
        Ok(())
    })();
    let Err(e) = result else { return Ok(()) };
    let mut failed = Vec::new();
    for step in done.into_iter().rev() {
        let r = match &step {
            Undo::Write(p, b) => ws.write(p, b).map(|_| ()),
            Undo::Trash(p) => ws.trash(p).map(|_| ()),
            Undo::Rename(a, b) => ws.rename(a, b).map(|_| ()),
        };
        if r.is_err() {
            let p = match &step {
                Undo::Write(p, _) | Undo::Trash(p) | Undo::Rename(p, _) => p,
            };
            failed.push(resolver.display(p));
        }
    }
    let mut e: ToolError = e;
    if failed.is_empty() {
        e.message.push_str("; the files already patched were restored, so nothing was changed");
    } else {
        e.message.push_str(&format!(
            "; restoring the files already patched failed for {}: check them",
            failed.join(", ")
        ));
    }
    Err(e)
}

#[cfg(test)]
mod tests;
