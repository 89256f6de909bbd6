//! The conversation as the host keeps it: each message with a stable id, its cached token
//! count and what compaction needs to know about it; its units (a person's message, a nudge,
//! one model reply with its tool results, a recap); and the check that calls and results pair.

use super::tokens::{self, Count};
use crate::llm::Message;
use std::collections::HashSet;

/// What kind of recap an assistant message is, when the host wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recap {
    /// A `snapshot restore`: the model's own summary of the work it collapsed.
    Snapshot,
    /// Compaction dropped turns and put this summary in their place.
    Compaction,
}

/// One message with what the host knows about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unique within the session; survives compaction (snapshot checkpoints refer to it).
    pub id: u64,
    pub msg: Message,
    /// Cached cost of the message in a request.
    pub count: Count,
    /// A tool result from a tool that may change things (not read-only).
    pub mutated: bool,
    /// Set on host-written recaps.
    pub recap: Option<Recap>,
}

impl Entry {
    pub fn tokens(&self) -> u64 {
        u64::from(self.count.n)
    }

    /// A nudge the host wrote (a reminder, a repair prompt): scaffolding.
    pub fn is_nudge(&self) -> bool {
        matches!(self.msg, Message::User { synthetic: true, .. })
    }

    /// A message the person wrote.
    pub fn is_person(&self) -> bool {
        matches!(self.msg, Message::User { synthetic: false, .. })
    }

    pub fn is_assistant(&self) -> bool {
        matches!(self.msg, Message::Assistant { .. })
    }
}

/// The conversation, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    next_id: u64,
    /// Whether the provider is sent earlier reasoning (so it costs tokens).
    reasoning_sent: bool,
}

/// What a unit of the conversation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A message from the person.
    Person,
    /// A host nudge.
    Nudge,
    /// One model reply and the results of the tools it called (never split).
    Exchange,
    /// A host-written recap.
    Recap,
}

/// A run of entries that compaction keeps or drops as a whole: `entries[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    pub start: usize,
    pub end: usize,
    pub kind: UnitKind,
}

impl Transcript {
    pub fn new(reasoning_sent: bool) -> Self {
        Transcript { entries: Vec::new(), next_id: 1, reasoning_sent }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The messages to send, in order.
    pub fn messages(&self) -> Vec<Message> {
        self.entries.iter().map(|e| e.msg.clone()).collect()
    }

    /// The messages as sent to the model: in strict alternation (see [`super::alternate`]).
    pub fn wire_messages(&self) -> Vec<Message> {
        super::alternate::strict(self.entries.iter().map(|e| (&e.msg, e.recap.is_some())))
    }

    /// The estimated cost of all messages.
    pub fn tokens(&self) -> u64 {
        self.entries.iter().map(Entry::tokens).sum()
    }

    /// The id the next entry will get.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Adds a message; returns its id.
    pub fn push(&mut self, msg: Message) -> u64 {
        self.push_entry(msg, false, None)
    }

    /// Adds a tool result, noting whether its tool may change things.
    pub fn push_tool(&mut self, msg: Message, mutated: bool) -> u64 {
        self.push_entry(msg, mutated, None)
    }

    /// Adds a host-written recap (an assistant message).
    pub fn push_recap(&mut self, text: String, kind: Recap) -> u64 {
        self.push_entry(
            Message::Assistant { text, reasoning: None, tool_calls: Vec::new() },
            false,
            Some(kind),
        )
    }

    fn push_entry(&mut self, msg: Message, mutated: bool, recap: Option<Recap>) -> u64 {
        let e = self.entry(msg, mutated, recap, None);
        let id = e.id;
        self.entries.push(e);
        id
    }

    /// A new entry with a fresh id, counted by the tokenizer if loaded (`how` None) or as told.
    pub fn entry(&mut self, msg: Message, mutated: bool, recap: Option<Recap>, how: Option<bool>) -> Entry {
        let id = self.next_id;
        self.next_id += 1;
        let count = tokens::message(&msg, self.reasoning_sent, how);
        Entry { id, msg, count, mutated, recap }
    }

    /// Replaces the message of entry `i`, recounting it with the fast estimate (the texts
    /// compaction writes are short; [`Transcript::refresh`] makes long ones exact later).
    pub fn set_message(&mut self, i: usize, msg: Message) {
        if let Some(e) = self.entries.get_mut(i) {
            e.count = tokens::message(&msg, self.reasoning_sent, Some(false));
            e.msg = msg;
        }
    }

    /// Replaces `entries[range]` with `with`.
    pub fn splice(&mut self, range: std::ops::Range<usize>, with: Vec<Entry>) {
        self.entries.splice(range, with);
    }

    /// Keeps the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        self.entries.retain(|e| keep(e));
    }

    /// The index of entry `id`.
    pub fn position(&self, id: u64) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id)
    }

    /// Replaces the whole conversation with saved entries `(id, message, mutated, recap)`, as a
    /// resumed session had it; ids go on from the largest.
    pub fn restore(&mut self, saved: Vec<(u64, Message, bool, Option<Recap>)>) {
        self.entries = saved
            .into_iter()
            .map(|(id, msg, mutated, recap)| {
                let count = tokens::message(&msg, self.reasoning_sent, None);
                Entry { id, msg, count, mutated, recap }
            })
            .collect();
        let last = self.entries.iter().map(|e| e.id).max().unwrap_or(0);
        self.next_id = self.next_id.max(last.saturating_add(1));
    }

    /// Forgets every message (ids keep counting up).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Recounts with the tokenizer every estimated entry longer than `min` estimated tokens.
    /// With `wait`, waits for the tokenizer to load; otherwise does nothing until it has.
    pub fn refresh(&mut self, min: u32, wait: bool) {
        if !wait && !tokens::ready() {
            return;
        }
        for e in self.entries.iter_mut().filter(|e| !e.count.exact && e.count.n > min) {
            e.count = tokens::message(&e.msg, self.reasoning_sent, Some(true));
        }
    }

    /// The conversation's units, in order.
    pub fn units(&self) -> Vec<Unit> {
        units(&self.entries)
    }

    /// Index of the start of the `n`-th last exchange (model reply), or the length when
    /// there are fewer: everything from there on is "the last n turns".
    pub fn tail_start(&self, n: usize) -> usize {
        if n == 0 {
            return self.entries.len();
        }
        self.entries
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| e.is_assistant() && e.recap.is_none())
            .nth(n - 1)
            .map_or(0, |(i, _)| i)
    }
}

/// Splits entries into units. A tool result that follows no reply (never made by the host)
/// is attached to the unit before it.
pub fn units(entries: &[Entry]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let kind = match &e.msg {
            Message::Tool { .. } => {
                if let Some(last) = out.last_mut() {
                    last.end = i + 1;
                    continue;
                }
                UnitKind::Exchange
            }
            Message::User { synthetic: true, .. } => UnitKind::Nudge,
            Message::User { .. } => UnitKind::Person,
            Message::Assistant { .. } if e.recap.is_some() => UnitKind::Recap,
            Message::Assistant { .. } => UnitKind::Exchange,
        };
        out.push(Unit { start: i, end: i + 1, kind });
    }
    out
}

/// Checks that every tool result answers a call of the reply just before it (with only
/// results in between), that no call is answered twice, and that every call is answered,
/// except, with `open_tail`, the calls of the last reply (still running).
pub fn check_pairs<'a>(msgs: impl IntoIterator<Item = &'a Message>, open_tail: bool) -> Result<(), String> {
    let msgs: Vec<&Message> = msgs.into_iter().collect();
    let mut pending: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut last_reply = None;
    for (i, m) in msgs.iter().enumerate() {
        match m {
            Message::Tool { call_id, .. } => {
                let Some(at) = pending.iter().position(|p| p == call_id) else {
                    return Err(if answered.contains(call_id) {
                        format!("message {i}: call {call_id} is answered twice")
                    } else {
                        format!("message {i}: result for {call_id}, which the reply before it did not call")
                    });
                };
                pending.remove(at);
                answered.insert(call_id.clone());
            }
            other => {
                if !pending.is_empty() {
                    return Err(format!("message {i}: calls {pending:?} have no result before it"));
                }
                answered.clear();
                if let Message::Assistant { tool_calls, .. } = other {
                    pending = tool_calls.iter().map(|c| c.id.clone()).collect();
                    last_reply = Some(i);
                }
            }
        }
    }
    let tail_is_open = open_tail && last_reply.is_some();
    if !pending.is_empty() && !tail_is_open {
        return Err(format!("calls {pending:?} at the end have no result"));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::llm::ToolCall;

    pub fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    pub fn reply(calls: Vec<ToolCall>) -> Message {
        Message::Assistant { text: String::new(), reasoning: None, tool_calls: calls }
    }

    pub fn result(id: &str, name: &str, content: &str) -> Message {
        Message::Tool {
            call_id: id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    #[test]
    fn pairs_are_checked() {
        let ok = [
            Message::user("go"),
            reply(vec![call("a", "t", "{}"), call("b", "t", "{}")]),
            result("a", "t", "1"),
            result("b", "t", "2"),
        ];
        assert_eq!(check_pairs(&ok, false), Ok(()));
        let open = &ok[..3];
        assert!(check_pairs(open, false).unwrap_err().contains("have no result"));
        assert_eq!(check_pairs(open, true), Ok(()));
        let orphan = [Message::user("go"), result("a", "t", "1")];
        assert!(check_pairs(&orphan, true).unwrap_err().contains("did not call"));
        let twice = [reply(vec![call("a", "t", "{}")]), result("a", "t", "1"), result("a", "t", "1")];
        assert!(check_pairs(&twice, false).unwrap_err().contains("answered twice"));
        let interrupted = [reply(vec![call("a", "t", "{}")]), Message::nudge("hey"), result("a", "t", "1")];
        assert!(check_pairs(&interrupted, false).unwrap_err().contains("no result before it"));
    }

    #[test]
    fn units_keep_a_reply_with_its_results() {
        let mut t = Transcript::new(false);
        t.push(Message::user("go"));
        t.push(reply(vec![call("a", "t", "{}")]));
        t.push_tool(result("a", "t", "1"), false);
        t.push(Message::nudge("reminder"));
        t.push_recap("[recap]".into(), Recap::Compaction);
        t.push(reply(vec![]));
        let kinds: Vec<(usize, usize, UnitKind)> =
            t.units().iter().map(|u| (u.start, u.end, u.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (0, 1, UnitKind::Person),
                (1, 3, UnitKind::Exchange),
                (3, 4, UnitKind::Nudge),
                (4, 5, UnitKind::Recap),
                (5, 6, UnitKind::Exchange)
            ]
        );
        assert_eq!(t.tail_start(1), 5);
        assert_eq!(t.tail_start(2), 1);
        assert_eq!(t.tail_start(3), 0);
        let ids: Vec<u64> = t.entries().iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 6]);
        assert!(t.tokens() > 0);
    }
}
