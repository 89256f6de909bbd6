//! Search backends, chosen by the plugin's settings (`[plugin-settings.web_search]`): a
//! SearXNG instance's JSON API or the Brave Search API. Each builds its request and reads its answer.

use corral_plugin_sdk::host::{HostInfo, HttpRequest, HttpResponse};
use corral_plugin_sdk::{ErrorKind, ToolError, Value};

/// Brave's web search endpoint; the `url` setting replaces it (for a proxy or a test server).
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// The most results Brave returns for one request.
pub const BRAVE_MAX_COUNT: usize = 20;
/// Milliseconds for one search request.
pub const TIMEOUT_MS: u32 = 20_000;
/// The most bytes of an answer read.
pub const MAX_ANSWER_BYTES: u64 = 2 * 1024 * 1024;

/// How to write the settings, shown when they are missing or wrong.
pub const SETUP: &str = "Add a backend to the user's configuration (~/.config/corral/config.toml, or \
the project's corral.toml without the key):\n\
\n\
[plugin-settings.web_search]\n\
backend = \"searxng\"\n\
url = \"https://searx.example.org\"   # a SearXNG instance with the json format enabled\n\
\n\
or\n\
\n\
[plugin-settings.web_search]\n\
backend = \"brave\"\n\
api_key = \"...\"                     # a Brave Search API key\n\
\n\
and start corral with --network on.";

/// Which service answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A SearXNG instance: `url` is its base address.
    Searxng { url: String },
    /// The Brave Search API at `endpoint` with `api_key`.
    Brave { endpoint: String, api_key: String },
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// A backend's answer: its results in order, and engines that failed (SearXNG).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    pub hits: Vec<Hit>,
    pub unresponsive: Vec<String>,
}

fn setting_error(message: String) -> ToolError {
    ToolError::new(ErrorKind::Unsupported, format!("{message}\n\n{SETUP}")).with_hint(
        "the user has to change the settings; do not retry web_search until they have. Meanwhile \
         fetch_url can read pages whose address you know",
    )
}

/// A setting with surrounding space removed; empty counts as unset.
fn setting(info: &dyn HostInfo, key: &str) -> Option<String> {
    info.setting(key).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn check_http_url(key: &str, url: &str) -> Result<(), ToolError> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        Ok(())
    } else {
        Err(setting_error(format!(
            "plugin-settings.web_search.{key} is \"{url}\", which is not an http:// or https:// URL."
        )))
    }
}

impl Backend {
    /// The backend the settings name; the error says exactly which setting to add or fix.
    pub fn from_settings(info: &dyn HostInfo) -> Result<Backend, ToolError> {
        let Some(kind) = setting(info, "backend") else {
            return Err(setting_error(
                "web_search has no search backend configured (plugin-settings.web_search.backend is not set)."
                    .into(),
            ));
        };
        match kind.to_ascii_lowercase().as_str() {
            "searxng" | "searx" => {
                let url = setting(info, "url").ok_or_else(|| {
                    setting_error(
                        "plugin-settings.web_search.backend is \"searxng\" but .url, the instance's address, \
                         is not set."
                            .into(),
                    )
                })?;
                check_http_url("url", &url)?;
                Ok(Backend::Searxng { url })
            }
            "brave" => {
                let api_key = setting(info, "api_key").ok_or_else(|| {
                    setting_error(
                        "plugin-settings.web_search.backend is \"brave\" but .api_key is not set.".into(),
                    )
                })?;
                let endpoint = setting(info, "url").unwrap_or_else(|| BRAVE_ENDPOINT.to_string());
                check_http_url("url", &endpoint)?;
                Ok(Backend::Brave { endpoint, api_key })
            }
            other => Err(setting_error(format!(
                "plugin-settings.web_search.backend is \"{other}\"; the backends are \"searxng\" and \"brave\"."
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Searxng { .. } => "searxng",
            Backend::Brave { .. } => "brave",
        }
    }

    /// Where results come from, for the result's `origin` line (never the API key).
    pub fn origin(&self) -> &str {
        match self {
            Backend::Searxng { url } => url,
            Backend::Brave { endpoint, .. } => endpoint,
        }
    }

    /// The request for `query`, asking for `count` results where the backend takes a count.
    pub fn request(&self, query: &str, count: usize) -> HttpRequest {
        let (url, req) = match self {
            Backend::Searxng { url } => {
                let base = url.trim_end_matches('/');
                let base =
                    if base.ends_with("/search") { base.to_string() } else { format!("{base}/search") };
                let sep = if base.contains('?') { '&' } else { '?' };
                (format!("{base}{sep}q={}&format=json&pageno=1", encode(query)), HttpRequest::default())
            }
            Backend::Brave { endpoint, api_key } => {
                let sep = if endpoint.contains('?') { '&' } else { '?' };
                let count = count.clamp(1, BRAVE_MAX_COUNT);
                let url = format!("{endpoint}{sep}q={}&count={count}", encode(query));
                (url, HttpRequest::default().header("X-Subscription-Token", api_key))
            }
        };
        HttpRequest {
            method: "GET".into(),
            url,
            max_bytes: Some(MAX_ANSWER_BYTES),
            timeout_ms: Some(TIMEOUT_MS),
            ..req.header("Accept", "application/json")
        }
    }

    /// Reads the backend's answer; a failure says what the user or the model can do.
    pub fn parse(&self, resp: &HttpResponse) -> Result<Answer, ToolError> {
        if !(200..300).contains(&resp.status) {
            return Err(self.status_error(resp.status));
        }
        let json: Value = serde_json::from_slice(&resp.body).map_err(|_| {
            let err = ToolError::new(
                ErrorKind::Other,
                format!("the {} backend did not answer with JSON (HTTP {})", self.name(), resp.status),
            );
            match self {
                Backend::Searxng { .. } => err.with_hint(
                    "the instance may not allow format=json: its settings.yml must list json under \
                     search.formats; tell the user",
                ),
                Backend::Brave { .. } => err,
            }
        })?;
        Ok(match self {
            Backend::Searxng { .. } => Answer {
                hits: hits(&json["results"], "content"),
                unresponsive: json["unresponsive_engines"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| match e {
                        Value::Array(pair) => pair.first().and_then(Value::as_str).map(|s| clean(s, 60)),
                        Value::String(s) => Some(clean(s, 60)),
                        _ => None,
                    })
                    .collect(),
            },
            Backend::Brave { .. } => {
                Answer { hits: hits(&json["web"]["results"], "description"), unresponsive: vec![] }
            }
        })
    }

    fn status_error(&self, status: u16) -> ToolError {
        let name = self.name();
        match (self, status) {
            (Backend::Searxng { .. }, 403) => ToolError::new(
                ErrorKind::PermissionDenied,
                "the SearXNG instance refused the search (HTTP 403)",
            )
            .with_hint(
                "SearXNG answers 403 when format=json is not enabled: its settings.yml must list json \
                 under search.formats. Tell the user; do not retry",
            ),
            (Backend::Brave { .. }, 401 | 403) => ToolError::new(
                ErrorKind::PermissionDenied,
                format!("Brave Search refused the API key (HTTP {status})"),
            )
            .with_hint("the user must check plugin-settings.web_search.api_key; do not retry"),
            (_, 429) => {
                ToolError::new(ErrorKind::Other, format!("the {name} backend is rate limiting (HTTP 429)"))
                    .with_hint("wait before searching again, and search less often")
            }
            (_, 500..=599) => {
                ToolError::new(ErrorKind::Other, format!("the {name} backend failed (HTTP {status})"))
                    .with_hint("retry later")
            }
            _ => ToolError::new(ErrorKind::Other, format!("the {name} backend answered HTTP {status}")),
        }
    }
}

/// Results from a JSON array of objects with `title`, `url` and the snippet field `snippet_key`.
fn hits(list: &Value, snippet_key: &str) -> Vec<Hit> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let url = r["url"].as_str()?.trim().to_string();
            let title = clean(r["title"].as_str().unwrap_or(""), 200);
            let snippet = clean(r[snippet_key].as_str().unwrap_or(""), 500);
            Some(Hit { title: if title.is_empty() { url.clone() } else { title }, url, snippet })
        })
        .collect()
}

/// Text from a backend: tags removed (Brave marks matches with `<strong>`), entities decoded,
/// white space collapsed, cut to `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => plain.push(c),
            _ => {}
        }
    }
    let decoded = entities(&plain);
    let words: Vec<&str> = decoded.split_whitespace().collect();
    let one = words.join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let cut: String = one.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}

/// Decodes the HTML entities search snippets use: the five XML ones, `&nbsp;`, and numeric ones.
fn entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &tail[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => {
                    let num = name.strip_prefix('#')?;
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => num.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Percent-encodes a query parameter value (everything but unreserved characters).
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
