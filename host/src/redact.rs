//! Secrets corral holds (the model API key, plugins' secret settings) kept out of everything
//! it writes or shows: the terminal, JSON output, the audit log, history, the continue note
//! and error messages; and the process made non-dumpable so a same-user child cannot read
//! corral's memory or environment through /proc.

use std::borrow::Cow;
use std::sync::RwLock;

/// What stands in for a secret.
pub const MASK: &str = "[redacted]";

/// Secrets shorter than this are not searched for (they would match ordinary text).
const MIN_LEN: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers `secret` so that [`text`] hides it from now on.
pub fn register(secret: &str) {
    let s = secret.trim();
    if s.len() < MIN_LEN {
        return;
    }
    if let Ok(mut all) = SECRETS.write()
        && !all.iter().any(|x| x == s)
    {
        all.push(s.to_string());
        // Longest first, so a secret that contains another is masked whole.
        all.sort_by_key(|x| std::cmp::Reverse(x.len()));
    }
}

/// `s` with every registered secret and every URL password replaced by [`MASK`].
pub fn text(s: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    if let Ok(all) = SECRETS.read() {
        for secret in all.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
    }
    if out.contains("://") && out.contains('@') {
        out = Cow::Owned(userinfo(&out));
    }
    out
}

/// Masks the password of every `scheme://user:password@` in `s`.
fn userinfo(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#' or white space.
        let end =
            tail.find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace()).unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon + 1]);
                out.push_str(MASK);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Redacts a stream of text chunks: a secret split across chunks is held back until it can
/// be masked whole, so it never reaches the screen or a JSON line piece by piece.
#[derive(Debug, Default)]
pub struct Stream {
    held: String,
}

impl Stream {
    /// Takes the next chunk; returns what can be shown now.
    pub fn push(&mut self, chunk: &str) -> String {
        self.held.push_str(chunk);
        let masked = text(&self.held).into_owned();
        // Keep back the longest tail that could still become a secret.
        let cut = SECRETS
            .read()
            .ok()
            .and_then(|all| {
                masked
                    .char_indices()
                    .map(|(i, _)| i)
                    .find(|&i| all.iter().any(|s| s.len() > masked.len() - i && s.starts_with(&masked[i..])))
            })
            .unwrap_or(masked.len());
        self.held = masked[cut..].to_string();
        masked[..cut].to_string()
    }

    /// What is still held at the end of the stream.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.held);
        text(&rest).into_owned()
    }
}

/// Makes this process non-dumpable (no core dumps, /proc/<pid>/environ and mem closed to
/// other processes of the same user); children get the normal setting back when they exec.
/// Returns whether the process is now non-dumpable.
pub fn harden_process() -> bool {
    // SAFETY: prctl with these options only changes this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_and_url_passwords_are_masked() {
        register("sk-test-redact-0123456789");
        register("abc");
        let s = text("key sk-test-redact-0123456789 in a message, abc stays");
        assert_eq!(s, "key [redacted] in a message, abc stays");
        assert_eq!(text("plain"), "plain");
        assert_eq!(
            text("GET https://bob:hunter2@proxy.test:8080/v1?x=1 failed; see http://x.test/a@b"),
            "GET https://bob:[redacted]@proxy.test:8080/v1?x=1 failed; see http://x.test/a@b"
        );
        assert_eq!(text("ssh://git@host/repo"), "ssh://git@host/repo");
    }

    #[test]
    fn a_secret_split_across_chunks_never_shows() {
        register("tok-stream-ABCDEFGH");
        let mut st = Stream::default();
        let mut shown = String::new();
        for chunk in ["here: tok-", "stream-AB", "CDEFGH and", " more tok-st"] {
            shown.push_str(&st.push(chunk));
            assert!(!shown.contains("stream-AB"), "{shown}");
        }
        shown.push_str(&st.finish());
        assert_eq!(shown, "here: [redacted] and more tok-st");
    }

    #[test]
    fn the_process_becomes_non_dumpable() {
        assert!(harden_process());
    }
}
