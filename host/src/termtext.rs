//! Text bound for the person's terminal: what a model, a tool, a plugin or a server sends is
//! stripped of control sequences (so it cannot move the cursor, retitle or fake a prompt).

/// `text` without terminal control sequences: CSI, OSC, DCS, SOS, PM and APC strings (7-bit
/// `ESC x` and 8-bit C1 forms), any other escape, and every C0/C1 control except `\n` and
/// `\t` (`\r\n` becomes `\n`). Printable text is kept as it is.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // A two-character escape (`ESC 7`, `ESC c`...): both go.
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips a control sequence's parameters and its final byte (`@` to `~`).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
    }
}

/// Skips a control string up to its terminator (BEL, `ESC \` or the 8-bit ST).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
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
    let mut out = String::new();
    for chunk in name.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
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
