//! Fetches against loopback servers: the mode gate, trusted and untrusted ports, redirects
//! (relative, forbidden, chains, loops, method changes, credentials), caps and timeouts.

use super::super::fetch::run;
use super::super::policy::{NetMode, NetPolicy, PrivateException};
use super::super::{Code, HttpError, Request, Response};
use super::server::{Server, redirect, respond};
use std::net::IpAddr;
use std::time::Duration;

fn trusting(servers: &[&Server]) -> NetPolicy {
    let allow_private = servers
        .iter()
        .map(|s| PrivateException { ip: IpAddr::from([127, 0, 0, 1]), port: Some(s.port) })
        .collect();
    NetPolicy { mode: NetMode::On, allow_private, ..NetPolicy::default() }
}

fn get(url: &str) -> Request {
    Request { method: "GET".into(), url: url.into(), ..Request::default() }
}

async fn fetch(p: &NetPolicy, req: Request) -> Result<Response, HttpError> {
    run(p, "tester", None, req).await
}

fn ok_server(body: &'static str) -> Server {
    Server::start(move |_| respond("200 OK", &[("Content-Type", "text/html")], body.as_bytes()))
}

#[tokio::test]
async fn network_modes_other_than_on_refuse_and_name_the_flag() {
    let s = ok_server("hi");
    for mode in [NetMode::Off, NetMode::LlmOnly] {
        let p = NetPolicy { mode, ..trusting(&[&s]) };
        let e = fetch(&p, get(&s.url("/"))).await.unwrap_err();
        assert_eq!(e.code, Code::Denied);
        assert!(e.message.contains("--network on") && e.message.contains(mode.as_str()), "{}", e.message);
    }
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn a_trusted_loopback_port_is_fetched_and_others_are_not() {
    let s = ok_server("<p>hello</p>");
    let other = ok_server("secret");
    let p = trusting(&[&s]);
    let r = fetch(&p, get(&s.url("/page"))).await.unwrap();
    assert_eq!((r.status, r.body.as_slice(), r.truncated), (200, b"<p>hello</p>".as_slice(), false));
    assert_eq!(r.url, s.url("/page"));
    assert!(r.headers.iter().any(|(k, v)| k == "content-type" && v == "text/html"), "{:?}", r.headers);
    let e = fetch(&p, get(&other.url("/"))).await.unwrap_err();
    assert_eq!(e.code, Code::Denied);
    assert!(e.message.contains("loopback") && e.message.contains("network.allow_private"), "{}", e.message);
    let e =
        fetch(&NetPolicy { mode: NetMode::On, ..NetPolicy::default() }, get(&s.url("/"))).await.unwrap_err();
    assert_eq!(e.code, Code::Denied);
    assert_eq!((s.hits(), other.hits()), (1, 0));
}

#[tokio::test]
async fn redirects_are_followed_by_hand_and_every_hop_is_checked() {
    let forbidden = ok_server("secret");
    let fport = forbidden.port;
    let s = Server::start(move |r| match r.path.as_str() {
        "/rel" => redirect("302 Found", "/final?x=1"),
        "/final?x=1" => respond("200 OK", &[], b"landed"),
        "/evil" => redirect("302 Found", &format!("http://127.0.0.1:{fport}/")),
        "/meta" => redirect("301 Moved Permanently", "http://169.254.169.254/latest/meta-data/"),
        "/file" => redirect("302 Found", "file:///etc/passwd"),
        _ => respond("404 Not Found", &[], b""),
    });
    let p = trusting(&[&s]);
    let r = fetch(&p, get(&s.url("/rel"))).await.unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, b"landed".as_slice()));
    assert_eq!(r.url, s.url("/final?x=1"));
    let e = fetch(&p, get(&s.url("/evil"))).await.unwrap_err();
    assert_eq!(e.code, Code::Denied, "{}", e.message);
    assert!(e.message.contains(&format!("127.0.0.1:{fport}")), "{}", e.message);
    let e = fetch(&p, get(&s.url("/meta"))).await.unwrap_err();
    assert!(e.code == Code::Denied && e.message.contains("metadata"), "{}", e.message);
    let e = fetch(&p, get(&s.url("/file"))).await.unwrap_err();
    assert!(e.code == Code::InvalidUrl && e.message.contains("'file:'"), "{}", e.message);
    assert_eq!(forbidden.hits(), 0);
}

fn chain_server() -> Server {
    Server::start(|r| {
        let path = r.path.trim_start_matches('/');
        if let Some(n) = path.strip_prefix("chain/").and_then(|n| n.parse::<u32>().ok()) {
            if n == 0 {
                respond("200 OK", &[], b"end")
            } else {
                redirect("302 Found", &format!("/chain/{}", n - 1))
            }
        } else if path == "loop" {
            redirect("307 Temporary Redirect", "/loop")
        } else {
            respond("404 Not Found", &[], b"")
        }
    })
}

#[tokio::test]
async fn ten_redirects_are_followed_eleven_are_too_many_and_loops_stop() {
    let s = chain_server();
    let p = trusting(&[&s]);
    let r = fetch(&p, get(&s.url("/chain/10"))).await.unwrap();
    assert_eq!(r.body, b"end");
    assert_eq!(s.hits(), 11);
    let e = fetch(&p, get(&s.url("/chain/11"))).await.unwrap_err();
    assert_eq!(e.code, Code::TooManyRedirects, "{}", e.message);
    assert!(e.message.contains("10 redirects"), "{}", e.message);
    assert_eq!(s.hits(), 22, "the 11th redirect is not followed");
    let e = fetch(&p, get(&s.url("/loop"))).await.unwrap_err();
    assert_eq!(e.code, Code::TooManyRedirects);
    assert_eq!(s.hits(), 33);
}

#[tokio::test]
async fn redirects_change_methods_like_browsers_and_drop_credentials_across_origins() {
    let other = Server::start(|_| respond("200 OK", &[], b"other"));
    let oport = other.port;
    let s = Server::start(move |r| match r.path.as_str() {
        "/303" => redirect("303 See Other", "/done"),
        "/301" => redirect("301 Moved Permanently", "/done"),
        "/307" => redirect("307 Temporary Redirect", "/done"),
        "/away" => redirect("302 Found", &format!("http://127.0.0.1:{oport}/x")),
        _ => respond("200 OK", &[], b"done"),
    });
    let p = trusting(&[&s, &other]);
    let post = |path: &str| Request {
        method: "post".into(),
        url: s.url(path),
        headers: vec![("Authorization".into(), "Bearer t".into()), ("Accept".into(), "text/html".into())],
        body: Some(b"payload".to_vec()),
        ..Request::default()
    };
    for (path, method, body) in [("/303", "GET", ""), ("/301", "GET", ""), ("/307", "POST", "payload")] {
        fetch(&p, post(path)).await.unwrap();
        let seen = s.seen();
        let last = seen.last().unwrap();
        assert_eq!((last.method.as_str(), last.body.as_slice()), (method, body.as_bytes()), "{path}");
        assert_eq!(last.header("authorization"), Some("Bearer t"), "same origin keeps credentials");
    }
    let r = fetch(&p, post("/away")).await.unwrap();
    assert_eq!(r.body, b"other");
    let seen = other.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].header("authorization"), None, "credentials must not follow to another origin");
    assert_eq!(seen[0].header("accept"), Some("text/html"));
}

#[tokio::test]
async fn bodies_are_capped_and_redirect_bodies_are_never_read() {
    let big = vec![b'a'; 5 * 1024 * 1024 + 100];
    let s = Server::start(move |_| respond("200 OK", &[], &big));
    let p = trusting(&[&s]);
    let r = fetch(&p, get(&s.url("/"))).await.unwrap();
    assert_eq!((r.body.len(), r.truncated), (5 * 1024 * 1024, true));
    let r = fetch(&p, Request { max_bytes: Some(10), ..get(&s.url("/")) }).await.unwrap();
    assert_eq!((r.body.len(), r.truncated), (10, true));
    let r = fetch(&p, Request { max_bytes: Some(u64::MAX), ..get(&s.url("/")) }).await.unwrap();
    assert_eq!(r.body.len(), 5 * 1024 * 1024, "a request cannot raise the host's cap");
}

#[tokio::test]
async fn slow_servers_time_out() {
    let s = Server::start(|_| {
        std::thread::sleep(Duration::from_millis(1500));
        respond("200 OK", &[], b"late")
    });
    let p = trusting(&[&s]);
    let e = fetch(&p, Request { timeout: Some(Duration::from_millis(300)), ..get(&s.url("/")) })
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::Timeout, "{}", e.message);
    let p = NetPolicy { max_timeout: Duration::from_millis(300), ..trusting(&[&s]) };
    let e =
        fetch(&p, Request { timeout: Some(Duration::from_secs(60)), ..get(&s.url("/")) }).await.unwrap_err();
    assert_eq!(e.code, Code::Timeout, "a request cannot raise the host's timeout");
    let p = NetPolicy { timeout: Duration::from_millis(300), ..trusting(&[&s]) };
    let e = fetch(&p, get(&s.url("/"))).await.unwrap_err();
    assert_eq!(e.code, Code::Timeout, "the default applies when the request gives none");
    let r = fetch(&p, Request { timeout: Some(Duration::from_secs(10)), ..get(&s.url("/")) }).await.unwrap();
    assert_eq!(r.body, b"late", "a request may ask for more than the default, up to the cap");
}

#[tokio::test]
async fn the_hosts_map_answers_first_and_every_address_must_pass() {
    let s = ok_server("named");
    let forbidden = ok_server("secret");
    let mut p = trusting(&[&s]);
    let lo = IpAddr::from([127, 0, 0, 1]);
    p.hosts.insert("docs.test".into(), vec![lo]);
    p.hosts.insert("mixed.test".into(), vec![IpAddr::from([93, 184, 216, 34]), lo]);
    p.hosts.insert("meta.test".into(), vec![IpAddr::from([169, 254, 169, 254])]);
    let r = fetch(&p, get(&format!("http://docs.test:{}/", s.port))).await.unwrap();
    assert_eq!(r.body, b"named");
    let e = fetch(&p, get(&format!("http://DOCS.test:{}/", forbidden.port))).await.unwrap_err();
    assert!(
        e.code == Code::Denied && e.message.contains("'docs.test' resolves to 127.0.0.1"),
        "{}",
        e.message
    );
    let e = fetch(&p, get(&format!("http://mixed.test:{}/", forbidden.port))).await.unwrap_err();
    assert_eq!(e.code, Code::Denied, "{}", e.message);
    let e = fetch(&p, get("http://meta.test/")).await.unwrap_err();
    assert!(e.code == Code::Denied && e.message.contains("metadata"), "{}", e.message);
    let e = fetch(&p, get(&format!("http://localhost:{}/", forbidden.port))).await.unwrap_err();
    assert_eq!(e.code, Code::Denied, "{}", e.message);
    assert_eq!(forbidden.hits(), 0);
}

#[tokio::test]
async fn allowlists_limit_hosts_for_all_plugins_and_for_one() {
    let s = ok_server("ok");
    let mut p = trusting(&[&s]);
    p.hosts.insert("docs.test".into(), vec![IpAddr::from([127, 0, 0, 1])]);
    p.allow_hosts = vec![super::super::HostPattern::parse("*.test").unwrap()];
    assert!(fetch(&p, get(&format!("http://docs.test:{}/", s.port))).await.is_ok());
    let e = fetch(&p, get(&s.url("/"))).await.unwrap_err();
    assert!(e.code == Code::Denied && e.message.contains("network.allow_hosts"), "{}", e.message);
    let e = run(&p, "fetcher", Some("other.test"), get(&format!("http://docs.test:{}/", s.port)))
        .await
        .unwrap_err();
    assert!(e.message.contains("plugin-settings.fetcher.allow_hosts"), "{}", e.message);
    assert!(
        run(&p, "fetcher", Some("a.org, docs.test"), get(&format!("http://docs.test:{}/", s.port)))
            .await
            .is_ok()
    );
    assert_eq!(s.hits(), 2);
}

#[tokio::test]
async fn the_host_frames_the_request_itself() {
    let s = ok_server("ok");
    let p = trusting(&[&s]);
    let req = Request {
        headers: vec![
            ("Host".into(), "metadata.google.internal".into()),
            ("Accept-Encoding".into(), "gzip".into()),
            ("X-Custom".into(), "1".into()),
        ],
        ..get(&s.url("/"))
    };
    fetch(&p, req).await.unwrap();
    let seen = &s.seen()[0];
    assert_eq!(seen.header("host"), Some(format!("127.0.0.1:{}", s.port).as_str()));
    assert_eq!(seen.header("accept-encoding"), None);
    assert_eq!(seen.header("x-custom"), Some("1"));
    assert!(seen.header("user-agent").is_some_and(|u| u.starts_with("corral/")));
    let bad = Request { headers: vec![("Bad Name".into(), "x".into())], ..get(&s.url("/")) };
    assert_eq!(fetch(&p, bad).await.unwrap_err().code, Code::Other);
}

#[tokio::test]
async fn an_unreachable_port_is_reported_as_unreachable() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = NetPolicy {
        mode: NetMode::On,
        allow_private: vec![PrivateException { ip: IpAddr::from([127, 0, 0, 1]), port: Some(port) }],
        ..NetPolicy::default()
    };
    let e = fetch(&p, get(&format!("http://127.0.0.1:{port}/"))).await.unwrap_err();
    assert_eq!(e.code, Code::Unreachable, "{}", e.message);
}
