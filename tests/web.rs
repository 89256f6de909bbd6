//! fetch_url and web_search end to end: the real binary, servers on 127.0.0.1 that the test
//! runs (a site, a SearXNG instance, the Brave Search API), settings from the config files.
//! A long page spills to a scratch file that read_file pages through; text is decoded by its
//! charset; binary content is refused; each search backend gets the request it expects.

mod support;

use serde_json::{Value, json};
use support::Sandbox;
use support::web_server::{Request, Response, WebServer};

const BEGIN: &str = "[UNTRUSTED EXTERNAL CONTENT]";
const END: &str = "[END UNTRUSTED EXTERNAL CONTENT]";

/// A sandbox whose user file trusts `servers` (127.0.0.1:port each), plus `extra` TOML.
fn sandbox(servers: &[&WebServer], extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    let allowed: Vec<String> = servers.iter().map(|s| format!("\"127.0.0.1:{}\"", s.port())).collect();
    let toml = format!("[network]\nallow_private = [{}]\n{extra}", allowed.join(", "));
    std::fs::write(sb.config.join("config.toml"), toml).unwrap();
    sb
}

/// Adds `text` to the user file that [`sandbox`] wrote.
fn add_user_settings(sb: &Sandbox, text: &str) {
    let path = sb.config.join("config.toml");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(path, format!("{old}\n{text}")).unwrap();
}

fn site(req: &Request) -> Response {
    match req.target.as_str() {
        "/long" => {
            let body: String =
                (0..3000).map(|i| format!("<p>Paragraph {i} of the long page.</p>\n")).collect();
            Response::new(200, "text/html", format!("<html><body><h1>Long</h1>{body}</body></html>"))
        }
        "/latin1" => Response::new(200, "text/plain; charset=iso-8859-1", b"Caf\xe9 cr\xe8me".to_vec()),
        "/logo.png" => Response::new(200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00".to_vec()),
        "/slow" => {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            Response::new(200, "text/plain", "worth the wait")
        }
        "/readme.md" => {
            Response::new(200, "text/markdown", "# Readme\n\n![x](data:image/png;base64,AAAA) text")
        }
        _ => Response::new(404, "text/plain", "nothing here"),
    }
}

#[test]
fn a_long_page_is_saved_under_corral_and_read_file_pages_through_it() {
    let server = WebServer::start("127.0.0.1", None, site);
    let sb = sandbox(&[&server], "");
    let r = sb.tool(&["--network", "on"], "fetch_url", &json!({"url": server.url("/long")})).ok();
    assert!(r.stdout.starts_with(BEGIN), "{}", r.stdout);
    assert!(r.stdout.contains("# Long\n\nParagraph 0 of the long page.\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("Paragraph 2999"), "only a preview is inline");
    assert!(r.stdout.len() < 8 * 1024, "{} bytes inline", r.stdout.len());
    let path = r
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with(".corral/out/fetch_url_"))
        .map(|w| w.trim_end_matches([';', '.', ',']))
        .unwrap_or_else(|| panic!("no saved path in:\n{}", r.stdout));
    let saved = std::fs::read_to_string(sb.ws.join(path)).unwrap();
    assert!(saved.starts_with(BEGIN) && saved.trim_end().ends_with(END), "the file holds the wrapped page");
    assert!(saved.contains("Paragraph 2999 of the long page."));
    assert!(saved.len() > 50 * 1024, "{}", saved.len());
    let line = saved.lines().position(|l| l.contains("Paragraph 2500 ")).unwrap() + 1;
    let r = sb.tool(&[], "read_file", &json!({"file_path": path, "offset": line, "limit": 1})).ok();
    assert!(r.stdout.contains(&format!("{line}: Paragraph 2500 of the long page.")), "{}", r.stdout);
}

#[test]
fn text_is_decoded_binary_is_refused_and_markdown_passes_through() {
    let server = WebServer::start("127.0.0.1", None, site);
    let sb = sandbox(&[&server], "");
    let on = ["--network", "on"];
    let r = sb.tool(&on, "fetch_url", &json!({"url": server.url("/latin1")})).ok();
    assert!(
        r.stdout.contains("\nCafé crème\n") && r.stdout.contains("content-type: text/plain (windows-1252)")
    );
    let r = sb.tool(&on, "fetch_url", &json!({"url": server.url("/logo.png")})).tool_err();
    assert!(r.stderr.starts_with("error (unsupported): "), "{}", r.stderr);
    assert!(r.stderr.contains("returned binary content (image/png), 10 bytes"), "{}", r.stderr);
    let r = sb.tool(&on, "fetch_url", &json!({"url": server.url("/readme.md")})).ok();
    assert!(r.stdout.contains("\n# Readme\n\n[image: x] text\n"), "{}", r.stdout);
    let r = sb.tool(&on, "fetch_url", &json!({"url": server.url("/missing")})).tool_err();
    assert!(r.stderr.starts_with("error (not-found): ") && r.stderr.contains("HTTP 404"), "{}", r.stderr);
}

#[test]
fn waiting_for_a_fetch_does_not_count_against_the_plugin_timeout() {
    let server = WebServer::start("127.0.0.1", None, site);
    let sb = sandbox(&[&server], "");
    let args = json!({"url": server.url("/slow"), "timeout": 10});
    let r = sb.tool(&["--network", "on", "--timeout", "1"], "fetch_url", &args).ok();
    assert!(r.stdout.contains("\nworth the wait\n"), "{}", r.stdout);
    let args = json!({"url": server.url("/slow"), "timeout": 1});
    let r = sb.tool(&["--network", "on"], "fetch_url", &args).tool_err();
    assert!(r.stderr.starts_with("error (timeout): ") && r.stderr.contains("within 1 s"), "{}", r.stderr);
}

#[test]
fn a_plugin_allowlist_limits_fetch_url_to_its_hosts() {
    let server = WebServer::start("127.0.0.1", None, site);
    let sb = sandbox(
        &[&server],
        "[network.hosts]\n\"docs.test\" = \"127.0.0.1\"\n\n[plugin-settings.fetch_url]\nallow_hosts = [\"docs.test\"]\n",
    );
    let on = ["--network", "on"];
    let r = sb.tool(&on, "fetch_url", &json!({"url": server.url("/latin1")})).tool_err();
    assert!(
        r.stderr.contains("the host '127.0.0.1' is not in plugin-settings.fetch_url.allow_hosts"),
        "{}",
        r.stderr
    );
    let url = format!("http://docs.test:{}/latin1", server.port());
    assert!(sb.tool(&on, "fetch_url", &json!({ "url": url })).ok().stdout.contains("Café"));
    assert_eq!(server.requests().len(), 1);
}

/// A SearXNG instance: `/search?q=...&format=json` answers JSON, without `format=json` 403.
fn searxng(req: &Request) -> Response {
    if !req.target.starts_with("/search?") || !req.target.contains("&format=json") {
        return Response::new(403, "text/html", "<h1>403 Forbidden</h1>");
    }
    let results = json!([
        {"title": "The Rust Programming Language", "url": "https://doc.rust-lang.org/book/", "content": "The book.", "engine": "duckduckgo"},
        {"title": "Spam", "url": "https://spam.example/rust", "content": "Buy now", "engine": "bing"},
        {"title": "tokio - Rust", "url": "https://docs.rs/tokio", "content": "An event-driven, non-blocking I/O platform.", "engine": "duckduckgo"}
    ]);
    let body =
        json!({"query": "rust", "number_of_results": 3, "results": results, "unresponsive_engines": []});
    Response::new(200, "application/json", body.to_string())
}

#[test]
fn web_search_asks_a_searxng_instance_and_filters_the_results() {
    let server = WebServer::start("127.0.0.1", None, searxng);
    let settings =
        format!("[plugin-settings.web_search]\nbackend = \"searxng\"\nurl = \"{}\"\n", server.url("/"));
    let sb = sandbox(&[&server], &settings);
    let on = ["--network", "on"];
    let r = sb.tool(&on, "web_search", &json!({"query": "rust async book"})).ok();
    let want = format!(
        "{BEGIN}\nsource: web_search (searxng)\norigin: {}\nquery: rust async book\nresults: 3\n",
        server.url("/")
    );
    assert!(r.stdout.starts_with(&want), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("1. The Rust Programming Language\n   https://doc.rust-lang.org/book/\n   The book.\n")
    );
    assert!(r.stdout.contains("3. tokio - Rust\n   https://docs.rs/tokio\n"), "{}", r.stdout);
    let seen = server.requests();
    assert_eq!(seen[0].target, "/search?q=rust%20async%20book&format=json&pageno=1");
    assert_eq!(seen[0].header("accept"), Some("application/json"));

    let r = sb
        .tool(&on, "web_search", &json!({"query": "rust", "allowed_domains": ["rust-lang.org", "docs.rs"], "blocked_domains": ["docs.rs"]}))
        .ok();
    assert!(
        r.stdout.contains("results: 1\n") && r.stdout.contains("1. The Rust Programming Language"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("tokio") && !r.stdout.contains("Spam"), "{}", r.stdout);
    assert!(
        r.stdout.contains("note: 2 result(s) removed by allowed_domains/blocked_domains"),
        "{}",
        r.stdout
    );
}

/// The Brave Search API's shape: `GET /res/v1/web/search?q=&count=` with the key in
/// `X-Subscription-Token`; a wrong key gets 401.
fn brave(req: &Request) -> Response {
    if req.header("x-subscription-token") != Some("BSA-test-key") {
        return Response::new(
            401,
            "application/json",
            r#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#,
        );
    }
    if !req.target.starts_with("/res/v1/web/search?q=") {
        return Response::new(404, "application/json", "{}");
    }
    let body: Value = json!({
        "type": "search",
        "query": {"original": "wasmtime"},
        "web": {"type": "search", "results": [
            {"title": "<strong>Wasmtime</strong>", "url": "https://wasmtime.dev/", "description": "A fast &amp; secure runtime for <strong>WebAssembly</strong>", "language": "en"},
            {"title": "bytecodealliance/wasmtime", "url": "https://github.com/bytecodealliance/wasmtime", "description": "Source code", "language": "en"}
        ]}
    });
    Response::new(200, "application/json", body.to_string())
}

#[test]
fn web_search_speaks_to_the_brave_api_with_the_key_from_the_user_file() {
    let server = WebServer::start("127.0.0.1", None, brave);
    let sb = sandbox(&[&server], "");
    let user = format!(
        "[plugin-settings.web_search]\nbackend = \"brave\"\napi_key = \"BSA-test-key\"\nurl = \"{}\"\n",
        server.url("/res/v1/web/search")
    );
    add_user_settings(&sb, &user);
    let r = sb.tool(&["--network", "on"], "web_search", &json!({"query": "wasmtime", "max_results": 5})).ok();
    assert!(r.stdout.contains("source: web_search (brave)\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("1. Wasmtime\n   https://wasmtime.dev/\n   A fast & secure runtime for WebAssembly\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("2. bytecodealliance/wasmtime\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("BSA-test-key") && !r.stderr.contains("BSA-test-key"));
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, "/res/v1/web/search?q=wasmtime&count=5");
    assert_eq!(seen[0].header("x-subscription-token"), Some("BSA-test-key"));

    let network = std::fs::read_to_string(sb.config.join("config.toml")).unwrap();
    let network = network.split("[plugin-settings").next().unwrap().to_string();
    std::fs::write(sb.config.join("config.toml"), network).unwrap();
    add_user_settings(
        &sb,
        &format!(
            "[plugin-settings.web_search]\nbackend = \"brave\"\napi_key = \"wrong\"\nurl = \"{}\"\n",
            server.url("/res/v1/web/search")
        ),
    );
    let r = sb.tool(&["--network", "on"], "web_search", &json!({"query": "wasmtime"})).tool_err();
    assert!(
        r.stderr.starts_with("error (permission-denied): Brave Search refused the API key (HTTP 401)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("plugin-settings.web_search.api_key"), "{}", r.stderr);
}

#[test]
fn web_search_without_a_backend_names_the_settings_to_add() {
    let sb = Sandbox::new();
    let r = sb.tool(&["--network", "on"], "web_search", &json!({"query": "anything"})).tool_err();
    assert!(
        r.stderr.starts_with("error (unsupported): web_search has no search backend configured"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("[plugin-settings.web_search]\nbackend = \"searxng\"\nurl = "), "{}", r.stderr);
    assert!(r.stderr.contains("backend = \"brave\"\napi_key = "), "{}", r.stderr);
}
