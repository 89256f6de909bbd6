//! The headings of a Markdown document (ATX `#` and setext underlined ones, outside code
//! blocks) and the anchors GitHub gives them.

use std::collections::HashMap;

/// One heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, up to 6.
    pub level: u8,
    /// The text as rendered (inline markup removed).
    pub text: String,
    /// The anchor, unique in the document (`-1`, `-2`... added to repeats).
    pub anchor: String,
    /// 1-based line number.
    pub line: usize,
}

/// Tracks fenced code blocks (``` and ~~~) while lines are read in order.
#[derive(Debug, Default)]
pub struct Fences {
    open: Option<(char, usize)>,
}

impl Fences {
    /// Whether `line` is inside a fenced block (fence lines included).
    pub fn inside(&mut self, line: &str) -> bool {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let fence = |c: char| t.chars().take_while(|&x| x == c).count();
        match self.open {
            Some((c, n)) => {
                if indent < 4 && fence(c) >= n && t.trim_start_matches(c).trim().is_empty() {
                    self.open = None;
                }
                true
            }
            None => {
                for c in ['`', '~'] {
                    let n = fence(c);
                    if indent < 4 && n >= 3 && !(c == '`' && t[n..].contains('`')) {
                        self.open = Some((c, n));
                        return true;
                    }
                }
                false
            }
        }
    }
}

/// Every heading of `text`, in order, with unique anchors. A YAML front matter block at
/// the top is skipped.
pub fn headings(text: &str) -> Vec<Heading> {
    let lines: Vec<&str> = text.lines().collect();
    let skip = front_matter_lines(&lines);
    let mut fences = Fences::default();
    let mut out = Vec::new();
    let mut anchors = Anchors::default();
    let mut prev_plain: Option<usize> = None;
    for (i, line) in lines.iter().enumerate().skip(skip) {
        if fences.inside(line) {
            prev_plain = None;
            continue;
        }
        let found = match atx(line) {
            Some((level, raw)) => Some((level, raw, i + 1)),
            None => prev_plain
                .filter(|&p| p + 1 == i)
                .and_then(|p| setext_level(line).map(|level| (level, lines[p].trim().to_string(), p + 1))),
        };
        match found {
            Some((level, raw, line_no)) => {
                let text = plain_text(&raw);
                let anchor = anchors.next(&slug(&text));
                out.push(Heading { level, text, anchor, line: line_no });
                prev_plain = None;
            }
            None => {
                let t = line.trim();
                let plain =
                    !t.is_empty() && !line.starts_with("    ") && !t.starts_with(['>', '-', '*', '+', '|']);
                prev_plain = plain.then_some(i);
            }
        }
    }
    out
}

/// How many lines a front matter block at the top takes (0 when there is none).
pub fn front_matter_lines(lines: &[&str]) -> usize {
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return 0;
    }
    match lines.iter().skip(1).position(|l| matches!(l.trim_end(), "---" | "...")) {
        Some(p) => p + 2,
        None => 0,
    }
}

/// Anchors handed out so far, as GitHub numbers repeats: the second `usage` is `usage-1`,
/// and a later heading whose own slug is `usage-1` becomes `usage-1-1`.
#[derive(Debug, Default)]
pub struct Anchors {
    count: HashMap<String, usize>,
}

impl Anchors {
    pub fn next(&mut self, base: &str) -> String {
        let mut anchor = base.to_string();
        while self.count.contains_key(&anchor) {
            let n = self.count.entry(base.to_string()).or_insert(0);
            *n += 1;
            anchor = format!("{base}-{n}");
        }
        self.count.insert(anchor.clone(), 0);
        anchor
    }
}

/// `## Text ##` → (2, "Text").
fn atx(line: &str) -> Option<(u8, String)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut text = rest.trim();
    let stripped = text.trim_end_matches('#');
    if stripped.is_empty() || stripped.ends_with([' ', '\t']) {
        text = stripped.trim_end();
    }
    Some((level as u8, text.to_string()))
}

/// `===` → 1, `---` → 2 (under a paragraph line).
fn setext_level(line: &str) -> Option<u8> {
    let t = line.trim();
    if line.len() - line.trim_start().len() > 3 || t.is_empty() {
        return None;
    }
    if t.chars().all(|c| c == '=') {
        Some(1)
    } else if t.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

/// The text of a heading as rendered: links and images become their text, emphasis and
/// code markers go, inline HTML tags go.
pub fn plain_text(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => i += 1,
            '[' => {
                // [text](url) or [text][ref]: keep text, drop the target.
                if let Some(close) = chars[i + 1..].iter().position(|&x| x == ']').map(|p| p + i + 1) {
                    let inner: String = chars[i + 1..close].iter().collect();
                    out.push_str(&plain_text(&inner));
                    i = close + 1;
                    if let Some(&open) = chars.get(i).filter(|&&x| x == '(' || x == '[') {
                        let shut = if open == '(' { ')' } else { ']' };
                        if let Some(end) = chars[i..].iter().position(|&x| x == shut) {
                            i += end + 1;
                        }
                    }
                    continue;
                }
                out.push(c);
                i += 1;
            }
            '<' => match chars[i..].iter().position(|&x| x == '>') {
                Some(end) if chars.get(i + 1).is_some_and(|x| x.is_ascii_alphabetic() || *x == '/') => {
                    i += end + 1
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            },
            '*' | '`' => i += 1,
            '_' if is_emphasis_underscore(&chars, i) => i += 1,
            '\\' if chars.get(i + 1).is_some_and(|x| x.is_ascii_punctuation()) => {
                out.push(chars[i + 1]);
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.trim().to_string()
}

/// An underscore at a word edge marks emphasis; one inside a word (`snake_case`) is text.
fn is_emphasis_underscore(chars: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
    let after = chars.get(i + 1).is_some_and(|c| c.is_alphanumeric());
    !(before && after)
}

/// GitHub's anchor for heading text: lowercase, spaces to `-`, and every character that is
/// not a letter, digit, `-` or `_` removed.
pub fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atx_and_setext_headings_outside_code() {
        let doc = "---\ntitle: x\n---\n# Title\n\nIntro\n\nUsage\n-----\n\n```sh\n# not a heading\n```\n\n## Closing ##\n    # indented code\n#no space\n";
        let h = headings(doc);
        let got: Vec<(u8, &str, usize)> = h.iter().map(|h| (h.level, h.text.as_str(), h.line)).collect();
        assert_eq!(got, [(1, "Title", 4), (2, "Usage", 8), (2, "Closing", 15)]);
    }

    #[test]
    fn tilde_fences_and_longer_closing_fences() {
        let doc = "~~~\n# a\n~~~~\n# b\n````\n```\n# c\n````\n# d";
        let names: Vec<String> = headings(doc).into_iter().map(|h| h.text).collect();
        assert_eq!(names, ["b", "d"]);
    }

    #[test]
    fn anchors_follow_github() {
        assert_eq!(slug("Hello, World!"), "hello-world");
        assert_eq!(slug("What's new in v1.2?"), "whats-new-in-v12");
        assert_eq!(slug("snake_case and  two spaces"), "snake_case-and--two-spaces");
        assert_eq!(slug("Ünïcödé Straße"), "ünïcödé-straße");
        assert_eq!(
            plain_text("Use `corral tools` and [the guide](docs/guide.md)"),
            "Use corral tools and the guide"
        );
        assert_eq!(
            plain_text("**Bold** _em_ snake_case <kbd>Ctrl</kbd> ![logo](l.png)"),
            "Bold em snake_case Ctrl logo"
        );
        assert_eq!(plain_text("a \\* b < c"), "a * b < c");
    }

    #[test]
    fn repeated_headings_get_numbered_anchors() {
        let a: Vec<String> =
            headings("## Usage\n## Usage\n## Usage 1\n## Usage").into_iter().map(|h| h.anchor).collect();
        assert_eq!(a, ["usage", "usage-1", "usage-1-1", "usage-2"]);
    }
}
