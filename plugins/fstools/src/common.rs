//! Rules shared by the file tools: limits, checksums, binary detection, text decoding,
//! long-line clipping, and (in [`walk`]) the directory walk of list_files and grep.

use corral_plugin_sdk::paths::io_error;
use corral_plugin_sdk::{ErrorKind, ToolError};
use std::path::Path;

pub mod fileio;
pub mod walk;

/// Cap on one tool result, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;
/// Lines longer than this many characters are clipped in output.
pub const MAX_LINE_CHARS: usize = 2000;
/// How much of a file is inspected for a NUL byte to call it binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A short checksum of `bytes`: the high 32 bits of their XXH3-64, as 8 hex digits. It tells
/// a model whether a file changed since it read it; it is not a security measure.
pub fn checksum(bytes: &[u8]) -> String {
    format!("{:08x}", xxhash_rust::xxh3::xxh3_64(bytes) >> 32)
}

/// A file is binary when its first 8 KB hold a NUL byte. (memchr: SIMD in wasm too, where
/// the slice's own search goes a word at a time; grep asks this of every file.)
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
}

/// Reads `path` as UTF-8 text. Binary and non-UTF-8 files are refused with a message
/// that names `shown` (the path as the model wrote it).
pub fn read_text(path: &Path, shown: &str) -> Result<(String, Vec<u8>), ToolError> {
    let bytes = fileio::read(path).map_err(|e| io_error(shown, &e))?;
    let text = decode_text(&bytes, shown)?;
    Ok((text, bytes))
}

/// Checks that `bytes` are text and decodes them.
pub fn decode_text(bytes: &[u8], shown: &str) -> Result<String, ToolError> {
    text_of(bytes, shown).map(str::to_owned)
}

/// Like [`decode_text`] without copying: `bytes` as `&str`, or the same refusal.
pub fn text_of<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, ToolError> {
    if is_binary(bytes) {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("'{shown}' is a binary file; it cannot be shown as text"),
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorKind::Unsupported,
            format!(
                "'{shown}' is not valid UTF-8 (first bad byte at offset {}); only UTF-8 text can be read",
                e.valid_up_to()
            ),
        )
    })
}

/// How many lines `text` has, counted like [`str::lines`]: split at `\n`, a final line
/// ending is optional, so `"a\nb"` and `"a\nb\n"` both have two lines.
pub fn count_lines(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if text.is_empty() || text.ends_with('\n') { newlines } else { newlines + 1 }
}

/// `line` cut to [`MAX_LINE_CHARS`] characters, with `[+N chars]` saying how much was cut.
pub fn clip_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => std::borrow::Cow::Borrowed(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            std::borrow::Cow::Owned(format!("{} [+{rest} chars]", &line[..cut]))
        }
    }
}

/// Files larger than this are not read (read_file refuses them, grep skips them).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Directory walks (list_files, grep) stop after this many entries.
pub const MAX_WALK_ENTRIES: usize = 20_000;

/// The modification time of `meta` in nanoseconds since the epoch (0 when unknown), a
/// key for sorting newest first.
pub fn mtime_key(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_is_the_high_half_of_xxh3() {
        // XXH3-64 of the empty input is 0x2D06800538D394C2 (the reference test vector).
        assert_eq!(checksum(b""), "2d068005");
        let (a, b) = (checksum(b"hello\n"), checksum(b"hello\r\n"));
        assert!(a.len() == 8 && a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn binary_means_nul_in_first_8k() {
        assert!(is_binary(b"a\0b"));
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(!is_binary(&late));
    }

    #[test]
    fn long_lines_are_clipped_with_a_count() {
        let line = "x".repeat(MAX_LINE_CHARS + 5);
        assert_eq!(clip_line(&line), format!("{} [+5 chars]", "x".repeat(MAX_LINE_CHARS)));
        assert_eq!(clip_line("short"), "short");
    }

    #[test]
    fn lines_are_counted_like_str_lines() {
        for t in ["", "a", "a\n", "a\nb", "a\nb\n", "\n", "\n\n", "a\r\nb\r\n"] {
            assert_eq!(count_lines(t), t.lines().count(), "{t:?}");
        }
    }

    #[test]
    fn invalid_utf8_is_refused() {
        let e = decode_text(&[b'a', 0xff, b'b'], "f").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(e.message.contains("offset 1"), "{}", e.message);
    }
}
