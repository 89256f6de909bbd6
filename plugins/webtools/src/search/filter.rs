//! The `allowed_domains` / `blocked_domains` filters: a domain matches itself and its
//! subdomains, and a blocked match wins over an allowed one.

use corral_plugin_sdk::{ToolError, Value};

/// Most entries in one filter list.
pub const MAX_DOMAINS: usize = 50;

/// The domain filters of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainFilter {
    /// When not empty, only results on these domains are kept.
    pub allowed: Vec<String>,
    /// Results on these domains are dropped.
    pub blocked: Vec<String>,
}

/// A filter entry as a bare lowercase domain: `https://Docs.rs/x` and `*.docs.rs` become `docs.rs`.
fn normalize(field: &str, entry: &str) -> Result<String, ToolError> {
    let mut d = entry.trim().to_ascii_lowercase();
    if let Some(i) = d.find("://") {
        d = d[i + 3..].to_string();
    }
    let d = d.split(['/', '?', '#']).next().unwrap_or("");
    let d = d.rsplit('@').next().unwrap_or(d);
    let d = match d.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => d,
    };
    let d = d.trim_start_matches("*.").trim_start_matches('.').trim_end_matches('.');
    let valid = !d.is_empty()
        && d.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        && !d.contains("..");
    if !valid {
        return Err(ToolError::invalid_args(format!(
            "'{field}' entry \"{entry}\" is not a domain; write domains like \"docs.rs\" or \"python.org\""
        )));
    }
    Ok(d.to_string())
}

/// A list of domains: a JSON array of strings, or one string with commas.
fn list(args: &Value, field: &str) -> Result<Vec<String>, ToolError> {
    let raw: Vec<&str> = match args.get(field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s.split(',').filter(|p| !p.trim().is_empty()).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().ok_or_else(|| {
                    ToolError::invalid_args(format!("'{field}' must be a list of domain names (strings)"))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ToolError::invalid_args(format!("'{field}' must be a list of domain names")));
        }
    };
    if raw.len() > MAX_DOMAINS {
        return Err(ToolError::invalid_args(format!(
            "'{field}' has {} entries; at most {MAX_DOMAINS} are allowed",
            raw.len()
        )));
    }
    let mut out: Vec<String> = Vec::new();
    for entry in raw {
        let d = normalize(field, entry)?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

/// Whether `host` is `domain` or one of its subdomains.
fn on(host: &str, domain: &str) -> bool {
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(domain)
            && host[..host.len() - domain.len()].ends_with('.'))
}

/// The lowercase host of an http(s) URL, without userinfo, port or a trailing dot.
pub fn host_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    // A backslash ends the authority too, as in browsers' parsing of http(s) URLs.
    let authority = rest.split(['/', '?', '#', '\\']).next()?;
    let authority = authority.rsplit('@').next()?;
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

impl DomainFilter {
    pub fn from_args(args: &Value) -> Result<DomainFilter, ToolError> {
        Ok(DomainFilter { allowed: list(args, "allowed_domains")?, blocked: list(args, "blocked_domains")? })
    }

    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty() && self.blocked.is_empty()
    }

    /// Whether a result at `url` is kept. URLs that are not http(s) never are.
    pub fn keeps(&self, url: &str) -> bool {
        let Some(host) = host_of(url) else { return false };
        if self.blocked.iter().any(|d| on(&host, d)) {
            return false;
        }
        self.allowed.is_empty() || self.allowed.iter().any(|d| on(&host, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::json;

    #[test]
    fn entries_are_normalised_to_bare_domains() {
        let f = DomainFilter::from_args(&json!({
            "allowed_domains": ["Docs.RS", "https://www.python.org/3/", "*.github.io", ".example.com.", "x.test:8080", "docs.rs"],
            "blocked_domains": "spam.test, ads.test"
        }))
        .unwrap();
        assert_eq!(f.allowed, ["docs.rs", "www.python.org", "github.io", "example.com", "x.test"]);
        assert_eq!(f.blocked, ["spam.test", "ads.test"]);
        for bad in [
            json!({"allowed_domains": ["a b"]}),
            json!({"blocked_domains": [""]}),
            json!({"allowed_domains": ["a..b"]}),
        ] {
            let e = DomainFilter::from_args(&bad).unwrap_err();
            assert!(e.message.contains("is not a domain"), "{bad}: {}", e.message);
        }
        let e = DomainFilter::from_args(&json!({"allowed_domains": [1]})).unwrap_err();
        assert!(e.message.contains("list of domain names"), "{}", e.message);
        let many: Vec<String> = (0..51).map(|i| format!("d{i}.test")).collect();
        assert!(DomainFilter::from_args(&json!({ "blocked_domains": many })).is_err());
    }

    #[test]
    fn subdomains_match_and_lookalikes_do_not() {
        let f = DomainFilter { allowed: vec!["rust-lang.org".into()], blocked: vec![] };
        assert!(f.keeps("https://rust-lang.org/"));
        assert!(f.keeps("https://doc.rust-lang.org/std/"));
        assert!(f.keeps("http://user@BLOG.Rust-Lang.org.:443/x"));
        assert!(!f.keeps("https://evilrust-lang.org/"));
        assert!(!f.keeps("https://rust-lang.org.evil.test/"));
        assert!(!f.keeps("https://example.com/?u=rust-lang.org"));
        assert!(!f.keeps("javascript:alert(1)//rust-lang.org"));
        assert!(!f.keeps("https://evil.test\\@rust-lang.org/"), "the host there is evil.test");
    }

    #[test]
    fn blocked_wins_over_allowed() {
        let f = DomainFilter { allowed: vec!["example.com".into()], blocked: vec!["ads.example.com".into()] };
        assert!(f.keeps("https://www.example.com/"));
        assert!(!f.keeps("https://ads.example.com/x"));
        assert!(!f.keeps("https://x.ads.example.com/"));
        let only_blocked = DomainFilter { allowed: vec![], blocked: vec!["pinterest.com".into()] };
        assert!(only_blocked.keeps("https://docs.rs/"));
        assert!(!only_blocked.keeps("https://www.pinterest.com/pin/1"));
    }

    #[test]
    fn hosts_of_urls() {
        assert_eq!(host_of("https://Docs.rs:443/a?b#c").as_deref(), Some("docs.rs"));
        assert_eq!(host_of("http://[2001:db8::1]:80/").as_deref(), Some("2001:db8::1"));
        assert_eq!(host_of("https://u:p@h.test/").as_deref(), Some("h.test"));
        assert_eq!(host_of("ftp://h.test/"), None);
        assert_eq!(host_of("https:///nohost"), None);
    }
}
