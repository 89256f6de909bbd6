//! `corral mcp serve --http`: streamable HTTP on a loopback address only, every request
//! carrying the bearer token (compared in constant time), Host and Origin checked against DNS rebinding.

use super::serve::Server;
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// The shortest token `--token-env` may name.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why the HTTP server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "--http {0}: not an address to listen on; give a loopback address and port, e.g. \
         --http 127.0.0.1:8765 (port 0 picks a free one)"
    )]
    BadAddress(String),
    #[error(
        "refusing to listen on {0}: corral mcp serve --http listens on a loopback address only \
         (127.0.0.1, ::1 or localhost), so that only programs on this computer can call the \
         workspace's tools. To reach it from another machine, forward a local port to it \
         (ssh -L) and keep the bearer token secret"
    )]
    NotLoopback(String),
    #[error(
        "--token-env {0}: the variable is not set or empty; set it to a secret of at least \
         {MIN_TOKEN_CHARS} characters, or leave out --token-env and corral makes a token"
    )]
    TokenUnset(String),
    #[error(
        "--token-env {0}: the token has {1} characters; use a secret of at least \
         {MIN_TOKEN_CHARS} (e.g. `openssl rand -hex 32`), or leave out --token-env and corral makes one"
    )]
    TokenShort(String, usize),
    #[error("cannot make a bearer token from the system's randomness: {0}")]
    Random(String),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
}

/// The address `--http` names, which must be a loopback one. `localhost` is 127.0.0.1.
pub fn loopback_addr(text: &str) -> Result<SocketAddr, HttpError> {
    let t = text.trim();
    let addr = match t.strip_prefix("localhost:") {
        Some(port) => port
            .parse::<u16>()
            .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p))
            .map_err(|_| HttpError::BadAddress(t.to_string()))?,
        None => t.parse::<SocketAddr>().map_err(|_| HttpError::BadAddress(t.to_string()))?,
    };
    let ip = match addr.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        ip => ip,
    };
    if !ip.is_loopback() {
        return Err(HttpError::NotLoopback(addr.to_string()));
    }
    Ok(addr)
}

/// The bearer token: the value of the variable `var` names, or a new random one (`true`).
pub fn token(var: Option<&str>, get: &dyn Fn(&str) -> Option<String>) -> Result<(String, bool), HttpError> {
    match var {
        Some(v) => {
            let t = get(v).filter(|t| !t.trim().is_empty()).ok_or_else(|| HttpError::TokenUnset(v.into()))?;
            let n = t.chars().count();
            if n < MIN_TOKEN_CHARS {
                return Err(HttpError::TokenShort(v.into(), n));
            }
            Ok((t, false))
        }
        None => {
            let mut raw = [0u8; 32];
            getrandom::fill(&mut raw).map_err(|e| HttpError::Random(e.to_string()))?;
            Ok((raw.iter().map(|b| format!("{b:02x}")).collect(), true))
        }
    }
}

/// Whether an `Authorization` header value carries `token` (compared in constant time).
pub fn bearer_ok(header: Option<&[u8]>, token: &str) -> bool {
    use subtle::ConstantTimeEq;
    let Some(h) = header else { return false };
    let Some(given) = h.strip_prefix(b"Bearer ").or_else(|| h.strip_prefix(b"bearer ")) else {
        return false;
    };
    bool::from(given.ct_eq(token.as_bytes()))
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The listener, bound: its real address (port 0 is resolved) for the start-up line.
pub struct Listener {
    inner: tokio::net::TcpListener,
    pub addr: SocketAddr,
}

/// Binds `addr` (a loopback address, see [`loopback_addr`]).
pub async fn bind(addr: SocketAddr) -> Result<Listener, HttpError> {
    let inner = tokio::net::TcpListener::bind(addr).await.map_err(|e| HttpError::Bind(addr, e))?;
    let addr = inner.local_addr().map_err(|e| HttpError::Bind(addr, e))?;
    Ok(Listener { inner, addr })
}

/// Serves `server` on `listener` until `shutdown` completes; open sessions are then closed.
pub async fn run(server: Server, listener: Listener, token: String, shutdown: impl Future<Output = ()>) {
    let port = listener.addr.port();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ])
        // A browser page's request carries its Origin: only corral's own may call it.
        .with_allowed_origins([
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
            format!("http://[::1]:{port}"),
        ])
        .enforce_origin_validation();
    // Cancelled at shutdown: every open session ends.
    let ct = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token: Arc<str> = token.into();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            r = listener.inner.accept() => match r {
                Ok(conn) => conn,
                // A failed accept (too many open files) is one lost connection, not the end;
                // a pause keeps a lasting failure from spinning.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let (service, token) = (service.clone(), token.clone());
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let (service, token) = (service.clone(), token.clone());
                async move { Ok::<_, Infallible>(answer(req, &service, &token).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            // A client that hangs up mid-request only ends its own connection.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, handler).await;
        });
    }
    ct.cancel();
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    service: &StreamableHttpService<Server, LocalSessionManager>,
    token: &str,
) -> Response<Body> {
    if req.uri().path() != PATH {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp\n");
    }
    if !bearer_ok(req.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes()), token) {
        let mut r = plain(
            StatusCode::UNAUTHORIZED,
            "unauthorized: send the token corral mcp serve printed (or the one in --token-env) as \
             `Authorization: Bearer <token>`\n",
        );
        r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        return r;
    }
    service.handle(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(loopback_addr("127.0.0.1:8765").unwrap().to_string(), "127.0.0.1:8765");
        assert_eq!(loopback_addr("[::1]:0").unwrap().to_string(), "[::1]:0");
        assert_eq!(loopback_addr("localhost:9").unwrap().to_string(), "127.0.0.1:9");
        assert_eq!(loopback_addr("[::ffff:127.0.0.1]:9").unwrap().port(), 9);
        for bad in ["0.0.0.0:8765", "[::]:8765", "192.168.1.4:80", "[::ffff:10.0.0.1]:9", "8.8.8.8:53"] {
            let e = loopback_addr(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("refusing to listen on") && e.contains("loopback address only"),
                "{bad}: {e}"
            );
        }
        for bad in ["example.com:80", "127.0.0.1", "localhost:x", ""] {
            let e = loopback_addr(bad).unwrap_err().to_string();
            assert!(e.contains("not an address to listen on"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_token_comes_from_the_named_variable_or_is_made() {
        let env = |k: &str| match k {
            "GOOD" => Some("0123456789abcdef0123".to_string()),
            "SHORT" => Some("abc".to_string()),
            "EMPTY" => Some("  ".to_string()),
            _ => None,
        };
        assert_eq!(token(Some("GOOD"), &env).unwrap(), ("0123456789abcdef0123".to_string(), false));
        let e = token(Some("SHORT"), &env).unwrap_err().to_string();
        assert!(e.contains("has 3 characters") && e.contains("at least 16"), "{e}");
        for unset in ["EMPTY", "NOPE"] {
            let e = token(Some(unset), &env).unwrap_err().to_string();
            assert!(e.contains("not set or empty"), "{e}");
        }
        let (a, made) = token(None, &env).unwrap();
        let (b, _) = token(None, &env).unwrap();
        assert!(made && a.len() == 64 && a != b && a.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let t = "0123456789abcdef";
        assert!(bearer_ok(Some(b"Bearer 0123456789abcdef"), t));
        assert!(bearer_ok(Some(b"bearer 0123456789abcdef"), t));
        for bad in [
            &b"Bearer 0123456789abcdeF"[..],
            b"Bearer 0123456789abcde",
            b"Bearer 0123456789abcdef0",
            b"Basic 0123456789abcdef",
            b"0123456789abcdef",
            b"Bearer ",
        ] {
            assert!(!bearer_ok(Some(bad), t), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!bearer_ok(None, t));
    }
}
