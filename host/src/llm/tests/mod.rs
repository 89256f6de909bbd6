//! Unit tests of the model providers: wire formats, SSE framing, error reading, retries,
//! configuration. The HTTP behaviour is tested against a real server in tests/llm.rs.

mod anthropic_wire;
mod config;
mod errors;
mod limits;
mod ollama_wire;
mod openai_wire;
mod probe;
mod sse;

use super::sse::{SseDecoder, SseEvent};
use super::types::{Event, Message, Request, ToolCall, ToolDef};
use serde_json::json;

/// A request with one tool and the given messages.
fn request(messages: Vec<Message>) -> Request {
    Request {
        system: "be brief".into(),
        messages,
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        }]
        .into(),
        max_tokens: 512,
        temperature: None,
    }
}

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
}

fn tool_result(id: &str, content: &str, is_error: bool) -> Message {
    Message::Tool {
        call_id: id.into(),
        name: "read_file".into(),
        content: content.into(),
        is_error,
        images: vec![],
    }
}

fn assistant(text: &str, calls: Vec<ToolCall>) -> Message {
    Message::Assistant { text: text.into(), reasoning: None, tool_calls: calls }
}

/// Decodes `wire` fed in pieces of `size` bytes.
fn sse_events(wire: &str, size: usize) -> Vec<SseEvent> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    for piece in wire.as_bytes().chunks(size.max(1)) {
        out.extend(d.feed(piece));
    }
    out.extend(d.finish());
    out
}

/// Text and reasoning events joined, for comparing with the final response.
fn joined(events: &[Event]) -> (String, String) {
    let mut text = String::new();
    let mut reasoning = String::new();
    for e in events {
        match e {
            Event::Text(t) => text.push_str(t),
            Event::Reasoning(r) => reasoning.push_str(r),
            Event::Retry { .. } | Event::Notice(_) => {}
        }
    }
    (text, reasoning)
}

#[test]
fn the_client_is_shared_between_tasks_and_its_calls_are_send() {
    use super::{Client, ClientConfig, ProviderKind};
    fn shareable<T: Send + Sync + Clone + 'static>(_: &T) {}
    fn send<F: std::future::Future + Send>(_: F) {}
    let c = Client::new(ClientConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:9", "m", None)).unwrap();
    shareable(&c);
    let req = request(vec![Message::user("hi")]);
    let mut on_event = |_: Event| {};
    send(c.complete(&req, &mut on_event));
    send(c.context_window());
}

#[test]
fn a_url_that_is_no_url_is_a_config_error() {
    use super::{Client, ClientConfig, LlmError, ProviderKind};
    let cfg = ClientConfig::new(ProviderKind::OpenAi, "127.0.0.1 port 8080", "m", None);
    match Client::new(cfg) {
        Err(LlmError::Config(m)) => assert!(m.contains("--base-url"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn each_provider_sends_the_bytes_of_its_body_with_the_tool_list_kept_serialized() {
    use super::{Client, ClientConfig, ProviderKind};
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic, ProviderKind::Ollama] {
        let c = Client::new(ClientConfig::new(kind, "http://127.0.0.1:9", "m", None)).unwrap();
        let mut req = request(vec![Message::user("read a.txt"), tool_result("c1", "1: hi", false)]);
        for turn in 0..2 {
            let sent = c.body_bytes(&req, 100).unwrap();
            assert_eq!(sent, serde_json::to_vec(&c.body(&req, 100)).unwrap(), "{kind:?}, turn {turn}");
            assert!(String::from_utf8_lossy(&sent).contains("read_file"), "{kind:?}: the tools are sent");
        }
        // Another list (a tool joined): the new one is sent, not the kept one.
        let mut tools = req.tools.to_vec();
        tools[0].name = "read_text".into();
        req.tools = tools.into();
        let sent: serde_json::Value = serde_json::from_slice(&c.body_bytes(&req, 100).unwrap()).unwrap();
        let names: Vec<&str> = sent["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().or(t["name"].as_str()).unwrap())
            .collect();
        assert_eq!(names, ["read_text"], "{kind:?}: {sent}");
        assert_eq!(sent, c.body(&req, 100));
        // No tools: no tools entry.
        req.tools = Vec::new().into();
        let sent = String::from_utf8(c.body_bytes(&req, 100).unwrap()).unwrap();
        assert!(!sent.contains("\"tools\""), "{kind:?}: {sent}");
    }
}
