//! A scripted model server for tests: real HTTP/1.1 on 127.0.0.1 answering completion requests
//! from a script (replies, error statuses, cut streams, overflows, delays), OpenAI, Anthropic
//! or Ollama's own API.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The wire format the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    OpenAi,
    Anthropic,
    /// Ollama's /api/chat (NDJSON streams) and /api/show.
    Ollama,
}

/// One model reply: text, optional reasoning, and tool calls as (name, raw arguments text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<(String, String)>,
}

impl Reply {
    pub fn text(t: impl Into<String>) -> Reply {
        Reply { text: t.into(), ..Reply::default() }
    }

    /// One tool call; `args` is sent as given, so it may be malformed on purpose.
    pub fn tool(name: &str, args: &str) -> Reply {
        Reply { tool_calls: vec![(name.to_string(), args.to_string())], ..Reply::default() }
    }

    pub fn tools(calls: Vec<(&str, &str)>) -> Reply {
        let tool_calls = calls.into_iter().map(|(n, a)| (n.to_string(), a.to_string())).collect();
        Reply { tool_calls, ..Reply::default() }
    }

    pub fn with_text(mut self, t: impl Into<String>) -> Reply {
        self.text = t.into();
        self
    }

    pub fn with_reasoning(mut self, r: impl Into<String>) -> Reply {
        self.reasoning = Some(r.into());
        self
    }
}

/// What the server does with the next completion request.
#[derive(Debug, Clone)]
pub enum Step {
    /// Answered as JSON or SSE according to the request's "stream" field.
    Reply(Reply),
    /// An error status with an optional Retry-After header and a body (JSON or text).
    Status { code: u16, retry_after: Option<String>, body: String },
    /// About half of the reply's events (at least one text delta), then the connection closes
    /// without the terminal event; a non-streamed request gets half a JSON body.
    CutStream(Reply),
    /// The flavor's real context-overflow error (limit 8192).
    Overflow,
    /// A real server's context-overflow error naming the window `limit` and the prompt size
    /// `prompt` it counted (llama.cpp's names them in extra fields only).
    OverflowAs { server: OverflowServer, limit: u64, prompt: u64 },
    /// Waits, then does the inner step.
    Delay(Duration, Box<Step>),
    /// A recorded reply body sent as it is, whatever the request asked: SSE when it starts
    /// with "data:", "event:" or an SSE comment, else a JSON body (see tests/data/providers/).
    Recorded(String),
}

/// Whose overflow error to send, with its exact body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverflowServer {
    /// OpenAI: 400, `context_length_exceeded`, "This model's maximum context length is N tokens".
    OpenAi,
    /// Anthropic: 400, `invalid_request_error`, "prompt is too long: N tokens > M maximum".
    Anthropic,
    /// vLLM's OpenAI-compatible server: 400, "... (N in the messages, M in the completion)".
    Vllm,
    /// llama.cpp's server: 400, `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`.
    LlamaCpp,
}

impl OverflowServer {
    /// The error body this server sends.
    pub fn body(self, limit: u64, prompt: u64) -> Value {
        match self {
            OverflowServer::OpenAi => json!({"error": {
                "message": format!("This model's maximum context length is {limit} tokens. However, your messages \
                                    resulted in {prompt} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
            }}),
            OverflowServer::Anthropic => json!({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": format!("prompt is too long: {prompt} tokens > {limit} maximum"),
            }}),
            OverflowServer::Vllm => json!({
                "object": "error",
                "message": format!("This model's maximum context length is {limit} tokens. However, you requested \
                                    {} tokens ({prompt} in the messages, 1000 in the completion). Please reduce the \
                                    length of the messages or completion.", prompt + 1000),
                "type": "BadRequestError", "param": null, "code": 400,
            }),
            OverflowServer::LlamaCpp => json!({"error": {
                "code": 400, "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": limit,
            }}),
        }
    }
}

/// The start of the system prompt of corral's summary requests (recaps, checkpoint summaries
/// and their merges); requests that start so are answered from the summary script.
pub const SUMMARY_SYSTEM_PREFIXES: [&str; 2] = ["You write short factual recaps", "You merge recaps"];

/// A completion request as received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The JSON body, Null when empty or not JSON.
    pub body: Value,
    /// When the request had been read (before its body was parsed).
    pub at: Instant,
    /// When the server had written, flushed and closed its whole answer to this request;
    /// None while it is still answering, or if writing failed.
    pub replied: Option<Instant>,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Step>,
    /// Steps for summary requests, when set; see [`ModelServer::set_summaries`].
    summaries: Option<VecDeque<Step>>,
    requests: Vec<Captured>,
    summary_requests: Vec<Captured>,
    window: Option<u64>,
    /// The reply cap the model list reports, OpenRouter's way (see [`ModelServer::set_output_cap`]).
    output_cap: Option<u64>,
    /// The window the server enforces, when set (see [`ModelServer::enforce_window`]).
    enforce: Option<u64>,
    /// Scripts chosen by the first user message (see [`ModelServer::set_routes`]).
    routes: Vec<(String, VecDeque<Step>)>,
    /// The requests answered from a route, with its key, in arrival order.
    routed: Vec<(String, Captured)>,
}

/// What a request costs on a window-enforcing server: a quarter of the characters of its
/// system prompt, messages and tool schemas as JSON (deliberately not corral's tokenizer).
pub fn prompt_tokens(body: &Value) -> u64 {
    let part = |k: &str| body.get(k).map_or(0, |v| v.to_string().len());
    ((part("system") + part("messages") + part("tools")) / 4) as u64
}

/// The text of the first user message of a request, in either wire format.
pub fn first_user_text(body: &Value) -> String {
    let Some(m) = body["messages"].as_array().into_iter().flatten().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The reply cap a request asked for.
pub fn max_tokens(body: &Value) -> u64 {
    body["max_tokens"].as_u64().or_else(|| body["max_completion_tokens"].as_u64()).unwrap_or(0)
}

/// Whether a request offered tools.
pub fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// What a window-enforcing server answers to a request without tools: text, as a real model
/// does when it has no tools to call.
pub const TOOLLESS_REPLY: &str = "I cannot use any tools in this turn, so here is my answer in words.";

/// The system prompt of a request body in either wire format.
pub fn system_of(body: &Value) -> String {
    match body.get("system") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None if body["messages"][0]["role"] == "system" => {
            body["messages"][0]["content"].as_str().unwrap_or_default().to_string()
        }
        None => String::new(),
    }
}

struct Shared {
    flavor: Flavor,
    state: Mutex<State>,
    /// Notified whenever a request is captured.
    arrived: Condvar,
    stop: AtomicBool,
    next_id: AtomicU64,
}

/// The running server; stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl ModelServer {
    pub fn start(flavor: Flavor, script: Vec<Step>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
        let addr = listener.local_addr().expect("model server address");
        let shared = Arc::new(Shared {
            flavor,
            state: Mutex::new(State { script: script.into(), ..State::default() }),
            arrived: Condvar::new(),
            stop: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
        });
        let s = shared.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(&s, conn);
                });
            }
        });
        ModelServer { addr, shared, accept: Some(accept) }
    }

    /// "http://127.0.0.1:PORT", without "/v1".
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The completion requests received so far, in order.
    pub fn requests(&self) -> Vec<Captured> {
        self.state().requests.clone()
    }

    /// Blocks until `n` completion requests have arrived and returns them; fails the test
    /// when they have not come within a minute and a half (a hang guard, not a timing claim).
    pub fn wait_for_requests(&self, n: usize) -> Vec<Captured> {
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut st = self.state();
        while st.requests.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "{} of {n} requests came", st.requests.len());
            st = self.shared.arrived.wait_timeout(st, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        st.requests.clone()
    }

    /// Makes GET /v1/models report this context length for "test-model".
    pub fn set_context_window(&self, n: u64) {
        self.state().window = Some(n);
    }

    /// Makes GET /v1/models report this largest reply for "test-model", as OpenRouter does
    /// (`top_provider.max_completion_tokens`).
    pub fn set_output_cap(&self, n: u64) {
        self.state().output_cap = Some(n);
    }

    /// Answers corral's summary requests (system prompt starting with one of
    /// [`SUMMARY_SYSTEM_PREFIXES`]) from `steps` instead of the main script; once they are
    /// used up, summary requests get a 400 error (which corral does not retry).
    pub fn set_summaries(&self, steps: Vec<Step>) {
        self.state().summaries = Some(steps.into());
    }

    /// Enforces a context window of `n` tokens as real servers do, counting with
    /// [`prompt_tokens`]: a request whose prompt and reply cap exceed it gets vLLM's overflow
    /// error (the script is not consumed); a main request without tools is answered in text
    /// ([`TOOLLESS_REPLY`]); usage figures report that count.
    pub fn enforce_window(&self, n: u64) {
        let mut st = self.state();
        st.enforce = Some(n);
        st.window = Some(n);
    }

    /// Answers a request whose first user message contains a route's key from that route's
    /// steps instead of the main script (for sub-agents started in parallel, whose requests
    /// arrive in no fixed order); once a route's steps are used up, its requests get a 500.
    pub fn set_routes(&self, routes: Vec<(&str, Vec<Step>)>) {
        self.state().routes = routes.into_iter().map(|(k, s)| (k.to_string(), s.into())).collect();
    }

    /// The requests answered from the route `key`, in arrival order.
    pub fn routed_requests(&self, key: &str) -> Vec<Captured> {
        self.state().routed.iter().filter(|(k, _)| k == key).map(|(_, c)| c.clone()).collect()
    }

    /// The summary requests received so far, in order.
    pub fn summary_requests(&self) -> Vec<Captured> {
        self.state().summary_requests.clone()
    }

    /// Script steps not used yet.
    pub fn remaining(&self) -> usize {
        self.state().script.len()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Answers one request on `conn`, then closes it.
fn serve(shared: &Shared, mut conn: TcpStream) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let Some(req) = read_request(&conn)? else { return Ok(()) };
    let completion = match shared.flavor {
        Flavor::OpenAi => "/v1/chat/completions",
        Flavor::Anthropic => "/v1/messages",
        Flavor::Ollama => "/api/chat",
    };
    if shared.flavor == Flavor::Ollama && req.method == "POST" && req.path == "/api/show" {
        let window = shared.state.lock().unwrap_or_else(|p| p.into_inner()).window;
        let body = json!({
            "parameters": window.map(|n| format!("num_ctx {n}")).unwrap_or_default(),
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
        });
        return respond(&mut conn, 200, &[], body.to_string().as_bytes());
    }
    if req.method == "GET" && req.path == "/v1/models" {
        let (window, cap) = {
            let st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            (st.window, st.output_cap)
        };
        let mut entry = json!({"id": "test-model", "object": "model"});
        if let Some(n) = window {
            entry["context_length"] = json!(n);
        }
        if let Some(n) = cap {
            entry["top_provider"] = json!({"max_completion_tokens": n});
        }
        return respond(
            &mut conn,
            200,
            &[],
            json!({"object": "list", "data": [entry]}).to_string().as_bytes(),
        );
    }
    if req.method != "POST" || req.path != completion {
        let body = json!({"error": {"message": format!("no route for {} {}", req.method, req.path)}});
        return respond(&mut conn, 404, &[], body.to_string().as_bytes());
    }
    let is_summary = {
        let sys = system_of(&req.body);
        SUMMARY_SYSTEM_PREFIXES.iter().any(|p| sys.starts_with(p))
    };
    let enforce = shared.state.lock().unwrap_or_else(|p| p.into_inner()).enforce;
    if let Some(window) = enforce {
        let prompt = prompt_tokens(&req.body);
        let over = prompt + max_tokens(&req.body) > window;
        if over || (!is_summary && !has_tools(&req.body)) {
            let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            if is_summary {
                st.summary_requests.push(req.clone());
            } else {
                st.requests.push(req.clone());
            }
            drop(st);
            shared.arrived.notify_all();
            let step = if over {
                Step::OverflowAs { server: OverflowServer::Vllm, limit: window, prompt }
            } else {
                Step::Reply(Reply::text(TOOLLESS_REPLY))
            };
            return run(shared, &mut conn, &req, step);
        }
    }
    let routed = {
        let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        if is_summary && let Some(q) = st.summaries.as_mut() {
            let step = q.pop_front();
            st.summary_requests.push(req.clone());
            Some(step)
        } else {
            None
        }
    };
    if let Some(step) = routed {
        return match step {
            Some(step) => run(shared, &mut conn, &req, step),
            None => respond(&mut conn, 400, &[], br#"{"error":{"message":"no summary scripted"}}"#),
        };
    }
    let route = {
        let first = first_user_text(&req.body);
        let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        let hit = st.routes.iter().position(|(k, _)| first.contains(k.as_str()));
        hit.map(|i| {
            let key = st.routes[i].0.clone();
            st.routed.push((key, req.clone()));
            st.routes[i].1.pop_front()
        })
    };
    if let Some(step) = route {
        return match step {
            Some(step) => run(shared, &mut conn, &req, step),
            None => respond(&mut conn, 500, &[], b"model server route exhausted"),
        };
    }
    let (index, step) = {
        let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        st.requests.push(req.clone());
        shared.arrived.notify_all();
        (st.requests.len() - 1, st.script.pop_front())
    };
    let answered = match step {
        Some(step) => run(shared, &mut conn, &req, step),
        None => respond(&mut conn, 500, &[], b"model server script exhausted"),
    };
    if answered.is_ok() {
        let done = Instant::now();
        shared.state.lock().unwrap_or_else(|p| p.into_inner()).requests[index].replied = Some(done);
    }
    answered
}

fn run(shared: &Shared, conn: &mut TcpStream, req: &Captured, step: Step) -> std::io::Result<()> {
    let stream = req.body["stream"] == true;
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let model = req.body["model"].as_str().unwrap_or("test-model").to_string();
    let enforced = shared.state.lock().unwrap_or_else(|p| p.into_inner()).enforce.is_some();
    let prompt_tokens =
        if enforced { prompt_tokens(&req.body) } else { (req.body.to_string().len() / 4) as u64 };
    let wire = Wire { flavor: shared.flavor, id, model, prompt_tokens };
    match step {
        Step::Reply(r) if stream => {
            start_stream(conn, shared.flavor)?;
            for e in wire.events(&r).0 {
                conn.write_all(e.as_bytes())?;
                conn.flush()?;
            }
            conn.shutdown(Shutdown::Both)
        }
        Step::Reply(r) => respond(conn, 200, &[], wire.body(&r).to_string().as_bytes()),
        Step::Status { code, retry_after, body } => {
            let headers: Vec<(&str, String)> = retry_after.into_iter().map(|v| ("Retry-After", v)).collect();
            respond(conn, code, &headers, body.as_bytes())
        }
        Step::CutStream(r) if stream => {
            let (events, first_text, finish_at) = wire.events(&r);
            let cut = (events.len() / 2).max(first_text.map_or(0, |i| i + 1)).min(finish_at);
            start_stream(conn, shared.flavor)?;
            for e in &events[..cut] {
                conn.write_all(e.as_bytes())?;
                conn.flush()?;
            }
            // Half a line of the next event, as when a connection dies mid-write.
            conn.write_all(b"data: {\"choi")?;
            conn.flush()?;
            conn.shutdown(Shutdown::Both)
        }
        Step::CutStream(r) => {
            let body = wire.body(&r).to_string();
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            conn.write_all(head.as_bytes())?;
            conn.write_all(&body.as_bytes()[..body.len() / 2])?;
            conn.flush()?;
            conn.shutdown(Shutdown::Both)
        }
        Step::Overflow => {
            let body = match shared.flavor {
                Flavor::OpenAi => json!({"error": {
                    "message": "This model's maximum context length is 8192 tokens. However, your messages \
                                resulted in 9000 tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
                }}),
                Flavor::Anthropic => json!({"type": "error", "error": {
                    "type": "invalid_request_error", "message": "prompt is too long: 9000 tokens > 8192 maximum",
                }}),
                Flavor::Ollama => json!({"error": "the input length exceeds the context length"}),
            };
            respond(conn, 400, &[], body.to_string().as_bytes())
        }
        Step::OverflowAs { server, limit, prompt } => {
            respond(conn, 400, &[], server.body(limit, prompt).to_string().as_bytes())
        }
        Step::Delay(d, inner) => {
            std::thread::sleep(d);
            run(shared, conn, req, *inner)
        }
        Step::Recorded(body) => {
            let t = body.trim_start();
            if t.starts_with("data:") || t.starts_with("event:") || t.starts_with(':') {
                start_sse(conn)?;
                conn.write_all(body.as_bytes())?;
                conn.flush()?;
                conn.shutdown(Shutdown::Both)
            } else {
                respond(conn, 200, &[], body.as_bytes())
            }
        }
    }
}

/// Reads one request: line, headers, Content-Length body. None if the peer just closed.
fn read_request(conn: &TcpStream) -> std::io::Result<Option<Captured>> {
    let mut r = BufReader::new(conn);
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    // Arrived once its last byte is read: parsing it is the server's own work (0.1-0.2 ms for
    // an agent's request with its tool list), which the bench would otherwise count as corral's.
    let at = Instant::now();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(Some(Captured { method, path, headers, body, at, replied: None }))
}

fn respond(conn: &mut TcpStream, code: u16, headers: &[(&str, String)], body: &[u8]) -> std::io::Result<()> {
    let ctype = if serde_json::from_slice::<Value>(body).is_ok() { "application/json" } else { "text/plain" };
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(code),
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    conn.write_all(body)?;
    conn.flush()?;
    conn.shutdown(Shutdown::Both)
}

/// The head of a streamed reply: SSE, or NDJSON for Ollama.
fn start_stream(conn: &mut TcpStream, flavor: Flavor) -> std::io::Result<()> {
    if flavor != Flavor::Ollama {
        return start_sse(conn);
    }
    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n";
    conn.write_all(head.as_bytes())?;
    conn.flush()
}

fn start_sse(conn: &mut TcpStream) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    conn.write_all(head.as_bytes())?;
    conn.flush()
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Splits `s` into a few pieces on char boundaries (one piece per ~4 chars, at most 6).
fn pieces(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(6).max(4);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// How one reply is written in the server's flavor.
struct Wire {
    flavor: Flavor,
    id: u64,
    model: String,
    prompt_tokens: u64,
}

impl Wire {
    fn call_id(&self, i: usize) -> String {
        match self.flavor {
            Flavor::OpenAi => format!("call_{}_{i}", self.id),
            Flavor::Anthropic => format!("toolu_{}_{i}", self.id),
            Flavor::Ollama => String::new(),
        }
    }

    fn output_tokens(r: &Reply) -> u64 {
        let args: usize = r.tool_calls.iter().map(|(n, a)| n.len() + a.len()).sum();
        ((r.text.len() + r.reasoning.as_deref().map_or(0, str::len) + args) / 4 + 1) as u64
    }

    /// The whole JSON reply.
    fn body(&self, r: &Reply) -> Value {
        let out = Self::output_tokens(r);
        match self.flavor {
            Flavor::OpenAi => {
                let calls: Vec<Value> = (r.tool_calls.iter().enumerate())
                    .map(|(i, (n, a))| json!({"id": self.call_id(i), "type": "function", "function": {"name": n, "arguments": a}}))
                    .collect();
                let mut msg = json!({"role": "assistant", "content": r.text});
                if let Some(re) = &r.reasoning {
                    msg["reasoning_content"] = json!(re);
                }
                if !calls.is_empty() {
                    msg["tool_calls"] = Value::Array(calls);
                }
                let finish = if r.tool_calls.is_empty() { "stop" } else { "tool_calls" };
                json!({
                    "id": format!("chatcmpl-{}", self.id), "object": "chat.completion", "created": 0,
                    "model": self.model,
                    "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                    "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": out,
                              "total_tokens": self.prompt_tokens + out},
                })
            }
            Flavor::Anthropic => {
                let mut content = Vec::new();
                if let Some(re) = &r.reasoning {
                    content.push(json!({"type": "thinking", "thinking": re, "signature": "sig"}));
                }
                if !r.text.is_empty() {
                    content.push(json!({"type": "text", "text": r.text}));
                }
                for (i, (n, a)) in r.tool_calls.iter().enumerate() {
                    let input = serde_json::from_str::<Value>(a).unwrap_or_else(|_| Value::String(a.clone()));
                    content
                        .push(json!({"type": "tool_use", "id": self.call_id(i), "name": n, "input": input}));
                }
                json!({
                    "id": format!("msg_{}", self.id), "type": "message", "role": "assistant",
                    "model": self.model, "content": content,
                    "stop_reason": if r.tool_calls.is_empty() { "end_turn" } else { "tool_use" },
                    "stop_sequence": null,
                    "usage": {"input_tokens": self.prompt_tokens, "output_tokens": out},
                })
            }
            Flavor::Ollama => {
                let mut v = self.ollama_line(self.ollama_message(&r.text, r.reasoning.as_deref(), r), true);
                v["eval_count"] = json!(out);
                v
            }
        }
    }

    /// Ollama's assistant message: text, thinking, and tool calls with object arguments.
    fn ollama_message(&self, text: &str, thinking: Option<&str>, r: &Reply) -> Value {
        let mut msg = json!({"role": "assistant", "content": text});
        if let Some(t) = thinking {
            msg["thinking"] = json!(t);
        }
        let calls: Vec<Value> = r
            .tool_calls
            .iter()
            .map(|(n, a)| {
                let args = serde_json::from_str::<Value>(a).unwrap_or_else(|_| Value::String(a.clone()));
                json!({"function": {"name": n, "arguments": args}})
            })
            .collect();
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        msg
    }

    /// One Ollama line; the last one carries the reason and the counts.
    fn ollama_line(&self, message: Value, done: bool) -> Value {
        let mut v = json!({"model": self.model, "created_at": "2025-06-01T10:00:00Z", "message": message, "done": done});
        if done {
            v["done_reason"] = json!("stop");
            v["prompt_eval_count"] = json!(self.prompt_tokens);
        }
        v
    }

    fn ollama_events(&self, r: &Reply) -> (Vec<String>, Option<usize>, usize) {
        let none = Reply::default();
        let line = |v: Value| format!("{v}\n");
        let mut ev = Vec::new();
        for p in pieces(r.reasoning.as_deref().unwrap_or_default()) {
            ev.push(line(self.ollama_line(self.ollama_message("", Some(&p), &none), false)));
        }
        let mut first_text = None;
        for p in pieces(&r.text) {
            first_text.get_or_insert(ev.len());
            ev.push(line(self.ollama_line(self.ollama_message(&p, None, &none), false)));
        }
        // Ollama sends a reply's tool calls whole, in one line.
        if !r.tool_calls.is_empty() {
            let calls_only = Reply { tool_calls: r.tool_calls.clone(), ..Reply::default() };
            ev.push(line(self.ollama_line(self.ollama_message("", None, &calls_only), false)));
        }
        let finish_at = ev.len();
        let mut last = self.ollama_line(self.ollama_message("", None, &none), true);
        last["eval_count"] = json!(Self::output_tokens(r));
        ev.push(line(last));
        (ev, first_text, finish_at)
    }

    /// The SSE events of a streamed reply, the index of the first text delta, and the index
    /// of the first event that ends the reply.
    fn events(&self, r: &Reply) -> (Vec<String>, Option<usize>, usize) {
        match self.flavor {
            Flavor::OpenAi => self.openai_events(r),
            Flavor::Anthropic => self.anthropic_events(r),
            Flavor::Ollama => self.ollama_events(r),
        }
    }

    fn openai_events(&self, r: &Reply) -> (Vec<String>, Option<usize>, usize) {
        let chunk = |delta: Value, finish: Value| {
            let c = json!({
                "id": format!("chatcmpl-{}", self.id), "object": "chat.completion.chunk", "created": 0,
                "model": self.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            });
            format!("data: {c}\n\n")
        };
        let mut ev = vec![": the test model is thinking\n\n".to_string()];
        ev.push(chunk(json!({"role": "assistant", "content": ""}), Value::Null));
        for p in pieces(r.reasoning.as_deref().unwrap_or_default()) {
            ev.push(chunk(json!({"reasoning_content": p}), Value::Null));
        }
        let mut first_text = None;
        for p in pieces(&r.text) {
            first_text.get_or_insert(ev.len());
            ev.push(chunk(json!({"content": p}), Value::Null));
        }
        for (i, (name, args)) in r.tool_calls.iter().enumerate() {
            let start = json!({"index": i, "id": self.call_id(i), "type": "function",
                               "function": {"name": name, "arguments": ""}});
            ev.push(chunk(json!({"tool_calls": [start]}), Value::Null));
            for p in pieces(args) {
                ev.push(chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                    Value::Null,
                ));
            }
        }
        let finish_at = ev.len();
        let finish = if r.tool_calls.is_empty() { "stop" } else { "tool_calls" };
        ev.push(chunk(json!({}), json!(finish)));
        let out = Self::output_tokens(r);
        let usage = json!({
            "id": format!("chatcmpl-{}", self.id), "object": "chat.completion.chunk", "created": 0,
            "model": self.model, "choices": [],
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": out,
                      "total_tokens": self.prompt_tokens + out},
        });
        ev.push(format!("data: {usage}\n\n"));
        ev.push("data: [DONE]\n\n".to_string());
        (ev, first_text, finish_at)
    }

    fn anthropic_events(&self, r: &Reply) -> (Vec<String>, Option<usize>, usize) {
        let event = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap_or("message"));
        let mut ev = vec![event(json!({"type": "message_start", "message": {
            "id": format!("msg_{}", self.id), "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": 1},
        }}))];
        ev.push(event(json!({"type": "ping"})));
        let mut index = 0;
        let mut block = |ev: &mut Vec<String>, start: Value, deltas: Vec<Value>| -> usize {
            ev.push(event(json!({"type": "content_block_start", "index": index, "content_block": start})));
            let first = ev.len();
            for d in deltas {
                ev.push(event(json!({"type": "content_block_delta", "index": index, "delta": d})));
            }
            ev.push(event(json!({"type": "content_block_stop", "index": index})));
            index += 1;
            first
        };
        if let Some(re) = &r.reasoning {
            let mut d: Vec<Value> =
                pieces(re).into_iter().map(|p| json!({"type": "thinking_delta", "thinking": p})).collect();
            d.push(json!({"type": "signature_delta", "signature": "sig"}));
            block(&mut ev, json!({"type": "thinking", "thinking": ""}), d);
        }
        let mut first_text = None;
        if !r.text.is_empty() {
            let d = pieces(&r.text).into_iter().map(|p| json!({"type": "text_delta", "text": p})).collect();
            first_text = Some(block(&mut ev, json!({"type": "text", "text": ""}), d));
        }
        for (i, (name, args)) in r.tool_calls.iter().enumerate() {
            let start = json!({"type": "tool_use", "id": self.call_id(i), "name": name, "input": {}});
            let d = pieces(args)
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect();
            block(&mut ev, start, d);
        }
        let finish_at = ev.len();
        let stop = if r.tool_calls.is_empty() { "end_turn" } else { "tool_use" };
        ev.push(event(
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                              "usage": {"output_tokens": Self::output_tokens(r)}}),
        ));
        ev.push(event(json!({"type": "message_stop"})));
        (ev, first_text, finish_at)
    }
}
