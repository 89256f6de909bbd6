//! The provider-neutral conversation model: messages, tool calls, requests, replies and the
//! events a streaming call reports. Providers translate these to and from their wire formats.

use serde::{Deserialize, Serialize};

/// One message of the conversation (the system prompt travels separately in [`Request`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The person's words, or a note the host adds in their place (a nudge).
    User {
        text: String,
        /// Set for messages the host wrote (reminders, nudges), not the person.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        synthetic: bool,
    },
    /// The model's reply: text, optional reasoning, and the tools it asked for.
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call.
    Tool {
        call_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// Images the tool returned, sent where the provider and model take them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// An image for the model: its media type and its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub mime_type: String,
    pub base64: String,
}

/// What one image is counted as in the context budget: about what Anthropic and OpenAI
/// charge for an image near their size limits (~1,600 tokens for 1.15 megapixels).
pub const IMAGE_TOKENS: u32 = 1_600;

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into(), synthetic: false }
    }

    pub fn nudge(text: impl Into<String>) -> Self {
        Message::User { text: text.into(), synthetic: true }
    }
}

/// The model's reasoning on one reply: the text shown to the person, and what the provider
/// requires to be sent back with that reply on later requests, kept exactly as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ReasoningRepr")]
pub struct Reasoning {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
}

/// Provider-specific reasoning to replay, opaque to everything but that provider's wire code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case")]
pub enum Replay {
    /// OpenAI-compatible servers: DeepSeek's `reasoning_content` text and OpenRouter's
    /// `reasoning_details` list (encrypted thought signatures included), as received.
    OpenAiCompat {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_details: Option<serde_json::Value>,
    },
    /// Anthropic: the `thinking` (with `signature`) and `redacted_thinking` blocks, in order.
    Anthropic { blocks: Vec<serde_json::Value> },
}

/// Sessions written before replay was kept hold the reasoning as a bare string.
#[derive(Deserialize)]
#[serde(untagged)]
enum ReasoningRepr {
    Text(String),
    Full {
        text: String,
        #[serde(default)]
        replay: Option<Replay>,
    },
}

impl From<ReasoningRepr> for Reasoning {
    fn from(r: ReasoningRepr) -> Self {
        match r {
            ReasoningRepr::Text(text) => Reasoning { text, replay: None },
            ReasoningRepr::Full { text, replay } => Reasoning { text, replay },
        }
    }
}

impl From<String> for Reasoning {
    fn from(text: String) -> Self {
        Reasoning { text, replay: None }
    }
}

impl From<&str> for Reasoning {
    fn from(text: &str) -> Self {
        Reasoning { text: text.to_string(), replay: None }
    }
}

impl Reasoning {
    /// Reasoning from its parts; `None` when there is neither text nor anything to replay.
    pub fn of(text: String, replay: Option<Replay>) -> Option<Reasoning> {
        (!text.is_empty() || replay.is_some()).then_some(Reasoning { text, replay })
    }
}

/// How hard the model should think, where the provider lets the caller say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Off,
    Low,
    Medium,
    High,
}

impl Effort {
    pub fn parse(s: &str) -> Option<Effort> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Some(Effort::Off),
            "low" => Some(Effort::Low),
            "medium" => Some(Effort::Medium),
            "high" => Some(Effort::High),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Off => "off",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}

/// A tool call as the model wrote it. `arguments` is the raw JSON text: it may be malformed,
/// and the agent, not the provider, decides what to do about that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

impl ToolDef {
    /// The tool as the providers list it: name, description, and the argument schema under
    /// `schema_key` (`parameters` for OpenAI's API and Ollama's, `input_schema` for Anthropic's).
    pub fn wire_entry(&self, schema_key: &str) -> serde_json::Value {
        serde_json::Value::Object(serde_json::Map::from_iter([
            ("name".to_string(), serde_json::Value::String(self.name.clone())),
            ("description".to_string(), serde_json::Value::String(self.description.clone())),
            (schema_key.to_string(), self.parameters.clone()),
        ]))
    }
}

/// Everything one model call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: std::sync::Arc<[ToolDef]>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A complete answer.
    Stop,
    /// It asked for tools.
    ToolCalls,
    /// It ran out of output tokens.
    Length,
    /// A provider-specific reason, kept as given.
    Other(String),
}

/// Token counts the provider reported (zero when it reported none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The model's reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub text: String,
    pub reasoning: Option<Reasoning>,
    pub tool_calls: Vec<ToolCall>,
    pub finish: FinishReason,
    pub usage: Usage,
}

impl Response {
    /// The assistant message this reply adds to the conversation.
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            reasoning: self.reasoning.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}

/// What a call reports while it runs, for live display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A piece of the answer text.
    Text(String),
    /// A piece of the model's reasoning, where the provider sends it.
    Reasoning(String),
    /// Something the person should know about the call (a lowered output cap, say).
    Notice(String),
    /// The call failed and will be retried after `wait`; any text streamed so far for this
    /// attempt is void.
    Retry { attempt: u32, wait: std::time::Duration, reason: String },
}
