//! The host side of the WIT `http` interface: the SSRF-safe fetch. The host parses the URL,
//! resolves the name itself, refuses forbidden addresses, connects only to what it checked.
//!
//! The path of one fetch: the session's mode must be `on` ([`NetPolicy`]); the URL must be
//! http(s) and its host on the allowlists; the name is resolved (the hosts map, then DNS) and
//! every address it has must pass [`addr::classify`] unless the user listed it in
//! `network.allow_private` (the only way a private address is ever reached); then a client
//! built for this one request connects to those addresses only (`resolve_to_addrs`, no
//! proxy, no second lookup, no automatic redirects). Each redirect hop goes through the same
//! path. See `fetch.rs`.

pub mod addr;
mod fetch;
mod policy;
mod resolve;

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests;

pub use policy::{HostPattern, MAX_BODY, NetMode, NetPolicy, PrivateException, plugin_patterns};

use std::sync::Arc;
use std::time::Duration;

/// A request from a plugin.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Lowers the body cap.
    pub max_bytes: Option<u64>,
    /// The total time for the fetch (the host's default when unset, at most its cap).
    pub timeout: Option<Duration>,
}

/// The final answer after redirects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub url: String,
    /// Names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

/// Why a fetch failed (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Denied,
    InvalidUrl,
    Unreachable,
    Timeout,
    TooManyRedirects,
    Other,
}

/// A refused or failed fetch, with a message for the model that says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HttpError {
    pub code: Code,
    pub message: String,
}

impl HttpError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        HttpError { code, message: message.into() }
    }
}

/// Aborts the spawned fetch when the plugin call that awaits it is dropped (a timeout).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What one plugin's fetches may use (`Session::http`): the session's network policy and the
/// plugin's own `allow_hosts` setting. Owned, because the fetch runs as a task of its own.
#[derive(Debug, Clone)]
pub struct View {
    pub net: Arc<NetPolicy>,
    pub allow_hosts: Option<String>,
}

/// Fetches `req` for `plugin` under the session's policy. The work runs as its own tokio
/// task (TLS and DNS need more stack than a plugin call's fiber should lend).
pub async fn fetch(view: View, plugin: Arc<str>, req: Request) -> Result<Response, HttpError> {
    // The caller's `http` grant was checked by the host function (host_impl) before this.
    let mut task = AbortOnDrop(tokio::spawn(async move {
        fetch::run(&view.net, &plugin, view.allow_hosts.as_deref(), req).await
    }));
    match (&mut task.0).await {
        Ok(result) => result,
        Err(e) => Err(HttpError::new(Code::Other, format!("the fetch failed inside the host: {e}"))),
    }
}

/// Checks `url` for a connection the host makes for itself on the person's behalf (an MCP
/// server they configured): scheme, `network.allow_hosts`, and every address it resolves to
/// (private and loopback ones only when listed in `network.allow_private`). `network.mode =
/// "off"` refuses it. Returns the name to pin and the checked addresses to connect to.
pub async fn check_host_url(
    policy: &NetPolicy,
    who: &str,
    url: &str,
) -> Result<(Option<String>, Vec<std::net::SocketAddr>), HttpError> {
    if policy.mode == NetMode::Off {
        return Err(HttpError::new(
            Code::Denied,
            format!(
                "refused by the network rule: {who} is reached over the network and this run has --network off \
                 (network.mode = \"off\"); the person can allow it with --network llm-only or on"
            ),
        ));
    }
    let parsed = resolve::parse_url(url)?;
    let target = resolve::check(policy, who, &[], &parsed).await?;
    Ok((target.domain, target.addrs))
}
