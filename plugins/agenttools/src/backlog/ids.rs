//! Issue ids as bd makes them (`<prefix>-<base36 hash>`: the prefix the file already uses, or
//! the folder's name), and RFC 3339 UTC times for `created_at`, `updated_at` and `closed_at`.

use super::file::Backlog;
use std::collections::BTreeMap;

/// The time a change is stamped with: seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub secs: u64,
    pub nanos: u32,
}

impl Clock {
    pub fn now() -> Clock {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Clock { secs: d.as_secs(), nanos: d.subsec_nanos() }
    }

    /// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`, which Go's time parser (beads') reads.
    pub fn rfc3339(&self) -> String {
        let days = (self.secs / 86_400) as i64;
        let rem = self.secs % 86_400;
        let (y, m, d) = civil(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            self.nanos
        )
    }
}

/// Days since 1970-01-01 to (year, month, day), in the proleptic Gregorian calendar.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The prefix for new ids: the one most issues in the file use, else the folder's name
/// (lowercase letters, digits and dashes), else `bd`.
pub fn prefix(backlog: &Backlog, folder: &str) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in backlog.issues() {
        if let Some((p, _)) = split_id(i.id()) {
            *counts.entry(p).or_default() += 1;
        }
    }
    if let Some((p, _)) = counts.iter().max_by_key(|(_, n)| **n) {
        return p.to_string();
    }
    let clean: String = folder
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let clean = clean.trim_matches('-').to_string();
    if clean.is_empty() { "bd".into() } else { clean }
}

/// (prefix, rest) of a top-level id such as `bd-a3f8` or `my-app-12`: split at the last dash.
fn split_id(id: &str) -> Option<(&str, &str)> {
    let (p, rest) = id.rsplit_once('-')?;
    let rest = rest.split('.').next().unwrap_or(rest);
    (!p.is_empty() && !rest.is_empty()).then_some((p, rest))
}

/// A new id: the prefix and a base36 hash of the title, description, creator and time, 4
/// characters long, longer (up to 8) only if every nonce collides.
pub fn new_id(backlog: &Backlog, prefix: &str, title: &str, description: &str, clock: Clock) -> String {
    use sha2::Digest;
    for length in 4..=8 {
        for nonce in 0..10 {
            let content = format!("{title}|{description}|corral|{}{:09}|{nonce}", clock.secs, clock.nanos);
            let hash = sha2::Sha256::digest(content.as_bytes());
            let id = format!("{prefix}-{}", base36(&hash[..6], length));
            if backlog.get(&id).is_none() {
                return id;
            }
        }
    }
    // Eight characters of 36 collide only in a backlog far beyond any file: count instead.
    let n = backlog.issues().count() + 1;
    format!("{prefix}-{n}")
}

fn base36(bytes: &[u8], length: usize) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n: u64 = bytes.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b));
    let mut out = vec![b'0'; length];
    for slot in out.iter_mut().rev() {
        *slot = DIGITS[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(Clock { secs: 0, nanos: 0 }.rfc3339(), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(Clock { secs: 1_767_258_000, nanos: 5 }.rfc3339(), "2026-01-01T09:00:00.000000005Z");
        assert_eq!(Clock { secs: 1_709_208_000, nanos: 0 }.rfc3339(), "2024-02-29T12:00:00.000000000Z");
    }

    #[test]
    fn prefixes_come_from_the_file_or_the_folder() {
        let b = Backlog::parse("{\"id\":\"web-a1\"}\n{\"id\":\"web-b2.1\"}\n{\"id\":\"bd-c3\"}\n");
        assert_eq!(prefix(&b, "whatever"), "web");
        assert_eq!(prefix(&Backlog::default(), "My App"), "my-app");
        assert_eq!(prefix(&Backlog::default(), "__"), "bd");
        let id = new_id(&b, "web", "t", "d", Clock { secs: 1, nanos: 2 });
        assert!(id.starts_with("web-") && id.len() == 8, "{id}");
        assert!(id[4..].chars().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()), "{id}");
        assert_eq!(id, new_id(&b, "web", "t", "d", Clock { secs: 1, nanos: 2 }), "stable");
        assert_ne!(id, new_id(&b, "web", "t", "d", Clock { secs: 1, nanos: 3 }));
    }
}
