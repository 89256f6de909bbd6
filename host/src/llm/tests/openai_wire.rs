//! The OpenAI-compatible wire format: request bodies, whole replies, streamed chunks.

use super::super::body::ToolsField;
use super::super::error::WireError;
use super::super::openai::{Stream, parse_response, request_body};
use super::super::types::{FinishReason, Usage};
use super::*;
use serde_json::Value;

#[test]
fn the_request_carries_system_tools_calls_and_results() {
    let mut req = request(vec![
        Message::user("read a.txt"),
        assistant("", vec![call("c1", "read_file", r#"{"file_path":"a.txt"}"#)]),
        tool_result("c1", "1: hello", false),
        Message::nudge("Reminder: keep going"),
        assistant("", vec![]),
        assistant("Done.", vec![call("c2", "read_file", "{bad")]),
    ]);
    req.temperature = Some(0.5);
    let b = request_body(&req, "m", false, "max_tokens", req.max_tokens, ToolsField::Built);
    assert_eq!(b["model"], "m");
    assert_eq!(b["max_tokens"], 512);
    assert_eq!(b["temperature"], 0.5);
    assert!(b.get("stream").is_none() && b.get("stream_options").is_none());
    assert_eq!(b["tool_choice"], "auto");
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "function": {"name": "read_file", "description": "Reads a file.",
                 "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}}])
    );
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m[0], json!({"role": "system", "content": "be brief"}));
    assert_eq!(m[1], json!({"role": "user", "content": "read a.txt"}));
    assert_eq!(
        m[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}
        ]})
    );
    assert_eq!(m[3], json!({"role": "tool", "tool_call_id": "c1", "content": "1: hello"}));
    assert_eq!(m[4], json!({"role": "user", "content": "Reminder: keep going"}), "a nudge is a user message");
    assert_eq!(m[5], json!({"role": "assistant", "content": "(empty response)"}));
    assert_eq!(m[6]["content"], "Done.");
    assert_eq!(
        m[6]["tool_calls"][0]["function"]["arguments"], "{bad",
        "malformed arguments go back as written"
    );
    assert_eq!(m.len(), 7);
}

#[test]
fn optional_fields_are_left_out_and_streaming_asks_for_usage() {
    let mut req = request(vec![Message::user("hi")]);
    req.tools = Vec::new().into();
    req.system.clear();
    let b = request_body(&req, "m", true, "max_completion_tokens", req.max_tokens, ToolsField::Built);
    assert!(b.get("tools").is_none() && b.get("tool_choice").is_none() && b.get("temperature").is_none());
    assert_eq!(b["messages"].as_array().unwrap().len(), 1, "no empty system message");
    assert_eq!(b["max_completion_tokens"], 512);
    assert!(b.get("max_tokens").is_none());
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
}

#[test]
fn a_whole_reply_prefers_the_choice_with_tool_calls() {
    let v = json!({
        "choices": [
            {"message": {"content": "just text"}, "finish_reason": "stop"},
            {"message": {"content": null, "reasoning_content": "hmm", "tool_calls": [
                {"id": "x1", "type": "function", "function": {"name": "read_file", "arguments": "{\"a\":1}"}},
                {"type": "function", "function": {"name": "grep", "arguments": {"pattern": "p"}}}
            ]}, "finish_reason": "tool_calls"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}
    });
    let r = parse_response(&v).unwrap();
    assert_eq!(r.text, "");
    assert_eq!(r.reasoning.as_ref().map(|x| x.text.as_str()), Some("hmm"));
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(r.usage, Usage { input_tokens: 10, output_tokens: 3 });
    assert_eq!(r.tool_calls[0], call("x1", "read_file", "{\"a\":1}"));
    assert!(r.tool_calls[1].id.starts_with("call_"), "a missing id is made up: {}", r.tool_calls[1].id);
    assert_eq!(r.tool_calls[1].arguments, r#"{"pattern":"p"}"#, "an arguments object becomes text");
}

#[test]
fn finish_reasons_map_and_length_wins() {
    let reply = |finish: Value, calls: bool| {
        let mut msg = json!({"content": "t"});
        if calls {
            msg["tool_calls"] = json!([{"id": "a", "function": {"name": "n", "arguments": "{"}}]);
        }
        parse_response(&json!({"choices": [{"message": msg, "finish_reason": finish}]})).unwrap().finish
    };
    assert_eq!(reply(json!("stop"), false), FinishReason::Stop);
    assert_eq!(reply(Value::Null, false), FinishReason::Stop);
    assert_eq!(reply(json!("length"), false), FinishReason::Length);
    assert_eq!(reply(json!("length"), true), FinishReason::Length, "cut-off calls are reported as cut off");
    assert_eq!(reply(json!("stop"), true), FinishReason::ToolCalls, "servers that say stop with tool calls");
    assert_eq!(reply(json!("content_filter"), false), FinishReason::Other("content_filter".into()));
}

#[test]
fn replies_without_choices_or_with_an_error_are_refused() {
    assert!(matches!(parse_response(&json!({"object": "x"})), Err(WireError::Malformed(_))));
    let err = parse_response(&json!({"error": {"message": "overloaded", "code": 503}})).unwrap_err();
    assert!(matches!(err, WireError::Remote { status: 503, .. }), "{err:?}");
}

/// Runs a whole SSE text through a stream decoder in pieces of `size` bytes.
fn run_stream(wire: &str, size: usize) -> (Stream, Vec<Event>, Result<(), WireError>) {
    let mut s = Stream::new();
    let mut events = Vec::new();
    let mut result = Ok(());
    for ev in sse_events(wire, size) {
        if let Err(e) = s.event(&ev, &mut |e| events.push(e)) {
            result = Err(e);
            break;
        }
    }
    (s, events, result)
}

fn chunk(delta: Value, finish: Value) -> String {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

fn tool_stream() -> String {
    let mut w = String::new();
    w += &chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    w += &chunk(json!({"reasoning_content": "let me "}), Value::Null);
    w += &chunk(json!({"reasoning": "think"}), Value::Null);
    w += &chunk(json!({"content": "Reading "}), Value::Null);
    w += &chunk(json!({"content": "both."}), Value::Null);
    let start = |i: u64, id: &str, name: &str| json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]});
    let args = |i: u64, a: &str| json!({"tool_calls": [{"index": i, "function": {"arguments": a}}]});
    w += &chunk(start(0, "call_a", "read_file"), Value::Null);
    w += &chunk(args(0, "{\"file_"), Value::Null);
    w += &chunk(start(1, "", "grep"), Value::Null);
    w += &chunk(args(1, "{\"pattern\":"), Value::Null);
    w += &chunk(args(0, "path\":\"a.txt\"}"), Value::Null);
    w += &chunk(args(1, " \"x\""), Value::Null);
    w += &chunk(json!({}), json!("tool_calls"));
    w += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":7}}\r\n\r\n";
    w += "data: [DONE]\n\n";
    w
}

#[test]
fn tool_call_deltas_are_assembled_by_index() {
    for size in [1, 7, 64, 10_000] {
        let (s, events, result) = run_stream(&tool_stream(), size);
        result.unwrap();
        assert!(s.done() && s.complete());
        let r = s.finish();
        assert_eq!(joined(&events), ("Reading both.".to_string(), "let me think".to_string()));
        assert_eq!(r.text, "Reading both.");
        assert_eq!(r.reasoning.as_ref().map(|x| x.text.as_str()), Some("let me think"));
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0], call("call_a", "read_file", r#"{"file_path":"a.txt"}"#));
        assert_eq!(r.tool_calls[1].name, "grep");
        assert_eq!(r.tool_calls[1].arguments, r#"{"pattern": "x""#, "malformed arguments kept as text");
        assert!(r.tool_calls[1].id.starts_with("call_") && r.tool_calls[1].id != "call_a");
        assert_eq!(r.finish, FinishReason::ToolCalls);
        assert_eq!(r.usage, Usage { input_tokens: 50, output_tokens: 7 });
    }
}

#[test]
fn deltas_without_an_index_follow_their_ids() {
    let tc = |id: Option<&str>, name: Option<&str>, args: &str| {
        let mut t = json!({"function": {"arguments": args}});
        if let Some(id) = id {
            t["id"] = json!(id);
        }
        if let Some(n) = name {
            t["function"]["name"] = json!(n);
        }
        chunk(json!({"tool_calls": [t]}), Value::Null)
    };
    let wire = [
        tc(Some("a"), Some("one"), "{\"x\""),
        tc(None, None, ":1}"),
        tc(Some("b"), Some("two"), "{}"),
        chunk(json!({}), json!("tool_calls")),
    ]
    .concat();
    let (s, _, result) = run_stream(&wire, 5);
    result.unwrap();
    assert!(!s.done() && s.complete(), "a finish reason without [DONE] is enough");
    let r = s.finish();
    assert_eq!(r.tool_calls, [call("a", "one", "{\"x\":1}"), call("b", "two", "{}")]);
}

#[test]
fn calls_all_numbered_zero_are_told_apart_by_their_ids() {
    let tc = |id: Option<&str>, name: &str, args: &str| {
        let mut t = json!({"index": 0, "function": {"name": name, "arguments": args}});
        if let Some(id) = id {
            t["id"] = json!(id);
        }
        chunk(json!({"tool_calls": [t]}), Value::Null)
    };
    let wire =
        [tc(Some("a"), "one", "{"), tc(None, "", "}"), tc(Some("b"), "two", "{}"), tc(Some("b"), "", "")]
            .concat();
    let (s, _, result) = run_stream(&wire, 9);
    result.unwrap();
    assert_eq!(s.finish().tool_calls, [call("a", "one", "{}"), call("b", "two", "{}")]);
}

#[test]
fn a_stream_without_its_end_is_incomplete() {
    let wire = chunk(json!({"content": "half an ans"}), Value::Null);
    let (s, events, result) = run_stream(&wire, 3);
    result.unwrap();
    assert!(!s.complete());
    assert_eq!(events, [Event::Text("half an ans".into())]);
}

#[test]
fn chunks_run_together_without_blank_lines_are_still_read() {
    let wire = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n";
    let (s, _, result) = run_stream(wire, 4);
    result.unwrap();
    assert_eq!(s.finish().text, "ab");
}

#[test]
fn bad_chunks_and_error_chunks_are_errors() {
    let (_, _, result) = run_stream("data: {not json\n\n", 100);
    assert!(matches!(result, Err(WireError::Malformed(_))), "{result:?}");
    let wire = "data: {\"error\":{\"message\":\"the request exceeds the available context size\",\"type\":\"exceed_context_size_error\",\"n_ctx\":4096}}\n\n";
    let (_, _, result) = run_stream(wire, 100);
    match result {
        Err(WireError::Remote { status: 400, body }) => assert_eq!(body.limit(), Some(4096)),
        other => panic!("{other:?}"),
    }
}
