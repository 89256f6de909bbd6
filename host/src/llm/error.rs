//! What can go wrong in a model call, each with advice for the user; and the reading of a
//! provider's error body: its message, whether it means "context overflow", and the real limit.

use thiserror::Error;

/// A failed model call. Every message says what to do next.
#[derive(Debug, Error)]
pub enum LlmError {
    #[error(
        "the conversation no longer fits the model's context window{}: {message}. \
         Compact or shorten the conversation, or use a model with a larger context",
        limit.map(|n| format!(" ({n} tokens)")).unwrap_or_default()
    )]
    ContextOverflow { message: String, limit: Option<u64> },

    #[error("the model server refused the credentials (HTTP {status}): {message}")]
    Auth { status: u16, message: String },

    #[error(
        "the model provider refused the request for quota or billing (HTTP {status}): {message}. \
         This is not a rate limit and waiting will not help: add credit or raise the quota in the \
         provider account, or use another key (--api-key) or provider"
    )]
    Quota { status: u16, message: String },

    #[error(
        "the model server refused the reply cap of {asked} tokens as too large (HTTP {status}): {message}. \
         Set a smaller cap with --max-output-tokens (model.max_output_tokens)"
    )]
    OutputCap { status: u16, message: String, asked: u32 },

    #[error(
        "the model server rejected the request (HTTP {status}): {message}. \
         Check the model name (--model) and the endpoint (--base-url, --provider)"
    )]
    Request { status: u16, message: String },

    #[error(
        "the model server kept failing (HTTP {status}, {attempts} attempts): {message}. \
         It may be overloaded or rate-limited; wait a little and try again"
    )]
    Server { status: u16, message: String, attempts: u32 },

    #[error("cannot get a reply from the model server{}: {message}", tries(*attempts))]
    Transport { message: String, attempts: u32 },

    #[error(
        "the model server's reply cannot be read: {0}. Check that --base-url points to an \
         OpenAI-compatible or Anthropic endpoint and that --provider matches it"
    )]
    Protocol(String),

    #[error("{0}")]
    Config(String),
}

impl LlmError {
    /// The request is larger than the model's context window; compacting may help.
    pub fn is_context_overflow(&self) -> bool {
        matches!(self, LlmError::ContextOverflow { .. })
    }
}

/// The useful parts of a provider's error body, whatever its shape: OpenAI and vLLM
/// (`error.message`, `error.code`), Anthropic (`error.type`), llama.cpp, Ollama (`error` text).
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct ErrorBody {
    pub message: String,
    /// `error.code` or `error.type` where given (e.g. "context_length_exceeded").
    pub code: String,
    /// The whole body, for the texts some servers put outside `message`.
    pub raw: String,
}

/// The longest provider message kept in an error.
const MAX_MESSAGE: usize = 600;

impl ErrorBody {
    pub fn parse(body: &str) -> ErrorBody {
        let raw = body.to_string();
        let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
            return ErrorBody { message: clip(body), code: String::new(), raw };
        };
        Self::from_json(&v, raw)
    }

    pub fn from_json(v: &serde_json::Value, raw: String) -> ErrorBody {
        // Gemini's OpenAI-compatible endpoint wraps its error in a one-element list.
        let v = v.as_array().and_then(|a| a.first()).unwrap_or(v);
        let err = v.get("error").unwrap_or(v);
        let message = match err {
            serde_json::Value::String(s) => s.clone(),
            _ => err
                .get("message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| raw.clone()),
        };
        let text = |k: &str| err.get(k).and_then(|c| c.as_str()).map(str::to_string);
        let code = text("code").or_else(|| text("type")).unwrap_or_default();
        ErrorBody { message: clip(&message), code, raw }
    }

    /// Whether this error says the prompt does not fit the model's context.
    pub fn is_overflow(&self) -> bool {
        const CODES: [&str; 3] =
            ["context_length_exceeded", "exceed_context_size_error", "request_too_large"];
        const TEXTS: [&str; 14] = [
            "prompt is too long",
            "maximum prompt length",
            "input token count",
            "maximum number of tokens allowed",
            "maximum model length",
            "reduce the length of the messages",
            "context length",
            "context window",
            "context size",
            "maximum context",
            "too many tokens",
            "input is too long",
            "n_ctx",
            "exceeds the available context",
        ];
        let code = self.code.to_ascii_lowercase();
        let all = format!("{} {}", self.message, self.raw).to_ascii_lowercase();
        CODES.iter().any(|c| code == *c || all.contains(c)) || TEXTS.iter().any(|t| all.contains(t))
    }

    /// Whether this error is about money or quota rather than speed: OpenAI's
    /// `insufficient_quota`, HTTP 402, or a billing text without a "retry in" hint.
    pub fn is_quota(&self, status: u16) -> bool {
        const CODES: [&str; 4] =
            ["insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "payment_required"];
        let code = self.code.to_ascii_lowercase();
        let all = format!("{} {}", self.message, self.raw).to_ascii_lowercase();
        if status == 402 || CODES.iter().any(|c| code == *c || all.contains(c)) {
            return true;
        }
        let money = ["billing", "insufficient credits", "insufficient balance", "credit balance is too low"];
        money.iter().any(|t| all.contains(t)) && !all.contains("retrydelay") && !all.contains("retry in")
    }

    /// The context limit the server names, if it names one.
    pub fn limit(&self) -> Option<u64> {
        context_limit(&self.message).or_else(|| context_limit(&self.raw))
    }
}

/// Finds the context limit in an overflow text: "maximum context length is 8192 tokens",
/// "210000 tokens > 200000 maximum", "exceeds the context window of N", "n_ctx = N",
/// "\"n_ctx\": N", "context size (N tokens)", "context length of only N".
pub(super) fn context_limit(text: &str) -> Option<u64> {
    const MARKERS: [&str; 14] = [
        "maximum context length is",
        "too large for model with",
        "maximum prompt length is",
        "maximum number of tokens allowed (",
        "maximum model length of",
        "tokens >",
        "context window of",
        "context window is",
        "n_ctx\":",
        "n_ctx =",
        "n_ctx:",
        "context size (",
        "context length of only",
        "context length of",
    ];
    let lower = text.to_ascii_lowercase();
    MARKERS.iter().find_map(|m| {
        let at = lower.find(m)? + m.len();
        number_at(&lower[at..])
    })
}

/// The number at the start of `s` after spaces, `~` or `about`; thousands separators allowed.
fn number_at(s: &str) -> Option<u64> {
    let s = s.trim_start_matches([' ', '~', '=']);
    let s = s.strip_prefix("about ").unwrap_or(s);
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// One line of at most [`MAX_MESSAGE`] characters.
pub(super) fn clip(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(MAX_MESSAGE) {
        Some((at, _)) => format!("{}...", &one[..at]),
        None => one,
    }
}

/// Why one reply body or stream could not become a [`super::Response`].
#[derive(Debug, Clone, PartialEq)]
pub(super) enum WireError {
    /// Not the JSON or the events the protocol promises.
    Malformed(String),
    /// The server reported an error inside a 200 reply (an `error` event or field); `status`
    /// is the HTTP status the error stands for.
    Remote { status: u16, body: ErrorBody },
}

impl WireError {
    /// An error object found inside a reply, with the status its type or code implies.
    pub fn remote(v: &serde_json::Value) -> WireError {
        let body = ErrorBody::from_json(v, v.to_string());
        let err = v.get("error").unwrap_or(v);
        let numeric = err.get("code").and_then(|c| c.as_u64()).and_then(|c| u16::try_from(c).ok());
        let status = numeric.filter(|c| (400..600).contains(c)).unwrap_or(match body.code.as_str() {
            "overloaded_error" => 529,
            "rate_limit_error" | "rate_limit_exceeded" => 429,
            "authentication_error" => 401,
            "permission_error" => 403,
            "invalid_request_error" | "context_length_exceeded" | "exceed_context_size_error" => 400,
            "not_found_error" => 404,
            "request_too_large" => 413,
            _ => 500,
        });
        WireError::Remote { status, body }
    }
}

/// " (N attempts)" after more than one attempt; nothing after one.
fn tries(attempts: u32) -> String {
    if attempts > 1 { format!(" ({attempts} attempts)") } else { String::new() }
}
