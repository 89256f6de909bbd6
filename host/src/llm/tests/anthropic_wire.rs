//! The Anthropic Messages wire format: alternating roles, merged tool results, content
//! blocks in whole replies and streamed events.

use super::super::anthropic::{Stream, parse_response, request_body};
use super::super::body::ToolsField;
use super::super::error::WireError;
use super::super::types::{FinishReason, Usage};
use super::*;
use serde_json::Value;

#[test]
fn the_request_alternates_roles_and_groups_tool_results() {
    let req = request(vec![
        Message::user("read both"),
        assistant(
            "Reading.",
            vec![call("t1", "read_file", r#"{"file_path":"a"}"#), call("t2", "read_file", "{bad")],
        ),
        tool_result("t1", "1: a", false),
        tool_result("t2", "error: not valid JSON", true),
        Message::nudge("Reminder: be brief"),
        assistant("", vec![]),
    ]);
    let b = request_body(&req, "claude", true, req.max_tokens, None, ToolsField::Built);
    assert_eq!(b["system"], "be brief");
    assert_eq!(b["max_tokens"], 512);
    assert_eq!(b["stream"], true);
    assert!(b.get("temperature").is_none() && b.get("tool_choice").is_none());
    assert_eq!(
        b["tools"],
        json!([{"name": "read_file", "description": "Reads a file.",
                "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}])
    );
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m.len(), 4, "{m:#?}");
    assert_eq!(m[0], json!({"role": "user", "content": [{"type": "text", "text": "read both"}]}));
    assert_eq!(
        m[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"file_path": "a"}},
            {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"raw_arguments": "{bad"}},
        ]})
    );
    assert_eq!(
        m[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "1: a"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "error: not valid JSON", "is_error": true},
            {"type": "text", "text": "Reminder: be brief"},
        ]})
    );
    assert_eq!(m[3], json!({"role": "assistant", "content": [{"type": "text", "text": "(empty response)"}]}));
}

#[test]
fn calls_without_text_have_no_text_block_and_odd_ids_are_cleaned() {
    let req = request(vec![
        Message::user("go"),
        assistant("", vec![call("call:1/x", "read_file", "")]),
        tool_result("call:1/x", "", false),
        Message::user("and again"),
    ]);
    let mut req = req;
    req.max_tokens = 0;
    req.temperature = Some(0.2);
    let b = request_body(&req, "claude", false, req.max_tokens, None, ToolsField::Built);
    assert!(b.get("stream").is_none());
    assert_eq!(b["max_tokens"], 8192, "required, so a default is sent");
    assert!((b["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    let m = b["messages"].as_array().unwrap();
    assert_eq!(
        m[1]["content"],
        json!([{"type": "tool_use", "id": "call_1_x", "name": "read_file", "input": {}}])
    );
    assert_eq!(m[2]["content"][0]["tool_use_id"], "call_1_x");
    assert_eq!(m[2]["content"][0]["content"], "(no output)");
    assert_eq!(m[2]["content"][1], json!({"type": "text", "text": "and again"}));
    assert_eq!(m.len(), 3);
}

#[test]
fn a_conversation_never_starts_with_the_assistant() {
    let b = request_body(
        &request(vec![assistant("earlier answer", vec![]), Message::user("more")]),
        "c",
        false,
        512,
        None,
        ToolsField::Built,
    );
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m[0]["role"], "user");
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[2]["role"], "user");
}

#[test]
fn a_whole_reply_reads_text_thinking_and_tool_use() {
    let v = json!({
        "id": "msg_1", "type": "message", "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "s"},
            {"type": "text", "text": "Let me read."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 9}
    });
    let r = parse_response(&v).unwrap();
    assert_eq!(r.text, "Let me read.");
    assert_eq!(r.reasoning.as_ref().map(|x| x.text.as_str()), Some("plan"));
    assert_eq!(r.tool_calls, [call("toolu_1", "read_file", r#"{"file_path":"a"}"#)]);
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(r.usage, Usage { input_tokens: 105, output_tokens: 9 }, "cached tokens count as input");
}

#[test]
fn stop_reasons_map() {
    let stop = |s: &str| parse_response(&json!({"content": [], "stop_reason": s})).unwrap().finish;
    assert_eq!(stop("end_turn"), FinishReason::Stop);
    assert_eq!(stop("stop_sequence"), FinishReason::Stop);
    assert_eq!(stop("max_tokens"), FinishReason::Length);
    assert_eq!(stop("tool_use"), FinishReason::ToolCalls);
    assert_eq!(stop("refusal"), FinishReason::Other("refusal".into()));
}

#[test]
fn an_error_body_is_refused() {
    let v = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    assert!(matches!(parse_response(&v), Err(WireError::Remote { status: 529, .. })));
    assert!(matches!(parse_response(&json!({"id": "x"})), Err(WireError::Malformed(_))));
}

fn ev(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}

/// A stream as Anthropic sends it: thinking, text, two tool calls.
fn wire() -> String {
    let delta = |i: u64, d: Value| ev(json!({"type": "content_block_delta", "index": i, "delta": d}));
    let start = |i: u64, b: Value| ev(json!({"type": "content_block_start", "index": i, "content_block": b}));
    let stop = |i: u64| ev(json!({"type": "content_block_stop", "index": i}));
    [
        ev(json!({"type": "message_start", "message": {"id": "m", "content": [], "usage": {"input_tokens": 20, "cache_creation_input_tokens": 2, "output_tokens": 1}}})),
        ev(json!({"type": "ping"})),
        start(0, json!({"type": "thinking", "thinking": ""})),
        delta(0, json!({"type": "thinking_delta", "thinking": "I will "})),
        delta(0, json!({"type": "thinking_delta", "thinking": "read."})),
        delta(0, json!({"type": "signature_delta", "signature": "abc"})),
        stop(0),
        start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Let me "})),
        delta(1, json!({"type": "text_delta", "text": "look."})),
        stop(1),
        start(2, json!({"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}})),
        delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(2, json!({"type": "input_json_delta", "partial_json": "{\"file_path\": \"a"})),
        delta(2, json!({"type": "input_json_delta", "partial_json": ".txt\"}"})),
        stop(2),
        start(3, json!({"type": "tool_use", "id": "toolu_b", "name": "todo", "input": {}})),
        stop(3),
        ev(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 40}})),
        ev(json!({"type": "message_stop"})),
    ]
    .concat()
}

fn run_stream(wire: &str, size: usize) -> (Stream, Vec<Event>, Result<(), WireError>) {
    let mut s = Stream::new();
    let mut events = Vec::new();
    let mut result = Ok(());
    for e in sse_events(wire, size) {
        if let Err(err) = s.event(&e, &mut |e| events.push(e)) {
            result = Err(err);
            break;
        }
    }
    (s, events, result)
}

#[test]
fn a_stream_assembles_blocks_in_any_split() {
    for size in [1, 5, 33, 100_000] {
        let (s, events, result) = run_stream(&wire(), size);
        result.unwrap();
        assert!(s.done());
        let r = s.finish();
        assert_eq!(joined(&events), ("Let me look.".to_string(), "I will read.".to_string()));
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.reasoning.as_ref().map(|x| x.text.as_str()), Some("I will read."));
        assert_eq!(
            r.tool_calls,
            [call("toolu_a", "read_file", r#"{"file_path": "a.txt"}"#), call("toolu_b", "todo", "{}")]
        );
        assert_eq!(r.finish, FinishReason::ToolCalls);
        assert_eq!(r.usage, Usage { input_tokens: 22, output_tokens: 40 });
    }
}

#[test]
fn a_stream_cut_before_its_stop_is_incomplete_and_error_events_are_errors() {
    let full = wire();
    let cut = &full[..full.find("event: message_delta").unwrap()];
    let (s, _, result) = run_stream(cut, 9);
    result.unwrap();
    assert!(!s.complete());

    let err = ev(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
    let at = full.find("event: content_block_start").unwrap();
    let (_, _, result) = run_stream(&format!("{}{err}", &full[..at]), 50);
    match result {
        Err(WireError::Remote { status, body }) => {
            assert_eq!(status, 529);
            assert_eq!(body.message, "Overloaded");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unfinished_tool_block_still_yields_its_arguments() {
    let full = wire();
    let last_delta = full.find(".txt").unwrap();
    let cut = &full[..last_delta + full[last_delta..].find("event: content_block_stop").unwrap()];
    let (s, _, _) = run_stream(cut, 1000);
    let r = s.finish();
    assert_eq!(r.tool_calls[0].arguments, r#"{"file_path": "a.txt"}"#);
}
