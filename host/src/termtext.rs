//! Text bound for the person's terminal: what a model, a tool, a plugin or a server sends is
//! stripped of control sequences (so it cannot move the cursor, retitle or fake a prompt).

/// `text` without terminal control sequences: CSI, OSC, DCS, SOS, PM and APC strings (7-bit
/// `ESC x` and 8-bit C1 forms), any other escape, and every C0/C1 control except `\n` and
/// `\t` (`\r\n` becomes `\n`). Printable text is kept as it is. An unterminated sequence at
/// the end is dropped.
pub fn clean(text: &str) -> String {
    scan(text).0
}

/// What [`clean`] keeps of `text`, and where an unterminated sequence at its end starts.
fn scan(text: &str) -> (String, Option<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let complete = match c {
            '\n' | '\t' => {
                out.push(c);
                true
            }
            '\u{1b}' => match chars.next() {
                Some((_, '[')) => skip_csi(&mut chars),
                Some((_, ']' | 'P' | 'X' | '^' | '_')) => skip_string(&mut chars),
                // A two-character escape (`ESC 7`, `ESC c`...): both go.
                Some(_) => true,
                None => false,
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => true,
            c => {
                out.push(c);
                true
            }
        };
        if !complete {
            return (out, Some(at));
        }
    }
    (out, None)
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

/// Skips a control sequence's parameters and its final byte (`@` to `~`); false when the
/// text ends first.
fn skip_csi(chars: &mut Chars<'_>) -> bool {
    chars.by_ref().any(|(_, c)| ('\u{40}'..='\u{7e}').contains(&c))
}

/// Skips a control string up to its terminator (BEL, `ESC \` or the 8-bit ST); false when
/// the text ends first.
fn skip_string(chars: &mut Chars<'_>) -> bool {
    while let Some((_, c)) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return true,
            '\u{1b}' => {
                if chars.peek().is_some_and(|(_, c)| *c == '\\') {
                    chars.next();
                }
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Longest unterminated sequence held back between streamed pieces; past it, it is dropped.
const MAX_PENDING: usize = 4096;

/// [`clean`] for text that arrives in pieces: a sequence split across pieces is held back
/// until it ends, so no part of it reaches the terminal.
#[derive(Debug, Default)]
pub struct Stream {
    pending: String,
}

impl Stream {
    /// The printable part of `piece`, given what came before.
    pub fn push(&mut self, piece: &str) -> String {
        let mut text = std::mem::take(&mut self.pending);
        text.push_str(piece);
        let (out, open) = scan(&text);
        if let Some(at) = open
            && text.len() - at <= MAX_PENDING
        {
            self.pending = text[at..].to_string();
        }
        out
    }

    /// Forgets a held-back sequence (the reply ended).
    pub fn reset(&mut self) {
        self.pending.clear();
    }
}

/// `text` on one line with every control character (newline included), and every character
/// that reorders or hides text (bidirectional overrides, zero-width), shown escaped as
/// `\n`, `\x1b`, `\u{202e}`: for text the person must see exactly, such as a command to approve.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || hides(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Characters that change how the text around them is shown without being seen themselves.
fn hides(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}'
    )
}

/// A file name as the person should see it: valid UTF-8 as it is, every other byte as `\xNN`.
pub fn os_name(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    corral_contract::paths::escape_name(name.as_bytes())
}

/// `text` cut to at most `max` characters at a word boundary, with "…" when cut. A single
/// word longer than half the room is cut inside.
pub fn cut_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let at_word = match head.rfind(char::is_whitespace) {
        Some(i) if head[..i].chars().count() >= max / 2 => head[..i].trim_end().to_string(),
        _ => head,
    };
    format!("{at_word}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_stripped_and_text_kept() {
        assert_eq!(clean("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(clean("a\x1b[31mred\x1b[0m b"), "ared b");
        assert_eq!(clean("x\x1b[2K\x1b[1A\ry"), "xy");
        assert_eq!(clean("\x1b]0;owned title\x07after"), "after");
        assert_eq!(clean("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"), "link");
        assert_eq!(clean("\x1bPq#0;2;0;0;0\x1b\\dcs"), "dcs");
        assert_eq!(clean("c1\u{9b}31mcsi\u{9d}0;t\u{9c}ok"), "c1csiok");
        assert_eq!(clean("bell\x07back\x08del\x7f\x1b7"), "bellbackdel");
        assert_eq!(clean("win\r\nline"), "win\nline");
        assert_eq!(clean("héllo ✓ 日本"), "héllo ✓ 日本");
        // An unterminated sequence swallows the rest rather than reaching the terminal.
        assert_eq!(clean("a\x1b]0;never ends"), "a");
    }

    #[test]
    fn a_sequence_split_across_streamed_pieces_is_still_stripped() {
        let mut s = Stream::default();
        let pieces = ["done \x1b", "]0;pwn", "ed\x07\x1b[", "2Jwith", " care\u{9b}", "1m!"];
        let shown: String = pieces.iter().map(|p| s.push(p)).collect();
        assert_eq!(shown, "done with care!");
        s.push("\x1b]never ends");
        s.reset();
        assert_eq!(s.push("next"), "next");
    }

    #[test]
    fn escaping_shows_every_control_and_hidden_character() {
        assert_eq!(escaped("ls\n\x1b[1Ayes"), "ls\\n\\x1b[1Ayes");
        assert_eq!(escaped("rm -rf /\u{202e}txt.exe"), "rm -rf /\\u{202e}txt.exe");
        assert_eq!(escaped("a\\n"), "a\\\\n");
        assert_eq!(escaped("\u{9b}x\u{200b}"), "\\u{9b}x\\u{200b}");
        assert_eq!(escaped("cargo test -- --nocapture"), "cargo test -- --nocapture");
    }

    #[test]
    fn names_that_are_not_utf8_are_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let n = std::ffi::OsStr::from_bytes(b"caf\xe9-\xff.txt");
        assert_eq!(os_name(n), "caf\\xe9-\\xff.txt");
        assert_eq!(os_name(std::ffi::OsStr::new("ok.rs")), "ok.rs");
    }
}
