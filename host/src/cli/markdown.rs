//! The final answer's Markdown drawn for a terminal (headings, emphasis, code, lists, quotes,
//! links with their address); raw Markdown is kept whenever the output is not a terminal.

use super::style::Style;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// `md` for a terminal. `s` gives the colours (none when colour is off: then only the layout
/// changes). The text should already be free of control sequences.
pub fn render(md: &str, s: Style) -> String {
    let color = !s.bold.is_empty();
    let (italic, code, under) = if color { ("\x1b[3m", "\x1b[36m", "\x1b[4m") } else { ("", "", "") };
    let mut out = String::new();
    // Open lists: the next number of an ordered one, `None` for bullets.
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut quote = 0usize;
    let mut in_code_block = false;
    let mut links: Vec<String> = Vec::new();
    let mut at_line_start = true;
    let prefix = |quote: usize| "│ ".repeat(quote);
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(md, opts) {
        if at_line_start && !matches!(event, Event::End(_) | Event::Start(Tag::BlockQuote(_))) {
            out.push_str(&prefix(quote));
            at_line_start = false;
        }
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                out.push_str(s.bold);
                if !color {
                    out.push_str(marks);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                out.push_str(s.reset);
                out.push_str("\n\n");
                at_line_start = true;
            }
            Event::End(TagEnd::Paragraph) => {
                out.push_str(if lists.is_empty() { "\n\n" } else { "\n" });
                at_line_start = true;
            }
            Event::Start(Tag::Strong) => out.push_str(s.bold),
            Event::Start(Tag::Emphasis) => out.push_str(italic),
            Event::End(TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough) => out.push_str(s.reset),
            Event::Start(Tag::Strikethrough) => out.push_str(s.dim),
            Event::Code(c) => {
                let tick = if color { "" } else { "`" };
                out.push_str(&format!("{code}{tick}{c}{tick}{}", s.reset));
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                if let CodeBlockKind::Fenced(lang) = kind
                    && !lang.is_empty()
                {
                    out.push_str(&format!("{}  [{lang}]{}\n", s.dim, s.reset));
                    at_line_start = true;
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code_block = false;
                out.push('\n');
                at_line_start = true;
            }
            Event::Start(Tag::List(start)) => {
                if !lists.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                lists.push(start);
            }
            Event::End(TagEnd::List(_)) => {
                lists.pop();
                if lists.is_empty() {
                    out.push('\n');
                }
                at_line_start = true;
            }
            Event::Start(Tag::Item) => {
                let depth = lists.len().saturating_sub(1);
                out.push_str(&"  ".repeat(depth));
                match lists.last_mut() {
                    Some(Some(n)) => {
                        out.push_str(&format!("{n}. "));
                        *n += 1;
                    }
                    _ => out.push_str("• "),
                }
            }
            Event::End(TagEnd::Item) => {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                at_line_start = true;
            }
            Event::TaskListMarker(done) => out.push_str(if done { "[x] " } else { "[ ] " }),
            Event::Start(Tag::BlockQuote(_)) => quote += 1,
            Event::End(TagEnd::BlockQuote(_)) => quote = quote.saturating_sub(1),
            Event::Start(Tag::Link { dest_url, .. }) => {
                out.push_str(under);
                links.push(dest_url.to_string());
            }
            Event::End(TagEnd::Link) => {
                out.push_str(s.reset);
                if let Some(url) = links.pop() {
                    out.push_str(&format!("{} ({url}){}", s.dim, s.reset));
                }
            }
            Event::Text(t) if in_code_block => {
                for line in t.split_inclusive('\n') {
                    if at_line_start {
                        out.push_str(&prefix(quote));
                    }
                    out.push_str(&format!("    {code}{}{}", line.trim_end_matches('\n'), s.reset));
                    if line.ends_with('\n') {
                        out.push('\n');
                        at_line_start = true;
                    } else {
                        at_line_start = false;
                    }
                }
            }
            Event::Text(t) => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak => {
                out.push('\n');
                at_line_start = true;
            }
            Event::Rule => {
                out.push_str(&format!("{}────────{}\n\n", s.dim, s.reset));
                at_line_start = true;
            }
            Event::End(TagEnd::TableCell) => out.push_str("  "),
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                out.push('\n');
                at_line_start = true;
            }
            Event::End(TagEnd::Table) => {
                out.push('\n');
                at_line_start = true;
            }
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&h),
            _ => {}
        }
    }
    format!("{}\n", out.trim_end())
}

/// Streamed text cut into whole blocks (paragraphs, lists, headings, fenced code) so each can
/// be drawn as it completes: a block ends at a blank line outside a code fence.
#[derive(Default)]
pub struct Blocks {
    pending: String,
}

impl Blocks {
    /// Adds a streamed piece; returns the Markdown of the blocks it completed, if any.
    pub fn push(&mut self, piece: &str) -> Option<String> {
        self.pending.push_str(piece);
        let mut fenced = false;
        let mut cut = None;
        let mut at = 0;
        for line in self.pending.split_inclusive('\n') {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fenced = !fenced;
            }
            at += line.len();
            // A blank line closes the blocks before it, unless a fence is open or the blank
            // line may still be followed by more of it (the piece ended mid-line).
            if !fenced && line.trim().is_empty() && line.ends_with('\n') && at > line.len() {
                cut = Some(at);
            }
        }
        let cut = cut?;
        let done: String = self.pending.drain(..cut).collect();
        Some(done).filter(|d| !d.trim().is_empty())
    }

    /// What is left at the end of the reply.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        Some(rest).filter(|r| !r.trim().is_empty())
    }

    /// Forgets the text streamed so far (the reply is being retried).
    pub fn reset(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_is_cut_into_whole_blocks() {
        let mut b = Blocks::default();
        assert_eq!(b.push("# Ti"), None);
        assert_eq!(b.push("tle\n\nSome **bo"), Some("# Title\n\n".to_string()));
        assert_eq!(b.push("ld** text\n"), None);
        // A fence keeps its blank lines inside it.
        assert_eq!(b.push("\n```\na\n\nb\n"), Some("Some **bold** text\n\n".to_string()));
        assert_eq!(b.push("```\n\n- one"), Some("```\na\n\nb\n```\n\n".to_string()));
        assert_eq!(b.finish(), Some("- one".to_string()));
        assert_eq!(b.finish(), None);
    }

    #[test]
    fn markdown_is_drawn_for_the_terminal() {
        let plain = Style::new(false);
        let md = "# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n\
                  ```rust\nfn main() {}\n```\n\n> quoted\n\nSee [docs](https://example.org).";
        let out = render(md, plain);
        assert_eq!(
            out,
            "# Title\n\nSome bold and `code`.\n\n• one\n• two\n\n1. first\n2. second\n\n  [rust]\n    fn main() {}\n\n\
             │ quoted\n\nSee docs (https://example.org).\n"
        );
        let colored = render("**b** and *i*", Style::new(true));
        assert!(colored.contains("\x1b[1mb\x1b[0m") && colored.contains("\x1b[3mi\x1b[0m"), "{colored:?}");
        assert!(!colored.contains("**"), "{colored:?}");
    }
}
