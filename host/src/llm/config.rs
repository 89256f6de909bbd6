//! Which model server to talk to and how: the provider presets, and the resolution of the
//! user's settings (preset, URL, model, key from flags or environment) into a ClientConfig.

use super::error::LlmError;
use super::retry::RetryPolicy;
use std::time::Duration;

/// The wire protocol a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, llama.cpp, Ollama, vLLM, LM Studio, ...).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's own chat API (/api/chat), which can set the context size per request.
    Ollama,
}

/// A named provider: its protocol, default URL and the variables that may hold its key.
#[derive(Debug, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    pub key_envs: &'static [&'static str],
}

const OPENAI_KEY: &[&str] = &["OPENAI_API_KEY"];

static PRESETS: [Preset; 6] = [
    Preset {
        name: "openai",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.openai.com/v1",
        key_envs: OPENAI_KEY,
    },
    Preset {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_envs: &["ANTHROPIC_API_KEY"],
    },
    Preset {
        name: "ollama",
        kind: ProviderKind::Ollama,
        base_url: "http://127.0.0.1:11434",
        key_envs: OPENAI_KEY,
    },
    Preset {
        name: "llamacpp",
        kind: ProviderKind::OpenAi,
        base_url: "http://127.0.0.1:8080/v1",
        key_envs: OPENAI_KEY,
    },
    Preset {
        name: "lmstudio",
        kind: ProviderKind::OpenAi,
        base_url: "http://127.0.0.1:1234/v1",
        key_envs: OPENAI_KEY,
    },
    Preset {
        name: "openrouter",
        kind: ProviderKind::OpenAi,
        base_url: "https://openrouter.ai/api/v1",
        key_envs: &["OPENROUTER_API_KEY"],
    },
];

/// The preset called `name` (case-insensitive).
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The names of all presets, for help texts and errors.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// Everything a [`super::Client`] needs.
#[derive(Clone)]
pub struct ClientConfig {
    pub kind: ProviderKind,
    /// OpenAI-compatible: up to and including the version (".../v1"). Anthropic: the origin.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub stream: bool,
    /// How long the server may stay silent (before answering, or between streamed chunks).
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub user_agent: String,
    /// The name of the output-cap field for OpenAI-compatible servers ("max_tokens" or
    /// "max_completion_tokens"); `None` decides by server and model family.
    pub token_param: Option<String>,
    /// How hard the model should think; `None` leaves it to the server.
    pub effort: Option<super::types::Effort>,
    /// Whether the model takes images; `None` decides by provider and model family.
    pub images: Option<bool>,
    /// The server cuts an overlong prompt to fit instead of refusing it (Ollama, whose
    /// OpenAI-compatible API cannot set `num_ctx`): truncation is detected from its usage.
    pub truncates_silently: bool,
    /// Where the base URL came from ("--base-url", a settings file), for the messages that
    /// tell the person what to change; `None`: the provider's default endpoint.
    pub endpoint_source: Option<String>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("stream", &self.stream)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("user_agent", &self.user_agent)
            .field("token_param", &self.token_param)
            .field("effort", &self.effort)
            .field("images", &self.images)
            .field("truncates_silently", &self.truncates_silently)
            .field("endpoint_source", &self.endpoint_source)
            .finish()
    }
}

/// The variable consulted before any provider-specific one.
pub const CORRAL_KEY: &str = "CORRAL_API_KEY";

impl ClientConfig {
    /// A config with the defaults (streaming, 10 minute timeout, default retries).
    pub fn new(kind: ProviderKind, base_url: &str, model: &str, api_key: Option<String>) -> ClientConfig {
        ClientConfig {
            kind,
            base_url: normalize_url(kind, base_url),
            api_key,
            model: model.to_string(),
            stream: true,
            timeout: Duration::from_secs(600),
            retry: RetryPolicy::default(),
            user_agent: format!("corral/{}", env!("CARGO_PKG_VERSION")),
            token_param: None,
            effort: None,
            images: None,
            truncates_silently: false,
            endpoint_source: None,
        }
    }

    /// Builds a config from user settings: a preset name, explicit URL, model and key (each
    /// optional), with `env` for environment lookups. The key comes from `api_key`, else
    /// `CORRAL_API_KEY`, else the preset's variables; a bare `--base-url` reads no provider
    /// variable, so a key is never sent to a server it was not meant for.
    pub fn resolve(
        provider: Option<&str>,
        base_url: Option<&str>,
        model: Option<&str>,
        api_key: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ClientConfig, LlmError> {
        let nonempty = |s: Option<&str>| s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        let preset = match nonempty(provider) {
            Some(name) => Some(preset(&name).ok_or_else(|| {
                LlmError::Config(format!(
                    "unknown provider {name:?}: pass --provider with one of {}, or --base-url for any \
                     OpenAI-compatible server",
                    preset_names().join(", ")
                ))
            })?),
            None => None,
        };
        let explicit_url = nonempty(base_url);
        let url = match (&explicit_url, preset) {
            (Some(u), _) => u.clone(),
            (None, Some(p)) => p.base_url.to_string(),
            (None, None) => {
                return Err(LlmError::Config(format!(
                    "no model server chosen: pass --provider ({}) or --base-url URL \
                     (or set model.provider / model.base_url in corral.toml)",
                    preset_names().join(", ")
                )));
            }
        };
        let preset = preset.or_else(|| url.contains("://api.anthropic.com").then(|| &PRESETS[1]));
        let kind = match preset.map(|p| p.kind) {
            // A URL with a version (".../v1") is Ollama's OpenAI-compatible endpoint, taken as
            // given; the server root is its own API.
            Some(ProviderKind::Ollama) if has_version_segment(url.trim().trim_end_matches('/')) => {
                ProviderKind::OpenAi
            }
            Some(kind) => kind,
            None => ProviderKind::OpenAi,
        };
        let Some(model) = nonempty(model) else {
            return Err(LlmError::Config(
                "no model chosen: pass --model NAME (or set CORRAL_MODEL, or model.name in corral.toml)"
                    .to_string(),
            ));
        };
        let key_envs: &[&str] = preset.map(|p| p.key_envs).unwrap_or(&[]);
        let from_env = std::iter::once(CORRAL_KEY)
            .chain(key_envs.iter().copied())
            .find_map(|k| env(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()));
        let api_key = nonempty(api_key).or(from_env);
        let remote_default =
            preset.is_some_and(|p| p.base_url.starts_with("https://")) && explicit_url.is_none();
        if api_key.is_none() && (kind == ProviderKind::Anthropic || remote_default) {
            return Err(LlmError::Config(format!(
                "no API key for {}: set {} (or pass --api-key)",
                preset.map(|p| p.name).unwrap_or("this server"),
                key_hint(key_envs)
            )));
        }
        let mut cfg = ClientConfig::new(kind, &url, &model, api_key);
        // Ollama's OpenAI-compatible endpoint cannot set the context size and cuts silently.
        cfg.truncates_silently = kind == ProviderKind::OpenAi
            && (preset.is_some_and(|p| p.name == "ollama") || url.contains(":11434"));
        Ok(cfg)
    }

    /// Where this config's key may come from, for advice: "--api-key, CORRAL_API_KEY or
    /// OPENROUTER_API_KEY" (the preset's variables are known from its URL).
    pub fn key_sources(&self) -> String {
        let vars: &[&str] = match self.kind {
            ProviderKind::Anthropic => &["ANTHROPIC_API_KEY"],
            ProviderKind::Ollama => &[],
            ProviderKind::OpenAi => PRESETS
                .iter()
                .find(|p| p.kind == self.kind && normalize_url(p.kind, p.base_url) == self.base_url)
                .map(|p| p.key_envs)
                .unwrap_or(&[]),
        };
        format!("--api-key, {}", key_hint(vars))
    }
}

/// "CORRAL_API_KEY or OPENAI_API_KEY".
fn key_hint(key_envs: &[&str]) -> String {
    let mut all = vec![CORRAL_KEY];
    all.extend(key_envs);
    all.join(" or ")
}

/// Trims the URL; OpenAI-compatible URLs get "/v1" unless a version segment ("/v1",
/// "/v1beta", "/v4") is already in the path; Anthropic URLs lose a trailing "/v1".
pub fn normalize_url(kind: ProviderKind, url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    match kind {
        ProviderKind::Anthropic => url.strip_suffix("/v1").unwrap_or(url).to_string(),
        ProviderKind::Ollama => url.strip_suffix("/api").unwrap_or(url).to_string(),
        ProviderKind::OpenAi if has_version_segment(url) => url.to_string(),
        ProviderKind::OpenAi => format!("{url}/v1"),
    }
}

fn has_version_segment(url: &str) -> bool {
    let path = url.split_once("://").map(|(_, rest)| rest).unwrap_or(url);
    path.split('/').skip(1).any(|seg| {
        seg.strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()) && rest.len() <= 8)
    })
}

/// The URL without its trailing version segment: "http://host:8080/v1" -> "http://host:8080".
pub fn strip_version(url: &str) -> &str {
    match url.rsplit_once('/') {
        Some((head, last)) if last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit()) => head,
        _ => url,
    }
}
