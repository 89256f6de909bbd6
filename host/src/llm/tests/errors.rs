//! Reading providers' errors (overflow or not, the real limit), what the user is told,
//! and the retry rules: statuses, Retry-After, backoff bounds.

use super::super::error::{ErrorBody, LlmError, WireError, context_limit};
use super::super::retry::{RetryPolicy, parse_retry_after, retryable_status};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Error bodies as servers send them, with the limit each names.
const OVERFLOWS: [(&str, Option<u64>); 9] = [
    // OpenAI, and vLLM / OpenRouter with the same words.
    (
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        Some(8192),
    ),
    (
        r#"{"object":"error","message":"This model's maximum context length is 32,768 tokens. However, you requested 40000 tokens","type":"BadRequestError","code":400}"#,
        Some(32768),
    ),
    // Anthropic.
    (
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        Some(200000),
    ),
    // llama.cpp, new and old.
    (
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
        Some(4096),
    ),
    (
        r#"{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"}}"#,
        Some(4096),
    ),
    // Other wordings.
    (r#"{"error":"input is too long: exceeds the context window of 131072"}"#, Some(131072)),
    (r#"{"error":"too many tokens in the prompt, n_ctx = 2048"}"#, Some(2048)),
    (
        r#"{"error":{"message":"Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens"}}"#,
        Some(4096),
    ),
    ("input is too long for the context length", None),
];

#[test]
fn overflow_errors_are_recognised_with_their_limit() {
    for (body, limit) in OVERFLOWS {
        let e = ErrorBody::parse(body);
        assert!(e.is_overflow(), "{body}");
        assert_eq!(e.limit(), limit, "{body}");
    }
}

#[test]
fn other_errors_are_not_overflows() {
    for body in [
        r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}"#,
        "Bad Request",
    ] {
        assert!(!ErrorBody::parse(body).is_overflow(), "{body}");
    }
}

#[test]
fn the_message_is_found_in_every_shape() {
    assert_eq!(ErrorBody::parse(r#"{"error":{"message":"a","code":"c"}}"#).message, "a");
    assert_eq!(ErrorBody::parse(r#"{"error":{"message":"a","code":"c"}}"#).code, "c");
    assert_eq!(ErrorBody::parse(r#"{"error":"plain"}"#).message, "plain");
    assert_eq!(ErrorBody::parse(r#"{"object":"error","message":"vllm"}"#).message, "vllm");
    assert_eq!(ErrorBody::parse(r#"{"detail":"fastapi"}"#).message, "fastapi");
    assert_eq!(ErrorBody::parse("<html>\n  <b>502</b>\n</html>").message, "<html> <b>502</b> </html>");
    let long = "x".repeat(5000);
    assert!(ErrorBody::parse(&long).message.len() < 700, "long bodies are clipped");
}

#[test]
fn limits_are_read_from_each_form() {
    assert_eq!(context_limit("maximum context length is 8192 tokens"), Some(8192));
    assert_eq!(context_limit("prompt is too long: 210000 tokens > 200000 maximum"), Some(200000));
    assert_eq!(context_limit("exceeds the context window of 65536 tokens"), Some(65536));
    assert_eq!(context_limit("n_ctx = 4096"), Some(4096));
    assert_eq!(context_limit("context size (8192 tokens)"), Some(8192));
    assert_eq!(context_limit("context length is too small"), None);
    assert_eq!(context_limit("maximum context length is unknown"), None);
}

#[test]
fn errors_inside_replies_get_the_status_they_stand_for() {
    let status = |v: serde_json::Value| match WireError::remote(&v) {
        WireError::Remote { status, .. } => status,
        other => panic!("{other:?}"),
    };
    assert_eq!(status(serde_json::json!({"type": "error", "error": {"type": "overloaded_error"}})), 529);
    assert_eq!(status(serde_json::json!({"error": {"type": "rate_limit_error"}})), 429);
    assert_eq!(status(serde_json::json!({"error": {"code": 401, "message": "no"}})), 401);
    assert_eq!(status(serde_json::json!({"error": {"message": "?"}})), 500);
}

#[test]
fn every_message_says_what_to_do() {
    let overflow = LlmError::ContextOverflow { message: "too long".into(), limit: Some(8192) };
    assert!(overflow.to_string().contains("8192 tokens") && overflow.to_string().contains("Compact"));
    assert!(overflow.is_context_overflow());
    let server = LlmError::Server { status: 503, message: "busy".into(), attempts: 5 };
    assert!(!server.is_context_overflow());
    assert!(server.to_string().contains("5 attempts") && server.to_string().contains("try again"));
    let req = LlmError::Request { status: 400, message: "bad field".into() };
    assert!(req.to_string().contains("bad field") && req.to_string().contains("--model"));
    assert!(LlmError::Protocol("junk".into()).to_string().contains("--base-url"));
}

#[test]
fn retryable_statuses() {
    for s in [408, 409, 425, 429, 500, 502, 503, 504, 529] {
        assert!(retryable_status(s), "{s}");
    }
    for s in [400, 401, 403, 404, 413, 422] {
        assert!(!retryable_status(s), "{s}");
    }
}

#[test]
fn retry_after_takes_seconds_or_a_date_and_is_capped() {
    let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000); // Tue, 14 Nov 2023 22:13:20 GMT
    assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
    assert_eq!(parse_retry_after(" 2.5 ", now), Some(Duration::from_millis(2500)));
    assert_eq!(parse_retry_after("3600", now), Some(Duration::from_secs(60)), "capped");
    assert_eq!(parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", now), Some(Duration::from_secs(30)));
    assert_eq!(parse_retry_after("Tue, 14 Nov 2023 23:13:20 GMT", now), Some(Duration::from_secs(60)));
    assert_eq!(parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now), Some(Duration::ZERO), "in the past");
    assert_eq!(parse_retry_after("-1", now), None);
    assert_eq!(parse_retry_after("soon", now), None);
    assert!(parse_retry_after("1", SystemTime::now()).is_some());
}

#[test]
fn backoff_doubles_within_its_jitter_and_stops_at_max() {
    let p = RetryPolicy { attempts: 9, base: Duration::from_millis(100), max: Duration::from_secs(1) };
    let mut seen_low = false;
    let mut seen_high = false;
    for n in 1..=8u32 {
        let nominal = Duration::from_millis(100 * (1u64 << (n - 1))).min(Duration::from_secs(1));
        for _ in 0..200 {
            let w = p.backoff(n);
            assert!(w >= nominal.mul_f64(0.75) && w <= nominal.mul_f64(1.25), "attempt {n}: {w:?}");
            seen_low |= w < nominal.mul_f64(0.9);
            seen_high |= w > nominal.mul_f64(1.1);
        }
    }
    assert!(seen_low && seen_high, "the jitter spreads both ways");
    assert!(p.backoff(1000) <= Duration::from_millis(1250), "no overflow for huge attempt numbers");
    let d = RetryPolicy::default();
    assert_eq!((d.attempts, d.base, d.max), (5, Duration::from_secs(1), Duration::from_secs(30)));
}
