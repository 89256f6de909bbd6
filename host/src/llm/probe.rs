//! Asking the server how large the model's context window is: OpenAI-compatible model lists
//! (OpenRouter, vLLM, ...), llama.cpp's /props and LM Studio's model info. Never an error.

use super::client::Client;
use super::config::{ProviderKind, strip_version};
use super::ollama;
use serde_json::Value;
use std::time::Duration;

/// The whole probe gives up after this long.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Field names servers use for the context size.
const KEYS: [&str; 5] = ["context_length", "max_model_len", "max_context_length", "context_window", "n_ctx"];

/// Field names servers use for the largest reply (OpenRouter: `top_provider.max_completion_tokens`).
const OUTPUT_KEYS: [&str; 3] = ["max_completion_tokens", "max_output_tokens", "output_token_limit"];

impl Client {
    /// The model's context window as the server reports it, if it does. Anthropic: None.
    /// Ollama (its own API): the context size corral will ask for, which the model's own
    /// size bounds (see [`Client::ollama_window`]).
    pub async fn context_window(&self) -> Option<u64> {
        match self.config().kind {
            ProviderKind::Anthropic => None,
            ProviderKind::Ollama => Some(self.ollama_window().await),
            ProviderKind::OpenAi => tokio::time::timeout(PROBE_TIMEOUT, self.probe()).await.ok().flatten(),
        }
    }

    /// The context size to ask Ollama for: the `num_ctx` the model's Modelfile sets, else the
    /// default ([`ollama::DEFAULT_NUM_CTX`]), never above what the model was trained for
    /// (`<arch>.context_length` in POST /api/show).
    async fn ollama_window(&self) -> u64 {
        let url = format!("{}/api/show", self.config().base_url);
        let rb = self.auth(self.http().post(&url).timeout(PROBE_TIMEOUT));
        let shown = async {
            let body = serde_json::json!({"model": self.config().model}).to_string();
            let resp =
                rb.header(reqwest::header::CONTENT_TYPE, "application/json").body(body).send().await.ok()?;
            if !resp.status().is_success() {
                return None;
            }
            serde_json::from_slice::<Value>(&resp.bytes().await.ok()?).ok()
        };
        let shown = tokio::time::timeout(PROBE_TIMEOUT, shown).await.ok().flatten();
        shown.map(|v| ollama_window_of(&v)).unwrap_or(ollama::DEFAULT_NUM_CTX)
    }

    /// Whether nothing listens at a local server's address (the REPL says so as it starts,
    /// rather than at the first task): the message saying what to start or set.
    pub async fn refused_locally(&self) -> Option<String> {
        let url = format!("{}/models", self.config().base_url);
        match self.http().get(&url).timeout(PROBE_TIMEOUT).send().await {
            Ok(_) => None,
            Err(e) => self.target(0).refused_locally(&e),
        }
    }

    /// Asks the three places servers report the window at once (one after the other, each
    /// is a round trip: three on a remote server that answers none of them, such as OpenAI's);
    /// the first of them in this order that names a window wins.
    async fn probe(&self) -> Option<u64> {
        let cfg = self.config();
        let base = cfg.base_url.as_str();
        let root = strip_version(base);
        let urls = [
            format!("{base}/models"),
            format!("{root}/props"),
            format!("{root}/api/v0/models/{}", cfg.model),
        ];
        let (list, props, lmstudio) =
            tokio::join!(self.get_json(&urls[0]), self.get_json(&urls[1]), self.get_json(&urls[2]));
        if let Some(list) = list {
            if let Some(cap) = output_from_models(&list, &cfg.model) {
                self.learn_output_cap(cap);
            }
            if let Some(n) = from_models(&list, &cfg.model) {
                return Some(n);
            }
        }
        if let Some(n) = props.as_ref().and_then(from_props) {
            return Some(n);
        }
        let lmstudio = lmstudio?;
        ["loaded_context_length", "max_context_length"].iter().find_map(|k| positive(&lmstudio[*k]))
    }

    async fn get_json(&self, url: &str) -> Option<Value> {
        let rb = self.auth(self.http().get(url).timeout(PROBE_TIMEOUT));
        let resp = rb.send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        serde_json::from_slice(&resp.bytes().await.ok()?).ok()
    }
}

/// From Ollama's POST /api/show: the Modelfile's `num_ctx` (in its "parameters" text), else
/// the default, capped by the trained size (`model_info["<arch>.context_length"]`).
pub(super) fn ollama_window_of(show: &Value) -> u64 {
    let trained = show["model_info"].as_object().and_then(|info| {
        info.iter().find(|(k, _)| k.ends_with(".context_length")).and_then(|(_, v)| positive(v))
    });
    let set = show["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok()).flatten()
        })
    });
    let wanted = set.unwrap_or(ollama::DEFAULT_NUM_CTX);
    trained.map_or(wanted, |t| wanted.min(t))
}

/// From a model list ({"data": [...]}, or a bare list): the entry for `model`, else the only
/// entry. With several entries and none matching, nothing: another model's size is no help.
pub(super) fn from_models(v: &Value, model: &str) -> Option<u64> {
    window_in(model_entry(v, model)?)
}

/// The largest reply the model list says the model may give, if it says.
pub(super) fn output_from_models(v: &Value, model: &str) -> Option<u32> {
    let n = in_entry(model_entry(v, model)?, &OUTPUT_KEYS)?;
    u32::try_from(n).ok()
}

fn model_entry<'v>(v: &'v Value, model: &str) -> Option<&'v Value> {
    let list = v.get("data").or_else(|| v.get("models")).unwrap_or(v).as_array()?;
    let id = |e: &Value| e["id"].as_str().or_else(|| e["name"].as_str()).unwrap_or("").to_string();
    let wanted = model.to_ascii_lowercase();
    let entry = list
        .iter()
        .find(|e| id(e) == model)
        .or_else(|| {
            list.iter().find(|e| {
                let id = id(e).to_ascii_lowercase();
                id == wanted
                    || id == format!("{wanted}:latest")
                    || id.rsplit('/').next() == Some(wanted.as_str())
            })
        })
        .or_else(|| if list.len() == 1 { list.first() } else { None })?;
    Some(entry)
}

/// llama.cpp's GET /props: default_generation_settings.n_ctx, or n_ctx.
pub(super) fn from_props(v: &Value) -> Option<u64> {
    positive(&v["default_generation_settings"]["n_ctx"]).or_else(|| positive(&v["n_ctx"]))
}

/// A context size in the entry itself, else in an object nested in it ("meta", "top_provider").
fn window_in(entry: &Value) -> Option<u64> {
    in_entry(entry, &KEYS)
}

/// The first of `keys` in the entry itself, else in an object nested in it.
fn in_entry(entry: &Value, keys: &[&str]) -> Option<u64> {
    let direct = keys.iter().find_map(|k| positive(&entry[*k]));
    direct.or_else(|| {
        entry
            .as_object()?
            .values()
            .filter(|v| v.is_object())
            .find_map(|o| keys.iter().find_map(|k| positive(&o[*k])))
    })
}

fn positive(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .or_else(|| v.as_str()?.parse().ok())
        .filter(|n| *n > 0)
}
