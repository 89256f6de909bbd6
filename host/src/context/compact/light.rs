//! Rungs 1 to 3, cheap and nearly lossless: drop nudges the model has answered, replace old
//! tool results with one-line stubs that say what they were and how to get them back, and
//! strip reasoning payloads and long prose written before tool calls.

use crate::context::transcript::Transcript;
use crate::llm::Message;
use serde_json::Value;
use std::collections::HashMap;

/// Tool results up to this many characters are left alone by rung 2.
pub const SHRINK_MIN_CHARS: usize = 1000;
/// Assistant text before tool calls longer than this is replaced by rung 3.
pub const PROSE_MIN_CHARS: usize = 1000;
/// Characters kept from each end of an output rung 2 has no better summary for.
const ENDS_CHARS: usize = 200;

/// Rung 1: removes host nudges that a later model reply has already answered.
pub fn drop_spent_nudges(t: &mut Transcript) -> bool {
    let Some(last_reply) = t.entries().iter().rposition(|e| e.is_assistant()) else { return false };
    let spent: Vec<u64> = t.entries()[..last_reply].iter().filter(|e| e.is_nudge()).map(|e| e.id).collect();
    if spent.is_empty() {
        return false;
    }
    t.retain(|e| !spent.contains(&e.id));
    true
}

/// Rung 2: tool results before the last `keep` turns, longer than [`SHRINK_MIN_CHARS`],
/// become stubs.
pub fn shrink_results(t: &mut Transcript, keep: usize) -> bool {
    shrink_before(t, t.tail_start(keep), SHRINK_MIN_CHARS)
}

/// Replaces every tool result longer than `min` characters in `entries[..end]` with a stub.
pub fn shrink_before(t: &mut Transcript, end: usize, min: usize) -> bool {
    let calls = call_arguments(t);
    let mut changed = false;
    for i in 0..end.min(t.len()) {
        let Message::Tool { call_id, name, content, is_error, .. } = &t.entries()[i].msg else { continue };
        if content.chars().count() <= min {
            continue;
        }
        let args = calls.get(call_id.as_str()).and_then(|a| serde_json::from_str::<Value>(a).ok());
        let stub = stub(name, args.as_ref(), content);
        let msg = Message::Tool {
            call_id: call_id.clone(),
            name: name.clone(),
            content: stub,
            is_error: *is_error,
            images: Vec::new(),
        };
        t.set_message(i, msg);
        changed = true;
    }
    changed
}

/// Call id -> arguments text, for every call in the transcript.
fn call_arguments(t: &Transcript) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for e in t.entries() {
        if let Message::Assistant { tool_calls, .. } = &e.msg {
            for c in tool_calls {
                m.insert(c.id.clone(), c.arguments.clone());
            }
        }
    }
    m
}

fn arg<'a>(args: Option<&'a Value>, key: &str) -> Option<&'a str> {
    args?.get(key)?.as_str()
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// The one-line stand-in for a long tool result: what it was and how to see it again.
pub fn stub(tool: &str, args: Option<&Value>, content: &str) -> String {
    const AGAIN: &str = "dropped to save context; call the tool again if you need it";
    let chars = content.chars().count();
    let lines = content.lines().count();
    match tool {
        "read_file" => {
            let path = arg(args, "file_path").unwrap_or("?");
            format!("[read_file {}: {lines} lines, {AGAIN}]", clip(path, 200))
        }
        "read_multiple_files" => {
            let paths: Vec<String> = args
                .and_then(|a| a.get("files"))
                .and_then(Value::as_array)
                .map(|fs| {
                    fs.iter()
                        .filter_map(|f| f.as_str().or_else(|| f.get("file_path").and_then(Value::as_str)))
                        .map(|p| clip(p, 120))
                        .collect()
                })
                .unwrap_or_default();
            format!("[read_multiple_files {}: {chars} characters, {AGAIN}]", clip(&paths.join(", "), 400))
        }
        "grep" => {
            let pattern = arg(args, "pattern").unwrap_or("?");
            let path = arg(args, "path").unwrap_or(".");
            let matches = found_count(content).unwrap_or(lines);
            format!("[grep '{}' in {}: ~{matches} matches, {AGAIN}]", clip(pattern, 120), clip(path, 200))
        }
        "list_files" => {
            let pattern = arg(args, "pattern").unwrap_or("*");
            let path = arg(args, "path").unwrap_or(".");
            format!("[list_files '{}' in {}: {lines} entries, {AGAIN}]", clip(pattern, 120), clip(path, 200))
        }
        _ => ends(tool, content),
    }
}

/// The first and last [`ENDS_CHARS`] characters of an output, with what was cut between.
pub fn ends(tool: &str, content: &str) -> String {
    let chars: Vec<char> = content.chars().collect();
    if chars.len() <= 2 * ENDS_CHARS + 100 {
        return content.to_string();
    }
    let head: String = chars[..ENDS_CHARS].iter().collect();
    let tail: String = chars[chars.len() - ENDS_CHARS..].iter().collect();
    let cut = chars.len() - 2 * ENDS_CHARS;
    format!("{head}\n[... {cut} characters of {tool} output dropped to save context ...]\n{tail}")
}

/// "Found 42 matches" on the first line of a grep result.
fn found_count(content: &str) -> Option<usize> {
    let first = content.lines().next()?;
    let rest = first.trim().strip_prefix("Found ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Rung 3: drops reasoning payloads from replies before the last `keep` turns, and replaces
/// long text written before tool calls with a marker.
pub fn strip_reasoning(t: &mut Transcript, keep: usize) -> bool {
    let end = t.tail_start(keep);
    let mut changed = false;
    for i in 0..end {
        let Message::Assistant { text, reasoning, tool_calls } = &t.entries()[i].msg else { continue };
        let long_prose = !tool_calls.is_empty() && text.chars().count() > PROSE_MIN_CHARS;
        if reasoning.is_none() && !long_prose {
            continue;
        }
        let text = if long_prose {
            let names: Vec<&str> = tool_calls.iter().map(|c| c.name.as_str()).collect();
            format!("[the notes written before calling {} were dropped to save context]", names.join(", "))
        } else {
            text.clone()
        };
        t.set_message(i, Message::Assistant { text, reasoning: None, tool_calls: tool_calls.clone() });
        changed = true;
    }
    changed
}
