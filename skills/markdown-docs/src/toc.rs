//! The `toc` and `outline` scripts: a nested list of links to a document's headings, and a
//! plain outline with line numbers, plus where an existing `<!-- toc -->` block sits.

use crate::headings::{Heading, headings};

/// Which headings a table of contents includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    pub min: u8,
    pub max: u8,
}

/// The levels used when none are given: from 2 when the document has a single level-1
/// title (the title is not listed in its own contents), else from 1; down to 3.
pub fn default_levels(h: &[Heading]) -> Levels {
    let titles = h.iter().filter(|h| h.level == 1).count();
    Levels { min: if titles == 1 { 2 } else { 1 }, max: 3 }
}

/// The table of contents as a Markdown list, two spaces of indent per level.
pub fn toc(h: &[Heading], levels: Levels) -> String {
    let picked: Vec<&Heading> = h.iter().filter(|h| h.level >= levels.min && h.level <= levels.max).collect();
    let base = picked.iter().map(|h| h.level).min().unwrap_or(levels.min);
    let mut out = String::new();
    for h in picked {
        let indent = "  ".repeat(usize::from(h.level - base));
        out.push_str(&format!("{indent}- [{}](#{})\n", escape_brackets(&h.text), h.anchor));
    }
    out
}

fn escape_brackets(text: &str) -> String {
    text.replace('[', "\\[").replace(']', "\\]")
}

/// Where the `<!-- toc -->` ... `<!-- tocstop -->` markers are (1-based lines), if both are.
pub fn markers(text: &str) -> Option<(usize, usize)> {
    let mut start = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim().to_ascii_lowercase().replace(' ', "");
        if t == "<!--toc-->" && start.is_none() {
            start = Some(i + 1);
        } else if (t == "<!--tocstop-->" || t == "<!--/toc-->") && start.is_some() {
            return start.map(|s| (s, i + 1));
        }
    }
    None
}

/// The `toc` script's whole answer for `path` with `text`.
pub fn report(path: &str, text: &str, levels: Option<Levels>) -> String {
    let h = headings(text);
    if h.is_empty() {
        return format!("{path} has no headings, so there is nothing to list.\n");
    }
    let levels = levels.unwrap_or_else(|| default_levels(&h));
    let list = toc(&h, levels);
    if list.is_empty() {
        return format!("{path} has no headings of levels {} to {}.\n", levels.min, levels.max);
    }
    let mut out = format!(
        "Table of contents for {path} (heading levels {} to {}, {} entries):\n\n{list}",
        levels.min,
        levels.max,
        list.lines().count()
    );
    match markers(text) {
        Some((start, stop)) => {
            let lines: Vec<&str> = text.lines().collect();
            let current =
                lines[start..stop - 1].iter().filter(|l| !l.trim().is_empty()).copied().collect::<Vec<_>>();
            let fresh: Vec<&str> = list.lines().collect();
            if current == fresh {
                out.push_str(&format!(
                    "\nThe block between the markers on lines {start} and {stop} is already up to date.\n"
                ));
            } else {
                out.push_str(&format!(
                    "\nThe block between the markers on lines {start} and {stop} is out of date: replace the \
                     lines between them with the list above.\n"
                ));
            }
        }
        None => out.push_str(
            "\nTo keep it updatable, put it between a `<!-- toc -->` line and a `<!-- tocstop -->` line.\n",
        ),
    }
    out
}

/// The `outline` script's answer: every heading with its line number, indented by level.
pub fn outline(path: &str, text: &str) -> String {
    let h = headings(text);
    if h.is_empty() {
        return format!("{path} has no headings.\n");
    }
    let width = h.last().map(|h| h.line.to_string().len()).unwrap_or(1);
    let mut out = format!("Outline of {path} ({} lines, {} headings):\n", text.lines().count(), h.len());
    for x in &h {
        let indent = "  ".repeat(usize::from(x.level - 1));
        out.push_str(&format!(
            "{:>width$}  {indent}{} {}  (#{})\n",
            x.line,
            "#".repeat(x.level.into()),
            x.text,
            x.anchor
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# corral\n\n<!-- toc -->\n- [Old](#old)\n<!-- tocstop -->\n\n## Install\n### From source\n## Use [it](x.md)\n#### Deep\n## Install\n";

    #[test]
    fn the_title_is_left_out_and_levels_nest() {
        let h = headings(DOC);
        assert_eq!(default_levels(&h), Levels { min: 2, max: 3 });
        assert_eq!(
            toc(&h, default_levels(&h)),
            "- [Install](#install)\n  - [From source](#from-source)\n- [Use it](#use-it)\n- [Install](#install-1)\n"
        );
        assert_eq!(toc(&h, Levels { min: 1, max: 1 }), "- [corral](#corral)\n");
    }

    #[test]
    fn markers_are_found_and_staleness_reported() {
        assert_eq!(markers(DOC), Some((3, 5)));
        let r = report("README.md", DOC, None);
        assert!(
            r.starts_with(
                "Table of contents for README.md (heading levels 2 to 3, 4 entries):\n\n- [Install]"
            ),
            "{r}"
        );
        assert!(r.contains("markers on lines 3 and 5 is out of date"), "{r}");
        let fresh = DOC.replace("- [Old](#old)\n", &toc(&headings(DOC), Levels { min: 2, max: 3 }));
        assert!(report("README.md", &fresh, None).contains("is already up to date"));
        assert!(report("a.md", "# Only\n", None).contains("has no headings of levels 2 to 3"));
        assert_eq!(report("a.md", "text\n", None), "a.md has no headings, so there is nothing to list.\n");
    }

    #[test]
    fn outline_lists_lines_and_anchors() {
        let o = outline("README.md", "# A\ntext\n## B c\n");
        assert_eq!(o, "Outline of README.md (3 lines, 2 headings):\n1  # A  (#a)\n3    ## B c  (#b-c)\n");
    }
}
