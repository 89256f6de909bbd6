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
        reasoning: Option<String>,
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
    },
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into(), synthetic: false }
    }

    pub fn nudge(text: impl Into<String>) -> Self {
        Message::User { text: text.into(), synthetic: true }
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

/// Everything one model call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
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
    pub reasoning: Option<String>,
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
    /// The call failed and will be retried after `wait`; any text streamed so far for this
    /// attempt is void.
    Retry { attempt: u32, wait: std::time::Duration, reason: String },
}
