//! Reaching a streamable-HTTP MCP server under the session's network policy: the URL is
//! checked as a plugin's fetch would be (SSRF rules, `allow_private` for loopback), and the
//! SDK's transport runs over a reqwest client pinned to the checked addresses, no redirects.

use crate::capabilities::Session;
use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use rmcp::{RoleClient, ServiceExt};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// The largest JSON answer read.
const MAX_JSON: usize = 16 * 1024 * 1024;
const SESSION_HEADER: &str = "mcp-session-id";

/// A failed exchange with the server.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpFail(String);

/// A reqwest client that only ever connects to the addresses the policy checked.
#[derive(Clone)]
struct Pinned {
    client: reqwest::Client,
}

type Result2<T> = Result<T, StreamableHttpError<HttpFail>>;

fn fail(e: impl std::fmt::Display) -> StreamableHttpError<HttpFail> {
    StreamableHttpError::Client(HttpFail(e.to_string()))
}

impl Pinned {
    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session: Option<&str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut rb = self.client.request(method, uri);
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        if let Some(token) = auth {
            rb = rb.bearer_auth(token);
        }
        if let Some(s) = session {
            rb = rb.header(SESSION_HEADER, s);
        }
        rb
    }
}

impl StreamableHttpClient for Pinned {
    type Error = HttpFail;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result2<StreamableHttpPostResponse> {
        let body = serde_json::to_vec(&message).map_err(fail)?;
        let resp = self
            .request(reqwest::Method::POST, &uri, session_id.as_deref(), auth_header, custom_headers)
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(fail)?;
        let status = resp.status();
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let text: String = crate::termtext::clean(&text).chars().take(300).collect();
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status}: {text}").into(),
            ));
        }
        let session = resp.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_string);
        let kind =
            resp.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if kind.starts_with("text/event-stream") {
            let stream: BoxedSseResponse =
                sse_stream::SseStream::from_bytes_stream(resp.bytes_stream()).boxed();
            return Ok(StreamableHttpPostResponse::Sse(stream, session));
        }
        if kind.starts_with("application/json") {
            let mut resp = resp;
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(fail)? {
                if body.len() + chunk.len() > MAX_JSON {
                    return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: MAX_JSON });
                }
                body.extend_from_slice(&chunk);
            }
            let msg: ServerJsonRpcMessage = serde_json::from_slice(&body)?;
            return Ok(StreamableHttpPostResponse::Json(msg, session));
        }
        Err(StreamableHttpError::UnexpectedContentType(Some(kind.to_string())))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result2<()> {
        let _ = self
            .request(reqwest::Method::DELETE, &uri, Some(&session_id), auth_header, custom_headers)
            .send()
            .await;
        Ok(())
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_header: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result2<BoxedSseResponse> {
        // Answers come on the POST's own stream; no standing stream is opened.
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}

/// Connects to the server at `url` (checked against the network policy first) and runs
/// `initialize`. The bearer token is read from the variable `bearer_env` names.
pub async fn connect(
    session: &Session,
    url: &str,
    bearer_env: Option<&str>,
    headers: &BTreeMap<String, String>,
) -> Result<RunningService<RoleClient, ()>, String> {
    let (domain, addrs) = crate::capabilities::http::check_host_url(session.net(), "this MCP server", url)
        .await
        .map_err(|e| e.message)?;
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("corral/", env!("CARGO_PKG_VERSION"), " (+mcp)"));
    // An IP-literal URL has no name to pin: the address itself was checked.
    if let Some(d) = &domain {
        builder = builder.resolve_to_addrs(d, &addrs);
    }
    let client = builder.build().map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(var) = bearer_env {
        let token = std::env::var(var).ok().filter(|t| !t.is_empty()).ok_or_else(|| {
            format!("bearer_token_env_var names {var}, which is not set; export it before starting corral")
        })?;
        crate::redact::register(&token);
        config.auth_header = Some(token);
    }
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("http_headers: invalid header name {k:?}"))?;
        let value =
            HeaderValue::from_str(v).map_err(|_| format!("http_headers.{k}: invalid header value"))?;
        config.custom_headers.insert(name, value);
    }
    let transport = StreamableHttpClientTransport::with_client(Pinned { client }, config);
    ().serve(transport).await.map_err(|e| {
        format!("the MCP handshake with {url} failed: {}", crate::termtext::clean(&e.to_string()))
    })
}
