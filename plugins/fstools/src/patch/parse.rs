//! Reading a unified diff (as `git diff` and `diff -u` write it) into per-file patches, and
//! placing each hunk in a file's lines: exactly, then at an offset, then with fuzz.

/// One file's part of the diff.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before (`None`: the file is created).
    pub old: Option<String>,
    /// The path after (`None`: the file is deleted).
    pub new: Option<String>,
    pub hunks: Vec<Hunk>,
    /// `Binary files ... differ` or a `GIT binary patch`: refused.
    pub binary: bool,
}

/// One `@@` hunk.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based start line in the old file, as the header says.
    pub old_start: usize,
    /// `' '`, `'-'` or `'+'`, and the line's text without its end.
    pub lines: Vec<(char, String)>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_eol: bool,
    /// The same after the new side's last line.
    pub new_no_eol: bool,
    /// Every body line ended in `\r` (a CRLF file's diff).
    pub crlf: bool,
}

impl Hunk {
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines.iter().filter(|(k, _)| *k != '+').map(|(_, l)| l.as_str()).collect()
    }
}

/// A diff that cannot be read, with the 1-based diff line where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

/// `a/x` and `b/x` lose their git prefix; `diff -u`'s tab and timestamp are cut.
fn header_path(raw: &str, git: bool) -> Option<String> {
    let p = raw.split('\t').next().unwrap_or(raw).trim_end_matches('\r').trim();
    let p = p.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap_or(p);
    if p == "/dev/null" {
        return None;
    }
    let stripped = if git { p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p) } else { p };
    Some(stripped.to_string())
}

/// `@@ -12,3 +12,4 @@`: the old start and both counts.
fn hunk_header(line: &str) -> Option<(usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let new = rest.split(" @@").next()?;
    let nums = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.trim().parse().ok()?, b.trim().parse().ok()?)),
            None => Some((s.trim().parse().ok()?, 1)),
        }
    };
    let (os, oc) = nums(old)?;
    let (_, nc) = nums(new)?;
    Some((os, oc, nc))
}

/// Reads every file patch of `diff`.
pub fn parse(diff: &str) -> Result<Vec<FilePatch>, ParseError> {
    let lines: Vec<&str> = diff.split('\n').collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut cur: Option<FilePatch> = None;
    let mut git = false;
    let mut i = 0;
    let err = |line: usize, message: String| ParseError { line: line + 1, message };
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.extend(cur.take());
            git = true;
            let (a, b) = rest.split_once(" b/").map_or((rest, rest), |(a, b)| (a, b));
            cur = Some(FilePatch {
                old: header_path(a, true),
                new: Some(b.trim().to_string()),
                ..Default::default()
            });
        } else if let Some(p) = line.strip_prefix("rename from ").or_else(|| line.strip_prefix("copy from "))
        {
            if let Some(c) = cur.as_mut() {
                c.old = Some(p.trim().to_string());
            }
        } else if let Some(p) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("copy to ")) {
            if let Some(c) = cur.as_mut() {
                c.new = Some(p.trim().to_string());
            }
        } else if line.starts_with("new file mode") {
            if let Some(c) = cur.as_mut() {
                c.old = None;
            }
        } else if line.starts_with("deleted file mode") {
            if let Some(c) = cur.as_mut() {
                c.new = None;
            }
        } else if line == "GIT binary patch"
            || (line.starts_with("Binary files ") && line.ends_with(" differ"))
        {
            let c = cur.get_or_insert_with(FilePatch::default);
            c.binary = true;
            if c.old.is_none() && c.new.is_none() {
                // `diff` without git: "Binary files A and B differ".
                let names = line.trim_start_matches("Binary files ").trim_end_matches(" differ");
                c.new = names.split(" and ").last().map(str::to_string);
            }
        } else if let Some(p) = line.strip_prefix("--- ")
            && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
        {
            // A new file patch unless a `diff --git` header just opened one.
            if cur.as_ref().is_none_or(|c| !c.hunks.is_empty() || !git) {
                files.extend(cur.take());
                git = false;
            }
            // git's prefixes: `a/` before, `b/` after, either side possibly /dev/null.
            let next_path = lines[i + 1].trim_start_matches("+++ ");
            let prefixed = |s: &str, pre: &str| s.starts_with(pre) || s.starts_with("/dev/null");
            let strip = git || (prefixed(p, "a/") && prefixed(next_path, "b/"));
            let next = lines[i + 1].trim_end_matches('\r');
            let c = cur.get_or_insert_with(FilePatch::default);
            c.old = header_path(p, strip);
            c.new = header_path(next.trim_start_matches("+++ "), strip);
            i += 1;
        } else if line.starts_with("@@ ") {
            let Some(c) = cur.as_mut() else {
                return Err(err(i, "a hunk (@@) comes before any file header (--- and +++ lines)".into()));
            };
            let Some((old_start, mut old_left, mut new_left)) = hunk_header(line) else {
                return Err(err(
                    i,
                    format!("cannot read the hunk header '{line}'; expected '@@ -L,N +L,N @@'"),
                ));
            };
            let mut h = Hunk { old_start, crlf: true, ..Default::default() };
            let mut any = false;
            i += 1;
            while i < lines.len() && (old_left > 0 || new_left > 0 || lines[i].starts_with('\\')) {
                let raw = lines[i];
                if raw.starts_with("@@ ") || raw.starts_with("diff --git ") {
                    break;
                }
                // The diff's own final newline leaves an empty last piece: not a line.
                if raw.is_empty() && i + 1 == lines.len() {
                    break;
                }
                let (kind, body) = match raw.chars().next() {
                    Some(k @ (' ' | '-' | '+')) => (k, &raw[1..]),
                    Some('\\') => {
                        match h.lines.last().map(|(k, _)| *k) {
                            Some('-') => h.old_no_eol = true,
                            Some('+') => h.new_no_eol = true,
                            Some(_) => {
                                h.old_no_eol = true;
                                h.new_no_eol = true;
                            }
                            None => {}
                        }
                        i += 1;
                        continue;
                    }
                    // Some tools strip the space of an empty context line.
                    None => (' ', ""),
                    Some(_) => break,
                };
                any = true;
                h.crlf &= body.ends_with('\r');
                match kind {
                    ' ' => {
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    '-' => old_left = old_left.saturating_sub(1),
                    _ => new_left = new_left.saturating_sub(1),
                }
                h.lines.push((kind, body.to_string()));
                i += 1;
            }
            h.crlf &= any;
            if h.crlf {
                for (_, l) in &mut h.lines {
                    l.pop();
                }
            }
            c.hunks.push(h);
            continue;
        }
        i += 1;
    }
    files.extend(cur);
    files.retain(|f| f.binary || !f.hunks.is_empty() || f.old != f.new || f.old.is_none() || f.new.is_none());
    if files.is_empty() {
        return Err(ParseError {
            line: 1,
            message:
                "no file patches found; expected '--- a/FILE' and '+++ b/FILE' headers followed by @@ hunks"
                    .into(),
        });
    }
    Ok(files)
}

/// Where a hunk landed: the 0-based first file line its (trimmed) old side matched, and the fuzz used (0 exact, 1 whitespace at
/// line ends ignored, 2 also up to two outer context lines ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub at: usize,
    pub fuzz: u8,
    /// Context lines dropped from the hunk's start and end (fuzz 2).
    pub trim_front: usize,
    pub trim_back: usize,
}

fn same(a: &str, b: &str, fuzz: u8) -> bool {
    if fuzz == 0 { a.trim_end_matches('\r') == b.trim_end_matches('\r') } else { a.trim() == b.trim() }
}

/// Finds where `old` (the hunk's old side) sits in `file`, at or after `from`, nearest to
/// `expected` first.
pub fn place(
    file: &[String],
    old: &[&str],
    kinds: &[char],
    expected: usize,
    from: usize,
) -> Option<Placement> {
    let fits = |at: usize, want: &[&str], fuzz: u8| {
        at >= from
            && at + want.len() <= file.len()
            && want.iter().zip(&file[at..]).all(|(w, f)| same(w, f, fuzz))
    };
    let search = |want: &[&str], fuzz: u8, shift: usize| -> Option<usize> {
        let expected = expected + shift;
        let span = file.len().max(expected) + 1;
        (0..=span).find_map(|d| {
            [expected.checked_add(d), expected.checked_sub(d).filter(|_| d > 0)]
                .into_iter()
                .flatten()
                .find(|&at| fits(at, want, fuzz))
        })
    };
    for fuzz in [0u8, 1] {
        if let Some(at) = search(old, fuzz, 0) {
            return Some(Placement { at, fuzz, trim_front: 0, trim_back: 0 });
        }
    }
    // Fuzz 2: drop up to two context lines at either end (never a removed line).
    let lead = kinds.iter().take_while(|k| **k == ' ').count().min(2);
    let tail = kinds.iter().rev().take_while(|k| **k == ' ').count().min(2);
    for drop in 1..=2 {
        let (f, b) = (drop.min(lead), drop.min(tail));
        if f + b == 0 || f + b >= old.len() {
            continue;
        }
        let want = &old[f..old.len() - b];
        if let Some(at) = search(want, 1, f) {
            return Some(Placement { at, fuzz: 2, trim_front: f, trim_back: b });
        }
    }
    None
}

/// The window most like `old` (lines equal ignoring surrounding whitespace): 0-based start
/// and how many lines agree. `None` when no line agrees.
pub fn nearest(file: &[String], old: &[&str]) -> Option<(usize, usize)> {
    if old.is_empty() || file.is_empty() {
        return None;
    }
    let last = file.len().saturating_sub(old.len());
    (0..=last)
        .map(|at| (at, old.iter().zip(&file[at..]).filter(|(w, f)| same(w, f, 1)).count()))
        .filter(|(_, n)| *n > 0)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
}
