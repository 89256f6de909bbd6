//! Reading the context window from model lists and llama.cpp's /props.

use super::super::probe::{from_models, from_props, output_from_models};
use serde_json::json;

#[test]
fn the_entry_for_the_model_is_used() {
    let list = json!({"data": [
        {"id": "small", "context_length": 4096},
        {"id": "big", "top_provider": {"context_length": 200000}},
        {"id": "llama3:latest", "max_model_len": 8192},
    ]});
    assert_eq!(from_models(&list, "small"), Some(4096));
    assert_eq!(from_models(&list, "big"), Some(200000), "nested");
    assert_eq!(from_models(&list, "llama3"), Some(8192), "ollama's :latest");
    assert_eq!(from_models(&list, "other"), None, "another model's window is no help");
}

#[test]
fn a_single_entry_is_taken_whatever_its_name() {
    for key in ["context_length", "max_model_len", "max_context_length", "context_window", "n_ctx"] {
        let list = json!({"data": [{"id": "/models/qwen.gguf", key: 16384}]});
        assert_eq!(from_models(&list, "anything"), Some(16384), "{key}");
    }
    let list = json!({"data": [{"id": "x", "meta": {"n_ctx_train": 131072, "n_ctx": "32768"}}]});
    assert_eq!(from_models(&list, "x"), Some(32768));
    assert_eq!(from_models(&json!({"data": [{"id": "x", "meta": {"n_ctx_train": 1}}]}), "x"), None);
    assert_eq!(from_models(&json!({"data": []}), "x"), None);
}

#[test]
fn llama_cpp_props() {
    assert_eq!(from_props(&json!({"default_generation_settings": {"n_ctx": 8192}})), Some(8192));
    assert_eq!(from_props(&json!({"n_ctx": 4096})), Some(4096));
    assert_eq!(from_props(&json!({"total_slots": 1})), None);
}

#[test]
fn the_largest_reply_is_read_from_the_entry_for_the_model() {
    let list = json!({"data": [
        {"id": "a/router-model", "context_length": 128000, "top_provider": {"max_completion_tokens": 16384}},
        {"id": "b", "max_output_tokens": 8192},
        {"id": "c", "context_length": 4096},
    ]});
    assert_eq!(output_from_models(&list, "a/router-model"), Some(16384), "OpenRouter's nesting");
    assert_eq!(output_from_models(&list, "b"), Some(8192));
    assert_eq!(output_from_models(&list, "c"), None);
}
