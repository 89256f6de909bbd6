//! One fetch: the mode check, then per hop check-then-connect with a client pinned to the
//! checked addresses, redirects followed by hand (at most 10), the body read up to its cap.

use super::policy::{NetMode, NetPolicy, plugin_patterns};
use super::resolve::{self, Target};
use super::{Code, HttpError, Request, Response};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Headers a plugin may not set: the host frames the request itself.
const HOST_OWNED: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
    "accept-encoding",
];
/// Headers kept when a redirect leaves the origin; credentials and the rest are dropped.
const CROSS_ORIGIN_SAFE: &[&str] = &["accept", "accept-language", "user-agent"];
const USER_AGENT: &str = concat!("corral/", env!("CARGO_PKG_VERSION"), " (+fetch)");
/// The methods a plugin may use; CONNECT and TRACE (tunnels, reflection) are not among them.
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The client's only resolver: it answers the one name that was checked with the checked
/// addresses and refuses every other lookup, so nothing can fall back to the system's DNS.
#[derive(Debug)]
pub(super) struct Pinned {
    /// The checked name, lowercase without a trailing dot; `None` for an IP-literal URL.
    name: Option<String>,
    addrs: Vec<SocketAddr>,
}

impl Pinned {
    pub(super) fn new(target: &Target) -> Pinned {
        let name = target.domain.as_ref().map(|d| d.trim_end_matches('.').to_ascii_lowercase());
        Pinned { name, addrs: target.addrs.clone() }
    }

    /// The addresses for `asked`, or `None` when it is not the checked name.
    pub(super) fn answer(&self, asked: &str) -> Option<Vec<SocketAddr>> {
        let asked = asked.trim_end_matches('.').to_ascii_lowercase();
        (self.name.as_deref() == Some(asked.as_str())).then(|| self.addrs.clone())
    }
}

impl Resolve for Pinned {
    fn resolve(&self, name: Name) -> Resolving {
        let result = match self.answer(name.as_str()) {
            Some(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
            None => Err(format!("'{}' was not checked for this request", name.as_str()).into()),
        };
        Box::pin(std::future::ready(result))
    }
}

fn denied_mode(mode: NetMode) -> HttpError {
    let now = match mode {
        NetMode::Off => "--network off: no network at all",
        _ => "--network llm-only, the default: only the model endpoint is reached",
    };
    HttpError::new(
        Code::Denied,
        format!(
            "network access for plugins is disabled ({now}). Start corral with --network on \
             (or set network.mode = \"on\" in corral.toml) to let plugins granted http fetch URLs"
        ),
    )
}

/// Runs `req` for `plugin`; `plugin_allow` is its `allow_hosts` setting, if any.
pub async fn run(
    policy: &NetPolicy,
    plugin: &str,
    plugin_allow: Option<&str>,
    req: Request,
) -> Result<Response, HttpError> {
    if policy.mode != NetMode::On {
        return Err(denied_mode(policy.mode));
    }
    let allow = match plugin_allow {
        Some(s) => plugin_patterns(s).map_err(|e| {
            HttpError::new(Code::Denied, format!("plugin-settings.{plugin}.allow_hosts: {e}"))
        })?,
        None => Vec::new(),
    };
    let limit = limit(policy, req.timeout);
    let url = req.url.clone();
    match tokio::time::timeout(limit, follow(policy, plugin, &allow, limit, req)).await {
        Ok(result) => result,
        Err(_) => Err(HttpError::new(
            Code::Timeout,
            format!("{url}: no complete answer within {} s", limit.as_secs_f64()),
        )),
    }
}

/// The request of one hop.
struct Hop {
    url: Url,
    method: Method,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
}

fn headers_of(pairs: &[(String, String)]) -> Result<HeaderMap, HttpError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let bad = |what: &str| HttpError::new(Code::Other, format!("invalid header {what} '{name}'"));
        let n = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad("name"))?;
        if HOST_OWNED.contains(&n.as_str()) {
            continue;
        }
        let v = HeaderValue::from_str(value).map_err(|_| bad("value for"))?;
        map.append(n, v);
    }
    Ok(map)
}

async fn follow(
    policy: &NetPolicy,
    plugin: &str,
    allow: &[super::HostPattern],
    limit: Duration,
    req: Request,
) -> Result<Response, HttpError> {
    let upper = req.method.trim().to_ascii_uppercase();
    if !METHODS.contains(&upper.as_str()) {
        return Err(HttpError::new(
            Code::Other,
            format!("the HTTP method '{}' is not allowed; use one of {}", req.method, METHODS.join(", ")),
        ));
    }
    let method = Method::from_bytes(upper.as_bytes())
        .map_err(|_| HttpError::new(Code::Other, format!("invalid HTTP method '{}'", req.method)))?;
    let cap = req.max_bytes.map_or(policy.max_body, |m| m.min(policy.max_body));
    let mut hop = Hop {
        url: resolve::parse_url(&req.url)?,
        method,
        headers: headers_of(&req.headers)?,
        body: req.body,
    };
    for n in 0..=policy.max_redirects {
        let target = resolve::check(policy, plugin, allow, &hop.url).await?;
        let resp = send(policy, &target, &hop, limit).await?;
        let status = resp.status();
        let location = resp.headers().get(reqwest::header::LOCATION).cloned();
        let Some(location) = location.filter(|_| status.is_redirection()) else {
            return read(resp, hop.url, cap).await;
        };
        // A redirect's body is never read.
        drop(resp);
        let location = location.to_str().map_err(|_| {
            HttpError::new(Code::InvalidUrl, format!("{} redirected to a Location that is not text", hop.url))
        })?;
        let next = hop.url.join(location).map_err(|e| {
            HttpError::new(
                Code::InvalidUrl,
                format!("{} redirected to '{location}', not a valid URL: {e}", hop.url),
            )
        })?;
        if n == policy.max_redirects {
            return Err(HttpError::new(
                Code::TooManyRedirects,
                format!(
                    "stopped after {} redirects (the last one from {} to {next}); a redirect loop or \
                     a very long chain",
                    policy.max_redirects, hop.url
                ),
            ));
        }
        hop = redirect(hop, status, next);
    }
    Err(HttpError::new(Code::TooManyRedirects, "too many redirects"))
}

/// The request for the next hop: 303 (and 301/302 after a POST) become a GET without a
/// body; credentials and other headers are dropped when the origin changes.
fn redirect(mut hop: Hop, status: StatusCode, next: Url) -> Hop {
    let to_get = status == StatusCode::SEE_OTHER && hop.method != Method::HEAD
        || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND) && hop.method == Method::POST;
    if to_get {
        hop.method = Method::GET;
        hop.body = None;
        hop.headers.remove(reqwest::header::CONTENT_TYPE);
    }
    if next.origin() != hop.url.origin() {
        let kept: HeaderMap = hop
            .headers
            .iter()
            .filter(|(k, _)| CROSS_ORIGIN_SAFE.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        hop.headers = kept;
    }
    hop.url = next;
    hop
}

/// The text of an error and its causes.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cur = c.source();
    }
    text
}

/// Sends one hop to the checked addresses only: a client of its own whose resolver knows
/// nothing but them, with no proxy, no pooled connections and no automatic redirects.
async fn send(
    policy: &NetPolicy,
    target: &Target,
    hop: &Hop,
    limit: Duration,
) -> Result<reqwest::Response, HttpError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(Pinned::new(target)))
        .connect_timeout(policy.connect_timeout)
        .timeout(limit)
        .pool_max_idle_per_host(0)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| HttpError::new(Code::Other, format!("cannot set up the HTTP client: {}", chain(&e))))?;
    let mut rb = client.request(hop.method.clone(), hop.url.clone()).headers(hop.headers.clone());
    if let Some(body) = &hop.body {
        rb = rb.body(body.clone());
    }
    rb.send().await.map_err(|e| {
        let to = resolve::show(&target.addrs);
        if e.is_timeout() {
            HttpError::new(
                Code::Timeout,
                format!("{}: no complete answer within {} s ({to})", hop.url, limit.as_secs_f64()),
            )
        } else if e.is_connect() {
            HttpError::new(Code::Unreachable, format!("cannot connect to {} ({to}): {}", hop.url, chain(&e)))
        } else {
            HttpError::new(Code::Other, format!("{}: {}", hop.url, chain(&e)))
        }
    })
}

/// Reads the body up to `cap` bytes; more is cut and flagged.
async fn read(mut resp: reqwest::Response, url: Url, cap: u64) -> Result<Response, HttpError> {
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut body: Vec<u8> = Vec::new();
    let mut truncated = false;
    loop {
        let chunk = resp.chunk().await.map_err(|e| {
            let code = if e.is_timeout() { Code::Timeout } else { Code::Other };
            HttpError::new(code, format!("{url}: reading the body failed: {}", chain(&e)))
        })?;
        let Some(chunk) = chunk else { break };
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response { status, url: url.to_string(), headers, body, truncated })
}

/// How long the whole fetch may take: what the request asks, at most the host's cap, or
/// the host's default.
fn limit(policy: &NetPolicy, asked: Option<Duration>) -> Duration {
    asked.map_or(policy.timeout, |t| t.min(policy.max_timeout))
}
