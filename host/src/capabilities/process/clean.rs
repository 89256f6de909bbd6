//! Making command output fit for a model: terminal escape sequences and control characters
//! removed, carriage-return overwrites collapsed, and output beyond the inline cap saved to
//! `.corral/cmd_output_<hex>.txt` (removed after about ten minutes) with a preview inline.

use crate::capabilities::{scratch, state};
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The most output (stdout and stderr together) returned inline, in bytes.
pub const INLINE_BYTES: usize = 10 * 1024;
/// How long a spill file is kept: as long as any scratch file.
pub const KEEP: Duration = scratch::KEEP;
/// Spill files are `.corral/<PREFIX><12 hex>.txt`.
pub const PREFIX: &str = "cmd_output_";

/// Removes terminal escape sequences (CSI, OSC, two-byte ESC forms) and control characters
/// other than newline and tab; `\r` rewinds the line (progress bars keep their last state)
/// and backspace erases the character before it.
pub fn strip_controls(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut line_start = 0;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // CSI: parameters and intermediates, then one final byte in @..~.
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']' | 'P' | '_' | '^') => {
                    // OSC / DCS / APC / PM: up to BEL or ESC \.
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' {
                            break;
                        }
                        if n == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.truncate(line_start),
            '\n' => {
                out.push('\n');
                line_start = out.len();
            }
            '\u{8}' => {
                if out.len() > line_start {
                    out.pop();
                }
            }
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The first `n` bytes of `s`, cut back to a character boundary.
fn head(s: &str, n: usize) -> &str {
    corral_contract::text::cut(s, n)
}

/// The last `n` bytes of `s`, moved forward to a character boundary.
fn tail(s: &str, n: usize) -> &str {
    &s[corral_contract::text::ceil_boundary(s, s.len().saturating_sub(n))..]
}

/// `text` cut to about `budget` bytes: a quarter from the start and the rest from the end
/// (where errors and summaries usually are), with a marker saying what was left out.
pub fn preview(text: &str, budget: usize, spill: &str) -> String {
    if text.len() <= budget {
        return text.to_string();
    }
    let first = head(text, budget / 4);
    let last = tail(text, budget - first.len());
    let omitted = text.len() - first.len() - last.len();
    format!("{first}\n[... {omitted} bytes omitted; the whole output is in {spill} ...]\n{last}")
}

/// Splits the inline budget between two streams: the shorter gets what it needs up to half.
pub fn budgets(stdout: usize, stderr: usize) -> (usize, usize) {
    let half = INLINE_BYTES / 2;
    if stderr <= half {
        (INLINE_BYTES - stderr, stderr)
    } else if stdout <= half {
        (stdout, INLINE_BYTES - stdout)
    } else {
        (half, half)
    }
}

/// A fresh spill file name: `cmd_output_<12 hex>.txt`.
fn spill_name() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let seed = format!("{}:{}:{}", now.as_nanos(), std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let hex: String = Sha256::digest(seed.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{hex}.txt")
}

/// Saves `contents` as a new spill file and returns its workspace path (`.corral/...`).
/// Spill files older than [`KEEP`] are removed first.
pub fn spill(ws: &Dir, contents: &str) -> io::Result<String> {
    let _ = clean(ws, SystemTime::now());
    let name = spill_name();
    state::write(ws, &name, contents.as_bytes())?;
    Ok(format!("{}/{name}", state::STATE_DIR))
}

/// Removes spill files older than [`KEEP`] at `now`; returns how many went.
pub fn clean(ws: &Dir, now: SystemTime) -> io::Result<usize> {
    scratch::remove_old(ws, state::STATE_DIR, now, |name| name.starts_with(PREFIX) && name.ends_with(".txt"))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(strip_controls("\u{1b}[1;31merror\u{1b}[0m: x"), "error: x");
        assert_eq!(strip_controls("\u{1b}]0;title\u{7}ok"), "ok");
        assert_eq!(strip_controls("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\"), "link");
        assert_eq!(strip_controls("a\r\nb\n"), "a\nb\n");
        assert_eq!(strip_controls(" 10%\r 50%\r100%\ndone"), "100%\ndone");
        assert_eq!(strip_controls("ab\u{8}c\u{7}\u{0}\td"), "ac\td");
        assert_eq!(strip_controls("héllo ✓"), "héllo ✓");
    }

    #[test]
    fn previews_keep_both_ends_and_name_the_file() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let p = preview(&text, 1000, ".corral/cmd_output_x.txt");
        assert!(p.starts_with("line 0\n"), "{p}");
        assert!(p.ends_with("line 1999\n"), "{p}");
        assert!(p.contains("bytes omitted; the whole output is in .corral/cmd_output_x.txt"), "{p}");
        assert!(p.len() < 1100, "{}", p.len());
        assert_eq!(preview("short", 1000, "x"), "short");
        let wide = "é".repeat(1000);
        assert!(preview(&wide, 101, "x").starts_with("éé"));
        assert_eq!(budgets(100, 20_000), (100, INLINE_BYTES - 100));
        assert_eq!(budgets(20_000, 30), (INLINE_BYTES - 30, 30));
        assert_eq!(budgets(20_000, 20_000), (INLINE_BYTES / 2, INLINE_BYTES / 2));
    }

    #[test]
    fn spills_are_named_saved_and_cleaned_after_ten_minutes() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), ambient_authority()).unwrap();
        let p = spill(&d, "everything").unwrap();
        let name = p.strip_prefix(".corral/cmd_output_").unwrap();
        assert!(name.len() == 16 && name.ends_with(".txt"), "{p}");
        assert_eq!(std::fs::read_to_string(t.path().join(&p)).unwrap(), "everything");
        std::fs::write(t.path().join(".corral/other.txt"), "kept").unwrap();
        assert_eq!(clean(&d, SystemTime::now()).unwrap(), 0);
        assert_eq!(clean(&d, SystemTime::now() + KEEP + Duration::from_secs(1)).unwrap(), 1);
        assert!(!t.path().join(&p).exists());
        assert!(t.path().join(".corral/other.txt").exists());
    }
}
