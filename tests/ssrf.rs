//! The SSRF suite: fetch_url through the real binary (`corral --network on tool fetch_url`)
//! against logging servers on loopback addresses, with `network.hosts` as the resolver the
//! test controls and `network.allow_private` naming only the one allowed server. Every
//! forbidden URL must fail with the documented refusal, and no forbidden server may ever see
//! a connection; the allowed server works and its page comes back wrapped as untrusted.

mod support;

use serde_json::json;
use std::sync::{Arc, OnceLock};
use support::web_server::{Response, WebServer};
use support::{Run, Sandbox};

/// Served by the allowed server.
const PAGE: &str = "<html><head><script>exfiltrate()</script></head><body><h1>Allowed page</h1>\
                    <p>The canary is <b>c4n4ry-7f3</b>.</p></body></html>";
/// Served by every forbidden server: seeing it in an output means the guard failed.
const FORBIDDEN_BODY: &str = "FORBIDDEN SERVER REACHED";

/// The servers, the user file that allows them, and the redirect table.
struct Lab {
    sb: Sandbox,
    /// 127.0.0.1:A, the only address in network.allow_private.
    allowed: WebServer,
    /// Servers that must never see a connection: 127.0.0.1:F (another port on the allowed
    /// IP), 127.0.0.2:P2, 127.0.0.3:A (the allowed port on another IP), [::1]:V6.
    forbidden: Vec<WebServer>,
    /// Where `/r/<i>` on the allowed server redirects.
    redirects: Arc<OnceLock<Vec<String>>>,
}

fn forbidden(ip: &str, port: Option<u16>) -> Option<WebServer> {
    WebServer::try_start(ip, port, |_| Response::new(200, "text/plain", FORBIDDEN_BODY)).ok()
}

impl Lab {
    fn new() -> Lab {
        let redirects: Arc<OnceLock<Vec<String>>> = Arc::new(OnceLock::new());
        let table = redirects.clone();
        let allowed = WebServer::start("127.0.0.1", None, move |req| {
            let path = req.target.as_str();
            if path == "/page" {
                Response::new(200, "text/html; charset=utf-8", PAGE)
            } else if path == "/loop" {
                Response::redirect("/loop")
            } else if let Some(n) = path.strip_prefix("/chain/").and_then(|n| n.parse::<u32>().ok()) {
                match n {
                    0 => Response::new(200, "text/plain", "end of the chain"),
                    n => Response::redirect(&format!("/chain/{}", n - 1)),
                }
            } else if let Some(i) = path.strip_prefix("/r/").and_then(|i| i.parse::<usize>().ok()) {
                Response::redirect(&table.get().expect("redirect table")[i])
            } else {
                Response::new(404, "text/plain", "no such page")
            }
        });
        let a = allowed.port();
        let mut servers = vec![
            forbidden("127.0.0.1", None).expect("127.0.0.1"),
            forbidden("127.0.0.2", None).expect("Linux routes all of 127/8 to lo"),
            forbidden("127.0.0.3", Some(a)).expect("127.0.0.3 on the allowed port"),
        ];
        // IPv6 may be off in a container; the v6 cases still must be refused.
        servers.extend(forbidden("::1", None));
        let sb = Sandbox::new();
        let config = format!(
            "[network]\nallow_private = [\"127.0.0.1:{a}\"]\n\n[network.hosts]\n\
             \"good.test\" = \"127.0.0.1\"\n\
             \"evil.test\" = \"127.0.0.2\"\n\
             \"meta.test\" = \"169.254.169.254\"\n\
             \"v6.test\" = \"::1\"\n\
             \"mapped.test\" = \"::ffff:127.0.0.1\"\n\
             \"nat64.test\" = \"64:ff9b::7f00:1\"\n\
             \"private.test\" = \"10.1.2.3\"\n\
             \"zero.test\" = \"0.0.0.0\"\n\
             \"mixed.test\" = \"127.0.0.1, 127.0.0.3\"\n\
             \"pubmix.test\" = \"93.184.216.34, 127.0.0.2\"\n\
             \"rebind.test\" = \"127.0.0.2\"\n"
        );
        std::fs::write(sb.config.join("config.toml"), config).unwrap();
        Lab { sb, allowed, forbidden: servers, redirects }
    }

    /// Port of the forbidden server on the allowed IP.
    fn f(&self) -> u16 {
        self.forbidden[0].port()
    }

    fn p2(&self) -> u16 {
        self.forbidden[1].port()
    }

    fn a(&self) -> u16 {
        self.allowed.port()
    }

    /// The [::1] server's port, or an unused one when IPv6 is off.
    fn v6(&self) -> u16 {
        self.forbidden.get(3).map_or(self.f(), |s| s.port())
    }

    fn fetch(&self, flags: &[&str], url: &str) -> Run {
        self.sb.tool(flags, "fetch_url", &json!({ "url": url }))
    }

    /// How many connections each forbidden server has accepted.
    fn counts(&self) -> Vec<usize> {
        self.forbidden.iter().map(WebServer::connections).collect()
    }

    /// The forbidden servers that accepted connections since `before` (from [`Lab::counts`]),
    /// with what was asked of them.
    fn reached_since(&self, before: &[usize]) -> Vec<String> {
        self.forbidden
            .iter()
            .zip(before)
            .filter(|(s, n)| s.connections() > **n)
            .map(|(s, n)| {
                let asked: Vec<String> = s.requests()[(*n).min(s.requests().len())..]
                    .iter()
                    .map(|r| format!("{} {} (Host: {})", r.method, r.target, r.header("host").unwrap_or("")))
                    .collect();
                format!("{} was connected to {} time(s): {asked:?}", s.addr, s.connections() - n)
            })
            .collect()
    }

    /// Every forbidden server that was ever connected to.
    fn forbidden_connections(&self) -> Vec<String> {
        self.reached_since(&vec![0; self.forbidden.len()])
    }

    /// Fetches each URL with --network on and checks that it fails with a message holding
    /// `want`, that the allowed server saw exactly `allowed_hits` more requests, and that no
    /// forbidden server was reached. Returns every failure, so one run reports them all.
    fn expect_refused(&self, cases: &[(String, &str, &str)], allowed_hits: usize) -> Vec<String> {
        let mut failures = Vec::new();
        for (url, kind, want) in cases {
            let before = self.allowed.requests().len();
            let counts = self.counts();
            let r = self.fetch(&["--network", "on"], url);
            let hits = self.allowed.requests().len() - before;
            let head = format!("error ({kind}): ");
            if r.code != 1 || !r.stderr.starts_with(&head) || !r.stderr.contains(want) {
                failures.push(format!(
                    "{url}: want {head}...{want}...\n  got {}: {}{}",
                    r.code, r.stderr, r.stdout
                ));
            }
            if *kind == DENIED && !r.stderr.contains(NOT_REACH) {
                failures.push(format!("{url}: not an address refusal: {}", r.stderr));
            }
            if r.stdout.contains(FORBIDDEN_BODY) || r.stderr.contains(FORBIDDEN_BODY) {
                failures.push(format!("{url}: the forbidden body came back"));
            }
            if hits != allowed_hits {
                failures
                    .push(format!("{url}: the allowed server saw {hits} request(s), want {allowed_hits}"));
            }
            let reached = self.reached_since(&counts);
            if !reached.is_empty() {
                failures.push(format!("{url}: {}", reached.join("; ")));
            }
        }
        failures
    }
}

const DENIED: &str = "permission-denied";
/// The end of every address refusal.
const NOT_REACH: &str = "which plugins may not reach";

#[test]
fn forbidden_addresses_in_every_notation_are_refused_and_never_connected() {
    let lab = Lab::new();
    let (f, p2, v6) = (lab.f(), lab.p2(), lab.v6());
    let other_port = format!("for example \"127.0.0.1:{f}\"");
    let loopback = "127.0.0.1 is in 127.0.0.0/8 (loopback), which plugins may not reach; if you trust it, \
                    list it in network.allow_private";
    let cases: Vec<(String, &str, &str)> = vec![
        (format!("http://127.0.0.1:{f}/"), DENIED, loopback),
        (format!("http://2130706433:{f}/"), DENIED, loopback),
        (format!("http://0177.0.0.1:{f}/"), DENIED, loopback),
        (format!("http://0x7f.1:{f}/"), DENIED, loopback),
        (format!("http://0x7F000001:{f}/"), DENIED, loopback),
        (format!("http://017700000001:{f}/"), DENIED, loopback),
        (format!("http://127.1:{f}/"), DENIED, loopback),
        (format!("http://127.0.0.1.:{f}/"), DENIED, loopback),
        (format!("http://%31%32%37.0.0.1:{f}/"), DENIED, loopback),
        (format!("http://127.0.0.2:{p2}/"), DENIED, "127.0.0.2 is in 127.0.0.0/8 (loopback)"),
        (format!("http://[::1]:{v6}/"), DENIED, "::1 is in ::1 (loopback)"),
        (format!("http://[0:0:0:0:0:0:0:1]:{v6}/"), DENIED, "::1 (loopback)"),
        (
            format!("http://[::ffff:127.0.0.1]:{f}/"),
            DENIED,
            "::ffff:127.0.0.1 is in ::ffff:0:0/96 (IPv4-mapped",
        ),
        (format!("http://[::ffff:7f00:1]:{f}/"), DENIED, "IPv4-mapped"),
        (
            format!("http://[64:ff9b::7f00:1]:{f}/"),
            DENIED,
            "64:ff9b::/96 (NAT64) wrapping 127.0.0.0/8 (loopback)",
        ),
        (format!("http://[::127.0.0.1]:{f}/"), DENIED, "IPv4-compatible"),
        (format!("http://[fe80::1]:{f}/"), DENIED, "fe80::/10 (link-local)"),
        (format!("http://[fc00::1]:{f}/"), DENIED, "fc00::/7 (unique local)"),
        (format!("http://[::]:{f}/"), DENIED, ":: (unspecified)"),
        (format!("http://0.0.0.0:{f}/"), DENIED, "0.0.0.0/8 (this network"),
        (format!("http://0:{f}/"), DENIED, "0.0.0.0/8"),
        (format!("http://10.0.0.1:{f}/"), DENIED, "10.0.0.0/8 (private)"),
        (format!("http://172.16.0.1:{f}/"), DENIED, "172.16.0.0/12 (private)"),
        (format!("http://192.168.1.1:{f}/"), DENIED, "192.168.0.0/16 (private)"),
        (format!("http://3232235777:{f}/"), DENIED, "192.168.1.1 is in 192.168.0.0/16"),
        (format!("http://169.254.1.1:{f}/"), DENIED, "169.254.0.0/16 (link-local)"),
        (format!("http://100.64.0.1:{f}/"), DENIED, "100.64.0.0/10 (carrier-grade NAT)"),
        ("http://169.254.169.254/latest/meta-data/".into(), DENIED, "a cloud metadata endpoint"),
        (
            "http://0xa9.0xfe.0xa9.0xfe/latest/meta-data/".into(),
            DENIED,
            "169.254.169.254 is in a cloud metadata",
        ),
        ("http://[fd00:ec2::254]/".into(), DENIED, "a cloud metadata endpoint"),
        ("http://100.100.100.200/".into(), DENIED, "a cloud metadata endpoint"),
        (format!("http://224.0.0.1:{f}/"), DENIED, "224.0.0.0/4 (multicast)"),
        (format!("http://[ff02::1]:{f}/"), DENIED, "ff00::/8 (multicast)"),
        (format!("http://240.0.0.1:{f}/"), DENIED, "240.0.0.0/4 (reserved)"),
        (format!("http://255.255.255.255:{f}/"), DENIED, "broadcast"),
        (format!("http://192.0.2.1:{f}/"), DENIED, "192.0.2.0/24 (documentation)"),
        (format!("http://localhost:{f}/"), DENIED, "'localhost' resolves to 127.0.0.1"),
        (format!("http://LOCALHOST.:{f}/"), DENIED, "'localhost' resolves to"),
        (format!("http://sub.localhost:{f}/"), DENIED, "resolves to 127.0.0.1"),
        // userinfo cannot change the host, whatever it looks like
        (format!("http://127.0.0.1:{}@127.0.0.2:{p2}/", lab.a()), DENIED, "127.0.0.2 is in 127.0.0.0/8"),
        (format!("http://good.test@127.0.0.2:{p2}/"), DENIED, "127.0.0.2 is in"),
        (format!("http://user:pass@[::1]:{v6}/"), DENIED, "::1 (loopback)"),
        // a forbidden port on the allowed IP
        (format!("http://127.0.0.1:{f}/page"), DENIED, &other_port),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let failures = lab.expect_refused(&cases, 0);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn names_resolving_to_forbidden_addresses_are_refused_before_connecting() {
    let lab = Lab::new();
    let (a, f, p2, v6) = (lab.a(), lab.f(), lab.p2(), lab.v6());
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("http://evil.test:{p2}/"),
            DENIED,
            "'evil.test' resolves to 127.0.0.2: 127.0.0.2 is in 127.0.0.0/8",
        ),
        (format!("http://EVIL.test.:{p2}/"), DENIED, "'evil.test' resolves to 127.0.0.2"),
        ("http://meta.test/latest/meta-data/".into(), DENIED, "'meta.test' resolves to 169.254.169.254"),
        (format!("http://v6.test:{v6}/"), DENIED, "'v6.test' resolves to ::1"),
        (format!("http://mapped.test:{f}/"), DENIED, "IPv4-mapped"),
        (format!("http://nat64.test:{f}/"), DENIED, "NAT64) wrapping 127.0.0.0/8"),
        (format!("http://private.test:{f}/"), DENIED, "10.0.0.0/8 (private)"),
        (format!("http://zero.test:{f}/"), DENIED, "0.0.0.0/8"),
        // one allowed and one forbidden address: the name is refused as a whole
        (format!("http://mixed.test:{a}/page"), DENIED, "'mixed.test' resolves to 127.0.0.3"),
        // one public and one forbidden address
        (format!("http://pubmix.test:{p2}/"), DENIED, "'pubmix.test' resolves to 127.0.0.2"),
        // the good name on a port that is not the allowed one
        (format!("http://good.test:{f}/"), DENIED, "'good.test' resolves to 127.0.0.1"),
    ];
    let failures = lab.expect_refused(&cases, 0);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn redirects_from_the_allowed_server_are_checked_at_every_hop() {
    let lab = Lab::new();
    let (a, f, p2, v6) = (lab.a(), lab.f(), lab.p2(), lab.v6());
    let targets: Vec<(String, &str, &str)> = vec![
        (format!("http://127.0.0.1:{f}/"), DENIED, "127.0.0.1 is in 127.0.0.0/8 (loopback)"),
        (format!("http://127.0.0.2:{p2}/"), DENIED, "127.0.0.2 is in"),
        (format!("http://evil.test:{p2}/"), DENIED, "'evil.test' resolves to 127.0.0.2"),
        ("http://169.254.169.254/latest/meta-data/iam/".into(), DENIED, "a cloud metadata endpoint"),
        ("http://meta.test/".into(), DENIED, "'meta.test' resolves to 169.254.169.254"),
        (format!("http://2130706433:{f}/"), DENIED, "127.0.0.1 is in"),
        (format!("http://[::1]:{v6}/"), DENIED, "::1 (loopback)"),
        (format!("http://[::ffff:127.0.0.1]:{f}/"), DENIED, "IPv4-mapped"),
        (format!("http://localhost:{a}/page"), DENIED, "'localhost' resolves to ::1"),
        (format!("http://mixed.test:{a}/page"), DENIED, "'mixed.test' resolves to 127.0.0.3"),
        (format!("//127.0.0.2:{p2}/"), DENIED, "127.0.0.2 is in"),
        (format!("http://127.0.0.1:{a}@127.0.0.2:{p2}/"), DENIED, "127.0.0.2 is in"),
        ("file:///etc/passwd".into(), "invalid-args", "the scheme 'file:' is not allowed"),
        (format!("gopher://127.0.0.1:{f}/_GET%20/"), "invalid-args", "the scheme 'gopher:' is not allowed"),
        ("ftp://127.0.0.1/".into(), "invalid-args", "only http and https URLs can be fetched"),
        ("data:text/html,<h1>x</h1>".into(), "invalid-args", "the scheme 'data:' is not allowed"),
    ];
    let locations: Vec<String> = targets.iter().map(|(l, _, _)| l.clone()).collect();
    lab.redirects.set(locations).unwrap();
    let cases: Vec<(String, &str, &str)> = targets
        .iter()
        .enumerate()
        .map(|(i, (_, kind, want))| (lab.allowed.url(&format!("/r/{i}")), *kind, *want))
        .collect();
    let failures = lab.expect_refused(&cases, 1);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn redirect_loops_stop_after_ten_hops_and_ten_are_followed() {
    let lab = Lab::new();
    let r = lab.fetch(&["--network", "on"], &lab.allowed.url("/loop")).tool_err();
    assert!(r.stderr.starts_with("error (other): stopped after 10 redirects"), "{}", r.stderr);
    assert_eq!(lab.allowed.requests().len(), 11, "the first request and ten redirects");
    let r = lab.fetch(&["--network", "on"], &lab.allowed.url("/chain/11")).tool_err();
    assert!(r.stderr.contains("stopped after 10 redirects"), "{}", r.stderr);
    assert_eq!(lab.allowed.requests().len(), 22);
    let r = lab.fetch(&["--network", "on"], &lab.allowed.url("/chain/10")).ok();
    assert!(r.stdout.contains("\nend of the chain\n"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("origin: {}\n", lab.allowed.url("/chain/0"))), "{}", r.stdout);
    assert_eq!(lab.allowed.requests().len(), 33);
    assert!(lab.forbidden_connections().is_empty(), "{:?}", lab.forbidden_connections());
}

#[test]
fn the_allowed_server_is_fetched_and_its_page_wrapped_as_untrusted() {
    let lab = Lab::new();
    let a = lab.a();
    lab.redirects.set(vec!["/page".into()]).unwrap();
    for (url, origin) in [
        (lab.allowed.url("/page"), lab.allowed.url("/page")),
        (format!("http://good.test:{a}/page"), format!("http://good.test:{a}/page")),
        (lab.allowed.url("/r/0"), lab.allowed.url("/page")),
    ] {
        let r = lab.fetch(&["--network", "on"], &url).ok();
        let want = format!("[UNTRUSTED EXTERNAL CONTENT]\nsource: fetch_url\norigin: {origin}\n");
        assert!(r.stdout.starts_with(&want), "{url}:\n{}", r.stdout);
        assert!(r.stdout.contains("\n# Allowed page\n\nThe canary is **c4n4ry-7f3**.\n"), "{}", r.stdout);
        assert!(r.stdout.ends_with("[END UNTRUSTED EXTERNAL CONTENT]\n"), "{}", r.stdout);
        assert!(!r.stdout.contains("exfiltrate"), "{}", r.stdout);
    }
    let seen = lab.allowed.requests();
    assert_eq!(
        seen.iter().map(|r| r.target.as_str()).collect::<Vec<_>>(),
        ["/page", "/page", "/r/0", "/page"]
    );
    assert_eq!(seen[1].header("host"), Some(format!("good.test:{a}").as_str()), "the name is kept in Host");
    assert!(lab.forbidden_connections().is_empty(), "{:?}", lab.forbidden_connections());
}

#[test]
fn network_off_and_llm_only_refuse_with_their_message() {
    let lab = Lab::new();
    let url = lab.allowed.url("/page");
    let probe = support::test_plugin("needs_http").to_str().unwrap().to_string();
    for (flags, mode) in [
        (&["--network", "off"][..], "(--network off: no network at all)"),
        (
            &["--network", "llm-only"][..],
            "(--network llm-only, the default: only the model endpoint is reached)",
        ),
        (&[][..], "(--network llm-only, the default"),
    ] {
        // fetch_url is not even loaded, and `corral tool` says why.
        let r = lab.fetch(flags, &url);
        assert_eq!(r.code, 2, "{flags:?}: {}", r.stderr);
        assert_eq!(
            r.stderr,
            "error: the built-in tool 'fetch_url' is not loaded: it uses the network: start corral with --network on\n"
        );
        // A plugin granted http is refused by the host, with the mode in force.
        let mut all = vec!["--plugin", probe.as_str(), "--grant", "needs_http=http"];
        all.extend_from_slice(flags);
        let r = lab.sb.tool(&all, "fetch_probe", &json!({ "url": url })).tool_err();
        assert!(r.stderr.starts_with("error (permission-denied): "), "{flags:?}: {}", r.stderr);
        let want = format!("network access for plugins is disabled {mode}");
        assert!(r.stderr.contains(&want), "{flags:?}: {}", r.stderr);
        assert!(r.stderr.contains("Start corral with --network on"), "{}", r.stderr);
    }
    assert_eq!(lab.allowed.connections(), 0, "no mode but on reaches even the allowed server");
    assert!(lab.forbidden_connections().is_empty());
}

#[test]
fn urls_the_tool_cannot_parse_are_refused_before_the_host() {
    let lab = Lab::new();
    let f = lab.f();
    for (url, want) in [
        (format!("http://[fe80::1%25lo]:{f}/"), "is not a valid URL"),
        (format!("http://[::1%lo]:{f}/"), "is not a valid URL"),
        (format!("http://256.0.0.1:{f}/"), "is not a valid URL"),
        (format!("gopher://127.0.0.1:{f}/"), "'gopher:' URLs cannot be fetched"),
        ("file:///etc/passwd".into(), "'file:' URLs cannot be fetched"),
        (format!("127.0.0.1:{f}/"), "has no scheme"),
    ] {
        let r = lab.fetch(&["--network", "on"], &url).tool_err();
        assert!(
            r.stderr.starts_with("error (invalid-args): ") && r.stderr.contains(want),
            "{url}: {}",
            r.stderr
        );
    }
    assert!(lab.forbidden_connections().is_empty(), "{:?}", lab.forbidden_connections());
    assert_eq!(lab.allowed.connections(), 0);
}
