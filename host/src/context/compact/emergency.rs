//! Rung 7, the floor: deterministic truncation in bounded stages until the request fits.
//! First every tool result over 500 characters becomes a stub and reasoning goes; then every
//! message is cut to 2000, 1000, 500 and 200 characters in turn; then only the person's latest
//! message and the model's latest turn with its results are kept, then the message alone; last,
//! the system prompt is cut for this one request (the agent then sends its compressed form).

use super::light;
use crate::context::recap::STATIC_RECAP;
use crate::context::transcript::{Recap, Transcript, UnitKind};
use crate::llm::{Message, ToolCall};

/// Results longer than this become stubs in the first stage, the last turns included.
pub const RESULT_CHARS: usize = 500;
/// The per-message lengths of the second stage, in characters: the bounded ratios
/// (1, 1/2, 1/4, 1/10) of the first.
pub const MESSAGE_CHARS: [usize; 4] = [2000, 1000, 500, 200];
/// Characters per token assumed when cutting the system prompt to a token count: low, so
/// the cut prompt is not larger than intended.
const CHARS_PER_TOKEN: u64 = 3;
const CUT: &str = "\n[truncated to fit the context window]";

/// Truncates `t` until it and a system prompt of `system` tokens fit `room` tokens. Returns
/// the model turns dropped and, when the system prompt must be cut, its new length in
/// characters and estimated tokens.
pub fn truncate(t: &mut Transcript, system: u64, room: u64) -> (u32, Option<(usize, u64)>) {
    let fits = |t: &Transcript| t.tokens() + system <= room;
    light::shrink_before(t, t.len(), RESULT_CHARS);
    light::strip_reasoning(t, 0);
    if fits(t) {
        return (0, None);
    }
    for cap in MESSAGE_CHARS {
        cut_all(t, cap);
        if fits(t) {
            return (0, None);
        }
    }
    let all_turns = t.entries().iter().filter(|e| e.is_assistant() && e.recap.is_none()).count() as u32;
    let task_at = t.entries().iter().rposition(|e| e.is_person());
    let task = task_at.map(|i| t.entries()[i].clone());
    // The model's latest turn and its results (already cut) stay: it is acting on them.
    let last: Vec<_> = t
        .units()
        .into_iter()
        .rev()
        .find(|u| u.kind == UnitKind::Exchange)
        .filter(|u| task_at.is_none_or(|p| u.start > p))
        .map(|u| t.entries()[u.start..u.end].to_vec())
        .unwrap_or_default();
    let marker = t.entry(
        Message::Assistant { text: STATIC_RECAP.to_string(), reasoning: None, tool_calls: Vec::new() },
        false,
        Some(Recap::Compaction),
        Some(false),
    );
    let head: Vec<_> = task.into_iter().chain(std::iter::once(marker)).collect();
    let n = t.len();
    let with_last: Vec<_> = head.iter().cloned().chain(last.iter().cloned()).collect();
    t.splice(0..n, with_last);
    if fits(t) {
        return (all_turns.saturating_sub(u32::from(!last.is_empty())), None);
    }
    let n = t.len();
    t.splice(0..n, head);
    let turns = all_turns;
    if fits(t) {
        return (turns, None);
    }
    let left = room.saturating_sub(t.tokens());
    let chars = usize::try_from(left.saturating_mul(CHARS_PER_TOKEN)).unwrap_or(usize::MAX);
    (turns, Some((chars, left)))
}

/// Cuts every message text and every call's arguments to at most `cap` characters.
fn cut_all(t: &mut Transcript, cap: usize) {
    for i in 0..t.len() {
        let cut = match &t.entries()[i].msg {
            Message::User { text, synthetic } => {
                cut_text(text, cap).map(|text| Message::User { text, synthetic: *synthetic })
            }
            Message::Tool { call_id, name, content, is_error, .. } => {
                cut_text(content, cap).map(|content| Message::Tool {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    content,
                    is_error: *is_error,
                    images: Vec::new(),
                })
            }
            Message::Assistant { text, tool_calls, .. } => {
                let new_text = cut_text(text, cap);
                let long_args = tool_calls.iter().any(|c| c.arguments.chars().count() > cap);
                if new_text.is_none() && !long_args {
                    None
                } else {
                    let calls = tool_calls.iter().map(|c| cut_call(c, cap)).collect();
                    Some(Message::Assistant {
                        text: new_text.unwrap_or_else(|| text.clone()),
                        reasoning: None,
                        tool_calls: calls,
                    })
                }
            }
        };
        if let Some(m) = cut {
            t.set_message(i, m);
        }
    }
}

/// `s` cut to `cap` characters with a marker, or None when it is short enough.
fn cut_text(s: &str, cap: usize) -> Option<String> {
    let (at, _) = s.char_indices().nth(cap)?;
    Some(format!("{}{CUT}", &s[..at]))
}

/// A call whose arguments are too long keeps their beginning as a JSON string, so the
/// arguments stay valid JSON for every provider.
fn cut_call(c: &ToolCall, cap: usize) -> ToolCall {
    match cut_text(&c.arguments, cap) {
        None => c.clone(),
        Some(head) => ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: serde_json::json!({ "truncated_arguments": head }).to_string(),
        },
    }
}
