//! From a decoded page to what the model reads: HTML to Markdown (htmd) or to plain text
//! (htmd without inline markup, then unescaped); data-URI images dropped in both and in Markdown.

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown};

/// Tags whose content is never page text.
const SKIP: &[&str] =
    &["head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object"];

fn options() -> Options {
    Options { bullet_list_marker: BulletListMarker::Dash, ul_bullet_spacing: 1, ..Options::default() }
}

fn attr(element: &Element, name: &str) -> Option<String> {
    element.attrs.iter().find(|a| &*a.name.local == name).map(|a| a.value.to_string())
}

/// What stands in for an inlined image: `[image: alt]`, or `[image]` without alt text.
fn image_note(alt: &str) -> String {
    match alt.trim() {
        "" => "[image]".to_string(),
        alt => format!("[image: {alt}]"),
    }
}

/// Images inlined as data URIs are replaced by their alt text; others keep htmd's rule.
fn image(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    if attr(&element, "src").is_some_and(|s| s.trim_start().starts_with("data:")) {
        return Some(image_note(&attr(&element, "alt").unwrap_or_default()).into());
    }
    handlers.fallback(element)
}

/// `html` with the content of every `<pre>` that has no `<code>` wrapped in one, so that
/// preformatted text (shell sessions, Sphinx's highlighted blocks) becomes a code block.
pub fn code_in_pre(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() + 64);
    let mut at = 0;
    while let Some(i) = lower[at..].find("<pre").map(|i| at + i) {
        let is_tag = lower[i + 4..].starts_with(['>', ' ', '\n', '\t']);
        let (Some(gt), Some(close)) = (lower[i..].find('>'), lower[i..].find("</pre>")) else { break };
        let (open_end, close) = (i + gt + 1, i + close);
        if !is_tag || open_end > close || lower[open_end..].trim_start().starts_with("<code") {
            out.push_str(&html[at..open_end.min(close)]);
            at = open_end.min(close);
            continue;
        }
        out.push_str(&html[at..open_end]);
        out.push_str("<code>");
        out.push_str(&html[open_end..close]);
        out.push_str("</code>");
        at = close;
    }
    out.push_str(&html[at..]);
    out
}

/// HTML to Markdown.
pub fn to_markdown(html: &str) -> String {
    let html = &code_in_pre(html);
    let converter = HtmlToMarkdown::builder()
        .options(options())
        .skip_tags(SKIP.to_vec())
        .add_handler(vec!["img"], image)
        .build();
    tidy(&converter.convert(html).unwrap_or_else(|_| html.to_string()))
}

fn inner(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    Some(handlers.walk_children(element.node).content.into())
}

fn block(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let content = handlers.walk_children(element.node).content;
    Some(format!("\n\n{}\n\n", content.trim()).into())
}

fn alt_only(_: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let alt = attr(&element, "alt").unwrap_or_default();
    Some(if alt.trim().is_empty() { String::new() } else { format!("[{}]", alt.trim()) }.into())
}

/// HTML to plain text: Markdown's structure (paragraphs, lists, tables, code blocks) with
/// inline markup (links, emphasis, headings' `#`) left out and escapes removed.
pub fn to_text(html: &str) -> String {
    let converter = HtmlToMarkdown::builder()
        .options(options())
        .skip_tags(SKIP.to_vec())
        .add_handler(vec!["a", "strong", "b", "em", "i", "code", "span"], inner)
        .add_handler(vec!["h1", "h2", "h3", "h4", "h5", "h6"], block)
        .add_handler(vec!["img"], alt_only)
        .build();
    tidy(&unescape(&converter.convert(html).unwrap_or_else(|_| html.to_string())))
}

/// Removes Markdown backslash escapes outside fenced code blocks.
fn unescape(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut fenced = false;
    for line in md.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) {
                continue;
            }
            out.push(c);
        }
    }
    out
}

/// Replaces Markdown images whose target is a data URI (`![alt](data:...)`) by `[image: alt]`:
/// inlined image bytes are noise to a model and can be megabytes long.
pub fn drop_data_images(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(i) = rest.find("![") {
        let after = &rest[i + 2..];
        let parsed = after.find("](").and_then(|close| {
            let alt = &after[..close];
            let target = &after[close + 2..];
            let is_data = target.trim_start().get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:"));
            let end = target.find(')')?;
            let plain_alt = !alt.contains('\n') && !alt.replace("\\]", "").contains(']');
            (is_data && plain_alt).then_some((alt, close + 2 + end + 1))
        });
        match parsed {
            Some((alt, len)) => {
                out.push_str(&rest[..i]);
                out.push_str(&image_note(alt));
                rest = &after[len..];
            }
            None => {
                out.push_str(&rest[..i + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// At most one blank line in a row, no trailing spaces.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> and <a href="/x">a link</a>, 2 * 3.</p>
<ul><li>one</li><li>two</li></ul><pre><code>fn main() {}</code></pre>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
<img src="data:image/png;base64,AAAA" alt="pic"><img src="/logo.png" alt="logo"></body></html>"#;

    #[test]
    fn html_becomes_markdown_without_scripts_or_data_uris() {
        let md = to_markdown(PAGE);
        for want in [
            "# Hello",
            "Some **bold** and [a link](/x)",
            "- one\n- two",
            "```\nfn main() {}\n```",
            "| a | b |",
            "[image: pic]",
            "![logo](/logo.png)",
        ] {
            assert!(md.contains(want), "missing {want:?} in:\n{md}");
        }
        for never in ["alert(1)", "p{}", "base64", "<title>"] {
            assert!(!md.contains(never), "{never:?} leaked into:\n{md}");
        }
    }

    #[test]
    fn preformatted_text_without_code_is_a_code_block() {
        let md = to_markdown(
            "<p>Run:</p><pre>$ hg init public\n$ cd public\n</pre><PRE class=x><code>a</code></pre><pre>",
        );
        assert!(md.contains("```\n$ hg init public\n$ cd public\n```"), "{md}");
        assert!(md.contains("```\na\n```"), "{md}");
        assert_eq!(code_in_pre("<prefix>x</pre>"), "<prefix>x</pre>", "only <pre> tags");
    }

    #[test]
    fn html_becomes_plain_text() {
        let text = to_text(PAGE);
        for want in ["Hello\n", "Some bold and a link, 2 * 3.", "- one", "fn main() {}", "[pic]"] {
            assert!(text.contains(want), "missing {want:?} in:\n{text}");
        }
        for never in ["# Hello", "**", "](", "\\*", "alert(1)"] {
            assert!(!text.contains(never), "{never:?} in:\n{text}");
        }
    }

    #[test]
    fn data_uri_images_are_dropped_from_markdown() {
        let md = "Logo: ![the logo](data:image/png;base64,iVBORw0KGgo=) and ![kept](https://a.test/x.png)\n\
                  ![](DATA:image/gif;base64,R0lG) end ![not an image] [x](data:y)";
        assert_eq!(
            drop_data_images(md),
            "Logo: [image: the logo] and ![kept](https://a.test/x.png)\n[image] end ![not an image] [x](data:y)"
        );
        assert_eq!(drop_data_images("no images"), "no images");
        assert_eq!(drop_data_images("dangling ![alt](data:abc"), "dangling ![alt](data:abc");
    }
}
