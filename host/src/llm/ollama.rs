//! Ollama's own chat API (POST /api/chat): the request body with `options.num_ctx` (the one
//! way to set the context size per request), a whole reply, and a streamed reply in NDJSON.

use super::body::ToolsField;
use super::error::WireError;
use super::types::{Effort, Event, FinishReason, Message, Reasoning, Request, Response, ToolCall, Usage};
use serde_json::{Map, Value, json};

/// The context size asked for when the person set none and the model's own is larger: what
/// a laptop holds for a mid-sized model, and enough for corral's context management.
pub const DEFAULT_NUM_CTX: u64 = 16_384;

/// The body of POST {base}/api/chat: reply cap `cap` as `num_predict` (0: none), the context
/// size as `num_ctx`.
pub fn request_body(
    req: &Request,
    model: &str,
    stream: bool,
    cap: u32,
    num_ctx: u64,
    effort: Option<Effort>,
    tools: ToolsField,
) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(message(m));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(stream));
    if !req.tools.is_empty() {
        body.insert("tools".into(), tools.value(req, super::openai::function_tools));
    }
    let mut options = Map::new();
    options.insert("num_ctx".into(), json!(num_ctx));
    if cap > 0 {
        options.insert("num_predict".into(), json!(cap));
    }
    if let Some(t) = req.temperature {
        options.insert("temperature".into(), json!(t));
    }
    body.insert("options".into(), Value::Object(options));
    if let Some(effort) = effort {
        body.insert("think".into(), json!(effort != Effort::Off));
    }
    Value::Object(body)
}

fn message(m: &Message) -> Value {
    match m {
        Message::User { text, .. } => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls, reasoning } => {
            let mut v = json!({"role": "assistant", "content": text});
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        // Ollama takes the arguments as an object; text that is not one (a
                        // malformed call, whose result told the model so) goes back empty.
                        let args = serde_json::from_str::<Value>(&c.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({}));
                        json!({"function": {"name": c.name, "arguments": args}})
                    })
                    .collect();
                v["tool_calls"] = Value::Array(calls);
            }
            // Earlier thinking is not sent back: it would cost the context it helps nothing in.
            let _ = reasoning;
            v
        }
        Message::Tool { name, content, images, .. } => {
            let mut v = json!({"role": "tool", "tool_name": name, "content": content});
            if !images.is_empty() {
                v["images"] = images.iter().map(|i| json!(i.base64)).collect();
            }
            v
        }
    }
}

/// A whole (non-streamed) reply.
pub fn parse_response(v: &Value) -> Result<Response, WireError> {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(WireError::remote(v));
    }
    let msg = v.get("message").ok_or_else(|| WireError::Malformed("the reply has no \"message\"".into()))?;
    let mut s = Stream::default();
    s.add_message(msg, &mut |_| {});
    s.end(v);
    Ok(s.finish())
}

/// A streamed reply being assembled from its NDJSON lines.
#[derive(Debug, Default)]
pub struct Stream {
    text: String,
    thinking: String,
    calls: Vec<ToolCall>,
    finish: Option<String>,
    usage: Usage,
    done: bool,
}

impl Stream {
    pub fn new() -> Self {
        Stream::default()
    }

    /// One line of the stream.
    pub fn line(&mut self, line: &str, out: &mut dyn FnMut(Event)) -> Result<(), WireError> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| WireError::Malformed(format!("a stream line is not JSON ({e}): {line:.200}")))?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(WireError::remote(&v));
        }
        if let Some(msg) = v.get("message") {
            self.add_message(msg, out);
        }
        if v["done"] == true {
            self.end(&v);
        }
        Ok(())
    }

    fn add_message(&mut self, msg: &Value, out: &mut dyn FnMut(Event)) {
        if let Some(t) = msg["thinking"].as_str().filter(|t| !t.is_empty()) {
            self.thinking.push_str(t);
            out(Event::Reasoning(t.to_string()));
        }
        if let Some(t) = msg["content"].as_str().filter(|t| !t.is_empty()) {
            self.text.push_str(t);
            out(Event::Text(t.to_string()));
        }
        for c in msg["tool_calls"].as_array().into_iter().flatten() {
            let f = &c["function"];
            let arguments = match &f["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            let id = c["id"].as_str().filter(|s| !s.is_empty()).map(str::to_string);
            self.calls.push(ToolCall {
                id: id.unwrap_or_else(super::fresh_call_id),
                name: f["name"].as_str().unwrap_or_default().to_string(),
                arguments,
            });
        }
    }

    fn end(&mut self, v: &Value) {
        self.done = true;
        self.finish = v["done_reason"].as_str().map(str::to_string);
        self.usage = Usage {
            input_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0),
            output_tokens: v["eval_count"].as_u64().unwrap_or(0),
        };
    }

    /// The last line (`"done": true`) has arrived.
    pub fn done(&self) -> bool {
        self.done
    }

    pub fn finish(self) -> Response {
        let has_calls = !self.calls.is_empty();
        let finish = match self.finish.as_deref() {
            Some("length") => FinishReason::Length,
            _ if has_calls => FinishReason::ToolCalls,
            None | Some("stop") | Some("load") | Some("unload") => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        Response {
            text: self.text,
            reasoning: Reasoning::of(self.thinking, None),
            tool_calls: self.calls,
            finish,
            usage: self.usage,
        }
    }
}
