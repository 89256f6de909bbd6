//! What a fetched body becomes for the model: an HTML page's main content (or the whole
//! page, or the HTML as served), JSON pretty-printed, a PDF's text, other text as served.

use super::{Format, NAME};
use crate::{content, convert, links, pdf, readable};
use corral_plugin_sdk::{ErrorKind, ToolError};

/// The most bytes of pretty-printed JSON returned (the rest is cut, and said so).
pub const MAX_JSON_BYTES: usize = 1024 * 1024;

/// A body as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub body: String,
    /// What `body` is, for the header's `format:` line.
    pub shown: String,
    /// The encoding the text was decoded from, or what it was extracted from.
    pub encoding: String,
}

fn rendered(body: String, shown: impl Into<String>, encoding: &str) -> Rendered {
    Rendered { body, shown: shown.into(), encoding: encoding.to_string() }
}

/// Whether a media type is JSON.
pub fn is_json(mime: &str) -> bool {
    mime == "application/json" || mime == "text/json" || mime.ends_with("+json")
}

/// `text` pretty-printed when it is one JSON value, cut at [`MAX_JSON_BYTES`]; None when it
/// does not parse (it is then shown as served).
fn pretty_json(text: &str) -> Option<(String, bool)> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let pretty = serde_json::to_string_pretty(&value).ok()?;
    if pretty.len() <= MAX_JSON_BYTES {
        return Some((pretty, false));
    }
    Some((crate::untrusted::prefix(&pretty, MAX_JSON_BYTES).to_string(), true))
}

/// The body of a response from `url` with type `content_type`, rendered as `format` asks.
pub fn render(format: Format, url: &str, content_type: &str, body: &[u8]) -> Result<Rendered, ToolError> {
    let mime = content::mime(content_type);
    if pdf::is_pdf(&mime, body) && format != Format::Html {
        return match pdf::to_text(body) {
            Ok((text, pages)) => {
                Ok(rendered(text, format!("text, extracted from a PDF of {pages} pages"), "PDF"))
            }
            Err(why) => Err(ToolError::new(
                ErrorKind::Unsupported,
                format!(
                    "{url} returned a PDF ({}, {} bytes) that {NAME} cannot turn into text: {why}",
                    if mime.is_empty() { "no type given" } else { &mime },
                    body.len()
                ),
            )
            .with_hint("look for an HTML or text version of this document")),
        };
    }
    let html = content::is_html(&mime, body);
    let (text, encoding) = content::decode(body, content::charset(content_type).as_deref(), html);
    let whole = |text: &str| links::absolute(&convert::to_markdown(text), url);
    Ok(match (format, html) {
        (Format::Markdown, true) => match readable::extract(&text, url) {
            Some(a) => rendered(
                a.markdown(url),
                "markdown, the page's main content (format \"page\" gives the whole page)",
                encoding,
            ),
            None => rendered(whole(&text), "markdown, the whole page (no main content was found)", encoding),
        },
        (Format::Text, true) => match readable::extract(&text, url) {
            Some(a) => rendered(a.text(), "text, the page's main content", encoding),
            None => rendered(
                convert::to_text(&text),
                "text, the whole page (no main content was found)",
                encoding,
            ),
        },
        (Format::Page, true) => {
            rendered(whole(&text), "markdown, the whole page converted from HTML", encoding)
        }
        (Format::Html, true) => rendered(text, "html, as served", encoding),
        (Format::Html, false) => rendered(text, "as served", encoding),
        (_, false) if is_json(&mime) => match pretty_json(&text) {
            Some((pretty, false)) => rendered(pretty, "JSON, pretty-printed", encoding),
            Some((pretty, true)) => rendered(
                pretty,
                format!(
                    "JSON, pretty-printed and cut at {} KB (format \"html\" gives it as served)",
                    MAX_JSON_BYTES >> 10
                ),
                encoding,
            ),
            None => rendered(text, "as served (declared JSON, but it does not parse)", encoding),
        },
        (_, false) if content::is_markdown(&mime) => {
            rendered(convert::drop_data_images(&text), "markdown, as served", encoding)
        }
        (_, false) => rendered(text, "as served (not HTML)", encoding),
    })
}
