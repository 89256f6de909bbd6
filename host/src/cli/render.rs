//! Terminal rendering of a session on stderr: a spinner while the model thinks, streamed
//! text, one compact line per tool call, edits as coloured diffs, and notices.

use crate::agent::{CallOutcome, Compaction, Observer};
use crate::llm::{Event, Response, ToolCall};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Styles, empty when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub dim: &'static str,
    pub red: &'static str,
    pub green: &'static str,
    pub bold: &'static str,
    pub reset: &'static str,
}

impl Style {
    pub fn new(color: bool) -> Self {
        if color {
            Style { dim: "\x1b[2m", red: "\x1b[31m", green: "\x1b[32m", bold: "\x1b[1m", reset: "\x1b[0m" }
        } else {
            Style { dim: "", red: "", green: "", bold: "", reset: "" }
        }
    }
}

/// A spinner on its own thread, so it turns even while the host is busy.
struct Spinner {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Spinner {
    fn start(label: &'static str) -> Option<Spinner> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("spinner".into())
            .spawn(move || {
                const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let mut i = 0;
                // Do not flash for fast replies.
                std::thread::sleep(Duration::from_millis(150));
                while !flag.load(Ordering::Relaxed) {
                    eprint!("\r{} {label}", FRAMES[i % FRAMES.len()]);
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
        Some(Spinner { stop, handle })
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
        eprintln!("{}error:{} {}", s.red, s.reset, crate::redact::text(text));
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
        self.stop_spinner();
        if self.quiet {
            return;
        }
        let s = self.style;
        match e {
            Event::Text(t) => {
                if self.in_reasoning {
                    self.end_line();
                }
                eprint!("{t}");
                self.mid_line = !t.ends_with('\n');
                self.streamed_answer = true;
            }
            Event::Reasoning(t) => {
                if !self.in_reasoning {
                    self.end_line();
                    eprint!("{}", s.dim);
                    self.in_reasoning = true;
                }
                eprint!("{t}");
                self.mid_line = true;
            }
            Event::Retry { attempt, wait, reason } => {
                self.end_line();
                eprintln!(
                    "{}↻ {reason}; retrying in {:.1} s (attempt {}){}",
                    s.dim,
                    wait.as_secs_f64(),
                    attempt + 1,
                    s.reset
                );
                self.streamed_answer = false;
            }
        }
        let _ = std::io::stderr().flush();
    }

    fn reply(&mut self, r: &Response) {
        self.stop_spinner();
        if !self.quiet && self.streamed_answer {
            self.end_line();
        } else if !self.quiet && !r.text.is_empty() && !r.tool_calls.is_empty() {
            // Not streamed: show the text that came with tool calls; a final answer goes to stdout.
            eprintln!("{}", r.text.trim_end());
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
        let first = outcome.content.lines().next().unwrap_or("");
        let result: String = first.chars().take(100).collect();
        let result = if result.is_empty() { String::new() } else { format!(" → {result}") };
        let (reset, bold, dim) = (s.reset, s.bold, s.dim);
        eprintln!(
            "{color}{mark}{reset} {bold}{}{reset} {}{dim}{result} ({:.0?}){reset}",
            call.name,
            summarize_args(&call.arguments),
            outcome.duration
        );
        if let Some(change) = &outcome.change {
            eprint!(
                "{}",
                diff(change.before.as_deref().unwrap_or(""), change.after.as_deref().unwrap_or(""), s)
            );
        }
    }

    fn notice(&mut self, text: &str) {
        self.finish();
        if self.quiet {
            return;
        }
        let s = self.style;
        let first = text.lines().next().unwrap_or("");
        eprintln!("{}· {}{}", s.dim, crate::redact::text(first), s.reset);
    }

    fn compaction(&mut self, c: &Compaction) {
        self.notice(&format!("context: {}", c.describe()));
    }
}

/// The most telling argument of a call, shortened: a path, pattern, action or thought.
pub fn summarize_args(raw: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(raw) else {
        return raw.chars().take(60).collect();
    };
    for key in ["file_path", "path", "pattern", "action", "question", "thought", "command", "url", "query"] {
        if let Some(v) = map.get(key) {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut shown: String = one_line.chars().take(70).collect();
            if one_line.chars().count() > 70 {
                shown.push('…');
            }
            return shown;
        }
    }
    String::new()
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
    fn args_summary_prefers_paths() {
        assert_eq!(summarize_args(r#"{"file_path":"src/a.rs","limit":3}"#), "src/a.rs");
        assert_eq!(summarize_args(r#"{"pattern":"fn  main"}"#), "fn main");
        assert_eq!(summarize_args("not json"), "not json");
        assert!(summarize_args(&format!(r#"{{"thought":"{}"}}"#, "x".repeat(100))).ends_with('…'));
    }

    #[test]
    fn diff_marks_changes() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n", Style::new(false));
        assert_eq!(d, "    a\n  - b\n  + B\n    c\n");
        let colored = diff("a\n", "b\n", Style::new(true));
        assert!(colored.contains("\x1b[31m- a") && colored.contains("\x1b[32m+ b"));
    }
}
