//! Ollama's own chat API: the request (num_ctx, num_predict, tool calls as objects, tool
//! results by name), whole replies and NDJSON streams.

use super::super::body::ToolsField;
use super::super::ollama::{Stream, parse_response, request_body};
use super::super::probe::ollama_window_of;
use super::super::types::{Effort, Event, FinishReason, Message, ToolCall};
use super::request;
use serde_json::json;

#[test]
fn the_request_sets_the_context_size_and_sends_calls_as_objects() {
    let call = ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        arguments: r#"{"file_path":"a.rs"}"#.into(),
    };
    let req = request(vec![
        Message::user("read a.rs"),
        Message::Assistant { text: String::new(), reasoning: None, tool_calls: vec![call] },
        Message::Tool {
            call_id: "call_1".into(),
            name: "read_file".into(),
            content: "1: fn a() {}".into(),
            is_error: false,
            images: vec![],
        },
    ]);
    let body = request_body(&req, "qwen3:8b", true, 512, 8192, Some(Effort::Off), ToolsField::Built);
    assert_eq!(body["options"], json!({"num_ctx": 8192, "num_predict": 512}));
    assert_eq!(body["stream"], true);
    assert_eq!(body["think"], false);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[0], json!({"role": "system", "content": "be brief"}));
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"],
        json!({"name": "read_file", "arguments": {"file_path": "a.rs"}})
    );
    assert_eq!(msgs[3], json!({"role": "tool", "tool_name": "read_file", "content": "1: fn a() {}"}));
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    let body = request_body(&req, "m", false, 0, 4096, None, ToolsField::Built);
    assert_eq!(body["options"], json!({"num_ctx": 4096}), "no cap: none sent");
    assert!(body.get("think").is_none());
}

#[test]
fn a_whole_reply_with_a_tool_call_and_counts() {
    let v = json!({
        "model": "qwen3:8b", "created_at": "2025-06-01T10:00:00Z",
        "message": {"role": "assistant", "content": "", "thinking": "look first",
                    "tool_calls": [{"function": {"name": "read_file", "arguments": {"file_path": "a.rs"}}}]},
        "done": true, "done_reason": "stop", "prompt_eval_count": 120, "eval_count": 9
    });
    let r = parse_response(&v).unwrap();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "read_file");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r.tool_calls[0].arguments).unwrap(),
        json!({"file_path": "a.rs"})
    );
    assert!(!r.tool_calls[0].id.is_empty());
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (120, 9));
    assert_eq!(r.reasoning.unwrap().text, "look first");
    assert!(parse_response(&json!({"error": "model 'x' not found"})).is_err());
}

#[test]
fn a_stream_of_lines_is_assembled_and_shown_as_it_comes() {
    let lines = [
        r#"{"message":{"role":"assistant","content":"","thinking":"hm"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"Hel"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"lo"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":7,"eval_count":2}"#,
    ];
    let mut s = Stream::new();
    let mut events = Vec::new();
    for l in lines {
        s.line(l, &mut |e| events.push(e)).unwrap();
    }
    assert!(s.done());
    assert_eq!(
        events,
        vec![Event::Reasoning("hm".into()), Event::Text("Hel".into()), Event::Text("lo".into())]
    );
    let r = s.finish();
    assert_eq!((r.text.as_str(), r.finish), ("Hello", FinishReason::Length));
    let mut s = Stream::new();
    assert!(s.line(r#"{"error":"an error was encountered while running the model"}"#, &mut |_| {}).is_err());
    assert!(s.line("{\"message\":", &mut |_| {}).is_err(), "a broken line");
}

#[test]
fn the_window_is_the_modelfile_setting_or_the_default_within_the_trained_size() {
    let show = |params: &str, trained: u64| json!({"parameters": params, "model_info": {"general.architecture": "qwen3", "qwen3.context_length": trained}});
    assert_eq!(ollama_window_of(&show("stop \"<|im_end|>\"", 40960)), 16384);
    assert_eq!(ollama_window_of(&show("num_ctx 32768\ntemperature 0.6", 40960)), 32768);
    assert_eq!(ollama_window_of(&show("num_ctx 65536", 40960)), 40960);
    assert_eq!(ollama_window_of(&show("", 8192)), 8192);
    assert_eq!(ollama_window_of(&json!({})), 16384);
}
