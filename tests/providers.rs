//! Providers as they really answer: recorded bodies (tests/data/providers/, written from each
//! provider's published wire format) replayed by the scripted server, streamed and not. Each
//! case asserts on the follow-up request corral sends, or on the error and exit code.

use crate::support;

use corral::llm::{
    Client, ClientConfig, Effort, Event, LlmError, Message, Request, Response, RetryPolicy, ToolDef,
};
use serde_json::{Value, json};
use std::time::Duration;
use support::Sandbox;
use support::model_server::{Flavor, ModelServer, Reply, Step};

fn data(name: &str) -> String {
    let path = support::repo().join("tests/data/providers").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn data_json(name: &str) -> Value {
    serde_json::from_str(&data(name)).unwrap()
}

fn client(
    server: &ModelServer,
    flavor: Flavor,
    stream: bool,
    model: &str,
    f: impl FnOnce(&mut ClientConfig),
) -> Client {
    let provider = (flavor == Flavor::Anthropic).then_some("anthropic");
    let mut cfg =
        ClientConfig::resolve(provider, Some(&server.url()), Some(model), Some("test-key"), &|_| None)
            .unwrap();
    cfg.stream = stream;
    cfg.timeout = Duration::from_secs(10);
    cfg.retry = RetryPolicy { attempts: 3, base: Duration::from_millis(5), max: Duration::from_millis(20) };
    f(&mut cfg);
    Client::new(cfg).unwrap()
}

fn request(messages: Vec<Message>, max_tokens: u32) -> Request {
    Request {
        system: "You are a test.".into(),
        messages,
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        }]
        .into(),
        max_tokens,
        temperature: Some(0.2),
    }
}

async fn call(c: &Client, req: &Request) -> (Result<Response, LlmError>, Vec<Event>) {
    let mut events = Vec::new();
    let r = c.complete(req, &mut |e| events.push(e)).await;
    (r, events)
}

/// Sends the task, answers every tool call of the recorded reply, and sends the follow-up;
/// returns the follow-up's body as the server received it.
async fn follow_up(flavor: Flavor, recorded: &str, stream: bool) -> (Value, Response) {
    let server =
        ModelServer::start(flavor, vec![Step::Recorded(data(recorded)), Step::Reply(Reply::text("0.3.1"))]);
    let c = client(&server, flavor, stream, "test-model", |_| {});
    let mut messages = vec![Message::user("Which version is this?")];
    let (first, _) = call(&c, &request(messages.clone(), 4096)).await;
    let first = first.unwrap();
    messages.push(first.to_message());
    for tc in &first.tool_calls {
        messages.push(Message::Tool {
            call_id: tc.id.clone(),
            name: tc.name.clone(),
            content: "version = \"0.3.1\"".into(),
            is_error: false,
            images: vec![],
        });
    }
    let (second, _) = call(&c, &request(messages, 4096)).await;
    assert_eq!(second.unwrap().text, "0.3.1");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    (reqs[1].body.clone(), first)
}

/// The assistant message of an OpenAI-compatible follow-up.
fn assistant_of(body: &Value) -> &Value {
    body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap()
}

#[tokio::test]
async fn deepseek_reasoning_content_goes_back_on_the_tool_turn() {
    for (file, stream) in [("deepseek_reasoning_tool.json", false), ("deepseek_reasoning_tool.sse", true)] {
        let (body, first) = follow_up(Flavor::OpenAi, file, stream).await;
        let a = assistant_of(&body);
        assert_eq!(
            a["reasoning_content"], "The user wants the version. I should read Cargo.toml first.",
            "{file}: {a}"
        );
        assert_eq!(a["tool_calls"][0]["id"], "call_00_kR3vT9wQ2mXbY7nLs4pA", "{file}");
        assert_eq!(a["tool_calls"][0]["function"]["arguments"], r#"{"file_path":"Cargo.toml"}"#);
        let tool = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
        assert_eq!(tool["tool_call_id"], "call_00_kR3vT9wQ2mXbY7nLs4pA", "{file}");
        assert!(first.reasoning.unwrap().text.contains("read Cargo.toml"), "{file}");
    }
}

#[tokio::test]
async fn deepseek_reasoning_of_an_earlier_turn_is_not_sent_again() {
    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("ok"))]);
    let c = client(&server, Flavor::OpenAi, false, "deepseek-reasoner", |_| {});
    let replay = corral::llm::Replay::OpenAiCompat {
        reasoning_content: Some("old thoughts".into()),
        reasoning_details: None,
    };
    let old = Message::Assistant {
        text: "Hello.".into(),
        reasoning: Some(corral::llm::Reasoning { text: "old thoughts".into(), replay: Some(replay) }),
        tool_calls: vec![],
    };
    let (r, _) =
        call(&c, &request(vec![Message::user("hi"), old, Message::user("next question")], 100)).await;
    r.unwrap();
    let body = &server.requests()[0].body;
    assert!(assistant_of(body).get("reasoning_content").is_none(), "{body}");
}

#[tokio::test]
async fn openrouter_reasoning_details_are_replayed_exactly() {
    let expected =
        data_json("openrouter_reasoning_details.json")["choices"][0]["message"]["reasoning_details"].clone();
    for (file, stream) in
        [("openrouter_reasoning_details.json", false), ("openrouter_reasoning_details.sse", true)]
    {
        let (body, _) = follow_up(Flavor::OpenAi, file, stream).await;
        let a = assistant_of(&body);
        assert_eq!(a["reasoning_details"], expected, "{file}: {a}");
        assert_eq!(a["tool_calls"][0]["id"], "tool_read_file_Xc7bV2nM9kLq", "{file}");
    }
}

#[tokio::test]
async fn anthropic_thinking_blocks_are_replayed_with_their_signature() {
    let recorded = data_json("anthropic_thinking_tool.json")["content"].clone();
    for (file, stream) in [("anthropic_thinking_tool.json", false), ("anthropic_thinking_tool.sse", true)] {
        let (body, _) = follow_up(Flavor::Anthropic, file, stream).await;
        let msgs = body["messages"].as_array().unwrap();
        let a = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
        let blocks = a["content"].as_array().unwrap();
        assert_eq!(blocks[0], recorded[0], "{file}: thinking first, signature intact");
        assert_eq!(blocks[1], recorded[1], "{file}: redacted thinking kept");
        let tool_use = blocks.iter().find(|b| b["type"] == "tool_use").unwrap();
        assert_eq!(tool_use["id"], "toolu_01A09q90qw90lq917835lq9");
        assert_eq!(tool_use["input"], json!({"file_path": "Cargo.toml"}));
        let result =
            msgs.last().unwrap()["content"].as_array().unwrap().iter().find(|b| b["type"] == "tool_result");
        assert_eq!(result.unwrap()["tool_use_id"], "toolu_01A09q90qw90lq917835lq9", "{file}");
    }
}

#[tokio::test]
async fn a_quota_error_is_not_retried_and_says_it_is_not_a_rate_limit() {
    for (flavor, code, file) in [
        (Flavor::OpenAi, 429, "openai_insufficient_quota.json"),
        (Flavor::OpenAi, 402, "openrouter_insufficient_credits.json"),
        (Flavor::Anthropic, 400, "anthropic_credit_balance.json"),
    ] {
        let server = ModelServer::start(
            flavor,
            vec![
                Step::Status { code, retry_after: None, body: data(file) },
                Step::Reply(Reply::text("never")),
            ],
        );
        let c = client(&server, flavor, true, "test-model", |_| {});
        let (r, events) = call(&c, &request(vec![Message::user("hi")], 100)).await;
        let e = r.unwrap_err();
        assert!(matches!(e, LlmError::Quota { .. }), "{file}: {e:?}");
        let m = e.to_string();
        assert!(m.contains("not a rate limit") && m.contains("credit"), "{file}: {m}");
        assert_eq!(server.requests().len(), 1, "{file}: not retried");
        assert!(!events.iter().any(|e| matches!(e, Event::Retry { .. })), "{file}");
    }
}

#[tokio::test]
async fn a_per_minute_quota_with_a_retry_delay_is_a_rate_limit() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Status { code: 429, retry_after: None, body: data("gemini_rate_limit.json") },
            Step::Reply(Reply::text("ok")),
        ],
    );
    let c = client(&server, Flavor::OpenAi, false, "gemini-2.5-pro", |_| {});
    let (r, events) = call(&c, &request(vec![Message::user("hi")], 100)).await;
    assert_eq!(r.unwrap().text, "ok");
    assert_eq!(server.requests().len(), 2);
    assert!(events.iter().any(|e| matches!(e, Event::Retry { .. })));
}

/// The cap field and value of the request at `i`.
fn cap_of(server: &ModelServer, i: usize) -> (Option<u64>, Option<u64>) {
    let b = &server.requests()[i].body;
    (b["max_tokens"].as_u64(), b["max_completion_tokens"].as_u64())
}

#[tokio::test]
async fn the_reply_cap_the_model_list_reports_is_never_exceeded() {
    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("ok"))]);
    server.set_context_window(100_000);
    server.set_output_cap(1_000);
    let c = client(&server, Flavor::OpenAi, false, "test-model", |_| {});
    assert_eq!(c.context_window().await, Some(100_000));
    let (r, _) = call(&c, &request(vec![Message::user("hi")], 32768)).await;
    assert_eq!(r.unwrap().text, "ok");
    assert_eq!(cap_of(&server, 0).0, Some(1_000));
}

#[tokio::test]
async fn a_lowered_cap_is_kept_for_the_next_requests() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Status { code: 400, retry_after: None, body: data("openai_max_tokens_too_large.json") },
            Step::Reply(Reply::text("fits")),
            Step::Reply(Reply::text("again")),
        ],
    );
    let c = client(&server, Flavor::OpenAi, false, "test-model", |_| {});
    let (r, _) = call(&c, &request(vec![Message::user("hi")], 32768)).await;
    assert_eq!(r.unwrap().text, "fits");
    let (r, events) = call(&c, &request(vec![Message::user("more")], 32768)).await;
    assert_eq!(r.unwrap().text, "again");
    assert_eq!(cap_of(&server, 2).0, Some(16384), "no second refusal");
    assert!(!events.iter().any(|e| matches!(e, Event::Notice(_))), "{events:?}");
}

#[tokio::test]
async fn a_cap_refused_as_too_large_is_lowered_to_the_named_limit_and_retried_once() {
    let cases = [
        (Flavor::OpenAi, 400, "openai_max_tokens_too_large.json", 16384),
        (Flavor::Anthropic, 400, "anthropic_max_tokens_too_large.json", 32000),
        (Flavor::OpenAi, 400, "vllm_max_tokens_too_large.json", 31568),
        // 33768 requested against a 30000 tokens-per-minute limit: 3768 fewer.
        (Flavor::OpenAi, 429, "openai_tpm_request_too_large.json", 29000),
    ];
    for (flavor, code, file, lowered) in cases {
        for stream in [false, true] {
            let server = ModelServer::start(
                flavor,
                vec![
                    Step::Status { code, retry_after: None, body: data(file) },
                    Step::Reply(Reply::text("fits")),
                ],
            );
            let c = client(&server, flavor, stream, "test-model", |_| {});
            let (r, events) = call(&c, &request(vec![Message::user("hi")], 32768)).await;
            assert_eq!(r.unwrap().text, "fits", "{file}");
            assert_eq!(cap_of(&server, 0).0, Some(32768), "{file}");
            assert_eq!(cap_of(&server, 1).0, Some(lowered), "{file}");
            let notice =
                events.iter().find_map(|e| if let Event::Notice(m) = e { Some(m.clone()) } else { None });
            let notice = notice.unwrap_or_else(|| panic!("{file}: no notice in {events:?}"));
            assert!(notice.contains("32768") && notice.contains(&lowered.to_string()), "{notice}");
        }
    }
}

#[tokio::test]
async fn a_cap_refused_twice_is_an_error_that_says_what_to_set() {
    let refusal =
        || Step::Status { code: 400, retry_after: None, body: data("openai_max_tokens_too_large.json") };
    let server =
        ModelServer::start(Flavor::OpenAi, vec![refusal(), refusal(), Step::Reply(Reply::text("never"))]);
    let c = client(&server, Flavor::OpenAi, false, "test-model", |_| {});
    let (r, _) = call(&c, &request(vec![Message::user("hi")], 32768)).await;
    let m = r.unwrap_err().to_string();
    assert!(m.contains("--max-output-tokens"), "{m}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn known_families_never_get_more_than_they_allow_under_the_right_field() {
    type Caps = (Option<u64>, Option<u64>);
    let cases: [(&str, Option<&str>, Caps); 5] = [
        ("gpt-4o", None, (Some(16384), None)),
        ("openai/gpt-4o-mini", None, (Some(16384), None)),
        ("o3-mini", None, (None, Some(32768))),
        ("gpt-5-mini", None, (None, Some(32768))),
        ("my-llama", Some("max_completion_tokens"), (None, Some(32768))),
    ];
    for (model, param, expected) in cases {
        let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("ok"))]);
        let c =
            client(&server, Flavor::OpenAi, false, model, |cfg| cfg.token_param = param.map(str::to_string));
        call(&c, &request(vec![Message::user("hi")], 32768)).await.0.unwrap();
        assert_eq!(cap_of(&server, 0), expected, "{model}");
    }
    let server = ModelServer::start(Flavor::Anthropic, vec![Step::Reply(Reply::text("ok"))]);
    let c = client(&server, Flavor::Anthropic, true, "claude-opus-4-1-20250805", |_| {});
    call(&c, &request(vec![Message::user("hi")], 32768)).await.0.unwrap();
    assert_eq!(cap_of(&server, 0).0, Some(32000));
}

#[tokio::test]
async fn overflow_texts_of_each_server_start_compaction_with_their_limit() {
    let cases = [
        ("xai_overflow.json", Some(131072)),
        ("gemini_overflow.json", Some(1048576)),
        ("mistral_overflow.json", Some(32768)),
        ("groq_overflow.json", None),
        ("vllm_max_model_len.json", Some(8192)),
        ("lmstudio_overflow.json", Some(4096)),
        ("llamacpp_overflow.json", Some(8192)),
    ];
    for (file, limit) in cases {
        let server = ModelServer::start(
            Flavor::OpenAi,
            vec![
                Step::Status { code: 400, retry_after: None, body: data(file) },
                Step::Reply(Reply::text("no")),
            ],
        );
        let c = client(&server, Flavor::OpenAi, true, "test-model", |_| {});
        let (r, _) = call(&c, &request(vec![Message::user("hi")], 1000)).await;
        match r {
            Err(LlmError::ContextOverflow { limit: l, .. }) => assert_eq!(l, limit, "{file}"),
            other => panic!("{file}: {other:?}"),
        }
        assert_eq!(server.requests().len(), 1, "{file}");
    }
}

#[tokio::test]
async fn reasoning_effort_maps_to_each_providers_parameter() {
    let effort = |e| move |cfg: &mut ClientConfig| cfg.effort = Some(e);
    let server = ModelServer::start(Flavor::Anthropic, vec![Step::Reply(Reply::text("ok"))]);
    let c = client(&server, Flavor::Anthropic, true, "claude-sonnet-4-5", effort(Effort::High));
    call(&c, &request(vec![Message::user("hi")], 64000)).await.0.unwrap();
    let b = &server.requests()[0].body;
    assert_eq!(b["thinking"], json!({"type": "enabled", "budget_tokens": 32000}), "{b}");
    assert!(b.get("temperature").is_none(), "thinking takes no temperature: {b}");

    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("ok"))]);
    let c = client(&server, Flavor::OpenAi, false, "o4-mini", effort(Effort::Low));
    call(&c, &request(vec![Message::user("hi")], 1000)).await.0.unwrap();
    assert_eq!(server.requests()[0].body["reasoning_effort"], "low");

    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("ok"))]);
    let c = client(&server, Flavor::OpenAi, false, "gpt-5", effort(Effort::Off));
    call(&c, &request(vec![Message::user("hi")], 1000)).await.0.unwrap();
    assert_eq!(server.requests()[0].body["reasoning_effort"], "minimal");
}

fn with_image(call_id: &str) -> Vec<Message> {
    let call =
        corral::llm::ToolCall { id: call_id.into(), name: "view_image".into(), arguments: "{}".into() };
    vec![
        Message::user("What is in shot.png?"),
        Message::Assistant { text: String::new(), reasoning: None, tool_calls: vec![call] },
        Message::Tool {
            call_id: call_id.into(),
            name: "view_image".into(),
            content: "shot.png, 1 x 1".into(),
            is_error: false,
            images: vec![corral::llm::Image { mime_type: "image/png".into(), base64: "iVBORw0KGgo=".into() }],
        },
    ]
}

#[tokio::test]
async fn tool_images_reach_openai_as_image_url_parts_after_the_tool_messages() {
    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("a cat"))]);
    let c = client(&server, Flavor::OpenAi, false, "gpt-4o", |_| {});
    call(&c, &request(with_image("call_img_1"), 1000)).await.0.unwrap();
    let msgs = server.requests()[0].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(msgs[3]["tool_call_id"], "call_img_1");
    assert_eq!(msgs[3]["content"], "shot.png, 1 x 1");
    let parts = msgs[4]["content"].as_array().unwrap();
    assert!(parts[0]["text"].as_str().unwrap().contains("call_img_1"));
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
}

#[tokio::test]
async fn tool_images_reach_anthropic_as_image_blocks_in_the_tool_result() {
    let server = ModelServer::start(Flavor::Anthropic, vec![Step::Reply(Reply::text("a cat"))]);
    let c = client(&server, Flavor::Anthropic, true, "claude-sonnet-4-5", |_| {});
    call(&c, &request(with_image("toolu_img_1"), 1000)).await.0.unwrap();
    let body = &server.requests()[0].body;
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_img_1");
    assert_eq!(result["content"][0], json!({"type": "text", "text": "shot.png, 1 x 1"}));
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
}

#[tokio::test]
async fn an_ollama_reply_to_a_truncated_prompt_is_an_overflow_at_its_num_ctx() {
    let server =
        ModelServer::start(Flavor::OpenAi, vec![Step::Recorded(data("ollama_usage_truncated.json"))]);
    let c = client(&server, Flavor::OpenAi, false, "qwen3:8b", |cfg| cfg.truncates_silently = true);
    let long = "fn main() { println!(\"hello\"); }\n".repeat(1200);
    let (r, _) = call(&c, &request(vec![Message::user(long)], 1000)).await;
    match r {
        Err(LlmError::ContextOverflow { limit, message }) => {
            assert_eq!(limit, Some(4096));
            assert!(message.contains("num_ctx"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // A request that fits is taken as it is.
    let server =
        ModelServer::start(Flavor::OpenAi, vec![Step::Recorded(data("ollama_usage_truncated.json"))]);
    let c = client(&server, Flavor::OpenAi, false, "qwen3:8b", |cfg| cfg.truncates_silently = true);
    let (r, _) = call(&c, &request(vec![Message::user("short")], 1000)).await;
    assert_eq!(r.unwrap().text, "I see only the end of the file.");
}

// ---- the real binary ----

fn corral(sb: &Sandbox, server: &ModelServer, extra: &[&str], task: &str) -> support::Run {
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "deepseek-reasoner"];
    args.extend(extra);
    args.push(task);
    sb.run_with_env(&args, &[("CORRAL_RETRY_BASE_MS", "10")])
}

#[test]
fn corral_stops_at_once_on_a_quota_error_with_what_to_do() {
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Status { code: 429, retry_after: None, body: data("openai_insufficient_quota.json") },
            Step::Reply(Reply::text("never")),
        ],
    );
    let run = corral(&sb, &server, &[], "hello");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("not a rate limit") && run.stderr.contains("add credit"), "{}", run.stderr);
    assert!(!run.stderr.contains("rate-limited"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn corral_replays_deepseek_reasoning_and_streams_it_as_reasoning_events() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("Cargo.toml"), "[package]\nversion = \"0.3.1\"\n").unwrap();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![Step::Recorded(data("deepseek_reasoning_tool.sse")), Step::Reply(Reply::text("It is 0.3.1."))],
    );
    let run = corral(
        &sb,
        &server,
        &["--reasoning-effort", "high", "--output-format", "stream-json"],
        "Which version?",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reqs = server.requests();
    assert_eq!(reqs[0].body["reasoning_effort"], "high");
    let a = assistant_of(&reqs[1].body);
    assert_eq!(a["reasoning_content"], "The user wants the version. I should read Cargo.toml first.");
    let tool =
        reqs[1].body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert_eq!(tool["tool_call_id"], "call_00_kR3vT9wQ2mXbY7nLs4pA");
    assert!(tool["content"].as_str().unwrap().contains("0.3.1"), "{tool}");
    let reasoning: String = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "reasoning")
        .map(|v| v["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(reasoning, "The user wants the version. I should read Cargo.toml first.", "{}", run.stdout);
}

/// `--provider ollama` speaks Ollama's own API and asks for the context size corral budgets
/// for: the person's `--max-context-tokens`, else what the model's Modelfile sets.
#[test]
fn ollama_is_asked_for_the_context_size_corral_budgets_for() {
    let sb = Sandbox::new();
    let server = ModelServer::start(Flavor::Ollama, vec![Step::Reply(Reply::text("small"))]);
    let args = ["--provider", "ollama", "--base-url", &server.url(), "--model", "qwen3:8b"];
    let r = sb.run(&[&args[..], &["--max-context-tokens", "8192", "hi"]].concat());
    assert_eq!((r.code, r.stdout.trim()), (0, "small"), "{}", r.stderr);
    let req = &server.requests()[0];
    assert_eq!((req.path.as_str(), &req.body["options"]["num_ctx"]), ("/api/chat", &json!(8192)));

    let server = ModelServer::start(Flavor::Ollama, vec![Step::Reply(Reply::text("large"))]);
    server.set_context_window(24_576);
    let args = ["--provider", "ollama", "--base-url", &server.url(), "--model", "qwen3:8b", "hi"];
    let r = sb.run(&args);
    assert_eq!((r.code, r.stdout.trim()), (0, "large"), "{}", r.stderr);
    assert_eq!(server.requests()[0].body["options"]["num_ctx"], 24_576);
}
