//! `grep`: a regex search over the workspace's text files, newest files first.
//!
//! The walk collects the files (no `stat` per file). A first pass reads each file once and
//! runs the regex over the whole buffer to tell whether any line matches; only matching
//! files have their modification time looked up. A second pass re-reads the matching
//! files newest first, works out line numbers (and checks UTF-8) for them alone, and stops
//! at the match cap. Lines are matched one at a time: a match that spans a line break does
//! not count, and the line it starts on is checked again on its own.
//!
//! Over many files the first pass is split into parts ([`SCAN_PART`]) that the host runs
//! side by side in fresh instances (its `parallel` import); a part it does not run is read
//! here, and the answer does not depend on the split. So is the look-up of the files'
//! modification times ([`STAT_PART`]) when there are more files than a search reads.

use crate::common::walk::{self, Flow, Kind};
use crate::common::{self, MAX_FILE_BYTES, MAX_OUTPUT_BYTES, MAX_WALK_ENTRIES};
use corral_plugin_sdk::args::{opt_bool, opt_str, opt_u64, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use regex::bytes::{Regex, RegexBuilder};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Most matching lines one call reports.
pub const MAX_MATCHES: usize = 100;
/// Most context lines around a match.
pub const MAX_CONTEXT: u64 = 100;
/// Room kept under the output cap for the first line and the closing notes.
const NOTES_RESERVE: usize = 1024;

pub fn spec() -> Spec {
    Spec::new(
        "grep",
        "Search file contents with a regular expression (Rust regex syntax, e.g. `fn \\w+\\(`, \
         `(?i)todo`; escape literal `(`, `[`, `.` etc. with `\\`). Lines are matched one at a time. \
         Searches `path` (a file or directory, default the workspace root) recursively, newest \
         files first; results are grouped by file as `  Line N: text` (N is the 1-based line \
         number, as in read_file). `include` filters files by glob: without a `/` it matches the \
         file name at any depth (`*.rs`, `*.{ts,tsx}`), with a `/` the path under `path` \
         (`src/**/*.rs`). `context_lines` adds lines around each match; match lines then end with \
         `  <<<` and separate blocks are divided by `  --`. Like ripgrep, files ignored by \
         .gitignore/.ignore are skipped and `.git` is never searched, but other hidden files are \
         searched. Binary and non-UTF-8 files are skipped. At most 100 matching lines are shown \
         (lines clipped at 2000 characters), and only the 20,000 most recently modified files are \
         searched.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax)"},
                "path": {
                    "type": "string",
                    "description": "File or directory to search (default: the workspace root)"
                },
                "include": {
                    "type": "string",
                    "description": "Only search files matching this glob, e.g. `*.py` or `src/**/*.rs`"
                },
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)"},
                "context_lines": {
                    "type": "integer", "minimum": 0, "maximum": MAX_CONTEXT,
                    "description": "Lines of context before and after each match (default 0)"
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    )
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    run_with(ws, args, MAX_WALK_ENTRIES, &Host)
}

/// The name of the part that reads some of the files of a search (see [`part`]); not a tool,
/// so the model cannot call it.
pub const SCAN_PART: &str = "grep/scan";

/// The name of the part that looks up when some of the files of a search were modified, to
/// choose the newest when there are too many (see [`part`]).
pub const STAT_PART: &str = "grep/stat";

/// Fewer files than this are read in the call itself: starting instances would cost more than
/// it saves.
const PARALLEL_MIN_FILES: usize = 1000;

/// Runs the parts of a search side by side: the built-ins' `parallel` import, or a stand-in
/// in unit tests. Each answer is the part's text, or its error as `kind: message`.
trait Parallel {
    fn width(&self) -> usize;
    fn run(&self, calls: &[(String, String)]) -> Vec<Result<String, String>>;
}

/// The host's `parallel` import (natively: width 1, nothing runs).
struct Host;

impl Parallel for Host {
    fn width(&self) -> usize {
        crate::parallel::width()
    }
    fn run(&self, calls: &[(String, String)]) -> Vec<Result<String, String>> {
        crate::parallel::run(calls)
    }
}

/// Runs the part `name` of a search this plugin started, over `files` (absolute paths from
/// the walk): [`SCAN_PART`] reads them and answers, as JSON, which match the pattern and when
/// they were modified; [`STAT_PART`] answers when each was modified ([`Dated`]).
pub fn part(name: &str, args: &Value) -> Result<Output, ToolError> {
    if name != SCAN_PART && name != STAT_PART {
        return Err(ToolError::new(ErrorKind::NotFound, format!("this plugin has no tool named '{name}'")));
    }
    let files: Vec<PathBuf> = match args.get("files").and_then(Value::as_array) {
        Some(list) => list.iter().filter_map(Value::as_str).map(PathBuf::from).collect(),
        None => return Err(ToolError::invalid_args("'files' must be an array of paths")),
    };
    if name == STAT_PART {
        return Ok(Output::text(Dated::of(&files).to_json().to_string()));
    }
    let re = build_regex(req_str(args, "pattern")?, opt_bool(args, "case_insensitive")?.unwrap_or(false))?;
    Ok(Output::text(scan(&re, &files).to_json().to_string()))
}

/// The regex of a search: lines are matched one at a time (`multi_line`, CRLF ends a line).
fn build_regex(pattern: &str, case_insensitive: bool) -> Result<Regex, ToolError> {
    RegexBuilder::new(pattern).case_insensitive(case_insensitive).multi_line(true).crlf(true).build().map_err(
        |e| {
            ToolError::invalid_args(format!("invalid regular expression: {e}")).with_hint(
                "the pattern uses Rust regex syntax; escape literal ( ) [ ] { } . * + ? | with a backslash",
            )
        },
    )
}

/// What the first pass found: the files with a matching line, each with its modification
/// time, and how many files were over the size limit.
#[derive(Debug, Default, PartialEq, Eq)]
struct Scanned {
    matching: Vec<(u128, PathBuf)>,
    too_large: usize,
}

impl Scanned {
    fn to_json(&self) -> Value {
        // Times as decimal strings: nanoseconds do not fit every JSON reader's numbers.
        let matching: Vec<Value> =
            self.matching.iter().map(|(t, p)| json!([t.to_string(), p.to_string_lossy()])).collect();
        json!({"matching": matching, "too_large": self.too_large})
    }

    fn from_json(text: &str) -> Option<Scanned> {
        let v: Value = serde_json::from_str(text).ok()?;
        let matching = v.get("matching")?.as_array()?.iter().map(|m| {
            let t = m.get(0)?.as_str()?.parse().ok()?;
            Some((t, PathBuf::from(m.get(1)?.as_str()?)))
        });
        let matching = matching.collect::<Option<Vec<_>>>()?;
        Some(Scanned { matching, too_large: usize::try_from(v.get("too_large")?.as_u64()?).ok()? })
    }
}

/// When each of some files was modified (nanoseconds since the epoch; 0 when it cannot be
/// told), in order.
#[derive(Debug, PartialEq, Eq)]
struct Dated(Vec<u128>);

impl Dated {
    fn of(files: &[PathBuf]) -> Dated {
        Dated(walk::stat_all(files).into_iter().map(|s| s.map_or(0, |s| s.mtime)).collect())
    }

    fn to_json(&self) -> Value {
        Value::Array(self.0.iter().map(|t| Value::String(t.to_string())).collect())
    }

    fn from_json(text: &str) -> Option<Dated> {
        let v: Value = serde_json::from_str(text).ok()?;
        let times = v.as_array()?.iter().map(|t| t.as_str()?.parse().ok());
        Some(Dated(times.collect::<Option<Vec<_>>>()?))
    }
}

/// The first pass over `files`: reads each once and tells whether a line matches.
fn scan(re: &Regex, files: &[PathBuf]) -> Scanned {
    let reader = reader::Reader::new();
    let mut buf = Vec::new();
    let mut out = Scanned::default();
    for file in files {
        let mut matches = |data: &[u8]| !common::is_binary(data) && has_line_match(re, data);
        match reader.read(file, MAX_FILE_BYTES, &mut buf, &mut matches) {
            Ok(reader::Outcome::Kept(mtime)) => out.matching.push((mtime, file.clone())),
            Ok(reader::Outcome::TooLarge) => out.too_large += 1,
            Ok(reader::Outcome::Read) | Err(_) => {}
        }
    }
    out
}

/// How many parts a search over `files` splits into: 1 (no split) for a small search, or when
/// some path cannot travel as text; else as many as the host runs at once.
fn width_for(files: &[PathBuf], par: &dyn Parallel) -> usize {
    // Small searches do not ask the host how wide it may go (its answer costs a host call).
    let splits = files.len() >= PARALLEL_MIN_FILES && files.iter().all(|f| f.to_str().is_some());
    if splits { par.width() } else { 1 }
}

/// Runs the part `name` over each of `parts` side by side, `args` naming the rest of its
/// arguments; a part the host did not run, or whose answer `read` cannot take, is done here
/// by `local`. The answers come in the order of `parts`.
fn run_parts<T>(
    par: &dyn Parallel,
    name: &str,
    parts: &[Vec<PathBuf>],
    args: &Value,
    read: fn(&str) -> Option<T>,
    local: &dyn Fn(&[PathBuf]) -> T,
) -> Vec<T> {
    let calls: Vec<(String, String)> = parts
        .iter()
        .map(|p| {
            let files: Vec<&str> = p.iter().filter_map(|f| f.to_str()).collect();
            let mut args = args.clone();
            args["files"] = json!(files);
            (name.to_string(), args.to_string())
        })
        .collect();
    let mut results = par.run(&calls).into_iter();
    parts
        .iter()
        .map(|part| {
            let done = results.next().and_then(|r| r.ok()).and_then(|text| read(&text));
            done.unwrap_or_else(|| local(part))
        })
        .collect()
}

/// [`scan`] over many files, split into parts that run side by side when the host can run
/// them. The result does not depend on the split: the matches are ordered afterwards.
fn scan_all(re: &Regex, args: (&str, bool), files: Vec<PathBuf>, par: &dyn Parallel) -> Scanned {
    let width = width_for(&files, par);
    if width < 2 {
        return scan(re, &files);
    }
    // Dealt out in turn, so each part gets a share of every directory (large files cluster).
    let mut parts: Vec<Vec<PathBuf>> = (0..width).map(|_| Vec::new()).collect();
    for (i, f) in files.into_iter().enumerate() {
        parts[i % width].push(f);
    }
    let (pattern, case_insensitive) = args;
    let args = json!({"pattern": pattern, "case_insensitive": case_insensitive});
    let mut out = Scanned::default();
    for s in run_parts(par, SCAN_PART, &parts, &args, Scanned::from_json, &|p| scan(re, p)) {
        out.matching.extend(s.matching);
        out.too_large += s.too_large;
    }
    out
}

/// The `max` most recently modified of `files` (ties by path), in no particular order, looked
/// up in parts side by side when the host can run them.
fn newest(files: Vec<PathBuf>, max: usize, par: &dyn Parallel) -> Vec<PathBuf> {
    let width = width_for(&files, par);
    let times = if width < 2 {
        Dated::of(&files).0
    } else {
        // In runs, not dealt out: a run of paths in one directory is looked up through one
        // descriptor of it.
        let parts: Vec<Vec<PathBuf>> = files.chunks(files.len().div_ceil(width)).map(<[_]>::to_vec).collect();
        let dated = run_parts(par, STAT_PART, &parts, &json!({}), Dated::from_json, &Dated::of);
        dated
            .into_iter()
            .zip(&parts)
            .flat_map(|(d, p)| {
                // An answer of the wrong length is not trusted: looked up here.
                if d.0.len() == p.len() { d.0 } else { Dated::of(p).0 }
            })
            .collect()
    };
    let mut dated: Vec<(u128, PathBuf)> = times.into_iter().zip(files).collect();
    // Not a full sort: the matches are ordered later, and a registry's files often share one
    // time, so a full sort would spend most of its comparisons on paths.
    if max < dated.len() {
        dated.select_nth_unstable_by(max, |a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        dated.truncate(max);
    }
    dated.into_iter().map(|(_, p)| p).collect()
}

/// [`run`], searching at most the `max_files` newest files, with its parts run by `par`.
fn run_with(
    ws: &dyn Workspace,
    args: &Value,
    max_files: usize,
    par: &dyn Parallel,
) -> Result<Output, ToolError> {
    let pattern = req_str(args, "pattern")?;
    let path = opt_str(args, "path")?.unwrap_or(".");
    let include = opt_str(args, "include")?;
    let case_insensitive = opt_bool(args, "case_insensitive")?.unwrap_or(false);
    let context = opt_u64(args, "context_lines")?.unwrap_or(0);
    if pattern.is_empty() {
        return Err(ToolError::invalid_args("'pattern' is empty"));
    }
    if context > MAX_CONTEXT {
        return Err(ToolError::invalid_args(format!(
            "'context_lines' must be from 0 to {MAX_CONTEXT}, got {context}"
        )));
    }
    let re = build_regex(pattern, case_insensitive)?;
    if let Some(glob) = include.filter(|g| corral_plugin_sdk::paths::is_home_path(g.trim())) {
        return Err(Resolver::new(ws).home(glob, "the include glob"));
    }
    let include = include.map(compile_include).transpose()?;

    let resolver = Resolver::new(ws);
    let base = resolver.resolve(path)?;
    let meta = std::fs::metadata(&base).map_err(|e| io_error(path, &e))?;
    let reader = reader::Reader::new();
    let mut buf = Vec::new();
    let mut search = Search::new(&re, context as usize);
    if meta.is_file() {
        // An explicit file is searched whatever `include` and the ignore files say.
        let read =
            reader.read(&base, MAX_FILE_BYTES, &mut buf, &mut |_| false).map_err(|e| io_error(path, &e))?;
        if read == reader::Outcome::TooLarge {
            return Err(ToolError::new(
                ErrorKind::TooLarge,
                format!("'{path}' is over {} MB; grep skips files that large", MAX_FILE_BYTES >> 20),
            ));
        }
        // Skipped, as the description promises, with the reason rather than a bare "no matches".
        if common::is_binary(&buf) {
            return Ok(Output::text(format!(
                "No matches found: '{path}' is a binary file, and grep skips binary files\n"
            )));
        }
        if std::str::from_utf8(&buf).is_err() {
            return Ok(Output::text(format!(
                "No matches found: '{path}' is not valid UTF-8, and grep searches only UTF-8 text\n"
            )));
        }
        search.add_file(&resolver.display(&base), &buf);
        return Ok(search.finish(Vec::new()));
    }
    if !meta.is_dir() {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("'{path}' is not a regular file or directory"),
        ));
    }

    // Walk: regular files, and symlinks that lead to one the sandbox lets us see.
    let root = resolver.workspace_root().to_path_buf();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut undecodable: Vec<String> = Vec::new();
    walk::walk(&base, None, &mut |entry| {
        if entry.kind == Kind::Undecodable {
            undecodable.push(resolver.display(&entry.path));
            return Flow::Continue;
        }
        if entry.kind != Kind::File && entry.kind != Kind::Symlink {
            return Flow::Continue;
        }
        if let Some(glob) = &include {
            let p = &entry.path;
            let under_base = p.strip_prefix(&base).is_ok_and(|r| glob.is_match(r));
            if !under_base && !p.strip_prefix(&root).is_ok_and(|r| glob.is_match(r)) {
                return Flow::Continue;
            }
        }
        if entry.kind == Kind::Symlink && !std::fs::metadata(&entry.path).is_ok_and(|m| m.is_file()) {
            return Flow::Continue;
        }
        files.push(entry.path.clone());
        Flow::Continue
    });
    let mut notes = Vec::new();
    if !undecodable.is_empty() {
        let shown: Vec<&str> = undecodable.iter().take(5).map(String::as_str).collect();
        let more = if undecodable.len() > 5 {
            format!(" and {} more", undecodable.len() - 5)
        } else {
            String::new()
        };
        notes.push(format!(
            "[not searched: {} file(s) whose names are not UTF-8, shown escaped: {}{more}; no tool can open \
             them until they are renamed]",
            undecodable.len(),
            shown.join(", ")
        ));
    }
    if files.len() > max_files {
        // Only then does the order matter before searching: keep the newest.
        let total = files.len();
        files = newest(files, max_files, par);
        notes.push(format!(
            "[only the {max_files} most recently modified of {total} files were searched; narrow 'path' or \
             'include' to reach the others]"
        ));
    }

    // First pass: which files match at all, and when they were modified.
    let Scanned { mut matching, too_large } = scan_all(&re, (pattern, case_insensitive), files, par);
    if too_large > 0 {
        notes.push(format!(
            "[{too_large} file(s) over {} MB were not searched]",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }

    // Second pass: newest first, until the cap.
    matching.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (_, file) in &matching {
        let read = reader.read(file, MAX_FILE_BYTES, &mut buf, &mut |_| false);
        if !matches!(read, Ok(reader::Outcome::Read)) || common::is_binary(&buf) {
            continue;
        }
        if !search.add_file(&resolver.display(file), &buf) {
            break;
        }
    }
    Ok(search.finish(notes))
}

/// The `include` glob: refused when it climbs out or is absolute; without a `/` it is
/// matched at any depth.
fn compile_include(glob: &str) -> Result<globset::GlobMatcher, ToolError> {
    let glob = glob.trim();
    if glob.is_empty() {
        return Err(ToolError::invalid_args("'include' is empty"));
    }
    if glob.split(['/', '\\']).any(|c| c == "..") || Path::new(glob).is_absolute() {
        return Err(ToolError::invalid_args(format!(
            "'include' must be a relative glob without '..', got '{glob}'"
        ))
        .with_hint("choose the directory with 'path' and filter file names with 'include'"));
    }
    let glob = glob.trim_start_matches("./");
    let full = if glob.contains('/') { glob.to_string() } else { format!("**/{glob}") };
    globset::GlobBuilder::new(&full)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::invalid_args(format!("invalid 'include' glob '{glob}': {e}")))
}

/// The results so far: at most [`MAX_MATCHES`] matching lines, grouped by file.
struct Search<'r> {
    re: &'r Regex,
    context: usize,
    body: String,
    /// Matching lines taken (shown, or cut by the output cap).
    found: usize,
    /// Matching lines written out.
    shown: usize,
    /// More matching lines exist than were taken.
    more: bool,
    /// The output cap was reached.
    capped: bool,
}

impl<'r> Search<'r> {
    fn new(re: &'r Regex, context: usize) -> Self {
        Search { re, context, body: String::new(), found: 0, shown: 0, more: false, capped: false }
    }

    /// Adds the matches in `data` (the text of the file shown as `shown`); returns
    /// whether further files are still wanted.
    fn add_file(&mut self, shown: &str, data: &[u8]) -> bool {
        let want = MAX_MATCHES + 1 - self.found;
        let Some(hits) = find_lines(self.re, data, want) else { return true };
        if hits.matches.is_empty() {
            return true;
        }
        let take = hits.matches.len().min(MAX_MATCHES - self.found);
        if take < hits.matches.len() {
            self.more = true;
        }
        if take == 0 {
            return false;
        }
        self.found += take;
        let mut section = Section { out: &mut self.body, cap: MAX_OUTPUT_BYTES - NOTES_RESERVE, full: false };
        section.push(&format!("\n{shown}:"));
        self.shown += hits.render(&mut section, take, self.context);
        if section.full {
            self.capped = true;
        }
        !(self.more || self.capped)
    }

    /// The tool's output: a first line with the count, the matches, then `notes`.
    fn finish(self, mut notes: Vec<String>) -> Output {
        let Search { found, shown, more, capped, body, .. } = self;
        let mut text = match found {
            0 => "No matches found".to_string(),
            1 => "Found 1 match".to_string(),
            n => format!("Found {n} matches"),
        };
        if more {
            let _ = write!(
                text,
                " (showing the first {MAX_MATCHES}; there are more, narrow the pattern, 'path' or 'include')"
            );
        }
        text.push('\n');
        text.push_str(&body);
        if capped {
            notes.push(format!(
                "[output capped at {} KB: {shown} of the {found} matching lines are shown; narrow the search]",
                MAX_OUTPUT_BYTES / 1024
            ));
        }
        let searched_some_only = notes.iter().any(|n| n.starts_with("[only"));
        if !notes.is_empty() {
            text.push('\n');
            for note in &notes {
                text.push_str(note);
                text.push('\n');
            }
        }
        Output::text(text).truncated(more || capped || searched_some_only)
    }
}

/// Output that stops growing at `cap` bytes.
struct Section<'a> {
    out: &'a mut String,
    cap: usize,
    full: bool,
}

impl Section<'_> {
    /// Appends `line` and a newline unless that would pass the cap.
    fn push(&mut self, line: &str) -> bool {
        if self.full || self.out.len() + line.len() + 1 > self.cap {
            self.full = true;
            return false;
        }
        self.out.push_str(line);
        self.out.push('\n');
        true
    }
}

/// The matching lines of one file.
struct Hits<'a> {
    text: &'a str,
    /// Byte offset where each line starts, plus one past the last newline.
    starts: Vec<usize>,
    /// 0-based indexes of matching lines, ascending.
    matches: Vec<usize>,
}

impl Hits<'_> {
    fn line_count(&self) -> usize {
        match self.starts.last() {
            Some(&last) if last == self.text.len() => self.starts.len() - 1,
            _ => self.starts.len(),
        }
    }

    /// Byte range of line `k` without its line break.
    fn bounds(&self, k: usize) -> (usize, usize) {
        let start = self.starts.get(k).copied().unwrap_or(self.text.len());
        let end = self.starts.get(k + 1).map_or(self.text.len(), |next| next - 1);
        (start, end.max(start))
    }

    fn line(&self, k: usize) -> &str {
        let (start, end) = self.bounds(k);
        let line = self.text.get(start..end).unwrap_or("");
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// Writes the first `take` matches (with `context` lines around them); returns how
    /// many match lines were written.
    fn render(&self, out: &mut Section<'_>, take: usize, context: usize) -> usize {
        let matches = &self.matches[..take];
        let mut printed = 0;
        if context == 0 {
            for &k in matches {
                if !out.push(&format!("  Line {}: {}", k + 1, common::clip_line(self.line(k)))) {
                    break;
                }
                printed += 1;
            }
            return printed;
        }
        let last = self.line_count().saturating_sub(1);
        let mut i = 0;
        while i < matches.len() {
            let start = matches[i].saturating_sub(context);
            let mut end = (matches[i] + context).min(last);
            let mut j = i + 1;
            while j < matches.len() && matches[j].saturating_sub(context) <= end + 1 {
                end = (matches[j] + context).min(last);
                j += 1;
            }
            if i > 0 && !out.push("  --") {
                return printed;
            }
            for k in start..=end {
                let is_match = matches[i..j].binary_search(&k).is_ok();
                let marker = if is_match { "  <<<" } else { "" };
                if !out.push(&format!("  Line {}: {}{marker}", k + 1, common::clip_line(self.line(k)))) {
                    return printed;
                }
                printed += usize::from(is_match);
            }
            i = j;
        }
        printed
    }
}

/// Whether some line of `buf` matches: [`find_lines`] without line numbers or the UTF-8
/// check, for telling which files to show.
fn has_line_match(re: &Regex, buf: &[u8]) -> bool {
    let mut pos = 0;
    while pos <= buf.len() {
        let Some(m) = re.find_at(buf, pos) else { return false };
        let start = memchr::memrchr(b'\n', &buf[..m.start()]).map_or(0, |i| i + 1);
        if start == buf.len() {
            // Past the final line break: not a line.
            return false;
        }
        let end = memchr::memchr(b'\n', &buf[m.start()..]).map_or(buf.len(), |i| m.start() + i);
        if m.end() <= end || re.is_match(&buf[start..end]) {
            return true;
        }
        pos = end + 1;
    }
    false
}

/// Finds up to `want` matching lines of `buf`. `None` when the file has a match but is
/// not UTF-8 (it is skipped); files without a match are never checked.
fn find_lines<'a>(re: &Regex, buf: &'a [u8], want: usize) -> Option<Hits<'a>> {
    let mut hits: Option<Hits<'a>> = None;
    let mut pos = 0;
    while pos <= buf.len() {
        let Some(m) = re.find_at(buf, pos) else { break };
        let h = match hits {
            Some(ref mut h) => h,
            None => {
                let text = std::str::from_utf8(buf).ok()?;
                let mut starts = Vec::with_capacity(buf.len() / 32 + 1);
                starts.push(0);
                starts.extend(memchr::memchr_iter(b'\n', buf).map(|i| i + 1));
                hits.insert(Hits { text, starts, matches: Vec::new() })
            }
        };
        let k = h.starts.partition_point(|&s| s <= m.start()).saturating_sub(1);
        if k >= h.line_count() {
            break;
        }
        let (start, end) = h.bounds(k);
        // A match that runs past the end of its line may hide one within the line.
        if m.end() <= end || buf.get(start..end).is_some_and(|line| re.is_match(line)) {
            h.matches.push(k);
            if h.matches.len() >= want {
                break;
            }
        }
        pos = end + 1;
    }
    Some(hits.unwrap_or(Hits { text: "", starts: Vec::new(), matches: Vec::new() }))
}

/// Whole-file reads for the search.
///
/// Inside the sandbox, std's `File::read` goes through a WASI input stream, which costs
/// several host calls per file (and, with wasmtime, a hand-off to a blocking thread for
/// each read). Reading through the file's `wasi:filesystem` descriptor at explicit
/// offsets takes one host call per 64 KB; the descriptor's `stat` is only asked for when
/// the file is large or its modification time is wanted. Natively, std::fs is used.
mod reader {
    use crate::common::is_binary;
    use std::path::Path;

    /// What [`Reader::read`] did.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Outcome {
        /// The file is over the size limit; nothing was read.
        TooLarge,
        /// The file is in the buffer (of a binary file, only enough to tell).
        Read,
        /// As `Read`, and the caller kept the file: here is its modification time in
        /// nanoseconds since the epoch.
        Kept(u128),
    }

    #[cfg(target_os = "wasi")]
    pub struct Reader {
        preopens: crate::common::fileio::sys::Preopens,
    }

    /// The first read asks for this much; a shorter answer is the whole file, so most
    /// source files take one read and no `stat`.
    #[cfg(target_os = "wasi")]
    const FIRST_READ: u64 = 32 * 1024;

    #[cfg(target_os = "wasi")]
    impl Reader {
        pub fn new() -> Self {
            Reader { preopens: crate::common::fileio::sys::Preopens::new() }
        }

        /// Replaces `buf` with the regular file at absolute `path` unless it is larger
        /// than `max` bytes, then asks `keep` whether the caller wants its modification time.
        pub fn read(
            &self,
            path: &Path,
            max: u64,
            buf: &mut Vec<u8>,
            keep: &mut dyn FnMut(&[u8]) -> bool,
        ) -> std::io::Result<Outcome> {
            use crate::common::fileio::sys::mtime;
            use wasip2::filesystem::types::{DescriptorFlags, ErrorCode, OpenFlags, PathFlags};
            buf.clear();
            let fail = |e: ErrorCode| match e {
                ErrorCode::NoEntry => std::io::Error::from(std::io::ErrorKind::NotFound),
                ErrorCode::Access | ErrorCode::NotPermitted => {
                    std::io::Error::from(std::io::ErrorKind::PermissionDenied)
                }
                other => std::io::Error::other(format!("{other:?}")),
            };
            let (dir, rel) = self
                .preopens
                .locate(path)
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
            let file = dir
                .open_at(PathFlags::SYMLINK_FOLLOW, rel, OpenFlags::empty(), DescriptorFlags::READ)
                .map_err(fail)?;
            // A regular file answers a read in full unless it ends first.
            let (first, _) = file.read(FIRST_READ, 0).map_err(fail)?;
            let mut stat = None;
            if first.len() as u64 == FIRST_READ {
                let s = file.stat().map_err(fail)?;
                if s.size > max {
                    return Ok(Outcome::TooLarge);
                }
                *buf = first;
                // The rest of a binary file is not needed.
                if !is_binary(buf) {
                    buf.reserve(usize::try_from(s.size).unwrap_or(0).saturating_sub(buf.len()));
                    while (buf.len() as u64) < s.size {
                        let (chunk, _) =
                            file.read(s.size - buf.len() as u64, buf.len() as u64).map_err(fail)?;
                        if chunk.is_empty() {
                            break;
                        }
                        buf.extend_from_slice(&chunk);
                    }
                }
                stat = Some(s);
            } else {
                *buf = first;
            }
            if !keep(buf) {
                return Ok(Outcome::Read);
            }
            let stat = match stat {
                Some(s) => s,
                None => file.stat().map_err(fail)?,
            };
            Ok(Outcome::Kept(mtime(&stat)))
        }
    }

    #[cfg(not(target_os = "wasi"))]
    pub struct Reader;

    #[cfg(not(target_os = "wasi"))]
    impl Reader {
        pub fn new() -> Self {
            Reader
        }

        /// Replaces `buf` with the regular file at `path` unless it is larger than `max`
        /// bytes, then asks `keep` whether the caller wants its modification time.
        pub fn read(
            &self,
            path: &Path,
            max: u64,
            buf: &mut Vec<u8>,
            keep: &mut dyn FnMut(&[u8]) -> bool,
        ) -> std::io::Result<Outcome> {
            use std::io::Read as _;
            buf.clear();
            let file = std::fs::File::open(path)?;
            let meta = file.metadata()?;
            if meta.len() > max {
                return Ok(Outcome::TooLarge);
            }
            let file = &file;
            file.take(crate::common::BINARY_SNIFF_BYTES as u64).read_to_end(buf)?;
            if !is_binary(buf) {
                // The rest of a binary file is not needed.
                file.take(max.saturating_add(1)).read_to_end(buf)?;
            }
            if keep(buf) { Ok(Outcome::Kept(crate::common::mtime_key(&meta))) } else { Ok(Outcome::Read) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use corral_plugin_sdk::host::fake::FakeWorkspace;
    use std::fs;

    /// Writes `rel` with `content` and a modification time `age` seconds ago.
    fn grep(ws: &FakeWorkspace, args: Value) -> Result<Output, ToolError> {
        run(ws, &args)
    }

    #[test]
    fn matches_are_grouped_by_file_newest_first() {
        let (dir, ws) = setup();
        put(dir.path(), "old.rs", "fn main() {}\nlet x = 1;\nfn helper() {}\n", 100);
        put(dir.path(), "src/new.rs", "// nothing\nfn fresh() {}\n", 10);
        put(dir.path(), "none.txt", "no match here\n", 1);
        let out = grep(&ws, json!({"pattern": r"fn \w+\("})).unwrap();
        assert_eq!(
            out.text,
            "Found 3 matches\n\nsrc/new.rs:\n  Line 2: fn fresh() {}\n\nold.rs:\n  Line 1: fn main() {}\n  Line 3: fn helper() {}\n"
        );
        assert!(!out.truncated);
    }

    #[test]
    fn no_match_and_single_match_wording() {
        let (dir, ws) = setup();
        put(dir.path(), "a.txt", "alpha\r\nbeta\r\n", 10);
        assert_eq!(grep(&ws, json!({"pattern": "gamma"})).unwrap().text, "No matches found\n");
        assert_eq!(
            grep(&ws, json!({"pattern": "^beta$"})).unwrap().text,
            "Found 1 match\n\na.txt:\n  Line 2: beta\n",
            "anchors work per line, also with CRLF endings"
        );
    }

    #[test]
    fn case_insensitive() {
        let (dir, ws) = setup();
        put(dir.path(), "a.txt", "Hello\nhello\nHELLO\nbye\n", 10);
        assert_eq!(
            grep(&ws, json!({"pattern": "hello"})).unwrap().text,
            "Found 1 match\n\na.txt:\n  Line 2: hello\n"
        );
        assert_eq!(
            grep(&ws, json!({"pattern": "hello", "case_insensitive": true})).unwrap().text,
            "Found 3 matches\n\na.txt:\n  Line 1: Hello\n  Line 2: hello\n  Line 3: HELLO\n"
        );
        let e = grep(&ws, json!({"pattern": "x", "case_insensitive": 1})).unwrap_err();
        assert_eq!(e.message, "'case_insensitive' must be true or false, got a number");
    }

    #[test]
    fn context_marks_matches_and_separates_blocks() {
        let (dir, ws) = setup();
        let content: String = (1..=12)
            .map(|i| if i == 3 || i == 5 || i == 11 { "hit\n".to_string() } else { format!("l{i}\n") })
            .collect();
        put(dir.path(), "c.txt", &content, 10);
        let out = grep(&ws, json!({"pattern": "hit", "context_lines": 1})).unwrap();
        assert_eq!(
            out.text,
            "Found 3 matches\n\nc.txt:\n  Line 2: l2\n  Line 3: hit  <<<\n  Line 4: l4\n  Line 5: hit  <<<\n  Line 6: l6\n  --\n  Line 10: l10\n  Line 11: hit  <<<\n  Line 12: l12\n"
        );
        let e = grep(&ws, json!({"pattern": "hit", "context_lines": 101})).unwrap_err();
        assert_eq!(e.message, "'context_lines' must be from 0 to 100, got 101");
    }

    #[test]
    fn context_stops_at_the_file_edges() {
        let (dir, ws) = setup();
        put(dir.path(), "e.txt", "hit\nb\nhit", 10);
        let out = grep(&ws, json!({"pattern": "hit", "context_lines": 5})).unwrap();
        assert_eq!(
            out.text,
            "Found 2 matches\n\ne.txt:\n  Line 1: hit  <<<\n  Line 2: b\n  Line 3: hit  <<<\n"
        );
    }

    #[test]
    fn include_filters_by_name_or_path() {
        let (dir, ws) = setup();
        put(dir.path(), "a.rs", "needle\n", 30);
        put(dir.path(), "src/b.rs", "needle\n", 20);
        put(dir.path(), "src/c.py", "needle\n", 10);
        let out = grep(&ws, json!({"pattern": "needle", "include": "*.rs"})).unwrap();
        assert_eq!(out.text, "Found 2 matches\n\nsrc/b.rs:\n  Line 1: needle\n\na.rs:\n  Line 1: needle\n");
        let out = grep(&ws, json!({"pattern": "needle", "include": "src/*.{py,rs}"})).unwrap();
        assert_eq!(
            out.text,
            "Found 2 matches\n\nsrc/c.py:\n  Line 1: needle\n\nsrc/b.rs:\n  Line 1: needle\n"
        );
        let out = grep(&ws, json!({"pattern": "needle", "path": "src", "include": "*.py"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\nsrc/c.py:\n  Line 1: needle\n");
        let e = grep(&ws, json!({"pattern": "needle", "include": "../*.rs"})).unwrap_err();
        assert_eq!(e.message, "'include' must be a relative glob without '..', got '../*.rs'");
        assert!(grep(&ws, json!({"pattern": "needle", "include": "/etc/*"})).is_err());
    }

    #[test]
    fn gitignore_is_honoured_and_git_is_skipped_but_hidden_files_are_searched() {
        let (dir, ws) = setup();
        put(dir.path(), ".gitignore", "build/\n*.log\n", 50);
        put(dir.path(), ".ignore", "vendor/\n", 50);
        put(dir.path(), "build/out.txt", "needle\n", 10);
        put(dir.path(), "vendor/lib.txt", "needle\n", 10);
        put(dir.path(), "app.log", "needle\n", 10);
        put(dir.path(), ".git/HEAD", "needle\n", 10);
        put(dir.path(), ".git/info/exclude", "secret.txt\n", 50);
        put(dir.path(), "secret.txt", "needle\n", 10);
        put(dir.path(), ".github/ci.yml", "needle\n", 20);
        put(dir.path(), "src/main.rs", "needle\n", 30);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(
            out.text,
            "Found 2 matches\n\n.github/ci.yml:\n  Line 1: needle\n\nsrc/main.rs:\n  Line 1: needle\n"
        );
        // An explicitly named ignored directory or file is searched.
        let out = grep(&ws, json!({"pattern": "needle", "path": "build"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\nbuild/out.txt:\n  Line 1: needle\n");
        let out = grep(&ws, json!({"pattern": "needle", "path": "app.log"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\napp.log:\n  Line 1: needle\n");
    }

    #[test]
    fn home_paths_are_refused_with_the_reason() {
        let (_dir, ws) = setup();
        let e = grep(&ws, json!({"pattern": "x", "include": "~/src/*.rs"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert!(
            e.message.starts_with("the include glob '~/src/*.rs' starts with '~', the home directory"),
            "{}",
            e.message
        );
        let e = grep(&ws, json!({"pattern": "x", "path": "~"})).unwrap_err();
        assert!(e.message.starts_with("the path '~' starts with '~'"), "{}", e.message);
    }

    #[test]
    fn binary_and_non_utf8_files_are_skipped() {
        let (dir, ws) = setup();
        fs::write(dir.path().join("bin.dat"), b"needle\0\x01\x02").unwrap();
        fs::write(dir.path().join("latin1.txt"), b"needle caf\xe9\n").unwrap();
        put(dir.path(), "ok.txt", "needle\n", 10);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\nok.txt:\n  Line 1: needle\n");
        let out = grep(&ws, json!({"pattern": "needle", "path": "bin.dat"})).unwrap();
        assert_eq!(out.text, "No matches found: 'bin.dat' is a binary file, and grep skips binary files\n");
        let out = grep(&ws, json!({"pattern": "needle", "path": "latin1.txt"})).unwrap();
        assert_eq!(
            out.text,
            "No matches found: 'latin1.txt' is not valid UTF-8, and grep searches only UTF-8 text\n"
        );
        // A NUL after the first 8 KB does not make a file binary.
        put(dir.path(), "late.txt", &format!("{}\nneedle\0\n", "a".repeat(9000)), 5);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(
            out.text,
            "Found 2 matches\n\nlate.txt:\n  Line 2: needle\0\n\nok.txt:\n  Line 1: needle\n"
        );
    }

    #[test]
    fn files_over_the_size_limit_are_skipped_with_a_note() {
        let (dir, ws) = setup();
        put(dir.path(), "small.txt", "needle\n", 10);
        let big = fs::File::create(dir.path().join("huge.txt")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(
            out.text,
            "Found 1 match\n\nsmall.txt:\n  Line 1: needle\n\n[1 file(s) over 64 MB were not searched]\n"
        );
        let e = grep(&ws, json!({"pattern": "needle", "path": "huge.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooLarge);
        assert_eq!(e.message, "'huge.txt' is over 64 MB; grep skips files that large");
    }

    #[test]
    fn at_most_100_matches() {
        let (dir, ws) = setup();
        put(dir.path(), "a.txt", &"match\n".repeat(60), 20);
        put(dir.path(), "b.txt", &"match\n".repeat(60), 10);
        let out = grep(&ws, json!({"pattern": "match"})).unwrap();
        assert!(out.text.starts_with(
            "Found 100 matches (showing the first 100; there are more, narrow the pattern, 'path' or 'include')\n\nb.txt:\n  Line 1: match\n"
        ));
        assert!(out.text.contains("\n  Line 60: match\n\na.txt:\n  Line 1: match\n"));
        assert!(out.text.ends_with("\n  Line 40: match\n"), "{}", &out.text[out.text.len() - 60..]);
        assert_eq!(out.text.matches("  Line ").count(), 100);
        assert!(out.truncated);
        // Exactly 100 in all: no "more" note.
        put(dir.path(), "a.txt", &"match\n".repeat(40), 20);
        let out = grep(&ws, json!({"pattern": "match"})).unwrap();
        assert!(out.text.starts_with("Found 100 matches\n"));
        assert!(!out.truncated);
    }

    #[test]
    fn long_lines_are_clipped() {
        let (dir, ws) = setup();
        put(dir.path(), "l.txt", &format!("needle{}\n", "x".repeat(2100)), 10);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(
            out.text,
            format!("Found 1 match\n\nl.txt:\n  Line 1: needle{} [+106 chars]\n", "x".repeat(1994))
        );
    }

    #[test]
    fn output_is_capped_at_50_kb() {
        let (dir, ws) = setup();
        put(dir.path(), "wide.txt", &format!("needle{}\n", "y".repeat(1990)).repeat(60), 10);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
        assert!(out.text.starts_with("Found 60 matches\n"));
        let shown = out.text.matches("  Line ").count();
        assert!(out.text.ends_with(&format!(
            "\n[output capped at 50 KB: {shown} of the 60 matching lines are shown; narrow the search]\n"
        )));
        assert!(out.truncated);
    }

    #[test]
    fn matches_do_not_span_lines() {
        let (dir, ws) = setup();
        put(dir.path(), "s.txt", "abc  \n  foo\nbar\nabc\\s\n", 10);
        // `\s+foo` first matches across the line break from line 1; only line 2 counts.
        let out = grep(&ws, json!({"pattern": r"\s+foo"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\ns.txt:\n  Line 2:   foo\n");
        assert_eq!(grep(&ws, json!({"pattern": "foo\nbar"})).unwrap().text, "No matches found\n");
        // `$` matches at the end of every line; the empty line after the final newline is not a line.
        let out = grep(&ws, json!({"pattern": "$"})).unwrap();
        assert!(out.text.starts_with("Found 4 matches\n"), "{}", out.text);
    }

    #[test]
    fn the_quick_match_test_agrees_with_the_line_search() {
        let texts = ["", "\n", "a", "a\n", "abc  \n  foo\n", "foo\nbar", "x\r\ny\r\n", "\n\nz", "tail"];
        let patterns = ["^", "$", "^$", r"\s+foo", "foo\nbar", "^y$", "z", "(?m)^tail$", r"\n", "q"];
        for p in patterns {
            let re = RegexBuilder::new(p).multi_line(true).crlf(true).build().unwrap();
            for t in texts {
                let full = find_lines(&re, t.as_bytes(), 1).is_some_and(|h| !h.matches.is_empty());
                assert_eq!(has_line_match(&re, t.as_bytes()), full, "{p:?} on {t:?}");
            }
        }
    }

    #[test]
    fn invalid_regex_and_other_bad_arguments() {
        let (dir, ws) = setup();
        put(dir.path(), "a.txt", "x\n", 10);
        let e = grep(&ws, json!({"pattern": "fn ("})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(e.message.starts_with("invalid regular expression: regex parse error"), "{}", e.message);
        assert!(e.message.contains("unclosed group"), "{}", e.message);
        assert_eq!(grep(&ws, json!({})).unwrap_err().message, "missing required field 'pattern'");
        assert_eq!(
            grep(&ws, json!({"pattern": "x", "path": "nope"})).unwrap_err().message,
            "'nope' does not exist"
        );
        assert_eq!(
            grep(&ws, json!({"pattern": "x", "path": "../.."})).unwrap_err().kind,
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            grep(&ws, json!({"pattern": "x", "context_lines": true})).unwrap_err().message,
            "'context_lines' must be a non-negative integer, got a boolean"
        );
    }

    #[test]
    fn only_the_newest_files_are_searched() {
        let (dir, ws) = setup();
        put(dir.path(), "old.txt", "needle\n", 300);
        put(dir.path(), "mid.txt", "needle\n", 200);
        put(dir.path(), "new.txt", "needle\n", 100);
        let out = run_with(&ws, &json!({"pattern": "needle"}), 2, &Host).unwrap();
        assert_eq!(
            out.text,
            "Found 2 matches\n\nnew.txt:\n  Line 1: needle\n\nmid.txt:\n  Line 1: needle\n\n\
             [only the 2 most recently modified of 3 files were searched; narrow 'path' or 'include' to reach the others]\n"
        );
        assert!(out.truncated);
    }

    /// Stands in for the host's `parallel` import: runs each part with [`part`] (`Some`), or
    /// answers the calls listed in `fail` with an error or an unreadable text.
    struct Parts {
        width: usize,
        fail: Vec<usize>,
        calls: std::cell::RefCell<Vec<Value>>,
        /// How many times the search asked for the width.
        asked: std::cell::Cell<usize>,
    }

    impl Parallel for Parts {
        fn width(&self) -> usize {
            self.asked.set(self.asked.get() + 1);
            self.width
        }
        fn run(&self, calls: &[(String, String)]) -> Vec<Result<String, String>> {
            let args: Vec<Value> = calls.iter().map(|(_, a)| serde_json::from_str(a).unwrap()).collect();
            self.calls.borrow_mut().extend(args.iter().cloned());
            let ran = calls.iter().zip(&args).enumerate().map(|(i, ((name, _), args))| {
                match self.fail.contains(&i) {
                    true if i % 2 == 0 => Err("timeout: not started".to_string()),
                    true => Ok("not json".to_string()),
                    false => part(name, args).map(|o| o.text).map_err(|e| e.message),
                }
            });
            ran.collect()
        }
    }

    #[test]
    fn a_large_search_splits_into_parts_and_answers_as_one_call_would() {
        let (dir, ws) = setup();
        for i in 0..1200 {
            let text = if i % 97 == 0 { format!("x\nneedle {i}\n") } else { format!("hay {i}\n") };
            put(dir.path(), &format!("d{}/f{i}.txt", i % 7), &text, 1000 - (i as u64 % 500));
        }
        put(dir.path(), "big.bin", "", 1);
        fs::write(dir.path().join("big.txt"), vec![b'a'; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        let args = json!({"pattern": "needle \\d+", "context_lines": 1});
        let alone = run_with(
            &ws,
            &args,
            MAX_WALK_ENTRIES,
            &Parts { width: 1, fail: vec![], calls: Default::default(), asked: Default::default() },
        )
        .unwrap();
        assert!(alone.text.starts_with("Found 13 matches\n"), "{}", alone.text);
        let note = format!("[1 file(s) over {} MB were not searched]", MAX_FILE_BYTES >> 20);
        assert!(alone.text.contains(&note), "{}", alone.text);
        for fail in [vec![], vec![0], vec![1, 2], vec![0, 1, 2]] {
            let par =
                Parts { width: 3, fail: fail.clone(), calls: Default::default(), asked: Default::default() };
            let split = run_with(&ws, &args, MAX_WALK_ENTRIES, &par).unwrap();
            assert_eq!(split, alone, "parts {fail:?} not run");
            let calls = par.calls.borrow();
            assert_eq!(calls.len(), 3, "one part per width");
            let sizes: Vec<usize> = calls.iter().map(|c| c["files"].as_array().unwrap().len()).collect();
            assert_eq!(sizes.iter().sum::<usize>(), 1202, "every file in exactly one part: {sizes:?}");
            assert!(sizes.iter().all(|&n| n.abs_diff(1202 / 3) <= 1), "even parts: {sizes:?}");
            assert_eq!(calls[0]["pattern"], "needle \\d+");
        }
        // Over the file cap the times are looked up in parts too (in runs of the walk's order),
        // and the newest are searched as when nothing runs beside the call.
        let alone = run_with(
            &ws,
            &args,
            1000,
            &Parts { width: 1, fail: vec![], calls: Default::default(), asked: Default::default() },
        )
        .unwrap();
        assert!(alone.text.contains("[only the 1000 most recently modified of 1202 files"), "{}", alone.text);
        for fail in [vec![], vec![0, 4], vec![1, 2, 3, 5]] {
            let par =
                Parts { width: 3, fail: fail.clone(), calls: Default::default(), asked: Default::default() };
            let split = run_with(&ws, &args, 1000, &par).unwrap();
            assert_eq!(split, alone, "parts {fail:?} not run");
            let calls = par.calls.borrow();
            let sizes: Vec<usize> = calls.iter().map(|c| c["files"].as_array().unwrap().len()).collect();
            assert_eq!(sizes.len(), 6, "three parts look up times, three read: {sizes:?}");
            assert_eq!(sizes[..3].iter().sum::<usize>(), 1202, "{sizes:?}");
            assert_eq!(sizes[3..].iter().sum::<usize>(), 1000, "{sizes:?}");
            assert!(calls[0].get("pattern").is_none() && calls[3]["pattern"] == "needle \\d+");
        }
        // A small search runs in the call itself.
        let small = Parts { width: 3, fail: vec![], calls: Default::default(), asked: Default::default() };
        run_with(&ws, &json!({"pattern": "needle", "path": "d0"}), MAX_WALK_ENTRIES, &small).unwrap();
        assert!(small.calls.borrow().is_empty());
        assert_eq!(small.asked.get(), 0, "a small search does not ask the host how wide it may go");
    }

    #[test]
    fn a_part_answers_which_files_match_and_refuses_other_names() {
        let (dir, _ws) = setup();
        put(dir.path(), "a.txt", "Needle\n", 50);
        put(dir.path(), "b.txt", "hay\n", 10);
        let files: Vec<String> =
            ["a.txt", "b.txt", "gone.txt"].iter().map(|f| dir.path().join(f).display().to_string()).collect();
        let out =
            part(SCAN_PART, &json!({"pattern": "needle", "case_insensitive": true, "files": files})).unwrap();
        let got = Scanned::from_json(&out.text).unwrap();
        assert_eq!(got.matching.len(), 1);
        assert_eq!(got.matching[0].1, dir.path().join("a.txt"));
        let mtime = crate::common::mtime_key(&fs::metadata(dir.path().join("a.txt")).unwrap());
        assert_eq!(got.matching[0].0, mtime, "the time survives the trip exactly");
        assert_eq!(got.too_large, 0);
        let out = part(STAT_PART, &json!({"files": files})).unwrap();
        let times = Dated::from_json(&out.text).unwrap();
        assert_eq!(times.0.len(), 3);
        assert_eq!(times.0[0], mtime);
        assert_eq!(times.0[1], crate::common::mtime_key(&fs::metadata(dir.path().join("b.txt")).unwrap()));
        assert_eq!(times.0[2], 0, "a file that cannot be looked up counts as oldest");
        assert_eq!(part(STAT_PART, &json!({})).unwrap_err().message, "'files' must be an array of paths");
        let e = part("grep/other", &json!({})).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::NotFound, "this plugin has no tool named 'grep/other'")
        );
        let e = part(SCAN_PART, &json!({"pattern": "x"})).unwrap_err();
        assert_eq!(e.message, "'files' must be an array of paths");
        assert_eq!(
            part(SCAN_PART, &json!({"pattern": "(", "files": []})).unwrap_err().kind,
            ErrorKind::InvalidArgs
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_not_followed() {
        let (dir, ws) = setup();
        put(dir.path(), "real/a.txt", "needle\n", 10);
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling")).unwrap();
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\nreal/a.txt:\n  Line 1: needle\n");
    }

    #[test]
    fn line_numbers_agree_with_read_file() {
        let (dir, ws) = setup();
        put(dir.path(), "n.txt", "a\r\n\nb\n\n\nneedle\nc", 10);
        let out = grep(&ws, json!({"pattern": "needle"})).unwrap();
        assert_eq!(out.text, "Found 1 match\n\nn.txt:\n  Line 6: needle\n");
        let read = crate::read::run(&ws, &json!({"file_path": "n.txt"})).unwrap();
        assert!(read.text.contains("\n6: needle\n"));
    }
}
