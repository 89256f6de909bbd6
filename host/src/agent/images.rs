//! Images a tool returned, on their way to the model: kept (base64) where the provider and
//! model take images, scaled down first when larger than the provider takes, else replaced
//! by a plain note saying why.

use crate::llm::{Client, Image};

/// The largest image sent, in bytes: Anthropic refuses images over 5 MB of base64 (3.75 MB
/// of bytes); OpenAI allows more, so this one cap serves both.
pub const MAX_IMAGE_BYTES: usize = 3_750_000;

/// The longest side sent: Anthropic scales anything past 1568 pixels down itself (and
/// refuses past 8000); OpenAI fits images into 2048 pixels.
fn max_side(llm: &Client) -> u32 {
    if llm.config().kind == crate::llm::ProviderKind::Anthropic { 1568 } else { 2048 }
}

/// The media types both wire formats accept.
const TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The tool's text and the images to send with it; images that cannot go are named in the
/// text instead, so the model knows they exist and why it cannot see them.
pub fn attach(llm: &Client, mut content: String, images: Vec<crate::runtime::Image>) -> (String, Vec<Image>) {
    if images.is_empty() {
        return (content, Vec::new());
    }
    if !llm.accepts_images() {
        content.push_str(&format!(
            "\n[{} image(s) returned but not shown: model {:?} on this provider does not take images \
             (the person can set model.images = true if it does)]",
            images.len(),
            llm.config().model
        ));
        return (content, Vec::new());
    }
    let mut out = Vec::new();
    for (i, img) in images.into_iter().enumerate() {
        let mime = img.mime_type.trim().to_ascii_lowercase();
        let mime = if mime == "image/jpg" { "image/jpeg".to_string() } else { mime };
        if !TYPES.contains(&mime.as_str()) {
            content.push_str(&format!(
                "\n[image {} not shown: its type {:?} is not one the model takes (png, jpeg, gif, webp)]",
                i + 1,
                img.mime_type
            ));
        } else {
            match super::downscale::fit(&img.data, &mime, max_side(llm), MAX_IMAGE_BYTES) {
                Ok(None) => out.push(Image { mime_type: mime, base64: base64(&img.data) }),
                Ok(Some(f)) => {
                    content.push_str(&format!(
                        "\n[image {} scaled down from {}x{} to {}x{} pixels to fit what the model takes]",
                        i + 1,
                        f.from.0,
                        f.from.1,
                        f.to.0,
                        f.to.1
                    ));
                    out.push(Image { mime_type: f.mime_type, base64: base64(&f.data) });
                }
                Err(why) => content.push_str(&format!("\n[image {} not shown: {why}]", i + 1)),
            }
        }
    }
    (content, out)
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                s.push(char::from(ABC[((n >> shift) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ClientConfig, ProviderKind};

    fn client(kind: ProviderKind, model: &str, images: Option<bool>) -> Client {
        let mut cfg = ClientConfig::new(kind, "http://127.0.0.1:9", model, None);
        cfg.images = images;
        Client::new(cfg).unwrap()
    }

    /// A real PNG of `w` x `h` pixels.
    fn png_of(w: u32, h: u32) -> crate::runtime::Image {
        let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([x as u8, y as u8, 9]));
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Png).unwrap();
        crate::runtime::Image { mime_type: "image/png".into(), data: out.into_inner() }
    }

    #[test]
    fn base64_matches_the_rfc_examples() {
        let cases = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")];
        for (raw, enc) in cases {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
    }

    #[test]
    fn images_go_to_models_that_take_them_and_are_named_elsewhere() {
        let (text, imgs) =
            attach(&client(ProviderKind::OpenAi, "gpt-4o", None), "ok".into(), vec![png_of(3, 2)]);
        assert_eq!((text.as_str(), imgs.len()), ("ok", 1));
        assert_eq!(imgs[0].base64, base64(&png_of(3, 2).data), "sent as it came");
        let (text, imgs) =
            attach(&client(ProviderKind::OpenAi, "qwen2.5-coder", None), "ok".into(), vec![png_of(3, 2)]);
        assert!(
            imgs.is_empty() && text.contains("does not take images") && text.contains("model.images"),
            "{text}"
        );
        let (_, imgs) = attach(
            &client(ProviderKind::OpenAi, "qwen2.5-coder", Some(true)),
            "ok".into(),
            vec![png_of(3, 2)],
        );
        assert_eq!(imgs.len(), 1);
        let (text, imgs) =
            attach(&client(ProviderKind::Anthropic, "claude-x", Some(false)), "".into(), vec![png_of(3, 2)]);
        assert!(imgs.is_empty() && text.contains("not shown"), "{text}");
    }

    #[test]
    fn large_images_are_scaled_down_and_unknown_or_broken_ones_refused_with_the_reason() {
        let c = client(ProviderKind::Anthropic, "claude-sonnet-4-5", None);
        let svg = crate::runtime::Image { mime_type: "image/svg+xml".into(), data: vec![1] };
        let broken = crate::runtime::Image { mime_type: "image/png".into(), data: vec![7; 10] };
        let (text, imgs) = attach(&c, "r".into(), vec![png_of(3136, 100), svg, broken, png_of(3, 2)]);
        assert_eq!(imgs.len(), 2);
        assert!(text.contains("image 1 scaled down from 3136x100 to 1568x50 pixels"), "{text}");
        assert!(text.contains("image 2 not shown") && text.contains("image/svg+xml"), "{text}");
        assert!(text.contains("image 3 not shown: the image cannot be read"), "{text}");
        // OpenAI's side is larger.
        let c = client(ProviderKind::OpenAi, "gpt-4o", None);
        let (text, _) = attach(&c, "r".into(), vec![png_of(4096, 10)]);
        assert!(text.contains("to 2048x5 pixels"), "{text}");
    }
}
