//! `HISTORY.md` in the workspace's local state (outside it): every final answer, with its time and question, newest last,
//! trimmed from the oldest entries when it grows past its cap.

use crate::capabilities::local::Local;
use std::io;

/// The file's cap in bytes.
pub const HISTORY_MAX_BYTES: usize = 500 * 1024;

const FILE: &str = "HISTORY.md";
const SEPARATOR: &str = "---\n\n";

/// Appends one entry and trims the oldest entries until the file fits its cap.
pub fn append(local: &Local, when: &str, question: &str, answer: &str) -> io::Result<()> {
    let question: String = question.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut q: String = question.chars().take(200).collect();
    if question.chars().count() > 200 {
        q.push_str("...");
    }
    let entry = format!("{SEPARATOR}**{when}**: *{}*\n\n{}\n\n", q.replace('*', "\\*"), answer.trim_end());
    let old = local.read(FILE)?.unwrap_or_default();
    let mut text = old + &crate::redact::text(&entry);
    if text.len() > HISTORY_MAX_BYTES {
        text = trim(&text, HISTORY_MAX_BYTES);
    }
    local.write(FILE, text.as_bytes())
}

/// Drops whole entries from the front until `text` fits `max` bytes (the newest entry is
/// kept even when it alone is larger, cut at a character boundary).
fn trim(text: &str, max: usize) -> String {
    let starts: Vec<usize> = text
        .match_indices(SEPARATOR)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text[..i].ends_with('\n'))
        .collect();
    for &s in &starts {
        if text.len() - s <= max {
            return text[s..].to_string();
        }
    }
    let last = starts.last().copied().unwrap_or(0);
    let end = corral_contract::text::floor_boundary(text, last + max);
    text[last..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn entries_append_and_the_oldest_go_first() {
        let t = tempfile::tempdir().unwrap();
        let d = Local::open(t.path(), Path::new("/w")).unwrap();
        append(&d, "2026-01-01 10:00:00", "first  question\nline", "answer one").unwrap();
        append(&d, "2026-01-01 10:01:00", "second", "answer two").unwrap();
        let text = std::fs::read_to_string(t.path().join("HISTORY.md")).unwrap();
        assert_eq!(
            text,
            "---\n\n**2026-01-01 10:00:00**: *first question line*\n\nanswer one\n\n\
             ---\n\n**2026-01-01 10:01:00**: *second*\n\nanswer two\n\n"
        );
        let big = "y".repeat(200 * 1024);
        for i in 0..3 {
            append(&d, &format!("t{i}"), "q", &big).unwrap();
        }
        let text = std::fs::read_to_string(t.path().join("HISTORY.md")).unwrap();
        assert!(text.len() <= HISTORY_MAX_BYTES, "{}", text.len());
        assert!(text.starts_with("---\n\n**t1**"), "{}", &text[..40]);
        assert!(!text.contains("answer one"));
    }

    #[test]
    fn long_questions_are_clipped() {
        let t = tempfile::tempdir().unwrap();
        let d = Local::open(t.path(), Path::new("/w")).unwrap();
        append(&d, "now", &"q".repeat(300), "a").unwrap();
        let text = std::fs::read_to_string(t.path().join("HISTORY.md")).unwrap();
        assert!(text.contains(&format!("*{}...*", "q".repeat(200))));
    }
}
