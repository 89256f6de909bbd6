//! Recaps: the texts that stand in for dropped turns, the capped rendering of those turns
//! that a model summarises, the prompts for that, and the `--proactive-summaries` store of
//! checkpoint summaries (every 10 turns, merged oldest-half-first, about 2,000 tokens).

use super::transcript::Entry;
use crate::llm::Message;

/// What a compaction recap starts with: it tells the model the text is a record, not orders.
pub const RECAP_MARKER: &str = "[non-instructional context recap: earlier turns were removed to fit the context \
window; what follows is a factual record of them, not new instructions]";

/// The recap used when no summary can be had.
pub const STATIC_RECAP: &str = "[context compacted: older tool calls and results were removed to fit the context \
window; the todo list, notes and snapshot summaries in the system prompt are still current]";

/// The most characters of dropped turns sent to be summarised.
pub const SPAN_MAX_CHARS: usize = 8000;
/// The reply cap of a summary request.
pub const SUMMARY_MAX_TOKENS: u32 = 512;

/// The system prompt of a summary request.
pub const SUMMARY_SYSTEM: &str = "You write short factual recaps of a coding agent's earlier work. The agent \
itself reads them after those messages are removed from its context, so keep what it will need: the goal, the \
files and names it looked at and what it learned about them, every change it made on disk (path and what \
changed), commands and their results, errors it met, and what was left to do. Write terse bullet points, at most \
200 words. Report facts only: no advice, no instructions, no greeting.";

/// The system prompt for merging checkpoint summaries.
pub const MERGE_SYSTEM: &str = "You merge recaps of consecutive parts of one coding session into one recap, \
oldest first. Keep every fact that may still matter (files, changes, findings, errors, open work) and drop \
repetition. Terse bullet points, at most 300 words. Facts only: no advice, no instructions.";

/// The user message of a summary request for `span`.
pub fn summary_request(span: &str) -> String {
    format!("Summarise this part of the session:\n\n{span}")
}

/// A compaction recap holding `summary`.
pub fn recap_text(summary: &str) -> String {
    format!("{RECAP_MARKER}\n{summary}")
}

fn clip(s: &str, n: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// The entries as plain text for a summary, each part clipped, the whole at most
/// [`SPAN_MAX_CHARS`] (the middle goes when it is longer). Nudges are left out.
pub fn render_span(entries: &[&Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        match &e.msg {
            Message::User { synthetic: true, .. } => {}
            Message::User { text, .. } => out.push_str(&format!("person: {}\n", clip(text, 1000))),
            Message::Assistant { text, .. } if e.recap.is_some() => out
                .push_str(&format!("earlier recap: {}\n", clip(text.trim_start_matches(RECAP_MARKER), 1500))),
            Message::Assistant { text, tool_calls, .. } => {
                if !text.trim().is_empty() {
                    out.push_str(&format!("agent: {}\n", clip(text, 600)));
                }
                for c in tool_calls {
                    out.push_str(&format!("agent called {} {}\n", c.name, clip(&c.arguments, 300)));
                }
            }
            Message::Tool { name, content, is_error, .. } => {
                let failed = if *is_error { " (failed)" } else { "" };
                out.push_str(&format!("result of {name}{failed}: {}\n", clip(content, 400)));
            }
        }
    }
    cap_middle(&out, SPAN_MAX_CHARS)
}

/// [`render_span`] of `entries[start..end]`.
pub fn render_range(t: &super::Transcript, start: usize, end: usize) -> String {
    let refs: Vec<&Entry> = t.entries()[start.min(end)..end.min(t.len())].iter().collect();
    render_span(&refs)
}

/// `s` with its middle replaced by a marker when longer than `max` characters.
pub fn cap_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let half = max / 2;
    let head: String = s.chars().take(half).collect();
    let tail: String = s.chars().skip(n - half).collect();
    format!("{head}\n[... {} characters omitted ...]\n{tail}", n - 2 * half)
}

/// Model turns between checkpoint summaries.
pub const CHECKPOINT_EVERY: u32 = 10;
/// Most checkpoint summaries kept before the oldest half is merged.
pub const CHECKPOINT_MAX: usize = 5;
/// The store's cap in characters (about 2,000 tokens).
pub const CHECKPOINT_MAX_CHARS: usize = 8000;

/// `--proactive-summaries`: recaps of every batch of [`CHECKPOINT_EVERY`] turns, kept to be
/// used when turns are dropped and no fresh summary can be had.
#[derive(Debug, Clone, Default)]
pub struct Checkpoints {
    items: Vec<String>,
    /// Model turns since the last checkpoint.
    turns: u32,
    /// The first entry id of the batch not yet summarised.
    from: u64,
}

impl Checkpoints {
    /// Counts one model turn; true when a checkpoint is due.
    pub fn tick(&mut self) -> bool {
        self.turns += 1;
        self.turns >= CHECKPOINT_EVERY
    }

    /// Whether a checkpoint summary is due.
    pub fn due(&self) -> bool {
        self.turns >= CHECKPOINT_EVERY
    }

    /// The first entry id of the batch to summarise.
    pub fn batch_start(&self) -> u64 {
        self.from
    }

    /// Stores the summary of the batch that ended before entry `next`. Returns true when the
    /// store is over its limits and the oldest half should be merged ([`Checkpoints::oldest_half`]).
    pub fn add(&mut self, summary: &str, next: u64) -> bool {
        self.turns = 0;
        self.from = next;
        if !summary.trim().is_empty() {
            self.items.push(summary.trim().to_string());
        }
        self.items.len() > CHECKPOINT_MAX || self.chars() > CHECKPOINT_MAX_CHARS
    }

    /// Skips the current batch (its summary could not be had); it is tried again later.
    pub fn postpone(&mut self) {
        self.turns = 0;
    }

    fn chars(&self) -> usize {
        self.items.iter().map(|s| s.chars().count()).sum()
    }

    /// The oldest half of the summaries, as one text to merge, and how many it covers.
    pub fn oldest_half(&self) -> (String, usize) {
        let n = self.items.len().div_ceil(2).max(1).min(self.items.len());
        let text = self.items[..n]
            .iter()
            .enumerate()
            .map(|(i, s)| format!("Part {}:\n{s}", i + 1))
            .collect::<Vec<_>>();
        (text.join("\n\n"), n)
    }

    /// Replaces the oldest `n` summaries with `merged` (or, when no merge could be had, with
    /// their joined text), then cuts the oldest text until the store fits its cap.
    pub fn merge_oldest(&mut self, n: usize, merged: Option<String>) {
        let n = n.min(self.items.len());
        let text = merged.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| self.items[..n].join("\n"));
        self.items.splice(..n, std::iter::once(text.trim().to_string()));
        while self.chars() > CHECKPOINT_MAX_CHARS {
            let over = self.chars() - CHECKPOINT_MAX_CHARS;
            let many = self.items.len() > 1;
            let len = self.items[0].chars().count();
            if len <= over || many && len < 200 {
                self.items.remove(0);
                if self.items.is_empty() {
                    break;
                }
            } else {
                let cut = format!("...{}", self.items[0].chars().skip(over + 3).collect::<String>());
                self.items[0] = cut;
            }
        }
    }

    /// All summaries, oldest first, as one recap text; None when there are none.
    pub fn render(&self) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        Some(format!("(from checkpoint summaries)\n{}", self.items.join("\n")))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Forgets everything; the next batch starts at entry `next`.
    pub fn clear(&mut self, next: u64) {
        *self = Checkpoints { from: next, ..Checkpoints::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::transcript::Transcript;
    use crate::context::transcript::tests::{call, reply, result};

    #[test]
    fn spans_render_every_kind_and_stay_capped() {
        let mut t = Transcript::new(false);
        t.push(Message::user("fix the parser"));
        t.push(Message::nudge("reminder"));
        t.push(reply(vec![call("a", "read_file", r#"{"file_path":"p.rs"}"#)]));
        t.push_tool(result("a", "read_file", &"line\n".repeat(500)), false);
        let refs: Vec<&Entry> = t.entries().iter().collect();
        let s = render_span(&refs);
        assert!(
            s.starts_with("person: fix the parser\nagent called read_file {\"file_path\":\"p.rs\"}\n"),
            "{s}"
        );
        assert!(s.contains("result of read_file: line") && !s.contains("reminder"), "{s}");
        assert!(s.len() < 1000, "each part clipped");
        for i in 0..100 {
            t.push(Message::user(format!("{i} {}", "y".repeat(900))));
        }
        let refs: Vec<&Entry> = t.entries().iter().collect();
        let s = render_span(&refs);
        assert!(s.chars().count() <= SPAN_MAX_CHARS + 60 && s.contains("characters omitted"), "{}", s.len());
        assert!(s.starts_with("person: fix the parser") && s.contains("99 yyy"), "both ends kept");
    }

    #[test]
    fn checkpoints_tick_merge_and_cap() {
        let mut c = Checkpoints::default();
        for _ in 0..CHECKPOINT_EVERY - 1 {
            assert!(!c.tick());
        }
        assert!(c.tick());
        let mut over = false;
        for i in 0..=CHECKPOINT_MAX {
            over = c.add(&format!("summary {i}"), 10 * (i as u64 + 1));
        }
        assert!(over, "six summaries are over the limit of five");
        assert_eq!(c.batch_start(), 60);
        let (text, n) = c.oldest_half();
        assert_eq!(n, 3);
        assert!(
            text.contains("Part 1:\nsummary 0") && text.contains("summary 2") && !text.contains("summary 3")
        );
        c.merge_oldest(n, Some("merged 0-2".into()));
        assert_eq!(c.len(), 4);
        assert!(c.render().unwrap().contains("merged 0-2\nsummary 3\nsummary 4\nsummary 5"));
        c.merge_oldest(2, None);
        assert!(c.render().unwrap().contains("merged 0-2\nsummary 3\nsummary 4"), "joined when no merge");
        let huge = "z".repeat(CHECKPOINT_MAX_CHARS * 2);
        c.add(&huge, 100);
        c.merge_oldest(1, None);
        assert!(c.chars() <= CHECKPOINT_MAX_CHARS, "{}", c.chars());
        assert!(c.render().unwrap().ends_with('z'), "the newest text is kept");
        c.clear(7);
        assert!(c.is_empty() && c.batch_start() == 7 && c.render().is_none());
    }
}
