//! Rungs 4 and 5, lossy: drop whole turns from the middle of the conversation and put one
//! recap in their place. Rung 4 scores turns and drops the less important half (never the
//! person's messages); rung 5 drops everything between the person's latest message and the
//! last two turns.
//!
//! Rung 5 keeps the person's latest message although the ladder's description drops "the
//! whole middle": on a small window it is short, and a model that has lost its task cannot
//! get it back from a recap written under a 512-token cap.

use super::{Aids, KEEP_TURNS, KEEP_TURNS_DROP, Summarizer};
use crate::context::recap;
use crate::context::transcript::{Entry, Recap, Transcript, Unit, UnitKind};
use crate::llm::Message;

/// Score of a turn that changed something (a write, an edit, a command).
pub const SCORE_MUTATION: u32 = 5;
/// Score of a recap (a snapshot's or an earlier compaction's summary).
pub const SCORE_RECAP: u32 = 5;
/// Score of a turn in which something failed.
pub const SCORE_ERROR: u32 = 3;
/// Score of a turn that used the think tool.
pub const SCORE_THINK: u32 = 2;

/// How much a unit is worth keeping.
pub fn score(entries: &[Entry], u: &Unit) -> u32 {
    if u.kind == UnitKind::Recap {
        return SCORE_RECAP;
    }
    let es = &entries[u.start..u.end];
    let mut s = 0;
    if es.iter().any(|e| e.mutated) {
        s += SCORE_MUTATION;
    }
    if es.iter().any(|e| matches!(&e.msg, Message::Tool { is_error: true, .. })) {
        s += SCORE_ERROR;
    }
    let thought = es.iter().any(|e| match &e.msg {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().any(|c| c.name == "think"),
        _ => false,
    });
    if thought {
        s += SCORE_THINK;
    }
    s
}

/// Rung 4: among the units between the opening messages and the last
/// [`KEEP_TURNS_DROP`] turns, keeps the better-scoring half (the later one on ties) and
/// replaces the rest with one recap where the first of them was. The person's messages are
/// never candidates. Returns the number of model turns dropped.
pub async fn drop_low_turns<S: Summarizer>(t: &mut Transcript, aids: &mut Aids<'_, S>) -> u32 {
    let tail = t.tail_start(KEEP_TURNS_DROP);
    let units = t.units();
    let Some(first_turn) = units.iter().position(|u| u.kind != UnitKind::Person) else { return 0 };
    let candidates: Vec<(usize, u32)> = units
        .iter()
        .enumerate()
        .skip(first_turn)
        .filter(|(_, u)| u.end <= tail && u.kind != UnitKind::Person)
        .map(|(i, u)| (i, score(t.entries(), u)))
        .collect();
    if candidates.len() < 2 {
        return 0;
    }
    let mut by_value = candidates.clone();
    // Lowest score first; among equals, the oldest first.
    by_value.sort_by_key(|&(i, s)| (s, i));
    let dropped: Vec<usize> = {
        let mut d: Vec<usize> = by_value[..candidates.len() / 2].iter().map(|&(i, _)| i).collect();
        d.sort_unstable();
        d
    };
    let span: Vec<&Entry> =
        dropped.iter().flat_map(|&ui| t.entries()[units[ui].start..units[ui].end].iter()).collect();
    let turns = span.iter().filter(|e| e.is_assistant() && e.recap.is_none()).count() as u32;
    let text = aids.recap(recap::render_span(&span)).await;
    let recap_entry = t.entry(recap_message(text), false, Some(Recap::Compaction), Some(false));
    let first = units[dropped[0]].start;
    let gone: Vec<u64> = dropped
        .iter()
        .flat_map(|&ui| t.entries()[units[ui].start..units[ui].end].iter().map(|e| e.id))
        .collect();
    let recap_id = recap_entry.id;
    t.splice(first..first, vec![recap_entry]);
    t.retain(|e| e.id == recap_id || !gone.contains(&e.id));
    turns
}

/// Rung 5: drops everything between the person's latest message (kept, so the model still
/// knows its task) and the last [`KEEP_TURNS`] turns, and puts one recap there.
/// Returns the number of model turns dropped.
pub async fn drop_middle<S: Summarizer>(t: &mut Transcript, aids: &mut Aids<'_, S>) -> u32 {
    let tail = t.tail_start(KEEP_TURNS);
    let task = t.entries()[..tail].iter().rposition(|e| e.is_person());
    let gone: Vec<usize> = (0..tail).filter(|&i| Some(i) != task).collect();
    if gone.is_empty() || (gone.len() == 1 && t.entries()[gone[0]].recap.is_some()) {
        return 0;
    }
    let span: Vec<&Entry> = gone.iter().map(|&i| &t.entries()[i]).collect();
    let turns = span.iter().filter(|e| e.is_assistant() && e.recap.is_none()).count() as u32;
    let text = aids.recap(recap::render_span(&span)).await;
    let recap_entry = t.entry(recap_message(text), false, Some(Recap::Compaction), Some(false));
    let mut kept: Vec<Entry> = Vec::with_capacity(t.len() - tail + 2);
    if let Some(i) = task {
        kept.push(t.entries()[i].clone());
    }
    kept.push(recap_entry);
    t.splice(0..tail, kept);
    turns
}

fn recap_message(text: String) -> Message {
    Message::Assistant { text, reasoning: None, tool_calls: Vec::new() }
}
