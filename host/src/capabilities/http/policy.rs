//! The session's network policy for plugins: the mode (`--network`), the host allowlists,
//! the private addresses the user trusts, and the hosts map consulted before DNS.

use super::addr;
use crate::config::NetworkSettings;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

/// What plugins may reach (`network.mode`, `--network`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetMode {
    /// No network for plugins, and none for anything else the host might add.
    Off,
    /// Only the host's model client talks to the network; plugins get none (the default).
    LlmOnly,
    /// Plugins granted `http` may fetch, through the checks of this module.
    On,
}

impl NetMode {
    pub fn parse(s: &str) -> Option<NetMode> {
        match s {
            "off" => Some(NetMode::Off),
            "llm-only" => Some(NetMode::LlmOnly),
            "on" => Some(NetMode::On),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NetMode::Off => "off",
            NetMode::LlmOnly => "llm-only",
            NetMode::On => "on",
        }
    }
}

/// An allowlist entry: `docs.rs` (that host) or `*.python.org` (its subdomains).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern(String);

impl HostPattern {
    pub fn parse(s: &str) -> Option<HostPattern> {
        let p = s.trim().trim_end_matches('.').to_ascii_lowercase();
        let body = p.strip_prefix("*.").unwrap_or(&p);
        let ok = !body.is_empty() && !body.contains('*') && !body.contains('/') && !body.contains(':');
        ok.then_some(HostPattern(p))
    }

    /// Whether `host` (lowercase, as the URL parser wrote it) matches.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        match self.0.strip_prefix("*.") {
            Some(suffix) => {
                host.len() > suffix.len() && host.ends_with(suffix) && {
                    let cut = host.len() - suffix.len();
                    host.as_bytes()[cut - 1] == b'.'
                }
            }
            None => host == self.0,
        }
    }
}

/// A private address the user trusts: an IP, optionally with a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrivateException {
    pub ip: IpAddr,
    pub port: Option<u16>,
}

impl PrivateException {
    /// `10.0.0.5`, `127.0.0.1:8123`, `::1`, `[::1]:8080`, or `localhost[:port]` (127.0.0.1 and ::1).
    pub fn parse(s: &str) -> Result<Vec<PrivateException>, String> {
        let s = s.trim();
        let bad = || {
            format!(
                "'{s}' is not an IP address with an optional port; write it like 10.0.0.5, \
                 127.0.0.1:8123 or [::1]:8080"
            )
        };
        let port_of = |p: &str| p.parse::<u16>().map_err(|_| bad());
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (h, tail) = rest.split_once(']').ok_or_else(bad)?;
            let port = match tail.strip_prefix(':') {
                Some(p) => Some(port_of(p)?),
                None if tail.is_empty() => None,
                None => return Err(bad()),
            };
            (h, port)
        } else if s.matches(':').count() == 1 {
            let (h, p) = s.split_once(':').ok_or_else(bad)?;
            (h, Some(port_of(p)?))
        } else {
            (s, None)
        };
        if host.eq_ignore_ascii_case("localhost") {
            let v4 = PrivateException { ip: IpAddr::from([127, 0, 0, 1]), port };
            let v6 = PrivateException { ip: IpAddr::from(std::net::Ipv6Addr::LOCALHOST), port };
            return Ok(vec![v4, v6]);
        }
        let ip: IpAddr = host.parse().map_err(|_| bad())?;
        Ok(vec![PrivateException { ip, port }])
    }

    fn covers(&self, ip: IpAddr, port: u16) -> bool {
        self.ip == ip && self.port.is_none_or(|p| p == port)
    }
}

/// The session's network policy. The default is `off` with no exceptions.
#[derive(Debug, Clone)]
pub struct NetPolicy {
    pub mode: NetMode,
    /// When not empty, the only hosts any plugin may fetch from.
    pub allow_hosts: Vec<HostPattern>,
    pub allow_private: Vec<PrivateException>,
    /// Answers for names, consulted before DNS (lowercase names).
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
    /// The raw body cap; a request may only lower it.
    pub max_body: u64,
    /// Total time for one fetch, redirects included, when the request gives none.
    pub timeout: Duration,
    /// The longest total time a request may ask for.
    pub max_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_redirects: usize,
}

/// 5 MB: the most body bytes one fetch returns.
pub const MAX_BODY: u64 = 5 * 1024 * 1024;

impl Default for NetPolicy {
    fn default() -> Self {
        NetPolicy {
            mode: NetMode::Off,
            allow_hosts: Vec::new(),
            allow_private: Vec::new(),
            hosts: BTreeMap::new(),
            max_body: MAX_BODY,
            timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 10,
        }
    }
}

impl NetPolicy {
    /// Builds the policy from `[network]`; the error names the setting and the bad entry.
    pub fn from_settings(n: &NetworkSettings) -> Result<NetPolicy, String> {
        let mode = NetMode::parse(&n.mode)
            .ok_or_else(|| format!("network.mode: '{}' is not one of off, llm-only, on", n.mode))?;
        let allow_hosts = n
            .allow_hosts
            .iter()
            .map(|h| {
                HostPattern::parse(h).ok_or_else(|| {
                    format!("network.allow_hosts: '{h}' is not a host name or a pattern like *.python.org")
                })
            })
            .collect::<Result<_, _>>()?;
        let mut allow_private = Vec::new();
        for entry in &n.allow_private {
            allow_private
                .extend(PrivateException::parse(entry).map_err(|e| format!("network.allow_private: {e}"))?);
        }
        let mut hosts = BTreeMap::new();
        for (name, value) in &n.hosts {
            let ips = parse_ips(value).map_err(|e| format!("network.hosts.\"{name}\": {e}"))?;
            hosts.insert(name.trim_end_matches('.').to_ascii_lowercase(), ips);
        }
        Ok(NetPolicy { mode, allow_hosts, allow_private, hosts, ..NetPolicy::default() })
    }

    /// Whether the user listed `ip` (and `port`) in `network.allow_private`.
    pub fn private_allowed(&self, ip: IpAddr, port: u16) -> bool {
        self.allow_private.iter().any(|e| e.covers(ip, port))
    }

    /// Refuses `ip:port` unless it is public or a trusted private address; the error says
    /// which range it is in and what (if anything) would allow it.
    pub fn check_addr(&self, ip: IpAddr, port: u16) -> Result<(), String> {
        let Some(why) = addr::classify(ip) else { return Ok(()) };
        if why.exemptible && self.private_allowed(ip, port) {
            return Ok(());
        }
        let fix = if why.exemptible {
            format!(
                "; if you trust it, list it in network.allow_private (for example \"{}\")",
                show_addr(ip, port)
            )
        } else {
            String::new()
        };
        Err(format!("{ip} is in {why}, which plugins may not reach{fix}"))
    }
}

/// `ip:port`, with brackets for IPv6.
pub fn show_addr(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

/// Addresses separated by commas or spaces.
fn parse_ips(value: &str) -> Result<Vec<IpAddr>, String> {
    let ips: Vec<IpAddr> = value
        .split([',', ' '])
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(|_| format!("'{p}' is not an IP address")))
        .collect::<Result<_, _>>()?;
    if ips.is_empty() {
        return Err("no address given; write one or more IP addresses separated by commas".into());
    }
    Ok(ips)
}

/// Parses a plugin's `allow_hosts` setting (comma- or space-separated patterns).
pub fn plugin_patterns(setting: &str) -> Result<Vec<HostPattern>, String> {
    setting
        .split([',', ' '])
        .filter(|p| !p.is_empty())
        .map(|p| HostPattern::parse(p).ok_or_else(|| format!("'{p}' is not a host name or a pattern")))
        .collect()
}
