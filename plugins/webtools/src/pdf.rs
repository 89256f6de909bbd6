//! A PDF's text (lopdf, pure Rust): every page's text in order, each page under a
//! `--- page N ---` line; encrypted or text-less documents are reported as such.

use lopdf::Document;

/// Whether a body is a PDF, by its type or its first bytes.
pub fn is_pdf(mime: &str, body: &[u8]) -> bool {
    mime == "application/pdf" || mime == "application/x-pdf" || body.starts_with(b"%PDF-")
}

/// The most bytes a page's content streams may decompress to (a guard against zip bombs).
const MAX_DECOMPRESSED: usize = 16 * 1024 * 1024;

/// The text of the PDF in `body` and its page count, or why there is none.
pub fn to_text(body: &[u8]) -> Result<(String, usize), String> {
    let doc = Document::load_mem(body).map_err(|e| format!("it could not be read as a PDF ({e})"))?;
    if doc.is_encrypted() {
        return Err("it is encrypted".into());
    }
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    let mut out = String::new();
    for &n in &pages {
        let text = doc.extract_text_with_limit(&[n], MAX_DECOMPRESSED).unwrap_or_default();
        let text = text.trim();
        if !text.is_empty() {
            out.push_str(&format!("--- page {n} ---\n{text}\n\n"));
        }
    }
    if out.trim().is_empty() {
        return Err(format!(
            "none of its {} pages holds extractable text (a scan, or text drawn as shapes)",
            pages.len()
        ));
    }
    Ok((out.trim_end().to_string(), pages.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-page PDF showing "Hello from a PDF" in Helvetica, built with lopdf itself.
    fn hello_pdf() -> Vec<u8> {
        use lopdf::content::{Content, Operation};
        use lopdf::{Object, Stream, dictionary};
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![100.into(), 600.into()]),
                Operation::new("Tj", vec![Object::string_literal("Hello from a PDF")]),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
                "Resources" => resources_id, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_pdf_becomes_its_text_page_by_page() {
        let pdf = hello_pdf();
        assert!(is_pdf("", &pdf));
        assert!(is_pdf("application/pdf", b""));
        assert!(!is_pdf("text/plain", b"hello"));
        let (text, pages) = to_text(&pdf).unwrap();
        assert_eq!(pages, 1);
        assert!(text.starts_with("--- page 1 ---\n"), "{text}");
        assert!(text.contains("Hello from a PDF"), "{text}");
    }

    #[test]
    fn a_broken_pdf_says_why() {
        let e = to_text(b"%PDF-1.4 this is not really a pdf").unwrap_err();
        assert!(e.contains("could not be read as a PDF"), "{e}");
    }
}
