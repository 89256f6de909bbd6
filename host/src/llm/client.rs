//! One model call over HTTP: send the request, read the reply (whole or streamed), and
//! retry with backoff, or the server's Retry-After, until it works or the attempts run out.

use super::body::{self, ToolsCache, ToolsField};
use super::config::{ClientConfig, ProviderKind, normalize_url};
use super::error::{ErrorBody, LlmError, WireError, clip};
use super::failure::{Failure, Retry, Target, chain, retry_after};
use super::sse::{SseDecoder, SseEvent};
use super::types::{Event, Request, Response};
use super::{anthropic, limits, ollama, openai};
use futures_util::StreamExt;
use reqwest::header::CONTENT_TYPE;
use std::sync::Arc;
use std::time::Duration;

/// A model client; cheap to clone, safe to share between tasks.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: ClientConfig,
    http: reqwest::Client,
    /// Where completions are posted.
    endpoint: String,
    /// The largest reply cap the server reported (its model list) or accepted after refusing a
    /// larger one; 0 while unknown.
    learned_cap: std::sync::atomic::AtomicU32,
    /// The context window the session budgets for; sent to Ollama as `num_ctx`. 0: unknown.
    window: std::sync::atomic::AtomicU64,
    /// The last tool list, serialized as this provider takes it.
    tools: ToolsCache,
}

impl Client {
    pub fn new(mut cfg: ClientConfig) -> Result<Client, LlmError> {
        cfg.base_url = normalize_url(cfg.kind, &cfg.base_url);
        let endpoint = match cfg.kind {
            ProviderKind::OpenAi => format!("{}/chat/completions", cfg.base_url),
            ProviderKind::Anthropic => format!("{}/v1/messages", cfg.base_url),
            ProviderKind::Ollama => format!("{}/api/chat", cfg.base_url),
        };
        let url = reqwest::Url::parse(&endpoint).map_err(|e| {
            LlmError::Config(format!(
                "the model server URL {:?} is not valid ({e}): pass --base-url like http://127.0.0.1:8080/v1",
                cfg.base_url
            ))
        })?;
        let mut b = reqwest::Client::builder()
            .user_agent(cfg.user_agent.clone())
            // An idle limit, not a total one: a long streamed answer that keeps arriving is fine.
            .read_timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(30)));
        // A model server on this machine is never reached through a proxy.
        if url.host_str().is_some_and(|h| {
            h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()) || h == "[::1]"
        }) {
            b = b.no_proxy();
        }
        let http = b
            .build()
            .map_err(|e| LlmError::Config(format!("cannot set up the HTTP client: {}", chain(&e))))?;
        Ok(Client {
            inner: Arc::new(Inner {
                cfg,
                http,
                endpoint,
                learned_cap: Default::default(),
                window: Default::default(),
                tools: ToolsCache::default(),
            }),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// Whether requests carry the model's earlier reasoning back to it (so it costs
    /// context). Only the provider-specific replay travels back (Anthropic thinking blocks,
    /// DeepSeek `reasoning_content`), and mostly within one tool loop, so it is not counted.
    pub fn replays_reasoning(&self) -> bool {
        false
    }

    /// Whether tool images are sent: as configured, else for Anthropic and for OpenAI-compatible
    /// models of a family known to see images.
    pub fn accepts_images(&self) -> bool {
        let cfg = &self.inner.cfg;
        cfg.images.unwrap_or(cfg.kind == ProviderKind::Anthropic || limits::sees_images(&cfg.model))
    }

    pub(super) fn target(&self, asked: u32) -> Target<'_> {
        Target { cfg: &self.inner.cfg, endpoint: &self.inner.endpoint, asked }
    }

    pub(super) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }

    /// One model call with retries. `on_event` receives streamed text and reasoning as it
    /// arrives, and an [`Event::Retry`] before each wait (text streamed before it is void).
    pub async fn complete(
        &self,
        req: &Request,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, LlmError> {
        let cfg = &self.inner.cfg;
        let mut asked = self.output_cap(req.max_tokens);
        let mut lowered = false;
        loop {
            match self.complete_with(req, asked, on_event).await {
                Err(LlmError::OutputCap { message, asked: refused, .. }) if !lowered => {
                    let named = limits::refused_cap(&message, refused).flatten();
                    let next = named.or_else(|| limits::output_cap(&cfg.model).filter(|n| *n < refused));
                    let next = next.unwrap_or(refused / 2).max(1);
                    on_event(Event::Notice(format!(
                        "the model server refused a reply cap of {refused} tokens; retrying once with {next} \
                         (set --max-output-tokens to choose it)"
                    )));
                    asked = next;
                    lowered = true;
                    self.learn_output_cap(next);
                }
                other => return other,
            }
        }
    }

    /// The reply cap to send: the one asked for, never above what the server reported or
    /// accepted, else what the model family is known to allow.
    fn output_cap(&self, asked: u32) -> u32 {
        let learned = self.inner.learned_cap.load(std::sync::atomic::Ordering::Relaxed);
        let max = if learned > 0 { Some(learned) } else { limits::output_cap(&self.inner.cfg.model) };
        match max {
            Some(max) if asked > max => max,
            _ => asked,
        }
    }

    /// Remembers the largest reply cap the server takes, for every later request.
    pub(super) fn learn_output_cap(&self, cap: u32) {
        if cap > 0 {
            self.inner.learned_cap.store(cap, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The request body with reply cap `cap`.
    #[cfg(test)]
    pub(super) fn body(&self, req: &Request, cap: u32) -> serde_json::Value {
        self.body_with(req, cap, ToolsField::Built)
    }

    fn body_with(&self, req: &Request, cap: u32, tools: ToolsField) -> serde_json::Value {
        let cfg = &self.inner.cfg;
        match cfg.kind {
            ProviderKind::OpenAi => {
                let field = limits::token_param(cfg.token_param.as_deref(), &cfg.base_url, &cfg.model);
                let mut body = openai::request_body(req, &cfg.model, cfg.stream, field, cap, tools);
                openai::add_effort(&mut body, cfg.effort, &cfg.base_url);
                body
            }
            ProviderKind::Anthropic => {
                anthropic::request_body(req, &cfg.model, cfg.stream, cap, cfg.effort, tools)
            }
            ProviderKind::Ollama => {
                let num_ctx = match self.inner.window.load(std::sync::atomic::Ordering::Relaxed) {
                    0 => ollama::DEFAULT_NUM_CTX,
                    n => n,
                };
                ollama::request_body(req, &cfg.model, cfg.stream, cap, num_ctx, cfg.effort, tools)
            }
        }
    }

    /// The bytes sent: [`Client::body`]'s, with the tool list written from its serialized copy.
    pub(super) fn body_bytes(&self, req: &Request, cap: u32) -> Result<Vec<u8>, LlmError> {
        let deferred = self.body_with(req, cap, ToolsField::Deferred);
        let tools = || match self.inner.cfg.kind {
            ProviderKind::OpenAi | ProviderKind::Ollama => openai::function_tools(req),
            ProviderKind::Anthropic => anthropic::tool_list(req),
        };
        body::body_bytes(&deferred, req, &self.inner.tools, tools)
            .map_err(|e| LlmError::Config(format!("cannot write the request body: {e}")))
    }

    /// The context window the session budgets for: Ollama is asked for exactly that much.
    pub fn use_window(&self, window: u64) {
        self.inner.window.store(window, std::sync::atomic::Ordering::Relaxed);
    }

    /// One model call with retries, with reply cap `cap`.
    async fn complete_with(
        &self,
        req: &Request,
        cap: u32,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, LlmError> {
        let cfg = &self.inner.cfg;
        let body = self.body_bytes(req, cap)?;
        let attempts = cfg.retry.attempts.max(1);
        let mut n = 1;
        loop {
            match self.attempt(&body, cap, on_event).await {
                Ok(r) if cfg.truncates_silently => return truncation(req, r),
                Ok(r) => return Ok(r),
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Retry { kind, .. }) if n >= attempts => return Err(kind.into_error(n)),
                Err(Failure::Retry { kind, after }) => {
                    let wait = after.unwrap_or_else(|| cfg.retry.backoff(n));
                    on_event(Event::Retry { attempt: n, wait, reason: kind.reason() });
                    tokio::time::sleep(wait).await;
                    n += 1;
                }
            }
        }
    }

    async fn attempt(
        &self,
        body: &[u8],
        cap: u32,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, Failure> {
        let cfg = &self.inner.cfg;
        let mut rb = self.inner.http.post(&self.inner.endpoint).header(CONTENT_TYPE, "application/json");
        rb = self.auth(rb);
        if cfg.stream {
            rb = rb.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        let resp = rb.body(body.to_vec()).send().await.map_err(|e| self.target(cap).transport(&e, false))?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let after = retry_after(resp.headers());
            let text = resp.text().await.unwrap_or_default();
            return Err(self.target(cap).status(status, ErrorBody::parse(&text), after));
        }
        let ctype =
            resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        if cfg.kind == ProviderKind::Ollama
            && (ctype.contains("ndjson") || cfg.stream && !ctype.contains("json"))
        {
            return self.read_lines(resp, cap, on_event).await;
        }
        if ctype.contains("event-stream") || (cfg.stream && !ctype.contains("json")) {
            return self.read_stream(resp, cap, on_event).await;
        }
        let bytes = resp.bytes().await.map_err(|e| self.target(cap).transport(&e, true))?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| Failure::Retry {
            kind: Retry::Protocol(format!(
                "the reply is not JSON ({e}): {}",
                clip(&String::from_utf8_lossy(&bytes[..bytes.len().min(300)]))
            )),
            after: None,
        })?;
        let parsed = match cfg.kind {
            ProviderKind::OpenAi => openai::parse_response(&v),
            ProviderKind::Anthropic => anthropic::parse_response(&v),
            ProviderKind::Ollama => ollama::parse_response(&v),
        };
        let r = parsed.map_err(|e| self.target(cap).wire(e))?;
        // A whole reply shows its reasoning too, as one piece.
        if let Some(text) = r.reasoning.as_ref().map(|x| x.text.clone()).filter(|t| !t.is_empty()) {
            on_event(Event::Reasoning(text));
        }
        Ok(r)
    }

    /// Adds the credentials and protocol headers.
    pub(super) fn auth(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let cfg = &self.inner.cfg;
        match (cfg.kind, &cfg.api_key) {
            (ProviderKind::OpenAi | ProviderKind::Ollama, Some(k)) => rb.bearer_auth(k),
            (ProviderKind::OpenAi | ProviderKind::Ollama, None) => rb,
            (ProviderKind::Anthropic, key) => {
                let rb = rb.header("anthropic-version", anthropic::API_VERSION);
                match key {
                    Some(k) => rb.header("x-api-key", k),
                    None => rb,
                }
            }
        }
    }

    async fn read_stream(
        &self,
        resp: reqwest::Response,
        cap: u32,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, Failure> {
        let mut bytes = resp.bytes_stream();
        let mut sse = SseDecoder::new();
        let mut dec = match self.inner.cfg.kind {
            ProviderKind::Anthropic => Decoder::Anthropic(anthropic::Stream::new()),
            _ => Decoder::OpenAi(openai::Stream::new()),
        };
        while let Some(chunk) = bytes.next().await {
            let chunk = chunk.map_err(|e| self.target(cap).transport(&e, true))?;
            for ev in sse.feed(&chunk) {
                dec.event(&ev, on_event).map_err(|e| self.target(cap).wire(e))?;
                if dec.done() {
                    return Ok(dec.finish());
                }
            }
        }
        if let Some(ev) = sse.finish() {
            dec.event(&ev, on_event).map_err(|e| self.target(cap).wire(e))?;
        }
        if dec.complete() {
            return Ok(dec.finish());
        }
        Err(self.cut_short())
    }

    /// A stream that ended before its reply did: worth another attempt.
    fn cut_short(&self) -> Failure {
        let message =
            format!("the reply stream from {} ended before the reply was complete", self.inner.endpoint);
        Failure::Retry { kind: Retry::Protocol(message), after: None }
    }

    /// A reply streamed as one JSON object per line (Ollama).
    async fn read_lines(
        &self,
        resp: reqwest::Response,
        cap: u32,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, Failure> {
        let mut bytes = resp.bytes_stream();
        let mut dec = ollama::Stream::new();
        let mut pending: Vec<u8> = Vec::new();
        while let Some(chunk) = bytes.next().await {
            let chunk = chunk.map_err(|e| self.target(cap).transport(&e, true))?;
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                dec.line(&String::from_utf8_lossy(&line), on_event).map_err(|e| self.target(cap).wire(e))?;
                if dec.done() {
                    return Ok(dec.finish());
                }
            }
        }
        dec.line(&String::from_utf8_lossy(&pending), on_event).map_err(|e| self.target(cap).wire(e))?;
        if dec.done() {
            return Ok(dec.finish());
        }
        Err(self.cut_short())
    }
}

/// A reply from a server that truncates silently (Ollama): when it counted far fewer prompt
/// tokens than the request holds, the model saw only the end of the conversation, so this is
/// reported as an overflow at the size it kept (its `num_ctx`) and compaction can run.
fn truncation(req: &Request, r: Response) -> Result<Response, LlmError> {
    let counted = r.usage.input_tokens;
    let estimate = limits::rough_tokens(req);
    if counted == 0 || estimate < 1024 || estimate < counted.saturating_mul(2) {
        return Ok(r);
    }
    Err(LlmError::ContextOverflow {
        message: format!(
            "the server counted {counted} prompt tokens for a request of about {estimate}: it cut the \
             conversation to its context size (Ollama's num_ctx; raise it with OLLAMA_CONTEXT_LENGTH or \
             PARAMETER num_ctx in a Modelfile)"
        ),
        limit: Some(counted),
    })
}

/// The streamed reply of either protocol.
enum Decoder {
    OpenAi(openai::Stream),
    Anthropic(anthropic::Stream),
}

impl Decoder {
    fn event(&mut self, ev: &SseEvent, out: &mut (dyn FnMut(Event) + Send)) -> Result<(), WireError> {
        match self {
            Decoder::OpenAi(s) => s.event(ev, out),
            Decoder::Anthropic(s) => s.event(ev, out),
        }
    }

    fn done(&self) -> bool {
        match self {
            Decoder::OpenAi(s) => s.done(),
            Decoder::Anthropic(s) => s.done(),
        }
    }

    fn complete(&self) -> bool {
        match self {
            Decoder::OpenAi(s) => s.complete(),
            Decoder::Anthropic(s) => s.complete(),
        }
    }

    fn finish(self) -> Response {
        match self {
            Decoder::OpenAi(s) => s.finish(),
            Decoder::Anthropic(s) => s.finish(),
        }
    }
}
