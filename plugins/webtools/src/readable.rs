//! A page's main content, as browsers' reader modes find it (dom_smoothie's Readability):
//! title, byline and date, then the article as Markdown; and the outline of a Markdown text.

use crate::{convert, links};
use dom_smoothie::{Config, Readability};

/// Pages with more elements than this are not scored (the whole page is converted instead):
/// scoring is quadratic in the worst case and the plugin runs under a deadline.
const MAX_ELEMENTS: usize = 60_000;
/// Main content shorter than this (characters of text) is taken for a failed extraction.
const MIN_TEXT_CHARS: usize = 200;

/// The main content of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    pub title: String,
    pub byline: Option<String>,
    pub published: Option<String>,
    pub site: Option<String>,
    /// The article's HTML, cleaned.
    pub html: String,
}

/// The main content of `html` (served from `url`), or None when the page has none that
/// Readability can find (a home page, an app shell, a listing).
pub fn extract(html: &str, url: &str) -> Option<Article> {
    let cfg = Config { max_elements_to_parse: MAX_ELEMENTS, ..Config::default() };
    let url = (url.starts_with("http://") || url.starts_with("https://")).then_some(url);
    let mut r = Readability::new(html, url, Some(cfg)).ok()?;
    let a = r.parse().ok()?;
    if a.text_content.trim().chars().count() < MIN_TEXT_CHARS {
        return None;
    }
    let clean = |s: Option<String>| {
        s.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|s| !s.is_empty())
    };
    Some(Article {
        title: a.title.split_whitespace().collect::<Vec<_>>().join(" "),
        byline: clean(a.byline),
        published: clean(a.published_time),
        site: clean(a.site_name),
        html: a.content.to_string(),
    })
}

impl Article {
    /// The header lines: `# title`, then a line with byline, date and site where known.
    fn header(&self) -> String {
        let mut s = String::new();
        if !self.title.is_empty() {
            s.push_str(&format!("# {}\n\n", self.title));
        }
        let meta: Vec<String> = [
            self.byline.as_ref().map(|b| format!("By {b}")),
            self.published.as_ref().map(|d| format!("Published {d}")),
            self.site.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !meta.is_empty() {
            s.push_str(&format!("{}\n\n", meta.join(" · ")));
        }
        s
    }

    /// The article as Markdown, links made absolute against `url`.
    pub fn markdown(&self, url: &str) -> String {
        let body = links::absolute(&convert::to_markdown(&self.html), url);
        let body = lead_with_prose(&drop_repeated_title(&body, &self.title));
        format!("{}{}", self.header(), body)
    }

    /// The article as plain text.
    pub fn text(&self) -> String {
        let body = convert::to_text(&self.html);
        let title = self.title.trim();
        let body = match body.strip_prefix(title) {
            Some(rest) if !title.is_empty() && rest.starts_with('\n') => rest.trim_start().to_string(),
            _ => body,
        };
        format!("{}{}", self.header().trim_start_matches("# "), body)
    }
}

/// The body without a first heading that repeats the title (the header already shows it).
fn drop_repeated_title(body: &str, title: &str) -> String {
    let first = body.lines().next().unwrap_or("");
    let heading = first.trim_start_matches('#').trim();
    if first.starts_with('#') && !title.is_empty() && heading.eq_ignore_ascii_case(title.trim()) {
        body[first.len()..].trim_start().to_string()
    } else {
        body.to_string()
    }
}

/// Whether a Markdown block is prose: a paragraph, not a heading, list, table, quote, code
/// or a lone image, and long enough to be a sentence or more.
fn is_prose(block: &str) -> bool {
    const NOT_PROSE: &[&str] = &["#", "|", "- ", "* ", "+ ", "> ", "```", "![", "[![", "    "];
    let first = block.trim_start_matches('\n');
    !is_box(block)
        && !NOT_PROSE.iter().any(|p| first.starts_with(p))
        && !first
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && first.chars().filter(|c| c.is_alphabetic()).count() >= 60
}

/// Whether a block is mostly table rows or a lone image: an infobox or a lead picture.
fn is_box(block: &str) -> bool {
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    let rows = lines.iter().filter(|l| l.trim_start().starts_with('|')).count();
    let image = lines.len() == 1 && (lines[0].starts_with("![") || lines[0].starts_with("[!["));
    image || (rows > 0 && rows * 2 >= lines.len())
}

/// Whether a block is an in-page table of contents: a list of `#fragment` links only.
fn is_toc(block: &str) -> bool {
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() >= 3
        && lines.iter().all(|l| {
            let l = l.trim_start().trim_start_matches(['-', '*', '+']).trim_start();
            l.starts_with('[') && l.trim_end().ends_with(')') && l.contains("](#")
        })
}

/// A heading without the permalink marks sites put after it (`[#](#id)`, `[¶](#id)`).
fn strip_permalink(line: &str) -> String {
    if !line.starts_with('#') {
        return line.to_string();
    }
    let mut t = line.trim_end().to_string();
    // Wikipedia's `[edit]` section links.
    for open in ["\\[[edit](", "[edit]("] {
        while let Some(i) = t.find(open) {
            let close = if open.starts_with('\\') { ")\\]" } else { ")" };
            let Some(j) = t[i..].find(close) else { break };
            t.replace_range(i..i + j + close.len(), "");
        }
    }
    let mut t = t.trim_end();
    for mark in ["[#](#", "[¶](#", "[](#", "[§](#", "[🔗](#"] {
        if let Some(i) = t.rfind(mark)
            && t.ends_with(')')
            && !t[i + mark.len()..].contains("](")
        {
            t = t[..i].trim_end();
        }
    }
    // A heading that is one link back to the page's own contents list: its text.
    let hashes = t.len() - t.trim_start_matches('#').len();
    let text = t[hashes..].trim();
    if let Some(inner) = text.strip_prefix('[').and_then(|r| r.strip_suffix(')'))
        && let Some((label, target)) = inner.split_once("](#")
        && !label.contains('[')
        && !target.contains(['(', ')', '[', ']'])
    {
        return format!("{} {label}", &t[..hashes]);
    }
    t.to_string()
}

/// The body reordered so the first paragraph comes first: in-page tables of contents (and
/// their "Contents" titles) are dropped, the outline stands for them; boxes before the first
/// paragraph (an infobox, a lead image) move after it; headings lose their permalink marks.
fn lead_with_prose(body: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut fenced = false;
    let mut current = String::new();
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
            continue;
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(&if fenced { line.to_string() } else { strip_permalink(line) });
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    let Some(first_prose) = blocks.iter().position(|b| is_prose(b)) else { return blocks.join("\n\n") };
    let mut lead = Vec::new();
    let mut moved = Vec::new();
    for (i, b) in blocks.iter().enumerate().take(first_prose) {
        let next_is_toc = blocks.get(i + 1).is_some_and(|n| is_toc(n));
        let is_toc_title = next_is_toc && b.split_whitespace().count() <= 4 && !b.starts_with('#');
        if is_toc(b) || is_toc_title {
            continue;
        }
        if is_box(b) { moved.push(b.clone()) } else { lead.push(b.clone()) }
    }
    lead.push(blocks[first_prose].clone());
    lead.extend(moved);
    let rest = &blocks[first_prose + 1..];
    for (i, b) in rest.iter().enumerate() {
        let next_is_toc = rest.get(i + 1).is_some_and(|n| is_toc(n));
        let title = b.trim_start_matches('#').trim();
        let is_toc_title = next_is_toc && title.split_whitespace().count() <= 4;
        if !is_toc(b) && !is_toc_title {
            lead.push(b.clone());
        }
    }
    lead.join("\n\n")
}

/// The headings of a Markdown text (outside fenced code) with their 1-based line numbers.
pub fn outline(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        if !fenced && (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            out.push((i + 1, line.trim_end().to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROSE: &str =
        "Corral runs every tool as a WebAssembly component, so a tool sees only what it is granted.";

    #[test]
    fn the_first_paragraph_comes_first_and_contents_lists_go() {
        let body = format!(
            "Caption\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n![logo](https://x.test/l.png)\n\n{PROSE}\n\n\
             ## Contents\n\n- [One](#one)\n- [Two](#two)\n  - [Three](#three)\n\n## [One](#id1)[¶](#one \"Permalink\")\n\nText.\n\n\
             ```\n- [a](#a)\n\n- [b](#b)\n- [c](#c)\n```"
        );
        let out = lead_with_prose(&body);
        assert!(out.starts_with(PROSE), "{out}");
        assert!(
            out.contains(&format!("{PROSE}\n\nCaption\n| a | b |")),
            "the box follows the paragraph: {out}"
        );
        assert!(out.contains("\n\n![logo](https://x.test/l.png)\n\n## One\n\nText."), "{out}");
        assert!(!out.contains("Contents") && !out.contains("- [Two](#two)"), "{out}");
        assert!(out.ends_with("```\n- [a](#a)\n\n- [b](#b)\n- [c](#c)\n```"), "code is never touched: {out}");
    }

    #[test]
    fn a_body_without_prose_is_kept_as_it_is() {
        assert_eq!(lead_with_prose("- one\n- two\n\n| a |\n| - |"), "- one\n- two\n\n| a |\n| - |");
        assert!(!is_prose("1. first step of a long list that has plenty of letters in it to count as text"));
        assert!(is_prose(&format!("1998 was the year. {PROSE}")));
    }

    #[test]
    fn headings_lose_permalinks_and_edit_links() {
        assert_eq!(strip_permalink("## Using it [#](#using-it)"), "## Using it");
        assert_eq!(
            strip_permalink("## History\\[[edit](https://w.test/e?s=1 \"Edit section\")\\]"),
            "## History"
        );
        assert_eq!(
            strip_permalink("### [Setting up](#id2)[¶](#setting-up \"Permalink to this headline\")"),
            "### Setting up"
        );
        assert_eq!(
            strip_permalink("## See [the guide](https://g.test/)"),
            "## See [the guide](https://g.test/)"
        );
        assert_eq!(strip_permalink("not a [#](#heading)"), "not a [#](#heading)");
    }

    #[test]
    fn the_outline_lists_headings_outside_code_with_line_numbers() {
        let md = "# Title\n\ntext\n```\n# not a heading\n```\n## Part\n#hashtag\n####### seven";
        assert_eq!(outline(md), vec![(1, "# Title".to_string()), (7, "## Part".to_string())]);
    }

    #[test]
    fn a_page_without_an_article_has_no_main_content() {
        assert_eq!(
            extract("<html><body><nav><a href=/>Home</a></nav><p>Hi</p></body></html>", "https://a.test/"),
            None
        );
        let page = format!(
            "<html><head><title>T</title></head><body><nav><a href=/>Home</a> <a href=/b>Blog</a></nav>\
             <article><h1>T</h1><p>{PROSE} {PROSE}</p><p>{PROSE} {PROSE}</p></article><footer>Footer links</footer></body></html>"
        );
        let a = extract(&page, "https://a.test/").expect("an article");
        let md = a.markdown("https://a.test/");
        assert!(md.starts_with(&format!("# T\n\n{PROSE}")), "{md}");
        assert!(!md.contains("Home") && !md.contains("Footer links"), "{md}");
    }
}
