//! The network and host-info imports behind traits: [`Net`] fetches through the host's
//! checked client, [`HostInfo`] reads the plugin's settings and saves long output as scratch
//! files. [`super::Host`] is the real thing; [`FakeNet`] and [`FakeHostInfo`] stand in for
//! native tests.

use super::Host;
use crate::{ErrorKind, ToolError};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A request for the host's client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Lowers the host's body cap (5 MB).
    pub max_bytes: Option<u64>,
    /// The total time for the fetch: the host's default (30 s) when unset, at most 120 s.
    pub timeout_ms: Option<u32>,
}

impl HttpRequest {
    /// A GET of `url`.
    pub fn get(url: &str) -> Self {
        HttpRequest { method: "GET".into(), url: url.into(), ..Self::default() }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The host's answer, after redirects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// The URL that finally answered.
    pub url: String,
    /// Lowercase names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was cut at the cap.
    pub truncated: bool,
}

impl HttpResponse {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
}

/// Why the host refused or failed a fetch (mirrors the WIT `error-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpErrorCode {
    Denied,
    InvalidUrl,
    Unreachable,
    Timeout,
    TooManyRedirects,
    Other,
}

impl HttpErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpErrorCode::Denied => "denied",
            HttpErrorCode::InvalidUrl => "invalid-url",
            HttpErrorCode::Unreachable => "unreachable",
            HttpErrorCode::Timeout => "timeout",
            HttpErrorCode::TooManyRedirects => "too-many-redirects",
            HttpErrorCode::Other => "other",
        }
    }
}

/// A refused or failed fetch, with the host's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    pub code: HttpErrorCode,
    pub message: String,
}

impl From<HttpError> for ToolError {
    fn from(e: HttpError) -> ToolError {
        let kind = match e.code {
            HttpErrorCode::Denied => ErrorKind::PermissionDenied,
            HttpErrorCode::InvalidUrl => ErrorKind::InvalidArgs,
            HttpErrorCode::Unreachable => ErrorKind::Io,
            HttpErrorCode::Timeout => ErrorKind::Timeout,
            HttpErrorCode::TooManyRedirects | HttpErrorCode::Other => ErrorKind::Other,
        };
        let err = ToolError::new(kind, format!("{}: {}", e.code.as_str(), e.message));
        match e.code {
            HttpErrorCode::Denied => err.with_hint("the user's network policy refused this; do not retry it"),
            HttpErrorCode::Unreachable => err.with_hint("check the URL; the site may be down"),
            _ => err,
        }
    }
}

/// The host's checked HTTP client.
pub trait Net {
    fn fetch(&self, req: &HttpRequest) -> Result<HttpResponse, HttpError>;
}

/// The plugin's settings and the host's scratch space.
pub trait HostInfo {
    /// The plugin's setting `key` (`[plugin-settings.<plugin>]`).
    fn setting(&self, key: &str) -> Option<String>;
    /// Saves `contents` under `.corral/out/` for read_file; returns the workspace path.
    fn save_output(&self, kind: &str, contents: &str) -> Result<String, String>;
}

#[cfg(target_arch = "wasm32")]
mod imports {
    use super::*;
    use crate::bindings::corral::plugin::{host_info, http as h};

    impl Net for Host {
        fn fetch(&self, req: &HttpRequest) -> Result<HttpResponse, HttpError> {
            let wit = h::Request {
                method: req.method.clone(),
                url: req.url.clone(),
                headers: req.headers.clone(),
                body: req.body.clone(),
                max_bytes: req.max_bytes,
                timeout_ms: req.timeout_ms,
            };
            match h::fetch(&wit) {
                Ok(r) => Ok(HttpResponse {
                    status: r.status,
                    url: r.url,
                    headers: r.headers,
                    body: r.body,
                    truncated: r.truncated,
                }),
                Err(e) => {
                    let code = match e.code {
                        h::ErrorCode::Denied => HttpErrorCode::Denied,
                        h::ErrorCode::InvalidUrl => HttpErrorCode::InvalidUrl,
                        h::ErrorCode::Unreachable => HttpErrorCode::Unreachable,
                        h::ErrorCode::Timeout => HttpErrorCode::Timeout,
                        h::ErrorCode::TooManyRedirects => HttpErrorCode::TooManyRedirects,
                        h::ErrorCode::Other => HttpErrorCode::Other,
                    };
                    Err(HttpError { code, message: e.message })
                }
            }
        }
    }

    impl HostInfo for Host {
        fn setting(&self, key: &str) -> Option<String> {
            host_info::setting(key)
        }
        fn save_output(&self, kind: &str, contents: &str) -> Result<String, String> {
            host_info::save_output(kind, contents)
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imports {
    //! Outside a component there is no host: fetches are refused, there are no settings.
    use super::*;

    impl Net for Host {
        fn fetch(&self, _req: &HttpRequest) -> Result<HttpResponse, HttpError> {
            Err(HttpError { code: HttpErrorCode::Denied, message: "not running inside corral".into() })
        }
    }

    impl HostInfo for Host {
        fn setting(&self, _key: &str) -> Option<String> {
            None
        }
        fn save_output(&self, _kind: &str, _contents: &str) -> Result<String, String> {
            Err("not running inside corral".into())
        }
    }
}

/// A scripted network: answers by exact URL (or the `*` route), and records every request.
#[derive(Debug, Default)]
pub struct FakeNet {
    routes: BTreeMap<String, Result<HttpResponse, HttpError>>,
    /// Every request, in order.
    pub requests: RefCell<Vec<HttpRequest>>,
}

impl FakeNet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `url` with `status`, `content_type` and `body`; the final URL is `url`.
    pub fn page(mut self, url: &str, status: u16, content_type: &str, body: &[u8]) -> Self {
        let headers = vec![("content-type".to_string(), content_type.to_string())];
        let resp = HttpResponse { status, url: url.into(), headers, body: body.to_vec(), truncated: false };
        self.routes.insert(url.into(), Ok(resp));
        self
    }

    /// Answers `url` with `resp` exactly.
    pub fn response(mut self, url: &str, resp: HttpResponse) -> Self {
        self.routes.insert(url.into(), Ok(resp));
        self
    }

    /// Fails `url` with `code` and `message`.
    pub fn error(mut self, url: &str, code: HttpErrorCode, message: &str) -> Self {
        self.routes.insert(url.into(), Err(HttpError { code, message: message.into() }));
        self
    }
}

impl Net for FakeNet {
    fn fetch(&self, req: &HttpRequest) -> Result<HttpResponse, HttpError> {
        self.requests.borrow_mut().push(req.clone());
        let route = self.routes.get(&req.url).or_else(|| self.routes.get("*"));
        route.cloned().unwrap_or_else(|| {
            Err(HttpError {
                code: HttpErrorCode::Unreachable,
                message: format!("no fake route for {}", req.url),
            })
        })
    }
}

/// Settings from a map; saved outputs kept in memory under `.corral/out/<kind>_<n>.txt`.
#[derive(Debug, Default)]
pub struct FakeHostInfo {
    pub settings: BTreeMap<String, String>,
    /// (path, contents) of every save.
    pub saved: RefCell<Vec<(String, String)>>,
}

impl FakeHostInfo {
    pub fn new(settings: &[(&str, &str)]) -> Self {
        let settings = settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        FakeHostInfo { settings, saved: RefCell::new(Vec::new()) }
    }
}

impl HostInfo for FakeHostInfo {
    fn setting(&self, key: &str) -> Option<String> {
        self.settings.get(key).cloned()
    }
    fn save_output(&self, kind: &str, contents: &str) -> Result<String, String> {
        let mut saved = self.saved.borrow_mut();
        let path = format!(".corral/out/{kind}_{}.txt", saved.len());
        saved.push((path.clone(), contents.to_string()));
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_net_answers_by_url_and_records_requests() {
        let net = FakeNet::new().page("https://a.test/", 200, "text/html", b"<p>x</p>").error(
            "https://b.test/",
            HttpErrorCode::Denied,
            "refused",
        );
        let r = net.fetch(&HttpRequest::get("https://a.test/")).unwrap();
        assert_eq!((r.status, r.header("Content-Type")), (200, Some("text/html")));
        let e = net.fetch(&HttpRequest::get("https://b.test/")).unwrap_err();
        assert_eq!(e.code, HttpErrorCode::Denied);
        assert_eq!(
            net.fetch(&HttpRequest::get("https://c.test/")).unwrap_err().code,
            HttpErrorCode::Unreachable
        );
        assert_eq!(net.requests.borrow().len(), 3);
    }

    #[test]
    fn http_errors_become_tool_errors_that_name_the_code() {
        let t: ToolError = HttpError { code: HttpErrorCode::Denied, message: "no".into() }.into();
        assert_eq!((t.kind, t.message.as_str()), (ErrorKind::PermissionDenied, "denied: no"));
        let t: ToolError = HttpError { code: HttpErrorCode::InvalidUrl, message: "bad".into() }.into();
        assert_eq!(t.kind, ErrorKind::InvalidArgs);
        assert!(t.message.starts_with("invalid-url: "));
    }
}
