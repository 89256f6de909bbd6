//! A request body as the bytes sent. The tool list is most of a body at the start of a task
//! (every tool's JSON Schema) and the same from one turn to the next, so it is serialized once
//! per list and written into each body as it is: building it anew at every turn deep-copied
//! every schema into the body, wrote it and freed it again.

use super::types::{Request, ToolDef};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::{Arc, Mutex};

/// How a provider's request body holds the tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsField {
    /// The array itself, built from the request's definitions: the body the wire-format
    /// tests read (requests are sent with `Deferred`).
    #[cfg_attr(not(test), allow(dead_code))]
    Built,
    /// `null` in its place: [`body_bytes`] writes the array kept serialized there instead.
    Deferred,
}

impl ToolsField {
    /// The `tools` entry of a provider's body: the array `build` makes, or `null`.
    pub fn value(self, req: &Request, build: fn(&Request) -> Value) -> Value {
        match self {
            ToolsField::Built => build(req),
            ToolsField::Deferred => Value::Null,
        }
    }
}

/// The last tool list serialized, by the identity of the list (a turn hands the loop's own
/// `Arc` to each request; a new list, when tools join or leave, is a new `Arc`).
#[derive(Default)]
pub struct ToolsCache(Mutex<Option<Kept>>);

/// A tool list and its array, serialized.
type Kept = (Arc<[ToolDef]>, Arc<RawValue>);

impl ToolsCache {
    /// The serialized array for `tools`, made by `build` when it is not the list kept.
    fn get(
        &self,
        tools: &Arc<[ToolDef]>,
        build: impl FnOnce() -> Value,
    ) -> serde_json::Result<Arc<RawValue>> {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((list, raw)) = kept.as_ref()
            && Arc::ptr_eq(list, tools)
        {
            return Ok(raw.clone());
        }
        let raw: Arc<RawValue> = serde_json::value::to_raw_value(&build())?.into();
        *kept = Some((tools.clone(), raw.clone()));
        Ok(raw)
    }
}

/// The bytes of a request body: `deferred` is the provider's body made with
/// [`ToolsField::Deferred`], `tools` builds the provider's tool array. The bytes are those of
/// the body made with [`ToolsField::Built`], key for key.
pub fn body_bytes(
    deferred: &Value,
    req: &Request,
    cache: &ToolsCache,
    tools: impl FnOnce() -> Value,
) -> serde_json::Result<Vec<u8>> {
    let raw = if req.tools.is_empty() { None } else { Some(cache.get(&req.tools, tools)?) };
    json_bytes(&WithTools { body: deferred, tools: raw.as_deref() })
}

/// A body whose top-level `tools` entry is written from `tools` when given.
struct WithTools<'a> {
    body: &'a Value,
    tools: Option<&'a RawValue>,
}

impl Serialize for WithTools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (Value::Object(map), Some(tools)) = (self.body, self.tools) else {
            return self.body.serialize(s);
        };
        let mut out = s.serialize_map(Some(map.len()))?;
        for (key, value) in map {
            if key == "tools" {
                out.serialize_entry(key, tools)?;
            } else {
                out.serialize_entry(key, value)?;
            }
        }
        out.end()
    }
}

/// JSON written straight into a buffer: `to_string` (Display) passes each piece through a
/// formatter, slower for a body of tens of KB at every turn.
fn json_bytes(body: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(32 << 10);
    serde_json::to_writer(&mut out, body)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_body_is_sent_as_its_json_text() {
        let body = json!({"messages": [{"role": "user", "content": "a \"quote\"\n é 🦀"}],
            "tools": [{"type": "function"}], "max_tokens": 5, "temperature": 0.2, "stream": true});
        assert_eq!(json_bytes(&body).unwrap(), body.to_string().into_bytes());
    }

    fn tool(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: format!("the {name} tool"),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }
    }

    fn request(tools: Arc<[ToolDef]>) -> Request {
        Request { system: "sys".into(), messages: Vec::new(), tools, max_tokens: 10, temperature: None }
    }

    fn array(req: &Request) -> Value {
        req.tools.iter().map(|t| json!({"name": t.name, "schema": t.parameters})).collect()
    }

    #[test]
    fn the_kept_array_takes_the_place_of_the_deferred_one() {
        let cache = ToolsCache::default();
        let req = request(Arc::from([tool("a"), tool("b")]));
        let built = json!({"model": "m", "tools": array(&req), "z": 1});
        let deferred = json!({"model": "m", "tools": null, "z": 1});
        let mut calls = 0;
        let mut bytes = || {
            body_bytes(&deferred, &req, &cache, || {
                calls += 1;
                array(&req)
            })
            .unwrap()
        };
        let expected = json_bytes(&built).unwrap();
        assert_eq!(bytes(), expected);
        assert_eq!(bytes(), expected, "the second body, from the kept array");
        assert_eq!(calls, 1, "the same list is serialized once");
    }

    #[test]
    fn a_new_list_is_serialized_again_and_no_list_writes_the_body_as_it_is() {
        let cache = ToolsCache::default();
        let first = request(Arc::from([tool("a")]));
        let deferred = json!({"model": "m", "tools": null});
        body_bytes(&deferred, &first, &cache, || array(&first)).unwrap();
        // Equal contents, but another list: its own array, not the kept one.
        let second = request(Arc::from([tool("c")]));
        let got = body_bytes(&deferred, &second, &cache, || array(&second)).unwrap();
        assert_eq!(got, json_bytes(&json!({"model": "m", "tools": array(&second)})).unwrap());
        let none = request(Arc::from([]));
        let plain = json!({"model": "m"});
        let got = body_bytes(&plain, &none, &cache, || unreachable!()).unwrap();
        assert_eq!(got, json_bytes(&plain).unwrap());
    }
}
