//! Check one URL before connecting: scheme, host allowlists, name resolution (the hosts
//! map, then DNS) and the address check; the result is the exact set of addresses to use.

use super::policy::{HostPattern, NetPolicy, show_addr};
use super::{Code, HttpError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use url::{Host, Url};

/// A URL that passed every check, and the addresses the client may connect to.
#[derive(Debug, Clone)]
pub struct Target {
    /// The name to pin to `addrs`, when the URL names a host (not an IP literal).
    pub domain: Option<String>,
    pub addrs: Vec<SocketAddr>,
}

/// Parses `text` as an http(s) URL the way browsers do (WHATWG: `127.1`, `0x7f.1`,
/// `2130706433` all become `127.0.0.1`).
pub fn parse_url(text: &str) -> Result<Url, HttpError> {
    let url = Url::parse(text.trim())
        .map_err(|e| HttpError::new(Code::InvalidUrl, format!("'{text}' is not a valid URL: {e}")))?;
    check_scheme(&url)?;
    Ok(url)
}

pub fn check_scheme(url: &Url) -> Result<(), HttpError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(HttpError::new(
                Code::InvalidUrl,
                format!(
                    "the scheme '{other}:' is not allowed ({url}); only http and https URLs can be fetched"
                ),
            ));
        }
    }
    if url.host().is_none() {
        return Err(HttpError::new(Code::InvalidUrl, format!("'{url}' has no host")));
    }
    Ok(())
}

/// The host as allowlists see it: the lowercase name, or the address for IP literals.
fn host_key(host: &Host<&str>) -> String {
    match host {
        Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => ip.to_string(),
    }
}

/// Refuses hosts outside `network.allow_hosts` and the plugin's own `allow_hosts`.
fn check_allowlists(
    policy: &NetPolicy,
    plugin: &str,
    plugin_allow: &[HostPattern],
    key: &str,
) -> Result<(), HttpError> {
    if !policy.allow_hosts.is_empty() && !policy.allow_hosts.iter().any(|p| p.matches(key)) {
        return Err(HttpError::new(
            Code::Denied,
            format!(
                "the host '{key}' is not in network.allow_hosts; add it there to let plugins fetch from it"
            ),
        ));
    }
    if !plugin_allow.is_empty() && !plugin_allow.iter().any(|p| p.matches(key)) {
        return Err(HttpError::new(
            Code::Denied,
            format!(
                "the host '{key}' is not in plugin-settings.{plugin}.allow_hosts; add it there to let \
                 this plugin fetch from it"
            ),
        ));
    }
    Ok(())
}

/// The addresses of `name`: the hosts map first, `localhost` names as loopback, then DNS.
async fn lookup(policy: &NetPolicy, name: &str, port: u16) -> Result<Vec<IpAddr>, HttpError> {
    if let Some(ips) = policy.hosts.get(name) {
        return Ok(ips.clone());
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)]);
    }
    let found = tokio::net::lookup_host((name, port))
        .await
        .map_err(|e| HttpError::new(Code::Unreachable, format!("cannot resolve the host '{name}': {e}")))?;
    let mut ips: Vec<IpAddr> = Vec::new();
    for a in found {
        if !ips.contains(&a.ip()) {
            ips.push(a.ip());
        }
    }
    if ips.is_empty() {
        return Err(HttpError::new(Code::Unreachable, format!("the host '{name}' has no addresses")));
    }
    Ok(ips)
}

/// Runs every check on `url` and returns where to connect. Nothing is sent anywhere but to
/// the resolver before this succeeds.
pub async fn check(
    policy: &NetPolicy,
    plugin: &str,
    plugin_allow: &[HostPattern],
    url: &Url,
) -> Result<Target, HttpError> {
    check_scheme(url)?;
    let Some(host) = url.host() else {
        return Err(HttpError::new(Code::InvalidUrl, format!("'{url}' has no host")));
    };
    let port = url
        .port_or_known_default()
        .ok_or_else(|| HttpError::new(Code::InvalidUrl, format!("'{url}' has no port")))?;
    let key = host_key(&host);
    check_allowlists(policy, plugin, plugin_allow, &key)?;
    let (domain, ips) = match host {
        Host::Ipv4(ip) => (None, vec![IpAddr::V4(ip)]),
        Host::Ipv6(ip) => (None, vec![IpAddr::V6(ip)]),
        Host::Domain(d) => (Some(d.to_string()), lookup(policy, &key, port).await?),
    };
    for ip in &ips {
        policy.check_addr(*ip, port).map_err(|why| {
            let via = if domain.is_some() { format!("'{key}' resolves to {ip}: ") } else { String::new() };
            HttpError::new(Code::Denied, format!("refused {url}: {via}{why}"))
        })?;
    }
    let addrs = ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect();
    Ok(Target { domain, addrs })
}

/// `ip:port` of every address, for messages.
pub fn show(addrs: &[SocketAddr]) -> String {
    addrs.iter().map(|a| show_addr(a.ip(), a.port())).collect::<Vec<_>>().join(", ")
}
