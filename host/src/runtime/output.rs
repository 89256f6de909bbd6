//! Tool results as the host hands them on: text capped to the output limit, and errors
//! typed so the model can tell a bad argument from a crashed plugin.

use crate::wit::types as wit;

/// Why a call failed: the plugin's own kinds, plus the host's (names and text in `contract`).
pub use corral_contract::ErrorKind;

/// A failed call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.as_str())]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError { kind, message: message.into(), hint: None }
    }
}

impl From<wit::ToolError> for ToolError {
    fn from(e: wit::ToolError) -> Self {
        let kind = match e.kind {
            wit::ErrorKind::InvalidArgs => ErrorKind::InvalidArgs,
            wit::ErrorKind::NotFound => ErrorKind::NotFound,
            wit::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            wit::ErrorKind::Conflict => ErrorKind::Conflict,
            wit::ErrorKind::Io => ErrorKind::Io,
            wit::ErrorKind::TooLarge => ErrorKind::TooLarge,
            wit::ErrorKind::Timeout => ErrorKind::Timeout,
            wit::ErrorKind::Unsupported => ErrorKind::Unsupported,
            wit::ErrorKind::Internal => ErrorKind::Internal,
            wit::ErrorKind::Other => ErrorKind::Other,
        };
        ToolError { kind, message: e.message, hint: e.hint }
    }
}

/// An image part of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub mime_type: String,
    pub data: Vec<u8>,
}

/// A successful call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// The text parts, joined.
    pub text: String,
    pub images: Vec<Image>,
    /// The plugin or the host cut the output short.
    pub truncated: bool,
}

impl ToolOutput {
    /// Converts a plugin's result, capping the text at `limit` bytes.
    pub fn from_wit(out: wit::ToolOutput, limit: usize) -> Self {
        let mut text = String::new();
        let mut images = Vec::new();
        for part in out.content {
            match part {
                wit::ContentPart::Text(t) => {
                    if !text.is_empty() && !t.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&t);
                }
                wit::ContentPart::Image(i) => images.push(Image { mime_type: i.mime_type, data: i.data }),
            }
        }
        let mut truncated = out.truncated;
        if text.len() > limit {
            let cut = corral_contract::text::floor_boundary(&text, limit);
            let over = text.len() - cut;
            text.truncate(cut);
            text.push_str(&format!(
                "\n[output truncated by corral: {over} more bytes over the {} KB limit]",
                limit / 1024
            ));
            truncated = true;
        }
        ToolOutput { text, images, truncated }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_over_the_limit_is_cut_on_a_char_boundary_and_flagged() {
        let out =
            wit::ToolOutput { content: vec![wit::ContentPart::Text("é".repeat(10))], truncated: false };
        let o = ToolOutput::from_wit(out, 5);
        assert!(o.truncated);
        assert!(o.text.starts_with("éé\n[output truncated by corral: 16 more bytes"), "{}", o.text);
    }

    #[test]
    fn parts_are_joined_and_small_output_untouched() {
        let out = wit::ToolOutput {
            content: vec![wit::ContentPart::Text("a".into()), wit::ContentPart::Text("b".into())],
            truncated: false,
        };
        let o = ToolOutput::from_wit(out, 100);
        assert_eq!(o.text, "a\nb");
        assert!(!o.truncated);
    }
}
