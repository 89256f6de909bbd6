//! Every forbidden range with its boundaries on both sides, the IPv6 forms that wrap an
//! IPv4 address, public addresses that must pass, and how URLs spell hosts.

use super::super::addr::classify;
use super::super::resolve::parse_url;
use std::net::IpAddr;

/// (address, expected: None = public, Some(part of the range's name)).
const TABLE: &[(&str, Option<&str>)] = &[
    // 0.0.0.0/8
    ("0.0.0.0", Some("0.0.0.0/8")),
    ("0.255.255.255", Some("0.0.0.0/8")),
    ("1.0.0.0", None),
    // 10/8
    ("9.255.255.255", None),
    ("10.0.0.0", Some("10.0.0.0/8 (private)")),
    ("10.255.255.255", Some("10.0.0.0/8")),
    ("11.0.0.0", None),
    // 100.64/10 CGNAT and Alibaba's metadata
    ("100.63.255.255", None),
    ("100.64.0.0", Some("carrier-grade NAT")),
    ("100.127.255.255", Some("carrier-grade NAT")),
    ("100.128.0.0", None),
    ("100.100.100.200", Some("metadata")),
    // 127/8
    ("126.255.255.255", None),
    ("127.0.0.1", Some("loopback")),
    ("127.255.255.254", Some("loopback")),
    ("128.0.0.0", None),
    // 169.254/16 and metadata
    ("169.253.255.255", None),
    ("169.254.0.1", Some("link-local")),
    ("169.254.169.254", Some("metadata")),
    ("169.254.170.2", Some("metadata")),
    ("169.255.0.0", None),
    // 172.16/12
    ("172.15.255.255", None),
    ("172.16.0.0", Some("172.16.0.0/12")),
    ("172.31.255.255", Some("172.16.0.0/12")),
    ("172.32.0.0", None),
    // 192.0.0/24, 192.0.2/24, 192.88.99/24, 192.168/16
    ("191.255.255.255", None),
    ("192.0.0.1", Some("192.0.0.0/24")),
    ("192.0.0.192", Some("metadata")),
    ("192.0.1.1", None),
    ("192.0.2.1", Some("documentation")),
    ("192.0.3.0", None),
    ("192.88.99.1", Some("6to4 relay")),
    ("192.167.255.255", None),
    ("192.168.0.0", Some("192.168.0.0/16")),
    ("192.168.255.255", Some("192.168.0.0/16")),
    ("192.169.0.0", None),
    // 198.18/15 benchmarking, 198.51.100/24, 203.0.113/24 documentation
    ("198.17.255.255", None),
    ("198.18.0.0", Some("benchmarking")),
    ("198.19.255.255", Some("benchmarking")),
    ("198.20.0.0", None),
    ("198.51.99.255", None),
    ("198.51.100.7", Some("documentation")),
    ("198.51.101.0", None),
    ("203.0.112.255", None),
    ("203.0.113.9", Some("documentation")),
    ("203.0.114.0", None),
    // multicast, reserved, broadcast
    ("223.255.255.255", None),
    ("224.0.0.1", Some("multicast")),
    ("239.255.255.255", Some("multicast")),
    ("240.0.0.1", Some("240.0.0.0/4")),
    ("255.255.255.254", Some("240.0.0.0/4")),
    ("255.255.255.255", Some("broadcast")),
    // public IPv4
    ("8.8.8.8", None),
    ("93.184.216.34", None),
    ("1.1.1.1", None),
    // IPv6 basics
    ("::", Some("unspecified")),
    ("::1", Some("loopback")),
    ("::2", Some("IPv4-compatible")),
    ("::127.0.0.1", Some("IPv4-compatible")),
    ("::ffff:127.0.0.1", Some("IPv4-mapped")),
    ("::ffff:7f00:1", Some("IPv4-mapped")),
    ("::ffff:8.8.8.8", Some("IPv4-mapped")),
    ("::ffff:0:7f00:1", Some("IPv4-translated")),
    // NAT64: the embedded IPv4 address decides
    ("64:ff9b::7f00:1", Some("NAT64")),
    ("64:ff9b::127.0.0.1", Some("NAT64")),
    ("64:ff9b::a9fe:a9fe", Some("NAT64")),
    ("64:ff9b::808:808", None),
    ("64:ff9b:1::808:808", Some("local-use NAT64")),
    ("64:ff9b:1:ffff::1", Some("local-use NAT64")),
    // 6to4: the embedded IPv4 address decides
    ("2002:7f00:1::", Some("6to4")),
    ("2002:c0a8:101::1", Some("6to4")),
    ("2002:a9fe:a9fe::", Some("6to4")),
    ("2002:808:808::1", None),
    // Teredo and the IETF block
    ("2001::1", Some("Teredo")),
    ("2001:0:ffff::1", Some("Teredo")),
    ("2001:1::1", Some("IETF protocol assignments")),
    ("2001:1ff:ffff::1", Some("IETF protocol assignments")),
    ("2001:200::1", None),
    ("2001:db8::1", Some("documentation")),
    ("3fff::1", Some("documentation")),
    ("100::1", Some("discard-only")),
    // unique local, metadata, link-local, site-local, multicast
    ("fbff:ffff::1", Some("reserved")),
    ("fc00::1", Some("unique local")),
    ("fdff:ffff::1", Some("unique local")),
    ("fd00:ec2::254", Some("metadata")),
    ("fe80::1", Some("link-local")),
    ("febf:ffff::1", Some("link-local")),
    ("fec0::1", Some("site-local")),
    ("feff:ffff::1", Some("site-local")),
    ("ff02::1", Some("multicast")),
    ("ff0e::1", Some("multicast")),
    // outside 2000::/3
    ("1fff:ffff::1", Some("reserved")),
    ("4000::1", Some("reserved")),
    // public IPv6
    ("2000::1", None),
    ("2001:4860:4860::8888", None),
    ("2606:4700:4700::1111", None),
    ("3ffe:ffff::1", None),
];

#[test]
fn the_address_table() {
    assert!(TABLE.len() >= 60, "only {} rows", TABLE.len());
    let mut failures = Vec::new();
    for (text, want) in TABLE {
        let ip: IpAddr = text.parse().unwrap_or_else(|_| panic!("bad test address {text}"));
        let got = classify(ip);
        let ok = match (want, &got) {
            (None, None) => true,
            (Some(part), Some(f)) => f.to_string().contains(part),
            _ => false,
        };
        if !ok {
            failures.push(format!("{text}: want {want:?}, got {:?}", got.map(|f| f.to_string())));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn metadata_and_wrapper_forms_cannot_be_exempted_but_private_ranges_can() {
    let exemptible = |s: &str| classify(s.parse().unwrap()).unwrap().exemptible;
    for s in ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "::", "224.0.0.1"] {
        assert!(!exemptible(s), "{s}");
    }
    for s in ["::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::", "2001::1", "255.255.255.255"] {
        assert!(!exemptible(s), "{s}");
    }
    for s in ["127.0.0.1", "10.0.0.5", "192.168.1.1", "::1", "fd12::1", "fe80::1", "100.64.0.1"] {
        assert!(exemptible(s), "{s}");
    }
    let nat64 = classify("64:ff9b::a9fe:a9fe".parse().unwrap()).unwrap().to_string();
    assert!(nat64.contains("wrapping") && nat64.contains("metadata"), "{nat64}");
}

/// URL spellings of hosts, parsed as browsers do, then classified.
const URLS: &[(&str, &str)] = &[
    ("http://127.0.0.1/", "127.0.0.1"),
    ("http://127.1/", "127.0.0.1"),
    ("http://127.0.1/", "127.0.0.1"),
    ("http://2130706433/", "127.0.0.1"),
    ("http://0x7f000001/", "127.0.0.1"),
    ("http://0x7f.1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://0177.1/", "127.0.0.1"),
    ("http://017700000001/", "127.0.0.1"),
    ("http://0x7F.0.0.1/", "127.0.0.1"),
    ("http://127.0.0.1./", "127.0.0.1"),
    ("http://0/", "0.0.0.0"),
    ("http://0.0.0.0/", "0.0.0.0"),
    ("http://3232235777/", "192.168.1.1"),
    ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
    ("http://0251.0376.0251.0376/", "169.254.169.254"),
    ("http://[::1]/", "::1"),
    ("http://[0:0:0:0:0:0:0:1]/", "::1"),
    ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
    ("http://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1"),
    ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
    ("HTTP://LOCALHOST:80/", "localhost"),
    ("http://user:pw@127.0.0.1:8080/", "127.0.0.1"),
    ("http://%31%32%37.0.0.1/", "127.0.0.1"),
    ("http://１２７.０.０.１/", "127.0.0.1"),
];

#[test]
fn url_hosts_are_normalised_like_browsers_do() {
    for (text, want) in URLS {
        let url = parse_url(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let host =
            url.host_str().unwrap().trim_start_matches('[').trim_end_matches(']').trim_end_matches('.');
        let host = host.parse::<IpAddr>().map(|ip| ip.to_string()).unwrap_or_else(|_| host.to_string());
        assert_eq!(host, *want, "{text}");
        if let Ok(ip) = want.parse::<IpAddr>() {
            assert!(classify(ip).is_some(), "{text} must be refused");
        }
    }
}

#[test]
fn only_http_and_https_urls_are_accepted() {
    for bad in ["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "data:text/plain,x"] {
        let e = parse_url(bad).unwrap_err();
        assert_eq!(e.code, super::super::Code::InvalidUrl, "{bad}");
        assert!(e.message.contains("only http and https"), "{bad}: {}", e.message);
    }
    for bad in ["not a url", "http://", "http://[::1/", "http://256.0.0.1/", "http://0x100000000/"] {
        assert_eq!(parse_url(bad).unwrap_err().code, super::super::Code::InvalidUrl, "{bad}");
    }
    assert!(parse_url("https://docs.rs/").is_ok());
}
