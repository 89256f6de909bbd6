//! The transcript side of `snapshot restore`: collapse the scope (from the checkpoint, else
//! from the person's last message or the last restore) into one recap holding the model's
//! summary, leaving the reply that asked for it paired with its results; the completed
//! summaries for the system prompt; and the nudge after a streak of read-only turns.

use super::transcript::{Recap, Transcript};
use crate::llm::Message;

/// Read-only turns in a row before the model is reminded that it can collapse them.
pub const NUDGE_AFTER: u32 = 5;
/// Completed summaries shown in the system prompt, newest kept.
pub const SHOWN_SUMMARIES: usize = 10;
/// Their budget in characters, at most.
pub const SHOWN_MAX_CHARS: usize = 6000;

/// The nudge text.
pub const NUDGE: &str = "You have spent several turns only reading and searching. If you have learned what you \
needed, call snapshot with action \"restore\" and a summary of your findings (paths, names, facts, what is left \
to do): the reads are replaced by your summary and the context space comes back.";

/// What a collapse did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collapsed {
    /// Model turns folded into the summary.
    pub turns: u32,
    /// Estimated tokens saved.
    pub saved: u64,
    /// The recap's entry id.
    pub recap: u64,
}

/// Where a restore's scope starts: at the checkpoint entry, or just after the person's last
/// message or the last snapshot recap, whichever is later.
pub fn scope_start(t: &Transcript, checkpoint: Option<u64>, before: usize) -> Result<usize, String> {
    match checkpoint {
        // A checkpoint set by the reply now running leaves an empty scope, not a lost one.
        Some(id) => t.position(id).map(|i| i.min(before)).ok_or_else(|| {
            "the checkpoint's turn is no longer in the conversation (compaction removed it). Call snapshot \
             cancel, then restore without a checkpoint to collapse back to the last message from the person"
                .to_string()
        }),
        None => Ok(t.entries()[..before]
            .iter()
            .rposition(|e| e.is_person() || e.recap == Some(super::transcript::Recap::Snapshot))
            .map_or(0, |i| i + 1)),
    }
}

/// The text of a snapshot recap.
pub fn recap_text(label: &str, summary: &str, turns: u32, saved: u64) -> String {
    format!("[snapshot: {label}]\n{}\n(collapsed {turns} turns, saved ~{saved} tokens)", summary.trim())
}

/// Replaces `entries[start..end]` with one snapshot recap. `end` is the reply that asked
/// for the restore, which stays with its results.
pub fn collapse(
    t: &mut Transcript,
    start: usize,
    end: usize,
    label: &str,
    summary: &str,
) -> Result<Collapsed, String> {
    if start >= end || end > t.len() {
        return Err(
            "there is nothing to collapse: no turns since the checkpoint or the last message from the \
                    person. Carry on with the task"
                .to_string(),
        );
    }
    let span = &t.entries()[start..end];
    let turns = span.iter().filter(|e| e.is_assistant() && e.recap.is_none()).count() as u32;
    let removed: u64 = span.iter().map(|e| e.tokens()).sum();
    let probe = t.entry(Message::user(recap_text(label, summary, turns, removed)), false, None, Some(false));
    let saved = removed.saturating_sub(probe.tokens());
    let text = recap_text(label, summary, turns, saved);
    let recap = t.entry(
        Message::Assistant { text, reasoning: None, tool_calls: Vec::new() },
        false,
        Some(Recap::Snapshot),
        None,
    );
    let id = recap.id;
    t.splice(start..end, vec![recap]);
    Ok(Collapsed { turns, saved, recap: id })
}

/// The completed summaries for the system prompt: the last [`SHOWN_SUMMARIES`], newest kept
/// first when over `max_chars`, shown oldest first. None when there are none.
pub fn history_section(history: &[(String, String)], max_chars: usize) -> Option<String> {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for (label, summary) in history.iter().rev().take(SHOWN_SUMMARIES) {
        let item = format!("### {label}\n{}", summary.trim());
        let n = item.chars().count();
        if used + n > max_chars {
            if kept.is_empty() {
                kept.push(item.chars().take(max_chars).collect());
            }
            break;
        }
        used += n + 2;
        kept.push(item);
    }
    if kept.is_empty() {
        return None;
    }
    kept.reverse();
    Some(format!(
        "Summaries of investigations you collapsed with snapshot restore, oldest first. They stay here \
         whatever happens to the conversation.\n\n{}",
        kept.join("\n\n")
    ))
}

/// Counts read-only turns in a row and says when to nudge: once per streak.
#[derive(Debug, Clone, Default)]
pub struct Streak {
    turns: u32,
    nudged: bool,
}

impl Streak {
    /// Records one turn; true when the nudge is due now.
    pub fn turn(&mut self, read_only: bool) -> bool {
        if !read_only {
            *self = Streak::default();
            return false;
        }
        self.turns += 1;
        if self.turns >= NUDGE_AFTER && !self.nudged {
            self.nudged = true;
            return true;
        }
        false
    }

    pub fn reset(&mut self) {
        *self = Streak::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::transcript::check_pairs;
    use crate::context::transcript::tests::{call, reply, result};

    fn session() -> (Transcript, u64) {
        let mut t = Transcript::new(false);
        t.push(Message::user("old task"));
        t.push(reply(vec![call("a", "read_file", "{}")]));
        t.push_tool(result("a", "read_file", &"x".repeat(4000)), false);
        t.push(Message::user("investigate the crash"));
        let save = t.push(reply(vec![call("s", "snapshot", r#"{"action":"save","label":"crash"}"#)]));
        t.push_tool(result("s", "snapshot", "checkpoint set"), false);
        for i in 0..3 {
            t.push(reply(vec![call(&format!("r{i}"), "read_file", "{}")]));
            t.push_tool(result(&format!("r{i}"), "read_file", &"y".repeat(3000)), false);
        }
        t.push(reply(vec![call("g", "grep", "{}"), call("z", "snapshot", r#"{"action":"restore"}"#)]));
        t.push_tool(result("g", "grep", "match"), false);
        (t, save)
    }

    #[test]
    fn restore_collapses_from_the_checkpoint_and_keeps_the_current_reply_paired() {
        let (mut t, save) = session();
        let end = t.len() - 2;
        let start = scope_start(&t, Some(save), end).unwrap();
        assert_eq!(start, 4);
        let before = t.tokens();
        let c = collapse(&mut t, start, end, "crash", "The crash is in parse(): empty input.").unwrap();
        assert_eq!(c.turns, 4);
        assert!(c.saved > 2000 && (t.tokens() + c.saved).abs_diff(before) <= 8, "{c:?}");
        let e = &t.entries()[4];
        assert_eq!(e.recap, Some(Recap::Snapshot));
        let Message::Assistant { text, .. } = &e.msg else { panic!() };
        assert_eq!(
            text,
            &format!(
                "[snapshot: crash]\nThe crash is in parse(): empty input.\n(collapsed 4 turns, saved ~{} tokens)",
                c.saved
            )
        );
        assert!(matches!(&t.entries()[3].msg, Message::User { text, .. } if text == "investigate the crash"));
        assert_eq!(t.len(), 7, "old task, read, result, person, recap, current reply, its first result");
        check_pairs(t.entries().iter().map(|e| &e.msg), true).unwrap();
    }

    #[test]
    fn without_a_checkpoint_the_scope_starts_after_the_person_or_the_last_restore() {
        let (mut t, _) = session();
        let end = t.len() - 2;
        assert_eq!(scope_start(&t, None, end).unwrap(), 4, "after 'investigate the crash'");
        collapse(&mut t, 4, end, "auto", "found it").unwrap();
        t.push(reply(vec![call("q", "read_file", "{}")]));
        t.push_tool(result("q", "read_file", "more"), false);
        let end = t.len();
        assert_eq!(scope_start(&t, None, end).unwrap(), 5, "after the snapshot recap");
        assert!(scope_start(&t, Some(9999), end).unwrap_err().contains("no longer in the conversation"));
        let current = t.entries()[end - 2].id;
        assert_eq!(
            scope_start(&t, Some(current), end - 2).unwrap(),
            end - 2,
            "saved and restored in one reply"
        );
        assert!(collapse(&mut t, 5, 5, "x", "y").unwrap_err().contains("nothing to collapse"));
    }

    #[test]
    fn history_is_budgeted_newest_first() {
        let h: Vec<(String, String)> = (0..12).map(|i| (format!("s{i}"), format!("finding {i}"))).collect();
        let s = history_section(&h, SHOWN_MAX_CHARS).unwrap();
        assert!(!s.contains("### s1\n") && s.contains("### s2\nfinding 2") && s.contains("### s11"), "{s}");
        assert!(s.find("### s2").unwrap() < s.find("### s11").unwrap(), "oldest first");
        let small = history_section(&h, 30).unwrap();
        assert!(small.contains("s11") && !small.contains("s10"), "{small}");
        assert!(history_section(&[], 100).is_none());
    }

    #[test]
    fn the_streak_nudges_once_until_broken() {
        let mut s = Streak::default();
        let fired: Vec<bool> = (0..7).map(|_| s.turn(true)).collect();
        assert_eq!(fired, [false, false, false, false, true, false, false]);
        assert!(!s.turn(false));
        let again: Vec<bool> = (0..5).map(|_| s.turn(true)).collect();
        assert_eq!(again, [false, false, false, false, true]);
    }
}
