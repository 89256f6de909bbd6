//! The rules of limits.rs and the error classes they feed: the family table, the cap field
//! name, the cap read out of each "too large" refusal, quota versus rate limit, and the
//! reasoning a session file holds.

use super::super::error::ErrorBody;
use super::super::limits::{output_cap, refused_cap, sees_images, token_param};
use super::super::types::{Message, Reasoning, Replay};

fn body(file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/providers").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn known_families_have_their_published_output_caps() {
    let cases = [
        ("gpt-4o-2024-08-06", Some(16_384)),
        ("openai/gpt-4o-mini", Some(16_384)),
        ("gpt-4.1", Some(32_768)),
        ("gpt-4", Some(8_192)),
        ("o1-mini", Some(65_536)),
        ("o3", Some(100_000)),
        ("claude-opus-4-1-20250805", Some(32_000)),
        ("anthropic/claude-sonnet-4.5", Some(64_000)),
        ("claude-sonnet-4-5-20250929", Some(64_000)),
        ("claude-3-5-haiku-latest", Some(8_192)),
        ("deepseek-chat", Some(8_192)),
        ("qwen2.5-coder:7b", None),
    ];
    for (model, cap) in cases {
        assert_eq!(output_cap(model), cap, "{model}");
    }
}

#[test]
fn the_cap_field_follows_server_family_and_config() {
    let azure = "https://acme.openai.azure.com/openai/deployments/x";
    assert_eq!(token_param(None, "https://api.openai.com/v1", "gpt-4o"), "max_completion_tokens");
    assert_eq!(token_param(None, azure, "my-deployment"), "max_completion_tokens");
    assert_eq!(token_param(None, "https://openrouter.ai/api/v1", "openai/o4-mini"), "max_completion_tokens");
    assert_eq!(token_param(None, "http://127.0.0.1:8000/v1", "gpt-5-nano"), "max_completion_tokens");
    assert_eq!(token_param(None, "http://127.0.0.1:8080/v1", "llama-3.1-8b"), "max_tokens");
    assert_eq!(token_param(Some("max_tokens"), "https://api.openai.com/v1", "o3"), "max_tokens");
}

#[test]
fn each_too_large_refusal_names_the_cap_to_use() {
    let cases = [
        ("openai_max_tokens_too_large.json", 32768, Some(16384)),
        ("anthropic_max_tokens_too_large.json", 32768, Some(32000)),
        ("vllm_max_tokens_too_large.json", 32768, Some(31568)),
        ("openai_tpm_request_too_large.json", 32768, Some(29000)),
        // Lowering cannot help: the input alone is over the per-minute limit.
        ("openai_tpm_request_too_large.json", 1000, None),
    ];
    for (file, asked, cap) in cases {
        let b = ErrorBody::parse(&body(file));
        assert_eq!(refused_cap(&format!("{} {}", b.message, b.raw), asked), Some(cap), "{file}");
    }
    let busy = "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used \
                26000, Requested 6000. Please try again in 8s.";
    assert_eq!(refused_cap(busy, 4096), None, "an ordinary TPM limit is waited out, not a cap refusal");
    let anthropic = "input length and `max_tokens` exceed context limit: 198000 + 32000 > 200000, decrease \
                     input length or `max_tokens` and try again";
    assert_eq!(refused_cap(anthropic, 32000), Some(Some(2000)));
    let groq = "`max_tokens` must be less than or equal to `8192`, the maximum value for `max_tokens` is less \
                than the `context_window` for this model";
    assert_eq!(refused_cap(groq, 32768), Some(Some(8192)));
    for file in ["xai_overflow.json", "gemini_overflow.json", "groq_overflow.json", "llamacpp_overflow.json"]
    {
        let b = ErrorBody::parse(&body(file));
        assert_eq!(refused_cap(&format!("{} {}", b.message, b.raw), 32768), None, "{file} is an overflow");
        assert!(b.is_overflow(), "{file}");
    }
}

#[test]
fn quota_and_billing_are_told_apart_from_rate_limits() {
    for (file, status) in [
        ("openai_insufficient_quota.json", 429),
        ("openrouter_insufficient_credits.json", 402),
        ("anthropic_credit_balance.json", 400),
    ] {
        assert!(ErrorBody::parse(&body(file)).is_quota(status), "{file}");
    }
    assert!(!ErrorBody::parse(&body("gemini_rate_limit.json")).is_quota(429));
    assert!(!ErrorBody::parse(&body("openai_tpm_request_too_large.json")).is_quota(429));
    let gemini = ErrorBody::parse(&body("gemini_overflow.json"));
    assert!(
        gemini.message.starts_with("The input token count"),
        "the list wrapper is read: {}",
        gemini.message
    );
}

#[test]
fn vision_families_are_known() {
    for m in
        ["gpt-4o", "openai/gpt-5", "o3", "gemini-2.5-flash", "qwen2.5-vl:7b", "llava:13b", "llama3.2-vision"]
    {
        assert!(sees_images(m), "{m}");
    }
    for m in ["qwen2.5-coder:7b", "deepseek-chat", "o1-mini", "gpt-3.5-turbo", "llama3.1:8b"] {
        assert!(!sees_images(m), "{m}");
    }
}

#[test]
fn reasoning_reads_old_sessions_and_keeps_its_replay() {
    let old: Message =
        serde_json::from_str(r#"{"role":"assistant","text":"hi","reasoning":"thought"}"#).unwrap();
    let Message::Assistant { reasoning, .. } = &old else { panic!() };
    assert_eq!(reasoning, &Some(Reasoning { text: "thought".into(), replay: None }));
    let blocks = vec![serde_json::json!({"type": "redacted_thinking", "data": "xyz"})];
    let m = Message::Assistant {
        text: String::new(),
        reasoning: Some(Reasoning { text: String::new(), replay: Some(Replay::Anthropic { blocks }) }),
        tool_calls: vec![],
    };
    let back: Message = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
}
