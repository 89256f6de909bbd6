//! The OpenAI-compatible chat completions wire format: the request body, a whole JSON reply,
//! and a streamed reply assembled from its SSE chunks (text, reasoning, tool-call deltas).

use super::body::ToolsField;
use super::error::WireError;
use super::sse::SseEvent;
use super::types::{
    Effort, Event, FinishReason, Message, Reasoning, Replay, Request, Response, ToolCall, Usage,
};
use serde_json::{Map, Value, json};

/// The text sent for an assistant turn that said nothing and called nothing; some servers
/// refuse empty assistant messages.
pub const EMPTY_REPLY: &str = "(empty response)";

/// The body of POST {base}/chat/completions with reply cap `cap` (0: none sent) in
/// `max_tokens_field` ("max_tokens", or "max_completion_tokens", see `limits::token_param`).
pub fn request_body(
    req: &Request,
    model: &str,
    stream: bool,
    max_tokens_field: &str,
    cap: u32,
    tools: ToolsField,
) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    // DeepSeek wants `reasoning_content` back within the current turn's tool loop only (and
    // older servers refuse it elsewhere): replay it after the person's last message.
    let turn_start = req.messages.iter().rposition(|m| matches!(m, Message::User { synthetic: false, .. }));
    // Tool messages carry text only: their images follow the run of tool messages as one user
    // message of image_url parts (a user message inside the run would break the pairing).
    let mut pending: Vec<Value> = Vec::new();
    for (i, m) in req.messages.iter().enumerate() {
        if !matches!(m, Message::Tool { .. }) && !pending.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut pending)}));
        }
        messages.push(message(m, turn_start.is_none_or(|s| i > s)));
        if let Message::Tool { call_id, images, .. } = m
            && !images.is_empty()
        {
            pending.push(
                json!({"type": "text", "text": format!("The image(s) returned by tool call {call_id}:")}),
            );
            pending.extend(images.iter().map(|img| {
                json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", img.mime_type, img.base64)}})
            }));
        }
    }
    if !pending.is_empty() {
        messages.push(json!({"role": "user", "content": pending}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        body.insert("tools".into(), tools.value(req, function_tools));
        body.insert("tool_choice".into(), json!("auto"));
    }
    if cap > 0 {
        body.insert(max_tokens_field.into(), json!(cap));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// The tools as OpenAI's `function` entries (Ollama's API takes the same).
pub fn function_tools(req: &Request) -> Value {
    req.tools
        .iter()
        .map(|t| {
            Value::Object(Map::from_iter([
                ("type".to_string(), Value::from("function")),
                ("function".to_string(), t.wire_entry("parameters")),
            ]))
        })
        .collect()
}

/// The reasoning setting: OpenRouter's `reasoning` object, else OpenAI's `reasoning_effort`
/// (which vLLM, Ollama, Groq, xAI and Gemini's compatibility layer also read).
pub fn add_effort(body: &mut Value, effort: Option<Effort>, base_url: &str) {
    let Some(effort) = effort else { return };
    let model = body["model"].as_str().unwrap_or_default().to_string();
    if base_url.contains("openrouter.ai") {
        body["reasoning"] = match effort {
            Effort::Off => json!({"enabled": false}),
            e => json!({"effort": e.as_str()}),
        };
        return;
    }
    match effort {
        // Only gpt-5 has a lowest setting; elsewhere "off" sends nothing.
        Effort::Off if super::limits::family_starts(&model, "gpt-5") => {
            body["reasoning_effort"] = json!("minimal")
        }
        Effort::Off => {}
        e => body["reasoning_effort"] = json!(e.as_str()),
    }
}

/// One message; `current`: it belongs to the turn in progress (its reasoning is replayed).
fn message(m: &Message, current: bool) -> Value {
    match m {
        Message::User { text, .. } => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls, reasoning } if tool_calls.is_empty() => {
            let content = if text.is_empty() { EMPTY_REPLY } else { text };
            let mut v = json!({"role": "assistant", "content": content});
            add_replay(&mut v, reasoning.as_ref(), current);
            v
        }
        Message::Assistant { text, tool_calls, reasoning } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function", "function": {
                        "name": c.name, "arguments": c.arguments,
                    }})
                })
                .collect();
            let content = if text.is_empty() { Value::Null } else { json!(text) };
            let mut v = json!({"role": "assistant", "content": content, "tool_calls": calls});
            add_replay(&mut v, reasoning.as_ref(), current);
            v
        }
        Message::Tool { call_id, content, .. } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

/// Puts the reasoning fields this server sent back on the assistant message, as received.
fn add_replay(v: &mut Value, reasoning: Option<&Reasoning>, current: bool) {
    let Some(Replay::OpenAiCompat { reasoning_content, reasoning_details }) =
        reasoning.and_then(|r| r.replay.as_ref())
    else {
        return;
    };
    if let (Some(rc), true) = (reasoning_content, current) {
        v["reasoning_content"] = json!(rc);
    }
    if let Some(d) = reasoning_details {
        v["reasoning_details"] = d.clone();
    }
}

/// What must go back to the server: `reasoning_content` (DeepSeek) and `reasoning_details`
/// (OpenRouter), as they came.
fn replay_of(content: Option<String>, details: Option<Value>) -> Option<Replay> {
    let details = details.filter(|d| d.as_array().is_some_and(|a| !a.is_empty()));
    let content = content.filter(|c| !c.is_empty());
    (content.is_some() || details.is_some())
        .then_some(Replay::OpenAiCompat { reasoning_content: content, reasoning_details: details })
}

/// A whole (non-streamed) reply. With several choices, the one with tool calls wins.
pub fn parse_response(v: &Value) -> Result<Response, WireError> {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(WireError::remote(v));
    }
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| WireError::Malformed("the reply has no \"choices\"".into()))?;
    let has_calls = |c: &&Value| c["message"]["tool_calls"].as_array().is_some_and(|a| !a.is_empty());
    let choice = choices.iter().find(has_calls).unwrap_or(&choices[0]);
    let msg = &choice["message"];
    let mut tool_calls = Vec::new();
    for c in msg["tool_calls"].as_array().into_iter().flatten() {
        let f = &c["function"];
        tool_calls.push(ToolCall {
            id: c["id"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(super::fresh_call_id),
            name: f["name"].as_str().unwrap_or_default().to_string(),
            arguments: arguments_text(&f["arguments"]),
        });
    }
    let replay = replay_of(
        msg.get("reasoning_content").and_then(Value::as_str).map(str::to_string),
        msg.get("reasoning_details").cloned(),
    );
    let reasoning = Reasoning::of(reasoning_of(msg).unwrap_or_default().to_string(), replay);
    let finish = finish_reason(choice["finish_reason"].as_str(), !tool_calls.is_empty());
    Ok(Response { text: content_text(&msg["content"]), reasoning, tool_calls, finish, usage: usage(v) })
}

/// Arguments as text: a string as given, an object (some servers send one) as JSON.
fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Content as text: a string, or the text parts of a list of content parts.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn reasoning_of(v: &Value) -> Option<&str> {
    v.get("reasoning_content").and_then(Value::as_str).or_else(|| v.get("reasoning").and_then(Value::as_str))
}

fn usage(v: &Value) -> Usage {
    let u = &v["usage"];
    Usage {
        input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
    }
}

fn finish_reason(reason: Option<&str>, has_calls: bool) -> FinishReason {
    match reason {
        Some("length") | Some("max_tokens") => FinishReason::Length,
        _ if has_calls => FinishReason::ToolCalls,
        None | Some("stop") | Some("end_turn") | Some("eos") => FinishReason::Stop,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

/// A streamed reply being assembled.
#[derive(Debug, Default)]
pub struct Stream {
    text: String,
    reasoning: String,
    /// `reasoning_content` deltas (DeepSeek), kept apart from other reasoning fields.
    reasoning_content: String,
    /// `reasoning_details` items merged by their `index`.
    details: Vec<Value>,
    /// Tool calls in order of first appearance, with their delta `index` where given.
    calls: Vec<(Option<u64>, ToolCall)>,
    finish: Option<String>,
    usage: Usage,
    done: bool,
}

impl Stream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one SSE event; streamed text and reasoning go to `out`.
    pub fn event(&mut self, ev: &SseEvent, out: &mut dyn FnMut(Event)) -> Result<(), WireError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        match serde_json::from_str::<Value>(data) {
            Ok(v) => self.chunk(&v, out),
            // Servers that forget the blank line between events send several per event.
            Err(_) if data.contains('\n') => {
                for line in data.lines() {
                    self.event(&SseEvent { event: ev.event.clone(), data: line.to_string() }, out)?;
                }
                Ok(())
            }
            Err(e) => Err(WireError::Malformed(format!("a stream chunk is not JSON ({e}): {data:.200}"))),
        }
    }

    fn chunk(&mut self, v: &Value, out: &mut dyn FnMut(Event)) -> Result<(), WireError> {
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(WireError::remote(v));
        }
        if v.get("usage").is_some_and(Value::is_object) {
            self.usage = usage(v);
        }
        let Some(choice) = v["choices"].as_array().and_then(|c| c.first()) else { return Ok(()) };
        let delta = &choice["delta"];
        if let Some(r) = reasoning_of(delta).filter(|r| !r.is_empty()) {
            self.reasoning.push_str(r);
            out(Event::Reasoning(r.to_string()));
        }
        if let Some(r) = delta.get("reasoning_content").and_then(Value::as_str) {
            self.reasoning_content.push_str(r);
        }
        for d in delta["reasoning_details"].as_array().into_iter().flatten() {
            self.detail(d);
        }
        if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.text.push_str(t);
            out(Event::Text(t.to_string()));
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            self.tool_delta(tc);
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish = Some(reason.to_string());
        }
        Ok(())
    }

    /// Adds one tool-call delta. A delta continues the latest call with its `index` (or, with
    /// no index, its id, or the last call); a new index, or a different id under a known index
    /// (servers that number every call 0), starts a new call.
    fn tool_delta(&mut self, tc: &Value) {
        let f = &tc["function"];
        let id = tc["id"].as_str().filter(|s| !s.is_empty());
        let index = tc["index"].as_u64();
        let found = match (index, id) {
            (Some(i), _) => self.calls.iter().rposition(|(k, _)| *k == Some(i)),
            (None, Some(id)) => self.calls.iter().rposition(|(_, c)| c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let pos = match found {
            Some(p) if id.is_none_or(|id| self.calls[p].1.id.is_empty() || self.calls[p].1.id == id) => p,
            _ => {
                let call = ToolCall { id: String::new(), name: String::new(), arguments: String::new() };
                self.calls.push((index, call));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos].1;
        if let (Some(id), true) = (id, call.id.is_empty()) {
            call.id = id.to_string();
        }
        if let (Some(name), true) = (f["name"].as_str(), call.name.is_empty()) {
            call.name = name.to_string();
        }
        call.arguments.push_str(&arguments_text(&f["arguments"]));
    }

    /// Adds one streamed `reasoning_details` item: a piece of the item with the same `index`
    /// (its text, summary or data appended, other fields kept from the latest piece), or a
    /// new item.
    fn detail(&mut self, d: &Value) {
        let Some(obj) = d.as_object() else { return };
        let same = |e: &&mut Value| {
            d.get("index").is_some_and(|i| !i.is_null())
                && e.get("index") == d.get("index")
                && e.get("type") == d.get("type")
        };
        let Some(item) = self.details.iter_mut().find(same) else {
            self.details.push(d.clone());
            return;
        };
        for (k, v) in obj {
            match (k.as_str(), item.get_mut(k.as_str()), v) {
                ("text" | "summary" | "data", Some(Value::String(old)), Value::String(more)) => {
                    old.push_str(more)
                }
                (_, _, Value::Null) => {}
                _ => item[k.as_str()] = v.clone(),
            }
        }
    }

    /// The server has said it is finished ("[DONE]"); stop reading.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The reply arrived whole: "[DONE]" or at least a finish reason.
    pub fn complete(&self) -> bool {
        self.done || self.finish.is_some()
    }

    pub fn finish(self) -> Response {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|(_, mut c)| {
                if c.id.is_empty() {
                    c.id = super::fresh_call_id();
                }
                c
            })
            .collect();
        let details = (!self.details.is_empty()).then_some(Value::Array(self.details));
        let replay = replay_of(Some(self.reasoning_content), details);
        Response {
            text: self.text,
            reasoning: Reasoning::of(self.reasoning, replay),
            finish: finish_reason(self.finish.as_deref(), !tool_calls.is_empty()),
            tool_calls,
            usage: self.usage,
        }
    }
}
