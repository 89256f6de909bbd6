//! The model client against the scripted model server, both wire formats, streamed and not:
//! replies and tool calls round-trip, retries and their waits, and each kind of failure.

use crate::support;

use corral::llm::{
    Client, ClientConfig, Event, FinishReason, LlmError, Message, Request, Response, RetryPolicy, ToolDef,
};
use serde_json::{Value, json};
use std::time::Duration;
use support::model_server::{Flavor, ModelServer, Reply, Step};

const FLAVORS: [Flavor; 2] = [Flavor::OpenAi, Flavor::Anthropic];

fn client(server: &ModelServer, flavor: Flavor, stream: bool) -> Client {
    client_at(&server.url(), flavor, stream, 4)
}

fn client_at(url: &str, flavor: Flavor, stream: bool, attempts: u32) -> Client {
    let provider = match flavor {
        Flavor::OpenAi => None,
        Flavor::Anthropic => Some("anthropic"),
        Flavor::Ollama => Some("ollama"),
    };
    let mut cfg =
        ClientConfig::resolve(provider, Some(url), Some("test-model"), Some("test-key"), &|_| None).unwrap();
    cfg.stream = stream;
    cfg.timeout = Duration::from_secs(10);
    cfg.retry = RetryPolicy { attempts, base: Duration::from_millis(10), max: Duration::from_millis(100) };
    Client::new(cfg).unwrap()
}

async fn call(c: &Client, req: &Request) -> (Result<Response, LlmError>, Vec<Event>) {
    let mut events = Vec::new();
    let r = c.complete(req, &mut |e| events.push(e)).await;
    (r, events)
}

fn read_file_tool() -> ToolDef {
    ToolDef {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        parameters: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
    }
}

fn request(messages: Vec<Message>) -> Request {
    Request {
        system: "You are a test.".into(),
        messages,
        tools: vec![read_file_tool()].into(),
        max_tokens: 1000,
        temperature: None,
    }
}

fn streamed_text(events: &[Event]) -> String {
    events.iter().filter_map(|e| if let Event::Text(t) = e { Some(t.as_str()) } else { None }).collect()
}

fn retries(events: &[Event]) -> Vec<(u32, Duration)> {
    events
        .iter()
        .filter_map(
            |e| if let Event::Retry { attempt, wait, .. } = e { Some((*attempt, *wait)) } else { None },
        )
        .collect()
}

/// Tool results of a captured body as (call id, content, is_error), either wire format.
fn tool_results(body: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            out.push((
                m["tool_call_id"].as_str().unwrap().into(),
                m["content"].as_str().unwrap().into(),
                false,
            ));
        }
        for b in m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result") {
            let err = b["is_error"] == true;
            out.push((b["tool_use_id"].as_str().unwrap().into(), b["content"].as_str().unwrap().into(), err));
        }
    }
    out
}

#[tokio::test]
async fn replies_with_tool_calls_round_trip_in_every_wire_mode() {
    for flavor in FLAVORS {
        for stream in [true, false] {
            let mode = format!("{flavor:?} stream={stream}");
            let first = Reply::tools(vec![
                ("read_file", r#"{"file_path":"a.txt"}"#),
                ("grep", r#"{"pattern":"x y"}"#),
            ])
            .with_text("Let me look at both.")
            .with_reasoning("I should read the file first.");
            let server =
                ModelServer::start(flavor, vec![Step::Reply(first), Step::Reply(Reply::text("All done."))]);
            let c = client(&server, flavor, stream);
            let mut req = request(vec![Message::user("look")]);
            let (r, events) = call(&c, &req).await;
            let r = r.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(r.text, "Let me look at both.", "{mode}");
            assert_eq!(
                r.reasoning.as_ref().map(|x| x.text.as_str()),
                Some("I should read the file first."),
                "{mode}"
            );
            assert_eq!(r.finish, FinishReason::ToolCalls, "{mode}");
            let calls: Vec<(&str, &str)> =
                r.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
            assert_eq!(
                calls,
                [("read_file", r#"{"file_path":"a.txt"}"#), ("grep", r#"{"pattern":"x y"}"#)],
                "{mode}"
            );
            assert!(
                r.tool_calls.iter().all(|c| !c.id.is_empty()) && r.tool_calls[0].id != r.tool_calls[1].id
            );
            assert!(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, "{mode}: {:?}", r.usage);
            if stream {
                assert_eq!(streamed_text(&events), r.text, "{mode}: text streamed as it came");
                assert!(
                    events.iter().filter(|e| matches!(e, Event::Text(_))).count() > 1,
                    "{mode}: several deltas"
                );
                assert!(events.iter().any(|e| matches!(e, Event::Reasoning(_))), "{mode}");
            } else {
                // A whole reply shows its reasoning in one piece, and nothing else.
                assert_eq!(events, [Event::Reasoning("I should read the file first.".into())], "{mode}");
            }

            req.messages.push(r.to_message());
            req.messages.push(Message::Tool {
                call_id: r.tool_calls[0].id.clone(),
                name: "read_file".into(),
                content: "1: hello".into(),
                is_error: false,
                images: vec![],
            });
            req.messages.push(Message::Tool {
                call_id: r.tool_calls[1].id.clone(),
                name: "grep".into(),
                content: "error: no tool named 'grep'".into(),
                is_error: true,
                images: vec![],
            });
            let (r2, _) = call(&c, &req).await;
            let r2 = r2.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!((r2.text.as_str(), &r2.finish), ("All done.", &FinishReason::Stop), "{mode}");
            assert!(r2.tool_calls.is_empty());

            let reqs = server.requests();
            assert_eq!(reqs.len(), 2, "{mode}");
            let results = tool_results(&reqs[1].body);
            let want_err = flavor == Flavor::Anthropic;
            assert_eq!(
                results,
                [
                    (r.tool_calls[0].id.clone(), "1: hello".to_string(), false),
                    (r.tool_calls[1].id.clone(), "error: no tool named 'grep'".to_string(), want_err),
                ],
                "{mode}"
            );
            let b0 = &reqs[0].body;
            assert_eq!(b0["stream"] == true, stream, "{mode}");
            assert_eq!(b0["model"], "test-model");
            let schema = read_file_tool().parameters;
            match flavor {
                Flavor::OpenAi => {
                    assert_eq!(reqs[0].path, "/v1/chat/completions");
                    assert_eq!(b0["messages"][0], json!({"role": "system", "content": "You are a test."}));
                    assert_eq!(b0["tools"][0]["function"]["parameters"], schema);
                    assert_eq!(reqs[0].header("authorization"), Some("Bearer test-key"));
                    let assistant = &reqs[1].body["messages"][2];
                    assert_eq!(assistant["tool_calls"][1]["function"]["arguments"], r#"{"pattern":"x y"}"#);
                }
                Flavor::Ollama => unreachable!("not in FLAVORS"),
                Flavor::Anthropic => {
                    assert_eq!(reqs[0].path, "/v1/messages");
                    assert_eq!(b0["system"], "You are a test.");
                    assert_eq!(b0["tools"][0]["input_schema"], schema);
                    assert_eq!(reqs[0].header("x-api-key"), Some("test-key"));
                    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
                    let msgs = reqs[1].body["messages"].as_array().unwrap();
                    assert_eq!(msgs.len(), 3, "both results in one user message: {msgs:?}");
                    // The thinking block goes back first, with its signature, then text and calls.
                    let blocks = &msgs[1]["content"];
                    assert_eq!(
                        blocks[0],
                        json!({"type": "thinking", "thinking": "I should read the file first.", "signature": "sig"}),
                        "{mode}"
                    );
                    assert_eq!(blocks[2]["input"], json!({"file_path": "a.txt"}));
                }
            }
            let ua = reqs[0].header("user-agent").unwrap_or_default();
            assert!(ua.starts_with("corral/"), "{ua}");
            assert_eq!(server.remaining(), 0);
        }
    }
}

/// Ollama's own API: streamed NDJSON and whole replies, tool calls with object arguments,
/// tool results by name, and the context size asked for in every request.
#[tokio::test]
async fn ollamas_own_api_round_trips_calls_and_sends_the_context_size() {
    for stream in [true, false] {
        let first = Reply::tools(vec![("read_file", r#"{"file_path":"a.txt"}"#)])
            .with_text("Reading.")
            .with_reasoning("first the file");
        let server =
            ModelServer::start(Flavor::Ollama, vec![Step::Reply(first), Step::Reply(Reply::text("Done."))]);
        let c = client(&server, Flavor::Ollama, stream);
        c.use_window(12_288);
        let mut req = request(vec![Message::user("look")]);
        let (r, events) = call(&c, &req).await;
        let r = r.unwrap_or_else(|e| panic!("stream={stream}: {e}"));
        assert_eq!(r.text, "Reading.");
        assert_eq!(r.reasoning.as_ref().map(|x| x.text.as_str()), Some("first the file"));
        assert_eq!(r.finish, FinishReason::ToolCalls);
        let args: Value = serde_json::from_str(&r.tool_calls[0].arguments).unwrap();
        assert_eq!(args, json!({"file_path": "a.txt"}));
        assert!(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, "{:?}", r.usage);
        if stream {
            assert_eq!(streamed_text(&events), "Reading.");
        }
        req.messages.push(r.to_message());
        req.messages.push(Message::Tool {
            call_id: r.tool_calls[0].id.clone(),
            name: "read_file".into(),
            content: "1: hello".into(),
            is_error: false,
            images: vec![],
        });
        let (r2, _) = call(&c, &req).await;
        assert_eq!(r2.unwrap().text, "Done.");
        let reqs = server.requests();
        assert_eq!(reqs[0].path, "/api/chat");
        assert_eq!(reqs[0].body["options"]["num_ctx"], 12_288);
        assert_eq!(reqs[0].body["stream"] == true, stream);
        assert_eq!(reqs[0].header("authorization"), Some("Bearer test-key"));
        let msgs = reqs[1].body["messages"].as_array().unwrap();
        assert_eq!(msgs[2]["tool_calls"][0]["function"]["arguments"], json!({"file_path": "a.txt"}));
        assert_eq!(msgs[3], json!({"role": "tool", "tool_name": "read_file", "content": "1: hello"}));
    }
}

#[tokio::test]
async fn ollamas_window_comes_from_the_model_and_a_cut_stream_is_retried() {
    let server = ModelServer::start(
        Flavor::Ollama,
        vec![Step::CutStream(Reply::text("this will be cut somewhere")), Step::Reply(Reply::text("whole"))],
    );
    server.set_context_window(32_768);
    let c = client(&server, Flavor::Ollama, true);
    assert_eq!(c.context_window().await, Some(32_768), "the Modelfile's num_ctx");
    let (r, events) = call(&c, &request(vec![Message::user("hi")])).await;
    assert_eq!(r.unwrap().text, "whole");
    assert_eq!(retries(&events).len(), 1);
    let fresh = ModelServer::start(Flavor::Ollama, vec![]);
    assert_eq!(client(&fresh, Flavor::Ollama, true).context_window().await, Some(16_384), "the default");
}

#[tokio::test]
async fn malformed_tool_arguments_arrive_as_written() {
    let raw = r#"{"file_path": "hello.txt"#;
    for flavor in FLAVORS {
        let server = ModelServer::start(flavor, vec![Step::Reply(Reply::tool("read_file", raw))]);
        let (r, _) = call(&client(&server, flavor, true), &request(vec![Message::user("go")])).await;
        let r = r.unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].arguments, raw, "{flavor:?}");
    }
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after() {
    for (flavor, stream) in [(Flavor::OpenAi, false), (Flavor::Anthropic, true)] {
        let limited = Step::Status { code: 429, retry_after: Some("1".into()), body: "slow down".into() };
        let server = ModelServer::start(flavor, vec![limited, Step::Reply(Reply::text("ok"))]);
        let (r, events) = call(&client(&server, flavor, stream), &request(vec![Message::user("hi")])).await;
        assert_eq!(r.unwrap().text, "ok");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2);
        let gap = reqs[1].at.duration_since(reqs[0].at);
        assert!(gap >= Duration::from_millis(950), "Retry-After: 1 honoured, not the 10 ms backoff: {gap:?}");
        assert_eq!(retries(&events), [(1, Duration::from_secs(1))]);
    }
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_until_success() {
    let boom =
        || Step::Status { code: 500, retry_after: None, body: r#"{"error":{"message":"boom"}}"#.into() };
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![boom(), boom(), boom(), Step::Reply(Reply::text("recovered"))],
    );
    let (r, events) = call(&client(&server, Flavor::OpenAi, true), &request(vec![Message::user("hi")])).await;
    assert_eq!(r.unwrap().text, "recovered");
    assert_eq!(server.requests().len(), 4);
    let waits = retries(&events);
    assert_eq!(waits.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2, 3]);
    for (n, wait) in waits {
        let nominal = Duration::from_millis(10 * (1 << (n - 1)));
        assert!(wait >= nominal.mul_f64(0.74) && wait <= nominal.mul_f64(1.26), "attempt {n}: {wait:?}");
    }
}

#[tokio::test]
async fn server_errors_give_up_when_the_attempts_run_out() {
    let busy = || Step::Status { code: 503, retry_after: None, body: "upstream overloaded".into() };
    let server = ModelServer::start(Flavor::Anthropic, vec![busy(), busy(), busy()]);
    let c = client_at(&server.url(), Flavor::Anthropic, false, 3);
    let (r, events) = call(&c, &request(vec![Message::user("hi")])).await;
    match r {
        Err(LlmError::Server { status: 503, ref message, attempts: 3 }) => {
            assert!(message.contains("upstream overloaded"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries(&events).len(), 2);
}

#[tokio::test]
async fn a_cut_stream_is_retried_and_its_text_declared_void() {
    let long = "this answer will be cut somewhere in the middle of it";
    for flavor in FLAVORS {
        let server = ModelServer::start(
            flavor,
            vec![Step::CutStream(Reply::text(long)), Step::Reply(Reply::text("whole answer"))],
        );
        let (r, events) = call(&client(&server, flavor, true), &request(vec![Message::user("hi")])).await;
        assert_eq!(r.unwrap().text, "whole answer", "{flavor:?}");
        assert_eq!(server.requests().len(), 2);
        let retry_at = events.iter().position(|e| matches!(e, Event::Retry { .. })).expect("a retry event");
        let void = streamed_text(&events[..retry_at]);
        assert!(!void.is_empty() && long.starts_with(&void) && void != long, "{flavor:?}: {void:?}");
        assert_eq!(streamed_text(&events[retry_at..]), "whole answer");
    }
}

#[tokio::test]
async fn a_truncated_json_reply_is_retried() {
    for flavor in FLAVORS {
        let server = ModelServer::start(
            flavor,
            vec![Step::CutStream(Reply::text("half")), Step::Reply(Reply::text("whole"))],
        );
        let (r, events) = call(&client(&server, flavor, false), &request(vec![Message::user("hi")])).await;
        assert_eq!(r.unwrap().text, "whole", "{flavor:?}");
        assert_eq!(retries(&events).len(), 1);
    }
}

#[tokio::test]
async fn context_overflow_is_reported_at_once_with_the_limit() {
    for flavor in FLAVORS {
        for stream in [true, false] {
            let server = ModelServer::start(flavor, vec![Step::Overflow, Step::Reply(Reply::text("never"))]);
            let (r, events) =
                call(&client(&server, flavor, stream), &request(vec![Message::user("hi")])).await;
            let e = r.unwrap_err();
            assert!(e.is_context_overflow(), "{flavor:?}: {e}");
            assert!(matches!(e, LlmError::ContextOverflow { limit: Some(8192), .. }), "{e:?}");
            assert_eq!(server.requests().len(), 1, "never retried");
            assert!(events.is_empty());
        }
    }
}

#[tokio::test]
async fn bad_credentials_are_not_retried() {
    for flavor in FLAVORS {
        let server = ModelServer::start(
            flavor,
            vec![Step::Status {
                code: 401,
                retry_after: None,
                body: r#"{"error":{"message":"invalid x-api-key"}}"#.into(),
            }],
        );
        let (r, _) = call(&client(&server, flavor, true), &request(vec![Message::user("hi")])).await;
        match r {
            Err(e @ LlmError::Auth { status: 401, .. }) => {
                let text = e.to_string();
                assert!(text.contains("invalid x-api-key") && text.contains("CORRAL_API_KEY"), "{text}");
                if flavor == Flavor::Anthropic {
                    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
                }
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn other_client_errors_carry_the_servers_message() {
    let body = r#"{"error":{"message":"model 'test-model' not found, try pulling it first"}}"#;
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![Step::Status { code: 404, retry_after: None, body: body.into() }],
    );
    let (r, _) = call(&client(&server, Flavor::OpenAi, false), &request(vec![Message::user("hi")])).await;
    match r {
        Err(e @ LlmError::Request { status: 404, .. }) => {
            let text = e.to_string();
            assert!(text.contains("try pulling it first") && text.contains("--model"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn nothing_listening_on_loopback_is_answered_at_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let c = client_at(&url, Flavor::OpenAi, true, 3);
    let (r, events) = call(&c, &request(vec![Message::user("hi")])).await;
    match r {
        Err(e @ LlmError::Transport { attempts: 1, .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("nothing is listening at 127.0.0.1:{port} (connection refused)")),
                "{text}"
            );
            assert!(text.contains("Start the model server") && text.contains("--base-url"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert!(retries(&events).is_empty(), "a refused local connection is not retried");
}

#[tokio::test]
async fn a_dropped_connection_is_retried_with_a_short_cause() {
    // A server that accepts and closes at once: not "refused", so worth retrying.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let closer = std::thread::spawn(move || {
        for _ in 0..3 {
            let (conn, _) = listener.accept().unwrap();
            drop(conn);
        }
    });
    let c = client_at(&url, Flavor::OpenAi, true, 3);
    let (r, events) = call(&c, &request(vec![Message::user("hi")])).await;
    closer.join().unwrap();
    assert!(matches!(r, Err(LlmError::Transport { attempts: 3, .. })), "{r:?}");
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retry { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2);
    for r in reasons {
        assert!(r.contains(&url) && !r.contains("error sending request"), "{r}");
    }
}

#[tokio::test]
async fn a_slow_server_times_out_and_is_retried() {
    let slow = || Step::Delay(Duration::from_secs(3), Box::new(Step::Reply(Reply::text("late"))));
    let server = ModelServer::start(Flavor::OpenAi, vec![slow(), Step::Reply(Reply::text("in time"))]);
    let mut cfg = client(&server, Flavor::OpenAi, true).config().clone();
    cfg.timeout = Duration::from_millis(300);
    let (r, events) = call(&Client::new(cfg).unwrap(), &request(vec![Message::user("hi")])).await;
    // "late" would mean the 3 s reply was awaited instead of timing out at 300 ms.
    assert_eq!(r.unwrap().text, "in time");
    let Some(Event::Retry { reason, .. }) = events.iter().find(|e| matches!(e, Event::Retry { .. })) else {
        panic!("{events:?}")
    };
    assert!(reason.contains("timed out"), "{reason}");
}

#[tokio::test]
async fn the_context_window_comes_from_the_model_list() {
    let server = ModelServer::start(Flavor::OpenAi, vec![]);
    let c = client(&server, Flavor::OpenAi, true);
    assert_eq!(c.context_window().await, None, "not offered");
    server.set_context_window(32768);
    assert_eq!(c.context_window().await, Some(32768));
    assert!(server.requests().is_empty(), "probes are not completions");
    assert_eq!(client(&server, Flavor::Anthropic, true).context_window().await, None);
}

#[tokio::test]
async fn an_exhausted_script_fails_clearly() {
    let server = ModelServer::start(Flavor::OpenAi, vec![]);
    let (r, _) =
        call(&client_at(&server.url(), Flavor::OpenAi, false, 1), &request(vec![Message::user("hi")])).await;
    let e = r.unwrap_err();
    assert!(e.to_string().contains("model server script exhausted"), "{e}");
}

/// The three places a server may report its window are asked at once: a server that answers
/// none until all three requests have come still answers in time, and the first of them in
/// order that names a window (llama.cpp's /props, before LM Studio's) wins.
#[tokio::test]
async fn the_window_probes_go_out_together_and_the_first_in_order_wins() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::{Arc, Condvar, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new((Mutex::new(Vec::<String>::new()), Condvar::new()));
    let answered_after_all = Arc::new(Mutex::new(Vec::<bool>::new()));
    let (seen2, after2) = (seen.clone(), answered_after_all.clone());
    let server = std::thread::spawn(move || {
        let mut handlers = Vec::new();
        // Three connections, then the server stops.
        for conn in listener.incoming().take(3) {
            let Ok(mut conn) = conn else { break };
            let (seen, after) = (seen2.clone(), after2.clone());
            handlers.push(std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap() <= 2 {
                        break;
                    }
                }
                let (lock, cv) = &*seen;
                let mut paths = lock.lock().unwrap();
                paths.push(path.clone());
                cv.notify_all();
                // Holds every answer until all three have come (or a bound far past the
                // probe's own time limit, so a probe asking one at a time fails).
                let (paths, _) =
                    cv.wait_timeout_while(paths, Duration::from_secs(5), |p| p.len() < 3).unwrap();
                after.lock().unwrap().push(paths.len() == 3);
                drop(paths);
                let body = match path.as_str() {
                    "/v1/models" => json!({"data": [{"id": "other-a"}, {"id": "other-b"}]}),
                    "/props" => json!({"default_generation_settings": {"n_ctx": 8192}}),
                    "/api/v0/models/test-model" => json!({"loaded_context_length": 4096}),
                    _ => json!({}),
                }
                .to_string();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(format!("{head}{body}").as_bytes());
            }));
        }
        for h in handlers {
            let _ = h.join();
        }
    });
    let c = client_at(&url, Flavor::OpenAi, true, 1);
    assert_eq!(c.context_window().await, Some(8192), "/props names the window before LM Studio's");
    server.join().unwrap();
    let mut paths = seen.0.lock().unwrap().clone();
    paths.sort();
    assert_eq!(paths, ["/api/v0/models/test-model", "/props", "/v1/models"]);
    assert_eq!(
        *answered_after_all.lock().unwrap(),
        [true, true, true],
        "all three were asked before any answer"
    );
}
