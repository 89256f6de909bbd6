//! Terminal rendering of a session on stderr: a spinner while the model thinks, streamed
//! text, one compact line per tool call, edits as coloured diffs, and notices.

use crate::agent::branch::BranchEvent;
use crate::agent::{CallOutcome, Compaction, Observer};
use crate::llm::{Event, Response, ToolCall};
use crate::termtext::{self, cut_words};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub use super::style::Style;

/// A spinner on its own thread, so it turns even while the host is busy.
struct Spinner {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
    /// What the spinner says; a retry replaces it, so retries are one updating line.
    label: Arc<std::sync::Mutex<String>>,
}

impl Spinner {
    fn start(label: &'static str) -> Option<Spinner> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let label = Arc::new(std::sync::Mutex::new(label.to_string()));
        let shown = label.clone();
        let handle = std::thread::Builder::new()
            .name("spinner".into())
            .spawn(move || {
                const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let mut i = 0;
                let started = std::time::Instant::now();
                // Do not flash for fast replies.
                std::thread::sleep(Duration::from_millis(150));
                while !flag.load(Ordering::Relaxed) {
                    let secs = started.elapsed().as_secs();
                    let label = shown.lock().map(|l| l.clone()).unwrap_or_default();
                    eprint!("\r\x1b[2K{} {label} ({secs} s · Ctrl-C to stop)", FRAMES[i % FRAMES.len()]);
                    let _ = std::io::stderr().flush();
                    i += 1;
                    std::thread::sleep(Duration::from_millis(90));
                }
                if i > 0 {
                    eprint!("\r\x1b[2K");
                    let _ = std::io::stderr().flush();
                }
            })
            .ok()?;
        Some(Spinner { stop, handle, label })
    }

    fn relabel(&self, text: String) {
        if let Ok(mut l) = self.label.lock() {
            *l = text;
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

/// Renders to stderr. With `quiet`, only notices of failure are shown.
pub struct Terminal {
    style: Style,
    quiet: bool,
    spinner_enabled: bool,
    spinner: Option<Spinner>,
    /// Text of the current reply has been printed and the line is open.
    mid_line: bool,
    in_reasoning: bool,
    /// The final answer was already streamed to the terminal.
    pub streamed_answer: bool,
    /// Strips control sequences split across streamed pieces.
    clean: termtext::Stream,
    /// On a terminal, streamed text is drawn as Markdown a whole block at a time.
    blocks: Option<super::markdown::Blocks>,
}

impl Terminal {
    pub fn new(style: Style, quiet: bool, tty: bool) -> Self {
        Terminal {
            style,
            quiet,
            spinner_enabled: tty && !quiet,
            spinner: None,
            mid_line: false,
            in_reasoning: false,
            streamed_answer: false,
            clean: termtext::Stream::default(),
            blocks: (tty && !quiet).then(super::markdown::Blocks::default),
        }
    }

    /// Draws Markdown blocks that streamed text completed (all that is left with `last`).
    fn draw_blocks(&mut self, md: Option<String>) {
        if let Some(md) = md {
            self.stop_spinner();
            self.end_line();
            eprintln!("{}\n", super::markdown::render(&md, self.style).trim_end());
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.stop();
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            eprintln!("{}", self.style.reset);
            self.mid_line = false;
        }
        self.in_reasoning = false;
    }

    pub fn finish(&mut self) {
        self.stop_spinner();
        self.end_line();
    }

    pub fn error(&mut self, text: &str) {
        self.finish();
        let s = self.style;
        eprintln!("{}error:{} {}", s.red, s.reset, termtext::clean(&crate::redact::text(text)));
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.stop_spinner();
    }
}

impl Observer for Terminal {
    fn waiting(&mut self) {
        self.streamed_answer = false;
        if self.spinner_enabled && self.spinner.is_none() {
            self.spinner = Spinner::start("waiting for the model");
        }
    }

    fn event(&mut self, e: &Event) {
        // The spinner keeps turning while a retry is waited for, or a Markdown block is
        // still being streamed.
        if !matches!(e, Event::Retry { .. } | Event::Text(_))
            || self.blocks.is_none() && matches!(e, Event::Text(_))
        {
            self.stop_spinner();
        }
        if self.quiet {
            return;
        }
        let s = self.style;
        match e {
            Event::Text(t) => {
                if self.in_reasoning {
                    self.end_line();
                }
                let text = self.clean.push(t);
                self.streamed_answer = true;
                if let Some(blocks) = &mut self.blocks {
                    let done = blocks.push(&text);
                    self.draw_blocks(done);
                } else {
                    eprint!("{text}");
                    self.mid_line = !t.ends_with('\n');
                }
            }
            Event::Reasoning(t) => {
                if !self.in_reasoning {
                    self.end_line();
                    eprint!("{}", s.dim);
                    self.in_reasoning = true;
                }
                eprint!("{}", self.clean.push(t));
                self.mid_line = true;
            }
            Event::Notice(m) => {
                self.end_line();
                eprintln!("{}note: {m}{}", s.dim, s.reset);
            }
            Event::Retry { attempt, wait, reason } => {
                let reason = termtext::clean(reason);
                let text =
                    format!("↻ {reason}; retrying in {:.1} s (attempt {})", wait.as_secs_f64(), attempt + 1);
                self.streamed_answer = false;
                if let Some(blocks) = &mut self.blocks {
                    blocks.reset();
                }
                // On a terminal the waiting line itself shows the retry, overwritten by the next.
                if let Some(spinner) = &self.spinner {
                    spinner.relabel(text);
                } else {
                    self.end_line();
                    eprintln!("{}{text}{}", s.dim, s.reset);
                }
            }
        }
        let _ = std::io::stderr().flush();
    }

    fn reply(&mut self, r: &Response) {
        let rest = self.blocks.as_mut().and_then(|b| b.finish());
        self.draw_blocks(rest);
        self.stop_spinner();
        self.clean.reset();
        if !self.quiet && self.streamed_answer {
            self.end_line();
        } else if !self.quiet && !r.text.is_empty() && !r.tool_calls.is_empty() {
            // Not streamed: show the text that came with tool calls; a final answer goes to stdout.
            eprintln!("{}", termtext::clean(r.text.trim_end()));
        }
        if !r.tool_calls.is_empty() {
            self.streamed_answer = false;
        }
    }

    fn tool_done(&mut self, call: &ToolCall, outcome: &CallOutcome) {
        self.finish();
        if self.quiet {
            return;
        }
        let s = self.style;
        let (mark, color) = if outcome.is_error { ("✗", s.red) } else { ("✓", s.green) };
        let shown = tool_result(&call.name, &outcome.content, outcome.is_error);
        let result = if shown.line.is_empty() { String::new() } else { format!(" → {}", shown.line) };
        let (reset, bold, dim) = (s.reset, s.bold, s.dim);
        // The lines of a call go out in one write: stderr is unbuffered, and piece by piece
        // they cost a system call per piece on every turn.
        let mut out = format!(
            "{color}{mark}{reset} {bold}{}{reset} {}{dim}{result} ({:.0?}){reset}\n",
            termtext::clean(&call.name),
            summarize_call(&call.name, &call.arguments),
            outcome.duration
        );
        for line in &shown.below {
            let tint = if outcome.is_error { s.red } else { s.dim };
            out.push_str(&format!("    {tint}{line}{reset}\n"));
        }
        if let Some(change) = outcome.file_change() {
            out.push_str(&diff(
                &termtext::clean(change.before.as_deref().unwrap_or("")),
                &termtext::clean(change.after.as_deref().unwrap_or("")),
                s,
            ));
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
    }

    fn notice(&mut self, text: &str) {
        self.finish();
        if self.quiet {
            return;
        }
        let s = self.style;
        let first = termtext::clean(&crate::redact::text(text.lines().next().unwrap_or("")));
        eprintln!("{}· {first}{}", s.dim, s.reset);
    }

    fn compaction(&mut self, c: &Compaction) {
        self.notice(&format!("context: {}", c.describe()));
    }

    fn branch(&mut self, e: &BranchEvent) {
        if let BranchEvent::Start { id, description, .. } = e {
            let what: String = description.chars().take(100).collect();
            self.notice(&format!("{id}: {what}"));
        }
    }
}

/// Longest shown argument, in characters.
const ARG_CHARS: usize = 70;
/// Longest result on a tool line, in characters.
const RESULT_CHARS: usize = 100;
/// Width error texts are wrapped to.
const WRAP: usize = 96;
/// Todo items listed under a todo call.
const TODO_SHOWN: usize = 12;

/// The argument that tells what a call of `tool` does, on one line, cut at a word.
pub fn summarize_call(tool: &str, raw: &str) -> String {
    termtext::clean(&telling_arg(tool, raw))
}

fn telling_arg(tool: &str, raw: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(raw) else {
        return cut_words(&one_line(raw), ARG_CHARS);
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let own: &[&str] = match tool {
        "grep" => &["pattern"],
        "list_files" | "glob" => &["pattern", "path"],
        "read_multiple_files" => &["files"],
        "todo" => &["action"],
        "think" => &["thought"],
        "use_skill" => &["name", "skill"],
        _ => &[],
    };
    if tool == "read_multiple_files"
        && let Some(serde_json::Value::Array(files)) = map.get("files")
    {
        let paths: Vec<String> =
            files.iter().map(|f| f.get("file_path").map(text).unwrap_or_else(|| text(f))).collect();
        return cut_words(&one_line(&paths.join(", ")), ARG_CHARS);
    }
    let generic =
        ["file_path", "pattern", "path", "command", "url", "query", "action", "question", "thought"];
    for key in own.iter().chain(generic.iter()) {
        if let Some(v) = map.get(*key) {
            let mut shown = cut_words(&one_line(&text(v)), ARG_CHARS);
            if tool == "todo"
                && let Some(tasks) = map.get("tasks").or_else(|| map.get("task"))
            {
                let tasks = match tasks {
                    serde_json::Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join("; "),
                    other => text(other),
                };
                shown = format!("{shown} {}", cut_words(&one_line(&tasks), ARG_CHARS));
            }
            return shown;
        }
    }
    String::new()
}

/// What a tool line shows of a result: the part on the line, and lines below it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shown {
    pub line: String,
    pub below: Vec<String>,
}

/// How the result of `tool` is shown: an error whole and wrapped under the line; a todo list
/// and a thought as text; anything else as its first line cut at a word.
pub fn tool_result(tool: &str, content: &str, is_error: bool) -> Shown {
    let content = termtext::clean(content);
    if is_error {
        return Shown { line: String::new(), below: wrap(content.trim(), WRAP) };
    }
    let json = serde_json::from_str::<serde_json::Value>(&content).ok();
    match (tool, json) {
        ("todo", Some(v)) if v.get("items").is_some() => todo_shown(&v),
        ("think", Some(v)) if v.get("thought_number").is_some() => {
            let n = v["thought_number"].as_u64().unwrap_or(0);
            let total = v["total_thoughts"].as_u64().unwrap_or(n);
            let more = if v["next_thought_needed"].as_bool() == Some(false) { ", done" } else { "" };
            let mut line = format!("thought {n} of {total}{more}");
            if let Some(note) = v.get("note").and_then(|n| n.as_str()) {
                line.push_str(&format!(" ({})", cut_words(&one_line(note), RESULT_CHARS)));
            }
            Shown { line, below: Vec::new() }
        }
        _ => Shown { line: cut_words(content.lines().next().unwrap_or(""), RESULT_CHARS), below: Vec::new() },
    }
}

fn todo_shown(v: &serde_json::Value) -> Shown {
    let items = v["items"].as_array().cloned().unwrap_or_default();
    let left = items.iter().filter(|i| i["done"].as_bool() != Some(true)).count();
    let line = format!("{} items, {left} to do", items.len());
    let mut below: Vec<String> = items
        .iter()
        .take(TODO_SHOWN)
        .map(|i| {
            let mark = if i["done"].as_bool() == Some(true) { "[x]" } else { "[ ]" };
            format!("{mark} {}", cut_words(&one_line(i["task"].as_str().unwrap_or("")), RESULT_CHARS))
        })
        .collect();
    if items.len() > TODO_SHOWN {
        below.push(format!("… and {} more", items.len() - TODO_SHOWN));
    }
    for e in v.get("errors").and_then(|e| e.as_array()).into_iter().flatten() {
        let reason = e["reason"].as_str().unwrap_or("");
        below.push(format!("! {}: {reason}", cut_words(e["task"].as_str().unwrap_or(""), 40)));
    }
    Shown { line, below }
}

/// `text` with runs of white space (newlines included) made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` wrapped at words to lines of at most `width` characters (a longer word stays whole
/// on its own line); its own line breaks are kept.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.lines() {
        let mut line = String::new();
        for word in para.split_whitespace() {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// A unified diff of `before` and `after` with two lines of context, at most 60 lines.
pub fn diff(before: &str, after: &str, s: Style) -> String {
    let d = similar::TextDiff::from_lines(before, after);
    let mut out = String::new();
    let mut lines = 0;
    for group in d.grouped_ops(2) {
        for op in group {
            for change in d.iter_changes(&op) {
                if lines == 60 {
                    out.push_str(&format!("{}  … (diff cut){}\n", s.dim, s.reset));
                    return out;
                }
                let (sign, color) = match change.tag() {
                    similar::ChangeTag::Delete => ('-', s.red),
                    similar::ChangeTag::Insert => ('+', s.green),
                    similar::ChangeTag::Equal => (' ', s.dim),
                };
                let text = change.value().trim_end_matches('\n');
                out.push_str(&format!("  {color}{sign} {text}{}\n", s.reset));
                lines += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_shows_its_telling_argument() {
        assert_eq!(summarize_call("read_file", r#"{"file_path":"src/a.rs","limit":3}"#), "src/a.rs");
        assert_eq!(summarize_call("grep", r#"{"path":"src","pattern":"fn  main"}"#), "fn main");
        assert_eq!(summarize_call("list_files", r#"{"path":"src","pattern":"**/*.rs"}"#), "**/*.rs");
        assert_eq!(summarize_call("todo", r#"{"action":"add","tasks":["a","b"]}"#), "add a; b");
        assert_eq!(
            summarize_call("read_multiple_files", r#"{"files":[{"file_path":"a"},{"file_path":"b"}]}"#),
            "a, b"
        );
        assert_eq!(summarize_call("x", "not json"), "not json");
        let long = summarize_call("think", &format!(r#"{{"thought":"{}"}}"#, "word ".repeat(30)));
        assert!(long.ends_with("word…") && long.chars().count() <= ARG_CHARS, "{long}");
        assert_eq!(summarize_call("x", r#"{"path":"\u001b[2Jx"}"#), "x", "controls are stripped");
    }

    #[test]
    fn results_are_cut_at_a_word_and_errors_shown_whole() {
        let long = "the file is large: ".to_string() + &"lorem ipsum ".repeat(20);
        let s = tool_result("read_file", &long, false);
        assert!(s.line.ends_with("ipsum…") || s.line.ends_with("lorem…"), "{}", s.line);
        assert!(s.line.chars().count() <= RESULT_CHARS && s.below.is_empty());
        let err = format!("{}read it first with read_file, or pass --no-read-guard", "x ".repeat(60));
        let s = tool_result("edit_file", &err, true);
        assert!(s.line.is_empty() && s.below.len() > 1, "{s:?}");
        assert!(s.below.iter().all(|l| l.chars().count() <= WRAP));
        assert_eq!(s.below.join(" "), err.trim(), "nothing of an error is lost");
        assert_eq!(cut_words("abcdefghijklmnop", 8), "abcdefg…");
        assert_eq!(cut_words("short", 8), "short");
    }

    #[test]
    fn todo_and_think_results_read_as_text() {
        let todo = r#"{"action":"add","total":2,"remaining":1,"items":[{"task":"write tests","done":true},{"task":"fix bug","done":false}]}"#;
        let s = tool_result("todo", todo, false);
        assert_eq!(s.line, "2 items, 1 to do");
        assert_eq!(s.below, ["[x] write tests", "[ ] fix bug"]);
        let think = r#"{"thought_number":2,"total_thoughts":5,"next_thought_needed":true,"branches":[],"history_length":2}"#;
        assert_eq!(tool_result("think", think, false).line, "thought 2 of 5");
        assert_eq!(tool_result("todo", "not json", false).line, "not json");
    }

    #[test]
    fn diff_marks_changes() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n", Style::new(false));
        assert_eq!(d, "    a\n  - b\n  + B\n    c\n");
        let colored = diff("a\n", "b\n", Style::new(true));
        assert!(colored.contains("\x1b[31m- a") && colored.contains("\x1b[32m+ b"));
    }
}
