//! Address classification for the SSRF guard: which IPv4 and IPv6 addresses a plugin may
//! never reach (private, loopback, link-local, reserved, metadata, ...) and why.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused: the range's name, and whether `network.allow_private` may
/// still let the user reach it (never for metadata, unspecified, multicast, broadcast, or
/// IPv6 forms that wrap another address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forbidden {
    pub range: &'static str,
    /// For a form that wraps an IPv4 address (NAT64, 6to4): the IPv4 address's range.
    pub inner: Option<&'static str>,
    pub exemptible: bool,
}

impl std::fmt::Display for Forbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.inner {
            Some(inner) => write!(f, "{} wrapping {inner}", self.range),
            None => f.write_str(self.range),
        }
    }
}

const fn no(range: &'static str) -> Forbidden {
    Forbidden { range, inner: None, exemptible: false }
}

const fn may(range: &'static str) -> Forbidden {
    Forbidden { range, inner: None, exemptible: true }
}

/// Cloud metadata endpoints (AWS, ECS, GCP/Azure share 169.254.169.254; Alibaba; Oracle).
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];
/// AWS's IPv6 metadata endpoint.
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);

fn in_v4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, bits: u32) -> bool {
    let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
    u128::from(ip) & mask == u128::from(net) & mask
}

/// The IPv4 ranges a plugin may not reach, most specific first.
const V4_RANGES: &[([u8; 4], u32, Forbidden)] = &[
    ([0, 0, 0, 0], 8, no("0.0.0.0/8 (this network, unspecified)")),
    ([10, 0, 0, 0], 8, may("10.0.0.0/8 (private)")),
    ([100, 64, 0, 0], 10, may("100.64.0.0/10 (carrier-grade NAT)")),
    ([127, 0, 0, 0], 8, may("127.0.0.0/8 (loopback)")),
    ([169, 254, 0, 0], 16, may("169.254.0.0/16 (link-local)")),
    ([172, 16, 0, 0], 12, may("172.16.0.0/12 (private)")),
    ([192, 0, 0, 0], 24, may("192.0.0.0/24 (IETF protocol assignments)")),
    ([192, 0, 2, 0], 24, may("192.0.2.0/24 (documentation)")),
    ([192, 88, 99, 0], 24, may("192.88.99.0/24 (6to4 relay anycast)")),
    ([192, 168, 0, 0], 16, may("192.168.0.0/16 (private)")),
    ([198, 18, 0, 0], 15, may("198.18.0.0/15 (benchmarking)")),
    ([198, 51, 100, 0], 24, may("198.51.100.0/24 (documentation)")),
    ([203, 0, 113, 0], 24, may("203.0.113.0/24 (documentation)")),
    ([224, 0, 0, 0], 4, no("224.0.0.0/4 (multicast)")),
    ([255, 255, 255, 255], 32, no("255.255.255.255 (broadcast)")),
    ([240, 0, 0, 0], 4, may("240.0.0.0/4 (reserved)")),
];

/// Why `ip` may not be reached, or `None` when it is a public address.
pub fn classify(ip: IpAddr) -> Option<Forbidden> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

pub fn classify_v4(ip: Ipv4Addr) -> Option<Forbidden> {
    if METADATA_V4.contains(&ip) {
        return Some(no("a cloud metadata endpoint"));
    }
    V4_RANGES.iter().find(|(net, bits, _)| in_v4(ip, *net, *bits)).map(|(_, _, f)| *f)
}

/// The IPv4 address in the last 32 bits of `ip`.
fn low_v4(ip: Ipv6Addr) -> Ipv4Addr {
    Ipv4Addr::from((u128::from(ip) & 0xffff_ffff) as u32)
}

/// Refuses a wrapper form (NAT64, 6to4) whose embedded IPv4 address is refused.
fn embedded(v4: Ipv4Addr, form: &'static str) -> Option<Forbidden> {
    classify_v4(v4).map(|inner| Forbidden { range: form, inner: Some(inner.range), exemptible: false })
}

pub fn classify_v6(ip: Ipv6Addr) -> Option<Forbidden> {
    let seg = ip.segments();
    if ip == METADATA_V6 {
        return Some(no("a cloud metadata endpoint"));
    }
    if ip.is_unspecified() {
        return Some(no(":: (unspecified)"));
    }
    if ip.is_loopback() {
        return Some(may("::1 (loopback)"));
    }
    if in_v6(ip, Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96) {
        return Some(no("::ffff:0:0/96 (IPv4-mapped; use the IPv4 address itself)"));
    }
    if in_v6(ip, Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96) {
        return Some(no("::ffff:0:0:0/96 (IPv4-translated)"));
    }
    if in_v6(ip, Ipv6Addr::UNSPECIFIED, 96) {
        return Some(no("::/96 (IPv4-compatible, deprecated)"));
    }
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48) {
        return Some(no("64:ff9b:1::/48 (local-use NAT64; the IPv4 address inside cannot be located)"));
    }
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return embedded(low_v4(ip), "64:ff9b::/96 (NAT64)");
    }
    if in_v6(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let v4 = Ipv4Addr::new((seg[1] >> 8) as u8, seg[1] as u8, (seg[2] >> 8) as u8, seg[2] as u8);
        return embedded(v4, "2002::/16 (6to4)");
    }
    const V6_RANGES: &[(Ipv6Addr, u32, Forbidden)] = &[
        (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, may("100::/64 (discard-only)")),
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, no("2001::/32 (Teredo)")),
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, may("2001::/23 (IETF protocol assignments)")),
        (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, may("2001:db8::/32 (documentation)")),
        (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, may("3fff::/20 (documentation)")),
        (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, may("fc00::/7 (unique local)")),
        (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, may("fe80::/10 (link-local)")),
        (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, may("fec0::/10 (site-local, deprecated)")),
        (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, no("ff00::/8 (multicast)")),
    ];
    if let Some((_, _, f)) = V6_RANGES.iter().find(|(net, bits, _)| in_v6(ip, *net, *bits)) {
        return Some(*f);
    }
    if !in_v6(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some(may("outside 2000::/3, the only global unicast range (reserved)"));
    }
    None
}
