//! An MCP tool result made fit for the transcript: its content blocks as text (media named,
//! not inlined), and a result over 20 KB saved to a scratch file with a pointer and a preview.

use crate::capabilities::scratch;
use cap_std::fs::Dir;
use rmcp::model::CallToolResult;
use serde_json::Value;

/// The most result bytes kept inline (seed 003's rule); more goes to a scratch file.
pub const INLINE_BYTES: usize = 20 * 1024;
/// The preview kept inline when a result is saved.
const PREVIEW_BYTES: usize = 2048;

/// The text of `result`: text blocks as they are, text resources by their text, images,
/// audio and binary resources named by their type, structured content when nothing else.
pub fn text_of(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        let v = serde_json::to_value(block).unwrap_or(Value::Null);
        let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let part = match v.get("type").and_then(Value::as_str) {
            Some("text") => field("text"),
            Some(kind @ ("image" | "audio")) => format!("[{kind} {} not shown]", field("mimeType")),
            Some("resource") => {
                let r = v.get("resource").cloned().unwrap_or(Value::Null);
                match r.get("text").and_then(Value::as_str) {
                    Some(t) => t.to_string(),
                    None => format!(
                        "[binary resource {} not shown]",
                        r.get("uri").and_then(Value::as_str).unwrap_or_default()
                    ),
                }
            }
            _ => v.to_string(),
        };
        parts.push(part);
    }
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    let text = parts.join("\n");
    if text.trim().is_empty() { "(the tool returned no output)".to_string() } else { text }
}

/// The first `n` bytes of `s`, cut back to a character boundary.
fn head(s: &str, n: usize) -> &str {
    corral_contract::text::cut(s, n)
}

/// `text` when it fits inline; else a preview and where the whole of it was saved (or, when
/// it cannot be saved, the preview and why).
pub fn fit(ws: &Dir, text: &str) -> String {
    if text.len() <= INLINE_BYTES {
        return text.to_string();
    }
    let preview = head(text, PREVIEW_BYTES);
    let whole = head(text, scratch::MAX_BYTES);
    match scratch::save(ws, "mcp_output", whole) {
        Ok(path) => format!(
            "{preview}\n[... the result is {} bytes, over the {} KB kept inline; all of it is saved in {path}: \
             read it with read_file (offset and limit) or search it with grep]",
            text.len(),
            INLINE_BYTES / 1024
        ),
        Err(e) => format!(
            "{preview}\n[... the result is {} bytes and was cut here: it could not be saved ({e})]",
            text.len()
        ),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are read with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    #[test]
    fn blocks_become_text_and_media_is_named() {
        let r: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}}
            ]
        }))
        .unwrap();
        assert_eq!(text_of(&r), "hello\n[image image/png not shown]\ninside");
        let s: CallToolResult =
            serde_json::from_value(serde_json::json!({"content": [], "structuredContent": {"n": 1}}))
                .unwrap();
        assert_eq!(text_of(&s), r#"{"n":1}"#);
    }

    #[test]
    fn long_results_are_saved_with_a_pointer() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), ambient_authority()).unwrap();
        assert_eq!(fit(&d, "short"), "short");
        let long = "é".repeat(INLINE_BYTES);
        let out = fit(&d, &long);
        assert!(out.len() < 4096, "{}", out.len());
        let path = out.split("saved in ").nth(1).unwrap().split(':').next().unwrap();
        assert!(path.starts_with(".corral/out/mcp_output_"), "{path}");
        assert_eq!(std::fs::read_to_string(t.path().join(path)).unwrap(), long);
    }
}
