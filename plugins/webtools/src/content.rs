//! What a response body is: its media type and charset, whether it is text the tools can
//! show (an allowlist of types and a NUL sniff), and its bytes decoded to a string.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// The media type of a Content-Type value: lowercase, without parameters.
pub fn mime(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value, lowercase and unquoted.
pub fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase();
        (k.trim().eq_ignore_ascii_case("charset") && !v.is_empty()).then_some(v)
    })
}

/// Whether a media type is text the tools can show. An empty type is judged by the bytes.
pub fn is_textual(mime: &str) -> bool {
    if mime.is_empty() || mime.starts_with("text/") {
        return true;
    }
    let Some(("application", sub)) = mime.split_once('/') else { return false };
    const TEXT_SUBTYPES: &[&str] = &[
        "json",
        "xml",
        "xhtml+xml",
        "javascript",
        "ecmascript",
        "x-javascript",
        "x-yaml",
        "yaml",
        "toml",
        "x-toml",
        "x-sh",
        "x-python",
        "sql",
        "graphql",
        "x-ndjson",
        "markdown",
    ];
    TEXT_SUBTYPES.contains(&sub) || sub.ends_with("+json") || sub.ends_with("+xml")
}

/// Whether the first 8 KB hold a NUL byte (the mark of a binary file).
pub fn looks_binary(body: &[u8]) -> bool {
    body[..body.len().min(8192)].contains(&0)
}

/// Whether the media type is HTML, or (with no type given) the body starts like HTML.
pub fn is_html(mime: &str, body: &[u8]) -> bool {
    if mime == "text/html" || mime == "application/xhtml+xml" {
        return true;
    }
    if !mime.is_empty() {
        return false;
    }
    let start: Vec<u8> = body.iter().skip_while(|b| b.is_ascii_whitespace()).take(15).copied().collect();
    let start = String::from_utf8_lossy(&start).to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// Whether the media type is Markdown.
pub fn is_markdown(mime: &str) -> bool {
    matches!(mime, "text/markdown" | "text/x-markdown" | "application/markdown")
}

/// A `<meta charset=...>` or `<meta http-equiv content="...; charset=...">` label in the
/// first 1024 bytes of an HTML page.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(i) = rest.find("<meta") {
        let tag = &rest[i..];
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if let Some(j) = tag.find("charset=") {
            let label: String = tag[j + 8..]
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| !matches!(c, '"' | '\'' | ';' | ' ' | '/' | '>'))
                .collect();
            if !label.is_empty() {
                return Some(label);
            }
        }
        rest = &rest[i + 5..];
    }
    None
}

/// The body as text, and the name of the encoding used. The order: a byte-order mark, the
/// charset the header declares, (for HTML) a `<meta>` charset, then UTF-8 when the bytes
/// are valid UTF-8, else Latin-1 (read as windows-1252, its superset, as browsers do).
/// A UTF-8 body cut at the size cap in the middle of a character loses only that character.
pub fn decode(body: &[u8], header_charset: Option<&str>, html: bool) -> (String, &'static str) {
    if let Some((enc, _)) = Encoding::for_bom(body) {
        let (text, _) = enc.decode_with_bom_removal(body);
        return (text.into_owned(), enc.name());
    }
    let declared = header_charset
        .map(str::to_string)
        .or_else(|| if html { meta_charset(body) } else { None })
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()));
    if let Some(enc) = declared.filter(|e| *e != UTF_8) {
        let (text, _, _) = enc.decode(body);
        return (text.into_owned(), enc.name());
    }
    match std::str::from_utf8(body) {
        Ok(s) => (s.to_string(), UTF_8.name()),
        Err(e) if e.error_len().is_none() => {
            (String::from_utf8_lossy(&body[..e.valid_up_to()]).into_owned(), UTF_8.name())
        }
        // Declared UTF-8 but not valid: keep the declaration, mark the bad bytes.
        Err(_) if declared.is_some() => (String::from_utf8_lossy(body).into_owned(), UTF_8.name()),
        Err(_) => {
            let (text, _, _) = WINDOWS_1252.decode(body);
            (text.into_owned(), WINDOWS_1252.name())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_and_charset_parameters() {
        assert_eq!(mime("Text/HTML; charset=UTF-8"), "text/html");
        assert_eq!(mime(""), "");
        assert_eq!(charset("text/html; Charset=\"ISO-8859-1\"").as_deref(), Some("iso-8859-1"));
        assert_eq!(charset("text/html; boundary=x; charset=utf-8").as_deref(), Some("utf-8"));
        assert_eq!(charset("text/html"), None);
        assert_eq!(charset("text/html; charset="), None);
    }

    #[test]
    fn text_types_are_allowed_and_binary_ones_are_not() {
        for ok in [
            "text/plain",
            "text/html",
            "text/markdown",
            "text/csv",
            "application/json",
            "application/xml",
            "application/rss+xml",
            "application/atom+xml",
            "application/vnd.api+json",
            "application/javascript",
            "",
        ] {
            assert!(is_textual(ok), "{ok}");
        }
        for bad in [
            "image/png",
            "image/svg",
            "audio/mpeg",
            "video/mp4",
            "application/octet-stream",
            "application/pdf",
            "application/zip",
            "application/wasm",
            "font/woff2",
            "multipart/form-data",
        ] {
            assert!(!is_textual(bad), "{bad}");
        }
    }

    #[test]
    fn a_nul_in_the_first_8k_means_binary() {
        assert!(looks_binary(b"PK\x03\x04\x00\x00"));
        assert!(!looks_binary(b"plain text"));
        let mut late = vec![b'a'; 9000];
        late[8500] = 0;
        assert!(!looks_binary(&late), "only the first 8 KB are sniffed");
        late[8000] = 0;
        assert!(looks_binary(&late));
    }

    #[test]
    fn html_is_known_by_type_or_by_its_first_bytes() {
        assert!(is_html("text/html", b""));
        assert!(is_html("application/xhtml+xml", b""));
        assert!(is_html("", b"\n  <!DOCTYPE html><html>"));
        assert!(is_html("", b"<HTML><body>"));
        assert!(!is_html("text/plain", b"<html>"), "a declared type wins");
        assert!(!is_html("", b"just text"));
    }

    #[test]
    fn the_header_charset_decides_first() {
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1"), false), ("café".into(), "windows-1252"));
        let sjis = b"\x93\xfa\x96\x7b"; // 日本 in Shift_JIS
        assert_eq!(decode(sjis, Some("shift_jis"), false).0, "日本");
        let koi8 = b"\xf0\xd2\xc9\xd7\xc5\xd4"; // Привет in KOI8-R
        assert_eq!(decode(koi8, Some("koi8-r"), false).0, "Привет");
    }

    #[test]
    fn a_meta_charset_counts_for_html_only() {
        let page = b"<html><head><meta charset=\"windows-1251\"></head><body>\xcf\xf0\xe8</body></html>";
        assert!(decode(page, None, true).0.contains("При"));
        let equiv = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">caf\xe9";
        assert!(decode(equiv, None, true).0.ends_with("café"));
        assert_eq!(decode(page, None, false).1, "windows-1252", "plain text ignores markup");
        assert_eq!(decode(page, Some("utf-8"), true).1, "UTF-8", "the header wins over <meta>");
    }

    #[test]
    fn then_utf8_then_latin1() {
        assert_eq!(decode("café".as_bytes(), None, false), ("café".into(), "UTF-8"));
        assert_eq!(decode(b"caf\xe9 cr\xe8me", None, false), ("café crème".into(), "windows-1252"));
        assert_eq!(decode(&"café".as_bytes()[..4], None, false).0, "caf", "a cut character is dropped");
        assert_eq!(decode(b"caf\xe9 x", Some("utf-8"), false).0, "caf\u{fffd} x", "declared UTF-8 is kept");
        assert_eq!(decode(b"x", Some("no-such-charset"), false), ("x".into(), "UTF-8"));
        assert_eq!(decode(b"\xef\xbb\xbfbom", Some("iso-8859-1"), false), ("bom".into(), "UTF-8"));
        assert_eq!(decode(b"\xff\xfeh\x00i\x00", None, false).0, "hi");
    }
}
