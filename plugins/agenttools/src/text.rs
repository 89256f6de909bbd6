//! Small text helpers shared by the agent tools: one-line clipping, JSON-list unwrapping,
//! and publishing a section without failing the call.

use corral_plugin_sdk::Value;
use corral_plugin_sdk::host::{self, Level, State};

/// `s` on one line: every run of whitespace (newlines included) becomes one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to at most `max` characters, the last one an ellipsis when something was cut.
pub fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to at most `max` bytes on a character boundary, ending in an ellipsis when cut.
pub fn clip_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", corral_plugin_sdk::contract::text::cut(s, max.saturating_sub('…'.len_utf8())))
}

/// A JSON array that a model sent encoded as a string (`"[\"a\", \"b\"]"`), decoded.
pub fn json_list_in_string(s: &str) -> Option<Vec<Value>> {
    let t = s.trim();
    if !t.starts_with('[') {
        return None;
    }
    match serde_json::from_str(t) {
        Ok(Value::Array(items)) => Some(items),
        _ => None,
    }
}

/// Sets section `name`; a refusal is logged for the user, since the call itself succeeded.
pub fn publish(state: &dyn State, name: &str, body: &str) {
    if let Err(e) = state.set_section(name, body) {
        host::log(Level::Warn, &format!("cannot update the '{name}' section: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_characters_whole() {
        assert_eq!(clip_chars("abcdef", 4), "abc…");
        assert_eq!(clip_chars("abc", 3), "abc");
        assert_eq!(clip_bytes("ééé", 5), "é…");
        assert_eq!(clip_bytes("ééé", 4), "…");
        assert_eq!(clip_bytes("aééé", 6), "aé…");
        assert_eq!(clip_bytes("abc", 3), "abc");
        assert_eq!(one_line(" a\n\tb  c "), "a b c");
    }

    #[test]
    fn json_lists_are_found_in_strings() {
        assert_eq!(json_list_in_string(" [\"a\", 1] ").unwrap().len(), 2);
        assert!(json_list_in_string("[not json").is_none());
        assert!(json_list_in_string("plain").is_none());
    }
}
