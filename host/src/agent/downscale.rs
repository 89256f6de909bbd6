//! Fitting a tool's image to what a provider takes: a longest side and a byte cap. Larger
//! images are decoded (GIF: its first frame), scaled down keeping their proportions, and
//! encoded again (PNG kept where it fits, else JPEG), rather than refused.

use image::{DynamicImage, ImageFormat, ImageReader, Limits, imageops::FilterType};
use std::io::Cursor;

/// The largest image decoded, in pixels a side: anything larger is refused, not scaled.
const MAX_DECODED_SIDE: u32 = 20_000;
/// The memory a decode may take.
const MAX_DECODE_BYTES: u64 = 512 << 20;
/// JPEG quality for re-encoded images.
const JPEG_QUALITY: u8 = 85;

/// An image made to fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub mime_type: String,
    pub data: Vec<u8>,
    pub from: (u32, u32),
    pub to: (u32, u32),
}

/// `data` (of type `mime`) if it already fits (`Ok(None)`), else scaled so that its longest
/// side is at most `max_side` and its encoding at most `max_bytes`.
pub fn fit(data: &[u8], mime: &str, max_side: u32, max_bytes: usize) -> Result<Option<Fitted>, String> {
    let format = match mime {
        "image/png" => ImageFormat::Png,
        "image/jpeg" => ImageFormat::Jpeg,
        "image/gif" => ImageFormat::Gif,
        "image/webp" => ImageFormat::WebP,
        other => return Err(format!("cannot scale an image of type {other:?}")),
    };
    let reader = || {
        let mut r = ImageReader::with_format(Cursor::new(data), format);
        let mut limits = Limits::default();
        limits.max_image_width = Some(MAX_DECODED_SIDE);
        limits.max_image_height = Some(MAX_DECODED_SIDE);
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        r.limits(limits);
        r
    };
    let (w, h) = reader().into_dimensions().map_err(|e| format!("the image cannot be read: {e}"))?;
    if w.max(h) <= max_side && data.len() <= max_bytes {
        return Ok(None);
    }
    let img = reader().decode().map_err(|e| format!("the image cannot be decoded: {e}"))?;
    let mut side = max_side.min(w.max(h));
    // Each pass scales a little further until the encoding fits the byte cap.
    for _ in 0..8 {
        let scaled = img.resize(side, side, FilterType::Triangle);
        let (mime_type, bytes) = encode(&scaled, format == ImageFormat::Png, max_bytes)?;
        if bytes.len() <= max_bytes {
            let to = (scaled.width(), scaled.height());
            return Ok(Some(Fitted { mime_type, data: bytes, from: (w, h), to }));
        }
        side = side * 3 / 4;
    }
    Err(format!("the image does not fit in {max_bytes} bytes even when scaled down"))
}

/// PNG when the source was PNG (line art, screenshots) and the result fits; else JPEG.
fn encode(img: &DynamicImage, prefer_png: bool, max_bytes: usize) -> Result<(String, Vec<u8>), String> {
    if prefer_png {
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).map_err(|e| format!("cannot encode PNG: {e}"))?;
        let out = out.into_inner();
        if out.len() <= max_bytes {
            return Ok(("image/png".to_string(), out));
        }
    }
    let mut out = Vec::new();
    let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
    rgb.write_with_encoder(enc).map_err(|e| format!("cannot encode JPEG: {e}"))?;
    Ok(("image/jpeg".to_string(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noisy RGB image (noise defeats compression, so the byte cap matters).
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut seed = 7u32;
        let img = image::RgbImage::from_fn(w, h, |_, _| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, seed as u8])
        });
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(img).write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn dims(data: &[u8]) -> (u32, u32) {
        ImageReader::new(Cursor::new(data)).with_guessed_format().unwrap().into_dimensions().unwrap()
    }

    #[test]
    fn an_image_that_fits_is_left_alone() {
        assert_eq!(fit(&png(40, 30), "image/png", 100, 1 << 20).unwrap(), None);
    }

    #[test]
    fn a_large_image_is_scaled_to_the_longest_side_keeping_its_shape() {
        let f = fit(&png(400, 300), "image/png", 100, 1 << 20).unwrap().unwrap();
        assert_eq!((f.from, f.to), ((400, 300), (100, 75)));
        assert_eq!(dims(&f.data), (100, 75));
        assert_eq!(f.mime_type, "image/png");
    }

    #[test]
    fn the_byte_cap_is_met_by_jpeg_and_smaller_sides() {
        let f = fit(&png(600, 600), "image/png", 600, 40_000).unwrap().unwrap();
        assert!(f.data.len() <= 40_000, "{}", f.data.len());
        assert_eq!(f.mime_type, "image/jpeg");
        assert_eq!(dims(&f.data), f.to);
    }

    #[test]
    fn broken_data_is_an_error_not_a_panic() {
        assert!(fit(b"not an image", "image/png", 100, 1000).is_err());
        assert!(fit(b"x", "image/bmp", 100, 1000).is_err());
    }
}
