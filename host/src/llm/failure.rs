//! Sorting a failed attempt into "give up" (with the error the user sees) or "try again"
//! (with a reason to show and the wait the server asked for), for HTTP, wire and network errors.

use super::config::ClientConfig;
use super::error::{ErrorBody, LlmError, WireError};
use super::limits;
use super::retry::{self, MAX_RETRY_AFTER, parse_retry_after};
use reqwest::header::HeaderMap;
use std::time::{Duration, SystemTime};

/// How one attempt failed.
pub(super) enum Failure {
    /// Retrying cannot help.
    Fatal(LlmError),
    /// Worth another attempt; `after` is the wait the server asked for.
    Retry { kind: Retry, after: Option<Duration> },
}

/// What went wrong in an attempt worth repeating.
pub(super) enum Retry {
    Status { status: u16, message: String },
    Transport(String),
    Protocol(String),
}

impl Retry {
    /// A few words for the person watching.
    pub fn reason(&self) -> String {
        match self {
            Retry::Status { status: 429, .. } => "the model server is rate-limiting (HTTP 429)".into(),
            Retry::Status { status, message } => {
                format!(
                    "the model server failed (HTTP {status}: {})",
                    crate::termtext::cut_words(message, 120)
                )
            }
            Retry::Transport(m) | Retry::Protocol(m) => crate::termtext::cut_words(m, 200),
        }
    }

    /// The error to report when no attempts are left.
    pub fn into_error(self, attempts: u32) -> LlmError {
        match self {
            Retry::Status { status, message } => LlmError::Server { status, message, attempts },
            Retry::Transport(message) => LlmError::Transport { message, attempts },
            Retry::Protocol(m) => LlmError::Protocol(format!("{m} ({attempts} attempts)")),
        }
    }
}

/// The server being called, for the messages.
pub(super) struct Target<'a> {
    pub cfg: &'a ClientConfig,
    /// The URL requests go to.
    pub endpoint: &'a str,
    /// The output cap the request asked for.
    pub asked: u32,
}

impl Target<'_> {
    /// An HTTP error status, or an error a server reported inside a reply.
    pub fn status(&self, status: u16, body: ErrorBody, after: Option<Duration>) -> Failure {
        if (400..500).contains(&status) && body.is_quota(status) {
            let message = format!("{}{}", body.message, self.account_hint());
            return Failure::Fatal(LlmError::Quota { status, message });
        }
        let cap_text = format!("{} {}", body.message, body.raw);
        if matches!(status, 400 | 413 | 422 | 429) && limits::refused_cap(&cap_text, self.asked).is_some() {
            let (message, asked) = (body.message, self.asked);
            return Failure::Fatal(LlmError::OutputCap { status, message, asked });
        }
        if matches!(status, 400 | 413 | 422) && body.is_overflow() {
            let limit = body.limit();
            return Failure::Fatal(LlmError::ContextOverflow { message: body.message, limit });
        }
        let message = if body.message.is_empty() { "(no message)".to_string() } else { body.message };
        if matches!(status, 401 | 403) {
            let (cfg, sources) = (self.cfg, self.cfg.key_sources());
            let advice = match cfg.api_key {
                Some(_) => {
                    format!("Check the API key (from {sources}) and that it may use model {:?}", cfg.model)
                }
                None => format!("No API key was sent; set one with {sources}"),
            };
            return Failure::Fatal(LlmError::Auth { status, message: format!("{message}. {advice}") });
        }
        if retry::retryable_status(status) {
            return Failure::Retry { kind: Retry::Status { status, message }, after };
        }
        let message = if status == 404 { format!("{message} (at {})", self.endpoint) } else { message };
        Failure::Fatal(LlmError::Request { status, message })
    }

    /// Where the person sees their balance, for the known providers.
    fn account_hint(&self) -> &'static str {
        let url = self.endpoint;
        if url.contains("api.openai.com") {
            " (see platform.openai.com/settings/organization/billing)"
        } else if url.contains("api.anthropic.com") {
            " (see console.anthropic.com/settings/billing)"
        } else if url.contains("openrouter.ai") {
            " (see openrouter.ai/settings/credits)"
        } else {
            ""
        }
    }

    /// A reply that could not be read, or held an error.
    pub fn wire(&self, e: WireError) -> Failure {
        match e {
            WireError::Malformed(m) => Failure::Retry { kind: Retry::Protocol(m), after: None },
            WireError::Remote { status, body } => self.status(status, body, None),
        }
    }

    /// A failure below HTTP, while sending (`reading` false) or reading the reply.
    pub fn transport(&self, e: &reqwest::Error, reading: bool) -> Failure {
        let url = self.endpoint;
        let detail = chain(e);
        if e.is_builder() {
            return Failure::Fatal(LlmError::Config(format!("cannot build a request for {url}: {detail}")));
        }
        if let Some(refused) = self.refused_locally(e) {
            return Failure::Fatal(LlmError::Transport { message: refused, attempts: 1 });
        }
        let running = "check that the model server is running";
        let change = self.where_to_change();
        let message = if e.is_timeout() {
            format!(
                "the request to {url} timed out after {:?}; the model may be slow or the server busy \
                 (raise model.timeout_secs)",
                self.cfg.timeout
            )
        } else if e.is_connect() {
            format!("cannot connect to {url} ({}); {running} and that {change} is right", short_cause(e))
        } else if reading {
            format!("the connection to {url} broke while reading the reply ({}); {running}", short_cause(e))
        } else {
            format!("the request to {url} failed ({}); {running} and that {change} is right", short_cause(e))
        };
        Failure::Retry { kind: Retry::Transport(message), after: None }
    }
}

impl Target<'_> {
    /// Connection refused by this machine: nothing listens there, and retrying for seconds
    /// will not start it. The answer says at once what to start or set.
    pub(super) fn refused_locally(&self, e: &reqwest::Error) -> Option<String> {
        let refused = io_cause(e).is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        let url = reqwest::Url::parse(self.endpoint).ok()?;
        let loopback = match url.host()? {
            url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        };
        if !refused || !loopback {
            return None;
        }
        let at = format!("{}:{}", url.host_str()?, url.port_or_known_default()?);
        let start = match url.port_or_known_default() {
            Some(11434) => "Start Ollama (`ollama serve`)",
            Some(1234) => "Start LM Studio's server (`lms server start`)",
            Some(8080) => "Start llama.cpp's server (`llama-server -m MODEL.gguf`)",
            _ => "Start the model server",
        };
        Some(format!(
            "nothing is listening at {at} (connection refused). {start}, or point corral at the server \
             you use: {}",
            self.where_to_change()
        ))
    }

    /// The setting to change, named where it came from.
    fn where_to_change(&self) -> String {
        match &self.cfg.endpoint_source {
            Some(from) if from.contains("--base-url") => "--base-url".to_string(),
            Some(from) => format!("model.base_url (set in {from})"),
            None => "--base-url (or model.base_url in your settings)".to_string(),
        }
    }
}

/// The operating system's error under a request error, if there is one.
fn io_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a std::io::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cur = c.source();
    }
    None
}

/// The innermost cause of a connection failure ("Connection refused (os error 111)"), not
/// the library's wrapping of it.
fn short_cause(e: &reqwest::Error) -> String {
    match io_cause(e) {
        Some(io) => io.to_string(),
        None => {
            let mut cur: &dyn std::error::Error = e;
            while let Some(next) = cur.source() {
                cur = next;
            }
            cur.to_string()
        }
    }
}

/// The wait a reply's headers ask for: `retry-after-ms` (OpenAI), else `Retry-After`.
pub(super) fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok());
    let ms = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0).min(MAX_RETRY_AFTER));
    }
    get("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// An error with its causes: "error sending request: connection refused".
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let part = c.to_string();
        if !s.contains(&part) {
            s.push_str(": ");
            s.push_str(&part);
        }
        cur = c.source();
    }
    s
}
