//! Image files as images: `read_file` on a PNG, JPEG, GIF or WebP file and `view_image`
//! return the image itself (the host scales it to what the model takes, or names it to models
//! that take no images) with a line giving its type, size and dimensions.

use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, args::req_str, json};
use std::path::Path;

/// The largest image file read, in bytes.
pub const MAX_IMAGE_FILE_BYTES: u64 = 20 << 20;

/// An image format the models take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl Kind {
    pub fn mime(self) -> &'static str {
        match self {
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Gif => "image/gif",
            Kind::WebP => "image/webp",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Png => "PNG",
            Kind::Jpeg => "JPEG",
            Kind::Gif => "GIF",
            Kind::WebP => "WebP",
        }
    }
}

/// The image format `head` (a file's first bytes) starts with, if any.
pub fn sniff(head: &[u8]) -> Option<Kind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Kind::Png)
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some(Kind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(Kind::Gif)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Kind::WebP)
    } else {
        None
    }
}

/// Width and height from the image's header, where it can be read.
pub fn dimensions(kind: Kind, b: &[u8]) -> Option<(u32, u32)> {
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let be16 = |i: usize| Some(u32::from(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?)));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?)));
    let le24 = |i: usize| {
        let s = b.get(i..i + 3)?;
        Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
    };
    match kind {
        Kind::Png => Some((be32(16)?, be32(20)?)),
        Kind::Gif => Some((le16(6)?, le16(8)?)),
        Kind::WebP => match b.get(12..16)? {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8L" => {
                let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            _ => None,
        },
        Kind::Jpeg => {
            // Walk the segments to the first start-of-frame marker.
            let mut i = 2;
            while i + 9 < b.len() {
                if b[i] != 0xff {
                    return None;
                }
                let marker = b[i + 1];
                let len = be16(i + 2)? as usize;
                let sof = matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
                if sof {
                    return Some((be16(i + 7)?, be16(i + 5)?));
                }
                i += 2 + len;
            }
            None
        }
    }
}

/// The result for the image file `data` at `shown`.
pub fn output(shown: &str, kind: Kind, data: Vec<u8>) -> Output {
    let size = match dimensions(kind, &data) {
        Some((w, h)) => format!(", {w}x{h} pixels"),
        None => String::new(),
    };
    let text = format!("{shown}: {} image{size}, {} bytes (the image follows)", kind.name(), data.len());
    Output::text(text).with_image(kind.mime(), data)
}

/// Reads `path` as an image if it is one; `None` when it is not an image file.
pub fn read_if_image(path: &Path, shown: &str) -> Result<Option<Output>, ToolError> {
    let mut head = [0u8; 16];
    let n = {
        use std::io::Read;
        let Ok(mut f) = std::fs::File::open(path) else { return Ok(None) };
        f.read(&mut head).unwrap_or(0)
    };
    let Some(kind) = sniff(&head[..n]) else { return Ok(None) };
    let len = std::fs::metadata(path).map_err(|e| io_error(shown, &e))?.len();
    if len > MAX_IMAGE_FILE_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "'{shown}' is a {} MB image; images over {} MB are not read",
                len >> 20,
                MAX_IMAGE_FILE_BYTES >> 20
            ),
        ));
    }
    let data = std::fs::read(path).map_err(|e| io_error(shown, &e))?;
    Ok(Some(output(shown, kind, data)))
}

pub fn view_spec() -> Spec {
    Spec::new(
        "view_image",
        "Look at an image file of the workspace (PNG, JPEG, GIF or WebP): returns the image itself, \
         with its type and dimensions. Large images are scaled down for the model; a model that \
         takes no images gets only the description line.",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The image file"}},
            "required": ["path"],
            "additionalProperties": false
        }),
    )
}

pub fn view_run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let shown = req_str(args, "path")?;
    let path = Resolver::new(ws).resolve(shown)?;
    let meta = std::fs::metadata(&path).map_err(|e| io_error(shown, &e))?;
    if !meta.is_file() {
        return Err(ToolError::invalid_args(format!("'{shown}' is not a file")));
    }
    match read_if_image(&path, shown)? {
        Some(out) => Ok(out),
        None => Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("'{shown}' is not a PNG, JPEG, GIF or WebP image"),
        )
        .with_hint("read text files with read_file")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_dimensions_come_from_the_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(sniff(&png), Some(Kind::Png));
        assert_eq!(dimensions(Kind::Png, &png), Some((640, 480)));
        let gif = b"GIF89a\x20\x03\x58\x02rest";
        assert_eq!((sniff(gif), dimensions(Kind::Gif, gif)), (Some(Kind::Gif), Some((800, 600))));
        // JPEG: SOI, an APP0 segment, then SOF0 with height 200 and width 300.
        let jpeg = [
            0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0xc8, 0x01,
            0x2c, 0x03, 0, 0, 0,
        ];
        assert_eq!((sniff(&jpeg), dimensions(Kind::Jpeg, &jpeg)), (Some(Kind::Jpeg), Some((300, 200))));
        assert_eq!(sniff(b"just text"), None);
    }

    #[test]
    fn the_output_describes_the_image_and_carries_it() {
        let gif = b"GIF89a\x02\x00\x01\x00".to_vec();
        let out = output("a.gif", Kind::Gif, gif.clone());
        assert_eq!(out.text, "a.gif: GIF image, 2x1 pixels, 10 bytes (the image follows)");
        assert_eq!(out.images, vec![("image/gif".to_string(), gif)]);
    }
}
