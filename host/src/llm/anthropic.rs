//! The Anthropic Messages wire format: the request body (strictly alternating roles, tool
//! results as blocks), a whole JSON reply, and a streamed reply assembled from its events.

use super::body::ToolsField;
use super::error::WireError;
use super::openai::EMPTY_REPLY;
use super::sse::SseEvent;
use super::types::{
    Effort, Event, FinishReason, Message, Reasoning, Replay, Request, Response, ToolCall, Usage,
};
use serde_json::{Map, Value, json};

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// max_tokens is required here; this is sent when the request leaves it at 0.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The smallest thinking budget the API accepts.
const MIN_THINKING: u32 = 1024;

/// The thinking budget for an effort: a share of the reply cap, at most a fixed ceiling per
/// level, and always below the cap (the API requires budget_tokens < max_tokens).
fn thinking_budget(effort: Effort, max: u32) -> Option<u32> {
    let ceiling = match effort {
        Effort::Off => return None,
        Effort::Low => 4_096,
        Effort::Medium => 16_384,
        Effort::High => 32_000,
    };
    let budget = ceiling.min(max.saturating_sub(MIN_THINKING).max(max / 2));
    (budget >= MIN_THINKING && budget < max).then_some(budget)
}

/// The body of POST {base}/v1/messages with reply cap `cap` (0: the default) and thinking
/// set from `effort`.
pub fn request_body(
    req: &Request,
    model: &str,
    stream: bool,
    cap: u32,
    effort: Option<Effort>,
    tools: ToolsField,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let max = if cap > 0 { cap } else { DEFAULT_MAX_TOKENS };
    body.insert("max_tokens".into(), json!(max));
    let budget = effort.and_then(|e| thinking_budget(e, max));
    if let Some(b) = budget {
        body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": b}));
    }
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    body.insert("messages".into(), Value::Array(messages(&req.messages)));
    if !req.tools.is_empty() {
        body.insert("tools".into(), tools.value(req, tool_list));
    }
    // Thinking allows no temperature but the default.
    if let (Some(t), None) = (req.temperature, budget) {
        body.insert("temperature".into(), json!(t));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// The tools as Anthropic lists them.
pub fn tool_list(req: &Request) -> Value {
    req.tools.iter().map(|t| t.wire_entry("input_schema")).collect()
}

/// The conversation as alternating user/assistant messages of content blocks: consecutive
/// messages of one role (tool results, a nudge after them) are merged, and a conversation
/// that starts with the assistant gets a user turn first.
fn messages(msgs: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in msgs {
        let (role, blocks) = blocks(m);
        match out.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    if out.first().is_some_and(|(role, _)| *role == "assistant") {
        out.insert(0, ("user", vec![text_block("(continue)")]));
    }
    out.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect()
}

fn blocks(m: &Message) -> (&'static str, Vec<Value>) {
    match m {
        Message::User { text, .. } => {
            ("user", vec![text_block(if text.is_empty() { "(empty message)" } else { text })])
        }
        Message::Assistant { text, tool_calls, reasoning } => {
            let mut b = Vec::with_capacity(tool_calls.len() + 1);
            // Thinking blocks go back first, exactly as received (signature and all).
            if let Some(Replay::Anthropic { blocks }) = reasoning.as_ref().and_then(|r| r.replay.as_ref()) {
                b.extend(blocks.iter().cloned());
            }
            if !text.is_empty() || tool_calls.is_empty() {
                b.push(text_block(if text.is_empty() { EMPTY_REPLY } else { text }));
            }
            for c in tool_calls {
                let input = input(&c.arguments);
                b.push(json!({"type": "tool_use", "id": tool_id(&c.id), "name": c.name, "input": input}));
            }
            ("assistant", b)
        }
        Message::Tool { call_id, content, is_error, images, .. } => {
            let text = if content.is_empty() { "(no output)" } else { content };
            let content = if images.is_empty() {
                json!(text)
            } else {
                let mut parts = vec![text_block(text)];
                parts.extend(images.iter().map(|img| {
                    json!({"type": "image", "source": {"type": "base64", "media_type": img.mime_type, "data": img.base64}})
                }));
                Value::Array(parts)
            };
            let mut b = json!({"type": "tool_result", "tool_use_id": tool_id(call_id), "content": content});
            if *is_error {
                b["is_error"] = json!(true);
            }
            ("user", vec![b])
        }
    }
}

fn text_block(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// The tool input object: the parsed arguments, or, when they are not a JSON object, an
/// object holding the raw text so the model still sees what it sent.
fn input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({"raw_arguments": arguments}),
    }
}

/// Tool ids must match ^[a-zA-Z0-9_-]+$; ids from elsewhere are made to fit.
fn tool_id(id: &str) -> String {
    let clean: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if clean.is_empty() { "call".into() } else { clean }
}

/// A whole (non-streamed) reply.
pub fn parse_response(v: &Value) -> Result<Response, WireError> {
    if v["type"] == "error" || v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(WireError::remote(v));
    }
    let blocks = v["content"]
        .as_array()
        .ok_or_else(|| WireError::Malformed("the reply has no \"content\" list".into()))?;
    let mut r = Reply::default();
    for b in blocks {
        match b["type"].as_str() {
            Some("text") => r.text.push_str(b["text"].as_str().unwrap_or_default()),
            Some("thinking") => {
                r.reasoning.push_str(b["thinking"].as_str().unwrap_or_default());
                r.blocks.push(b.clone());
            }
            Some("redacted_thinking") => r.blocks.push(b.clone()),
            Some("tool_use") => r.calls.push(ToolCall {
                id: b["id"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(super::fresh_call_id),
                name: b["name"].as_str().unwrap_or_default().to_string(),
                arguments: input_text(&b["input"]),
            }),
            _ => {}
        }
    }
    r.stop = v["stop_reason"].as_str().map(str::to_string);
    r.add_usage(&v["usage"]);
    Ok(r.into_response())
}

fn input_text(v: &Value) -> String {
    match v {
        Value::Null => "{}".into(),
        other => other.to_string(),
    }
}

/// The parts of a reply as they accumulate.
#[derive(Debug, Default)]
struct Reply {
    text: String,
    reasoning: String,
    /// Thinking and redacted-thinking blocks, for replay.
    blocks: Vec<Value>,
    calls: Vec<ToolCall>,
    stop: Option<String>,
    usage: Usage,
}

impl Reply {
    /// Input counts include cached tokens, so the total is what the context holds.
    fn add_usage(&mut self, u: &Value) {
        let n = |k: &str| u[k].as_u64();
        let cached =
            n("cache_creation_input_tokens").unwrap_or(0) + n("cache_read_input_tokens").unwrap_or(0);
        if let Some(i) = n("input_tokens") {
            self.usage.input_tokens = i + cached;
        }
        if let Some(o) = n("output_tokens") {
            self.usage.output_tokens = o;
        }
    }

    fn into_response(self) -> Response {
        let finish = match self.stop.as_deref() {
            None | Some("end_turn") | Some("stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        let finish = if finish == FinishReason::Stop && !self.calls.is_empty() {
            FinishReason::ToolCalls
        } else {
            finish
        };
        let replay = (!self.blocks.is_empty()).then_some(Replay::Anthropic { blocks: self.blocks });
        Response {
            text: self.text,
            reasoning: Reasoning::of(self.reasoning, replay),
            tool_calls: self.calls,
            finish,
            usage: self.usage,
        }
    }
}

/// What a content block being streamed is.
#[derive(Debug)]
enum Block {
    Text,
    /// A thinking block: its text and signature so far.
    Thinking {
        text: String,
        signature: String,
    },
    /// A redacted thinking block, kept whole.
    Redacted(Value),
    /// A tool call: its place in `calls`, the input JSON so far, and the input the start event gave.
    Tool {
        call: usize,
        json: String,
        initial: String,
    },
    Other,
}

/// A streamed reply being assembled.
#[derive(Debug, Default)]
pub struct Stream {
    reply: Reply,
    blocks: Vec<(u64, Block)>,
    stopped: bool,
}

impl Stream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one SSE event; streamed text and reasoning go to `out`.
    pub fn event(&mut self, ev: &SseEvent, out: &mut dyn FnMut(Event)) -> Result<(), WireError> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            WireError::Malformed(format!("a stream event is not JSON ({e}): {:.200}", ev.data))
        })?;
        let kind = v["type"].as_str().unwrap_or(&ev.event);
        match kind {
            "message_start" => self.reply.add_usage(&v["message"]["usage"]),
            "content_block_start" => self.block_start(&v, out),
            "content_block_delta" => self.block_delta(&v, out),
            "content_block_stop" => self.block_stop(v["index"].as_u64().unwrap_or(0)),
            "message_delta" => {
                if let Some(s) = v["delta"]["stop_reason"].as_str() {
                    self.reply.stop = Some(s.to_string());
                }
                self.reply.add_usage(&v["usage"]);
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(WireError::remote(&v)),
            _ => {}
        }
        Ok(())
    }

    fn block_start(&mut self, v: &Value, out: &mut dyn FnMut(Event)) {
        let index = v["index"].as_u64().unwrap_or(self.blocks.len() as u64);
        let b = &v["content_block"];
        let block = match b["type"].as_str() {
            Some("text") => {
                self.text(b["text"].as_str().unwrap_or_default(), out);
                Block::Text
            }
            Some("thinking") => {
                let text = b["thinking"].as_str().unwrap_or_default().to_string();
                self.thinking(&text, out);
                Block::Thinking { text, signature: b["signature"].as_str().unwrap_or_default().to_string() }
            }
            Some("redacted_thinking") => Block::Redacted(b.clone()),
            Some("tool_use") => {
                self.reply.calls.push(ToolCall {
                    id: b["id"]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .unwrap_or_else(super::fresh_call_id),
                    name: b["name"].as_str().unwrap_or_default().to_string(),
                    arguments: String::new(),
                });
                let initial = match &b["input"] {
                    Value::Object(m) if !m.is_empty() => b["input"].to_string(),
                    _ => String::new(),
                };
                Block::Tool { call: self.reply.calls.len() - 1, json: String::new(), initial }
            }
            _ => Block::Other,
        };
        self.blocks.push((index, block));
    }

    fn block_delta(&mut self, v: &Value, out: &mut dyn FnMut(Event)) {
        let index = v["index"].as_u64().unwrap_or(0);
        let d = &v["delta"];
        match d["type"].as_str() {
            Some("text_delta") => self.text(d["text"].as_str().unwrap_or_default(), out),
            Some("thinking_delta") => {
                let t = d["thinking"].as_str().unwrap_or_default();
                self.thinking(t, out);
                if let Some((_, Block::Thinking { text, .. })) =
                    self.blocks.iter_mut().find(|(i, _)| *i == index)
                {
                    text.push_str(t);
                }
            }
            Some("signature_delta") => {
                if let Some((_, Block::Thinking { signature, .. })) =
                    self.blocks.iter_mut().find(|(i, _)| *i == index)
                {
                    signature.push_str(d["signature"].as_str().unwrap_or_default());
                }
            }
            Some("input_json_delta") => {
                if let Some((_, Block::Tool { json, .. })) = self.blocks.iter_mut().find(|(i, _)| *i == index)
                {
                    json.push_str(d["partial_json"].as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }

    /// Settles a finished block: a tool call gets its input JSON text (once).
    fn block_stop(&mut self, index: u64) {
        let Some((_, block)) = self.blocks.iter_mut().find(|(i, _)| *i == index) else { return };
        match std::mem::replace(block, Block::Other) {
            Block::Tool { call, json, initial } => {
                let args = [json, initial].into_iter().find(|s| !s.is_empty()).unwrap_or_else(|| "{}".into());
                if let Some(c) = self.reply.calls.get_mut(call) {
                    c.arguments = args;
                }
            }
            Block::Thinking { text, signature } => {
                self.reply.blocks.push(json!({"type": "thinking", "thinking": text, "signature": signature}));
            }
            Block::Redacted(v) => self.reply.blocks.push(v),
            Block::Text | Block::Other => {}
        }
    }

    fn text(&mut self, t: &str, out: &mut dyn FnMut(Event)) {
        if !t.is_empty() {
            self.reply.text.push_str(t);
            out(Event::Text(t.to_string()));
        }
    }

    fn thinking(&mut self, t: &str, out: &mut dyn FnMut(Event)) {
        if !t.is_empty() {
            self.reply.reasoning.push_str(t);
            out(Event::Reasoning(t.to_string()));
        }
    }

    /// The server has sent `message_stop`; stop reading.
    pub fn done(&self) -> bool {
        self.stopped
    }

    /// The reply arrived whole: `message_stop`, or at least a stop reason.
    pub fn complete(&self) -> bool {
        self.stopped || self.reply.stop.is_some()
    }

    pub fn finish(mut self) -> Response {
        let open: Vec<u64> = self.blocks.iter().map(|(i, _)| *i).collect();
        for i in open {
            self.block_stop(i);
        }
        self.reply.into_response()
    }
}
