//! The policy's parts: allowlist patterns, trusted private addresses, the hosts map, and
//! the messages for bad settings.

use super::super::policy::{HostPattern, NetMode, NetPolicy, PrivateException};
use crate::config::NetworkSettings;
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn host_patterns_match_names_and_subdomains() {
    let exact = HostPattern::parse("Docs.RS").unwrap();
    assert!(exact.matches("docs.rs") && exact.matches("docs.rs."));
    assert!(!exact.matches("evil-docs.rs") && !exact.matches("sub.docs.rs"));
    let wild = HostPattern::parse("*.python.org").unwrap();
    assert!(wild.matches("docs.python.org") && wild.matches("a.b.python.org"));
    assert!(
        !wild.matches("python.org") && !wild.matches("evilpython.org") && !wild.matches("python.org.evil")
    );
    for bad in ["", "*", "*.", "a*.b", "http://x", "a/b", "x:80"] {
        assert!(HostPattern::parse(bad).is_none(), "{bad}");
    }
}

#[test]
fn private_exceptions_take_ips_with_optional_ports() {
    let one = |s: &str| PrivateException::parse(s).unwrap();
    assert_eq!(one("10.0.0.5"), vec![PrivateException { ip: ip("10.0.0.5"), port: None }]);
    assert_eq!(one("127.0.0.1:8123"), vec![PrivateException { ip: ip("127.0.0.1"), port: Some(8123) }]);
    assert_eq!(one("::1"), vec![PrivateException { ip: ip("::1"), port: None }]);
    assert_eq!(one("[::1]:8080"), vec![PrivateException { ip: ip("::1"), port: Some(8080) }]);
    assert_eq!(one("localhost:9").len(), 2);
    for bad in ["docs.internal", "10.0.0.5:http", "[::1", "[::1]x", "1.2.3.4:99999", ""] {
        let e = PrivateException::parse(bad).unwrap_err();
        assert!(e.contains("like 10.0.0.5"), "{bad}: {e}");
    }
}

#[test]
fn settings_become_a_policy_and_bad_entries_name_the_setting() {
    let mut n = NetworkSettings { mode: "on".into(), ..NetworkSettings::default() };
    n.allow_private = vec!["127.0.0.1:8123".into()];
    n.hosts.insert("Evil.Test.".into(), "127.0.0.1, 10.0.0.1".into());
    let p = NetPolicy::from_settings(&n).unwrap();
    assert_eq!(p.mode, NetMode::On);
    assert_eq!(p.hosts["evil.test"], vec![ip("127.0.0.1"), ip("10.0.0.1")]);
    assert!(p.check_addr(ip("127.0.0.1"), 8123).is_ok());
    let e = p.check_addr(ip("127.0.0.1"), 8124).unwrap_err();
    assert!(
        e.contains("loopback") && e.contains("network.allow_private") && e.contains("127.0.0.1:8124"),
        "{e}"
    );
    assert!(p.check_addr(ip("93.184.216.34"), 80).is_ok());
    let meta = p.check_addr(ip("169.254.169.254"), 80).unwrap_err();
    assert!(meta.contains("metadata") && !meta.contains("allow_private"), "{meta}");

    let bad = |f: &dyn Fn(&mut NetworkSettings)| {
        let mut n = NetworkSettings::default();
        f(&mut n);
        NetPolicy::from_settings(&n).unwrap_err()
    };
    assert!(bad(&|n| n.mode = "full".into()).contains("network.mode"));
    assert!(bad(&|n| n.allow_hosts = vec!["a b/c".into()]).contains("network.allow_hosts"));
    assert!(bad(&|n| n.allow_private = vec!["docs.internal".into()]).contains("network.allow_private"));
    let e = bad(&|n| {
        n.hosts.insert("x.test".into(), "not-an-ip".into());
    });
    assert!(e.contains("network.hosts.\"x.test\"") && e.contains("'not-an-ip'"), "{e}");
}

#[test]
fn metadata_stays_forbidden_even_when_listed() {
    let n = NetworkSettings {
        mode: "on".into(),
        allow_private: vec!["169.254.169.254".into(), "0.0.0.0".into(), "[::ffff:127.0.0.1]".into()],
        ..NetworkSettings::default()
    };
    let p = NetPolicy::from_settings(&n).unwrap();
    for a in ["169.254.169.254", "0.0.0.0", "::ffff:127.0.0.1"] {
        assert!(p.check_addr(ip(a), 80).is_err(), "{a}");
    }
}
