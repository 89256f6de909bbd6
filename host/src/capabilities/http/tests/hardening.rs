//! Holes closed around the fetch: the client's resolver knows only the checked name, methods
//! that tunnel or reflect are refused, and URL spellings that hide a forbidden host fail.

use super::super::fetch::{Pinned, run};
use super::super::policy::{NetMode, NetPolicy, PrivateException};
use super::super::resolve::{Target, check, parse_url};
use super::super::{Code, Request};
use super::server::{Server, respond};
use std::net::{IpAddr, SocketAddr};

fn on() -> NetPolicy {
    NetPolicy { mode: NetMode::On, ..NetPolicy::default() }
}

#[test]
fn the_pinned_resolver_answers_only_the_checked_name() {
    let addrs: Vec<SocketAddr> = vec!["93.184.216.34:443".parse().unwrap()];
    let pinned = Pinned::new(&Target { domain: Some("Docs.Test.".into()), addrs: addrs.clone() });
    assert_eq!(pinned.answer("docs.test"), Some(addrs.clone()));
    assert_eq!(pinned.answer("DOCS.TEST."), Some(addrs.clone()));
    assert_eq!(pinned.answer("other.test"), None);
    assert_eq!(pinned.answer("docs.test.evil"), None);
    let literal = Pinned::new(&Target { domain: None, addrs });
    assert_eq!(literal.answer("docs.test"), None, "an IP-literal URL needs no lookup at all");
}

#[tokio::test]
async fn tunnelling_and_reflecting_methods_are_refused() {
    let s = Server::start(|_| respond("200 OK", &[], b"ok"));
    let p = NetPolicy {
        allow_private: vec![PrivateException { ip: IpAddr::from([127, 0, 0, 1]), port: Some(s.port) }],
        ..on()
    };
    for method in ["CONNECT", "trace", "BREW", "GET /x HTTP/1.1\r\nHost: y"] {
        let req = Request { method: method.into(), url: s.url("/"), ..Request::default() };
        let e = run(&p, "t", None, req).await.unwrap_err();
        assert!(e.code == Code::Other && e.message.contains("is not allowed"), "{method}: {}", e.message);
    }
    for method in ["get", "HEAD", "post", "DELETE"] {
        let req = Request { method: method.into(), url: s.url("/"), ..Request::default() };
        assert!(run(&p, "t", None, req).await.is_ok(), "{method}");
    }
    assert_eq!(s.hits(), 4);
}

#[tokio::test]
async fn headers_cannot_smuggle_lines_or_reframe_the_request() {
    let s = Server::start(|_| respond("200 OK", &[], b"ok"));
    let p = NetPolicy {
        allow_private: vec![PrivateException { ip: IpAddr::from([127, 0, 0, 1]), port: Some(s.port) }],
        ..on()
    };
    for (name, value) in [
        ("X-A", "1\r\nHost: evil.test"),
        ("X-A", "1\nX-B: 2"),
        ("X-A\r\nHost", "evil.test"),
        ("X-A: 1\r\n", "x"),
    ] {
        let req =
            Request { headers: vec![(name.into(), value.into())], url: s.url("/"), ..Request::default() };
        let req = Request { method: "GET".into(), ..req };
        let e = run(&p, "t", None, req).await.unwrap_err();
        assert!(e.message.starts_with("invalid header"), "{name:?}: {}", e.message);
    }
    assert_eq!(s.hits(), 0, "a refused request is never sent");
    let req = Request {
        method: "POST".into(),
        url: s.url("/"),
        headers: vec![
            ("Content-Length".into(), "0".into()),
            ("Transfer-Encoding".into(), "chunked".into()),
            ("Connection".into(), "keep-alive, Upgrade".into()),
        ],
        body: Some(b"abc".to_vec()),
        ..Request::default()
    };
    run(&p, "t", None, req).await.unwrap();
    let seen = &s.seen()[0];
    assert_eq!(seen.header("content-length"), Some("3"), "the host frames the body itself");
    assert_eq!((seen.header("transfer-encoding"), seen.body.as_slice()), (None, b"abc".as_slice()));
    assert!(!seen.header("connection").unwrap_or("").contains("Upgrade"));
}

#[tokio::test]
async fn hidden_hosts_are_invalid_or_refused() {
    for bad in ["http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/", "http://[::1]%0a.evil.test/"] {
        assert_eq!(parse_url(bad).unwrap_err().code, Code::InvalidUrl, "{bad}");
    }
    for (text, range) in [
        ("http://0.0.0.0:8080/", "0.0.0.0/8"),
        ("http://0/", "0.0.0.0/8"),
        ("http://[::]:80/", "unspecified"),
        ("http://[::ffff:0.0.0.0]/", "IPv4-mapped"),
        ("http://evil.test@127.0.0.1/", "loopback"),
        ("http://127.0.0.1#@evil.test/", "loopback"),
        ("http://127.0.0.1\\@evil.test/", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "IPv4-mapped"),
    ] {
        let url = parse_url(text).unwrap();
        let e = check(&on(), "t", &[], &url).await.unwrap_err();
        assert_eq!(e.code, Code::Denied, "{text}");
        assert!(e.message.contains(range), "{text}: {}", e.message);
    }
}
