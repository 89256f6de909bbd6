//! The `check-links` script: every inline link, image and reference definition of the given
//! Markdown files whose target is in the workspace, checked against the files that exist and
//! the anchors their headings give. Links to other sites are counted, not fetched.

use crate::headings::{Fences, front_matter_lines, headings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One link found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// 1-based line.
    pub line: usize,
    /// What the link looks like in the source, shortened.
    pub shown: String,
    pub target: String,
}

/// Every link target in `text`, outside code.
pub fn links(text: &str) -> Vec<Link> {
    let lines: Vec<&str> = text.lines().collect();
    let mut fences = Fences::default();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(front_matter_lines(&lines)) {
        if fences.inside(line) || line.starts_with("    ") || line.starts_with('\t') {
            continue;
        }
        let line = without_code_spans(line);
        if let Some(def) = reference_definition(&line) {
            out.push(Link { line: i + 1, shown: clip(line.trim()), target: def });
            continue;
        }
        let mut rest = line.as_str();
        while let Some(p) = rest.find("](") {
            let open = rest[..p].rfind('[').unwrap_or(p);
            let after = &rest[p + 2..];
            let Some((target, used)) = destination(after) else {
                rest = after;
                continue;
            };
            let shown = format!("{}]({target})", &rest[open..p]);
            out.push(Link { line: i + 1, shown: clip(&shown), target });
            rest = &after[used..];
        }
    }
    out
}

/// The line with every `` `code` `` span blanked out.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// `[label]: target "title"` → target.
fn reference_definition(line: &str) -> Option<String> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 || !t.starts_with('[') || t.starts_with("[^") {
        return None;
    }
    let close = t.find("]:")?;
    let target = t[close + 2..].split_whitespace().next()?;
    Some(target.trim_start_matches('<').trim_end_matches('>').to_string())
}

/// The destination at the start of `s` (just after `](`) and the bytes it used.
fn destination(s: &str) -> Option<(String, usize)> {
    if let Some(rest) = s.strip_prefix('<') {
        let end = rest.find('>')?;
        return Some((rest[..end].to_string(), end + 2));
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some((s[..i].to_string(), i + 1)),
            ')' => depth -= 1,
            c if c.is_whitespace() => {
                let close = s[i..].find(')')? + i;
                return Some((s[..i].to_string(), close + 1));
            }
            _ => {}
        }
    }
    None
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 80 {
        return s.to_string();
    }
    format!("{}...", s.chars().take(77).collect::<String>())
}

/// Whether the target names another site or scheme (`https:`, `mailto:`, `//host`).
pub fn is_external(target: &str) -> bool {
    if target.starts_with("//") {
        return true;
    }
    match target.find(':') {
        Some(p) => {
            let scheme = &target[..p];
            !scheme.is_empty()
                && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

/// `%20` and friends decoded; invalid sequences kept as they are.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads files for the checker; the real one reads through the workspace preopen.
pub trait Files {
    /// The file's text, `None` when it does not exist or is not a file.
    fn read(&self, path: &Path) -> Option<String>;
    /// Whether anything (file or folder) exists at `path`.
    fn exists(&self, path: &Path) -> bool;
}

/// The real filesystem, as the sandbox shows it.
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read(path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn exists(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok()
    }
}

/// The outcome of checking some files.
#[derive(Debug, Default)]
pub struct Report {
    pub files: usize,
    pub links: usize,
    pub external: usize,
    /// `file:line: problem` lines.
    pub broken: Vec<String>,
}

impl Report {
    pub fn text(&self) -> String {
        let mut s = format!(
            "Checked {} file(s): {} link(s), of which {} point to other sites and were not checked.\n",
            self.files, self.links, self.external
        );
        if self.broken.is_empty() {
            s.push_str("No broken links.\n");
        } else {
            s.push_str(&format!("Broken ({}):\n", self.broken.len()));
            for b in &self.broken {
                s.push_str(b);
                s.push('\n');
            }
        }
        s
    }
}

/// Checks the links of each `(shown name, absolute path, text)` document; `root` is the
/// workspace root (targets starting with `/` start there).
pub fn check(files: &dyn Files, root: &Path, docs: &[(String, PathBuf, String)]) -> Report {
    let mut report = Report::default();
    let mut anchors: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let mut anchors_of = |path: &Path, text: Option<&str>| -> Vec<String> {
        anchors
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let text = text.map(str::to_string).or_else(|| files.read(path)).unwrap_or_default();
                headings(&text).into_iter().map(|h| h.anchor).collect()
            })
            .clone()
    };
    for (shown, path, text) in docs {
        report.files += 1;
        let dir = path.parent().unwrap_or(root);
        for link in links(text) {
            report.links += 1;
            if is_external(&link.target) {
                report.external += 1;
                continue;
            }
            let (file_part, fragment) = match link.target.split_once('#') {
                Some((f, frag)) => (f, Some(percent_decode(frag))),
                None => (link.target.as_str(), None),
            };
            let file_part = percent_decode(file_part.split('?').next().unwrap_or(""));
            let where_ = format!("{shown}:{}: {}", link.line, link.shown);
            let target = if file_part.is_empty() {
                path.clone()
            } else if let Some(abs) = file_part.strip_prefix('/') {
                normalize(&root.join(abs))
            } else {
                normalize(&dir.join(&file_part))
            };
            if !file_part.is_empty() {
                if !target.starts_with(root) {
                    report.broken.push(format!("{where_}: '{file_part}' points outside the workspace"));
                    continue;
                }
                if !files.exists(&target) {
                    report.broken.push(format!("{where_}: no such file or folder '{file_part}'"));
                    continue;
                }
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else { continue };
            let is_markdown = target.extension().is_some_and(|e| e == "md" || e == "markdown");
            if !is_markdown {
                continue;
            }
            let text = if target == *path { Some(text.as_str()) } else { None };
            let known = anchors_of(&target, text);
            if !known.iter().any(|a| *a == fragment || a.eq_ignore_ascii_case(&fragment)) {
                let in_file = if file_part.is_empty() { shown.clone() } else { file_part.clone() };
                let mut msg = format!("{where_}: no heading in {in_file} has the anchor '#{fragment}'");
                if let Some(near) = closest(&fragment, &known) {
                    msg.push_str(&format!(" (did you mean '#{near}'?)"));
                }
                report.broken.push(msg);
            }
        }
    }
    report
}

/// `.` and `..` removed lexically.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn closest<'a>(want: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(want, k), k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(2))
        .min()
        .map(|(_, k)| k.as_str())
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_images_and_definitions_outside_code() {
        let doc = "See [a](docs/a.md#x) and ![img](<img one.png>) `[no](code.md)`\n```\n[no](fence.md)\n```\n[ref]: ../b.md \"T\"\n[x](https://e.org/(y)) [t](c.md \"title\")\n";
        let t: Vec<(usize, String)> = links(doc).into_iter().map(|l| (l.line, l.target)).collect();
        assert_eq!(
            t,
            [
                (1, "docs/a.md#x".to_string()),
                (1, "img one.png".to_string()),
                (5, "../b.md".to_string()),
                (6, "https://e.org/(y)".to_string()),
                (6, "c.md".to_string())
            ]
        );
    }

    #[test]
    fn externals_and_decoding() {
        assert!(is_external("https://x") && is_external("mailto:a@b") && is_external("//cdn"));
        assert!(!is_external("docs/a.md") && !is_external("#x"));
        assert_eq!(percent_decode("my%20file.md"), "my file.md");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn broken_files_and_anchors_are_reported_with_lines() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/guide.md"), "# Guide\n## Set up\n").unwrap();
        let readme = "# Top\n## Usage\n[g](docs/guide.md#set-up) [bad](docs/guide.md#setup)\n[u](#usage) [v](#usge)\n[m](missing.md) [o](../../etc/passwd) [w](https://x.org) [r](/docs)\n";
        let docs = vec![("README.md".to_string(), root.join("README.md"), readme.to_string())];
        let r = check(&Disk, root, &docs);
        assert_eq!((r.files, r.links, r.external), (1, 8, 1));
        assert_eq!(
            r.broken,
            [
                "README.md:3: [bad](docs/guide.md#setup): no heading in docs/guide.md has the anchor '#setup' (did you mean '#set-up'?)",
                "README.md:4: [v](#usge): no heading in README.md has the anchor '#usge' (did you mean '#usage'?)",
                "README.md:5: [m](missing.md): no such file or folder 'missing.md'",
                "README.md:5: [o](../../etc/passwd): '../../etc/passwd' points outside the workspace",
            ]
        );
        assert!(r.text().starts_with("Checked 1 file(s): 8 link(s), of which 1 point to other sites"));
        assert!(r.text().contains("Broken (4):\nREADME.md:3:"));
    }
}
