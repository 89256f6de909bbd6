//! Finding `old_string` in a file for `edit_file`.
//!
//! Three passes run in order and the first that finds anything decides:
//! 1. exact substring occurrences;
//! 2. whole lines compared with surrounding whitespace trimmed;
//! 3. like 2, after mapping typographic characters (curly quotes, dashes, ellipsis,
//!    Unicode spaces) to their ASCII forms on both sides.
//!
//! In passes 2 and 3 a match is a window of whole file lines and the replaced span is the
//! file's original text of those lines. All offsets are byte offsets into the text being
//! edited, which always uses `\n` line endings.

use crate::common::MAX_LINE_CHARS;
use corral_plugin_sdk::{ErrorKind, ToolError};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// A matched byte range `start..end` of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Which matching pass found a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Exact,
    Trimmed,
    Normalized,
}

const PASSES: [Pass; 3] = [Pass::Exact, Pass::Trimmed, Pass::Normalized];

/// Files with more lines than this get no closest-candidate search.
pub const CLOSEST_MAX_LINES: usize = 5000;
/// The least similarity for a closest candidate to be offered.
pub const CLOSEST_MIN_RATIO: f64 = 0.55;
/// A bound on the closest-candidate search's work (characters scanned, plus characters
/// times 64-bit words in the similarity steps), so a big old_string cannot stall the call.
/// Past it the best candidate found so far is offered.
const CLOSEST_MAX_WORK: usize = 150_000_000;
/// How many matches an ambiguity error lists.
const LISTED_MATCHES: usize = 5;
/// Snippets in error messages are cut to this many characters.
const SNIPPET_CHARS: usize = 100;

/// The lines of a text: `(start, end)` byte ranges without their `\n`. A final `\n` does
/// not start another line, so `"a\nb\n"` has two lines and `""` has none.
#[derive(Debug)]
pub struct Lines {
    spans: Vec<(usize, usize)>,
    len: usize,
}

impl Lines {
    pub fn new(text: &str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                spans.push((start, i));
                start = i + 1;
            }
        }
        if start < text.len() {
            spans.push((start, text.len()));
        }
        Lines { spans, len: text.len() }
    }

    pub fn count(&self) -> usize {
        self.spans.len()
    }

    /// Start and end (before the `\n`) of line `i` (0-based).
    pub fn range(&self, i: usize) -> (usize, usize) {
        self.spans.get(i).copied().unwrap_or((self.len, self.len))
    }

    /// Where the line after line `i` starts (past its `\n`, if it has one).
    pub fn next_start(&self, i: usize) -> usize {
        let (_, end) = self.range(i);
        if end < self.len { end + 1 } else { end }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.spans.partition_point(|&(s, _)| s <= offset).saturating_sub(1)
    }

    /// The text of line `i`, without its `\n`.
    pub fn text<'a>(&self, text: &'a str, i: usize) -> &'a str {
        let (s, e) = self.range(i);
        text.get(s..e).unwrap_or("")
    }

    /// The first and last 0-based lines a span touches.
    pub fn span_lines(&self, span: Span) -> (usize, usize) {
        let last = span.end.max(span.start + 1) - 1;
        (self.line_of(span.start), self.line_of(last))
    }
}

/// Maps typographic characters to ASCII: curly quotes, the U+2010..U+2015 dashes and the
/// minus sign, the ellipsis, and no-break and other Unicode spaces.
pub fn normalize(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                out.push(' ')
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The form of a line that passes 2 and 3 compare.
fn line_key(line: &str, pass: Pass) -> Cow<'_, str> {
    match pass {
        Pass::Normalized => match normalize(line.trim()) {
            Cow::Borrowed(b) => Cow::Borrowed(b),
            Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
        },
        _ => Cow::Borrowed(line.trim()),
    }
}

/// `old` without one trailing `\n`, split into lines.
fn old_lines(old: &str) -> Vec<&str> {
    old.strip_suffix('\n').unwrap_or(old).split('\n').collect()
}

/// Every non-overlapping match of `old` in `text` found by `pass`, in order (each taken
/// greedily from the left). Without replace_all, [`choose`] refuses matches that overlap.
pub fn find(text: &str, lines: &Lines, old: &str, pass: Pass) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for s in candidates(text, lines, old, pass) {
        if spans.last().is_none_or(|last| s.start >= last.end) {
            spans.push(s);
        }
    }
    spans
}

/// Every place `old` matches by `pass`, overlapping ones included, in order.
pub fn candidates(text: &str, lines: &Lines, old: &str, pass: Pass) -> Vec<Span> {
    if old.is_empty() {
        return Vec::new();
    }
    if pass == Pass::Exact {
        let mut spans = Vec::new();
        let mut from = 0;
        while let Some(i) = text.get(from..).and_then(|rest| rest.find(old)) {
            let start = from + i;
            spans.push(Span { start, end: start + old.len() });
            // Step one character, so matches that overlap this one are seen too.
            from = start + text.get(start..).and_then(|r| r.chars().next()).map_or(1, char::len_utf8);
        }
        return spans;
    }
    let want: Vec<Cow<'_, str>> = old_lines(old).into_iter().map(|l| line_key(l, pass)).collect();
    // A pattern of blank lines would match every run of blank lines: not a useful fallback.
    if want.iter().all(|w| w.is_empty()) {
        return Vec::new();
    }
    let n = want.len();
    let total = lines.count();
    let keys: Vec<Cow<'_, str>> = (0..total).map(|i| line_key(lines.text(text, i), pass)).collect();
    let ends_with_newline = old.ends_with('\n');
    let mut spans = Vec::new();
    let mut i = 0;
    while i + n <= total {
        let hit = keys.get(i..i + n).is_some_and(|window| window.iter().zip(&want).all(|(k, w)| k == w));
        if hit {
            let last = i + n - 1;
            let mut end = if ends_with_newline { lines.next_start(last) } else { lines.range(last).1 };
            // In a file with mixed line endings, keep a line's `\r` out of the replaced span.
            if !ends_with_newline
                && text.get(..end).is_some_and(|t| t.ends_with('\r'))
                && !old.ends_with('\r')
            {
                end -= 1;
            }
            spans.push(Span { start: lines.range(i).0, end });
        }
        i += 1;
    }
    spans
}

/// What the caller asked for besides `old_string`.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub replace_all: bool,
    /// 1-based.
    pub line_number: Option<usize>,
}

/// The spans to replace and the pass that found them, or an error for the model.
pub fn choose(
    text: &str,
    lines: &Lines,
    old: &str,
    choice: Choice,
    shown: &str,
) -> Result<(Pass, Vec<Span>), ToolError> {
    let Some((pass, spans)) = PASSES.iter().find_map(|&p| {
        let spans = find(text, lines, old, p);
        (!spans.is_empty()).then_some((p, spans))
    }) else {
        return Err(not_found(text, lines, old, shown));
    };
    if choice.replace_all {
        // Every match, taken left to right as `str::replace` and `sed s///g` do.
        return Ok((pass, spans));
    }
    let all = candidates(text, lines, old, pass);
    if all.len() > spans.len() {
        return Err(overlapping(text, lines, &all, shown));
    }
    let Some(line) = choice.line_number else {
        if spans.len() == 1 {
            return Ok((pass, spans));
        }
        return Err(ambiguous(text, lines, &spans, shown));
    };
    let covers = |s: &Span| {
        let (first, last) = lines.span_lines(*s);
        (first + 1..=last + 1).contains(&line)
    };
    let covering: Vec<Span> = spans.iter().copied().filter(covers).collect();
    match covering.len() {
        1 => return Ok((pass, covering)),
        0 => {}
        n => {
            return Err(ToolError::new(
                ErrorKind::Conflict,
                format!("{n} matches of old_string are on line {line} of '{shown}'"),
            )
            .with_hint("make old_string longer so that it matches only once, or set replace_all=true"));
        }
    }
    // A stale line_number: look at every pass, counting matches on the same lines once
    // (kept from the earliest pass that finds them; two in that pass stay two).
    let mut distinct: BTreeMap<(usize, usize), (Pass, Vec<Span>)> = BTreeMap::new();
    for p in PASSES {
        for s in find(text, lines, old, p) {
            let entry = distinct.entry(lines.span_lines(s)).or_insert((p, Vec::new()));
            if entry.0 == p {
                entry.1.push(s);
            }
        }
    }
    let near: Vec<&(Pass, Vec<Span>)> =
        distinct.values().filter(|(_, spans)| spans.iter().any(covers)).collect();
    let single = match (near.as_slice(), distinct.len()) {
        ([one], _) => Some(*one),
        ([], 1) => distinct.values().next(),
        _ => None,
    };
    if let Some((p, spans)) = single
        && let [s] = spans.as_slice()
    {
        return Ok((*p, vec![*s]));
    }
    let at: Vec<String> = distinct
        .iter()
        .take(LISTED_MATCHES)
        .map(|((first, _), (_, spans))| match spans.len() {
            1 => (first + 1).to_string(),
            n => format!("{} ({n} matches)", first + 1),
        })
        .collect();
    let more = match distinct.len().saturating_sub(LISTED_MATCHES) {
        0 => String::new(),
        n => format!(" and {n} more places"),
    };
    Err(ToolError::new(
        ErrorKind::Conflict,
        format!(
            "no match for old_string at line {line} of '{shown}'; matches were found at lines {}{more}",
            at.join(", ")
        ),
    )
    .with_hint("re-read the file and give the line_number of the match you mean"))
}

/// A line cut to [`SNIPPET_CHARS`] characters for an error message.
pub fn snippet(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(SNIPPET_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!("{}...", &line[..cut]),
    }
}

fn ambiguous(text: &str, lines: &Lines, spans: &[Span], shown: &str) -> ToolError {
    let mut msg = format!(
        "{} matches for old_string in '{shown}'; add line_number or set replace_all=true",
        spans.len()
    );
    for s in spans.iter().take(LISTED_MATCHES) {
        let line = lines.line_of(s.start);
        msg.push_str(&format!("\n  line {}: '{}'", line + 1, snippet(lines.text(text, line))));
    }
    if spans.len() > LISTED_MATCHES {
        msg.push_str(&format!("\n  ... and {} more", spans.len() - LISTED_MATCHES));
    }
    ToolError::new(ErrorKind::Conflict, msg)
        .with_hint("line_number is a 1-based line inside the match you mean, as read_file numbers lines")
}

/// Matches that share text: replacing one would change what the others match, so which
/// is meant cannot be told, whatever line_number says.
fn overlapping(text: &str, lines: &Lines, all: &[Span], shown: &str) -> ToolError {
    let mut msg = format!(
        "old_string matches {} places in '{shown}' that overlap one another, so the edit is ambiguous",
        all.len()
    );
    for s in all.iter().take(LISTED_MATCHES) {
        let (first, last) = lines.span_lines(*s);
        msg.push_str(&format!(
            "\n  lines {}-{}: '{}'",
            first + 1,
            last + 1,
            snippet(lines.text(text, first))
        ));
    }
    if all.len() > LISTED_MATCHES {
        msg.push_str(&format!("\n  ... and {} more", all.len() - LISTED_MATCHES));
    }
    ToolError::new(ErrorKind::Conflict, msg)
        .with_hint("include more surrounding text in old_string so that it matches exactly one place")
}

fn not_found(text: &str, lines: &Lines, old: &str, shown: &str) -> ToolError {
    let mut msg = format!("old_string was not found in '{shown}'");
    if let Some((first, count, ratio)) = closest(text, lines, old) {
        msg.push_str(&format!(
            "; the closest text ({:.0}% similar) is at line {}:",
            (ratio * 100.0).floor(),
            first + 1
        ));
        const SHOWN_LINES: usize = 20;
        for i in first..first + count.min(SHOWN_LINES) {
            msg.push_str(&format!("\n{}: {}", i + 1, crate::common::clip_line(lines.text(text, i))));
        }
        if count > SHOWN_LINES {
            msg.push_str(&format!("\n... ({} more lines)", count - SHOWN_LINES));
        }
    }
    ToolError::new(ErrorKind::NotFound, msg).with_hint(
        "old_string must match the file's text; copy it from read_file output without the line-number prefixes, \
         or read the file again if it may have changed",
    )
}

/// The window of lines most like `old` (whitespace-trimmed and normalized), as its first
/// 0-based line, its line count and its similarity, when that is at least
/// [`CLOSEST_MIN_RATIO`] and the file has at most [`CLOSEST_MAX_LINES`] lines.
pub fn closest(text: &str, lines: &Lines, old: &str) -> Option<(usize, usize, f64)> {
    let total = lines.count();
    if total == 0 || total > CLOSEST_MAX_LINES {
        return None;
    }
    let want_lines: Vec<String> =
        old_lines(old).iter().map(|l| line_key(l, Pass::Normalized).into_owned()).collect();
    let want: Vec<char> = want_lines.join("\n").chars().collect();
    if want.is_empty() {
        return None;
    }
    let n = want_lines.len().min(total);
    let keys: Vec<String> =
        (0..total).map(|i| line_key(lines.text(text, i), Pass::Normalized).into_owned()).collect();
    let lcs = Lcs::new(&want);
    let mut counts: HashMap<char, i64> = HashMap::new();
    for &c in &want {
        *counts.entry(c).or_default() += 1;
    }
    let key_chars: Vec<usize> = keys.iter().map(|k| k.chars().count()).collect();
    let mut work: usize = 0;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..=total - n {
        let Some(window) = keys.get(i..i + n) else { break };
        let cand_len = key_chars.get(i..i + n).map_or(0, |c| c.iter().sum::<usize>()) + n - 1;
        let sum = (want.len() + cand_len) as f64;
        let floor = best.map_or(CLOSEST_MIN_RATIO, |(_, r)| r.max(CLOSEST_MIN_RATIO));
        let bound = |m: usize| 2.0 * m as f64 / sum;
        // Cheap upper bounds first: the shorter length, then the shared characters.
        if bound(want.len().min(cand_len)) < floor {
            continue;
        }
        work = work.saturating_add(cand_len);
        if work > CLOSEST_MAX_WORK {
            break;
        }
        let cand: Vec<char> = window.join("\n").chars().collect();
        let mut left = counts.clone();
        let shared = cand
            .iter()
            .filter(|c| match left.get_mut(c) {
                Some(k) if *k > 0 => {
                    *k -= 1;
                    true
                }
                _ => false,
            })
            .count();
        if bound(shared) < floor {
            continue;
        }
        work = work.saturating_add(cand.len().saturating_mul(lcs.words));
        if work > CLOSEST_MAX_WORK {
            break;
        }
        let ratio = bound(lcs.length(&cand));
        if ratio >= floor && best.is_none_or(|(_, r)| ratio > r) {
            best = Some((i, ratio));
        }
    }
    best.map(|(i, r)| (i, n, r))
}

/// Longest-common-subsequence length against a fixed pattern, 64 positions per step
/// (the bit-parallel method of Allison–Dix and Hyyrö).
struct Lcs {
    words: usize,
    len: usize,
    masks: HashMap<char, Vec<u64>>,
}

impl Lcs {
    fn new(pattern: &[char]) -> Self {
        let words = pattern.len().div_ceil(64).max(1);
        let mut masks: HashMap<char, Vec<u64>> = HashMap::new();
        for (i, &c) in pattern.iter().enumerate() {
            let m = masks.entry(c).or_insert_with(|| vec![0; words]);
            if let Some(w) = m.get_mut(i / 64) {
                *w |= 1 << (i % 64);
            }
        }
        Lcs { words, len: pattern.len(), masks }
    }

    fn length(&self, other: &[char]) -> usize {
        let mut v = vec![u64::MAX; self.words];
        for c in other {
            let Some(m) = self.masks.get(c) else { continue };
            let mut carry = 0u64;
            for (vw, &mw) in v.iter_mut().zip(m) {
                let u = *vw & mw;
                let (s1, c1) = vw.overflowing_add(u);
                let (s2, c2) = s1.overflowing_add(carry);
                carry = u64::from(c1 || c2);
                *vw = s2 | (*vw & !u);
            }
        }
        let mut zeros = 0;
        for (i, w) in v.iter().enumerate() {
            let bits = (self.len - (i * 64).min(self.len)).min(64);
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            zeros += (!w & mask).count_ones() as usize;
        }
        zeros
    }
}

/// Refuses a span that ends exactly where read_file clips a longer line: old_string was
/// probably copied from the clipped display and the rest of the line would be left over.
pub fn check_clipped(text: &str, lines: &Lines, spans: &[Span], shown: &str) -> Result<(), ToolError> {
    for s in spans {
        let line = lines.line_of(s.end);
        let (start, end) = lines.range(line);
        if s.end <= start || s.end >= end || s.end - start < MAX_LINE_CHARS {
            continue;
        }
        if text.get(start..s.end).is_some_and(|t| t.chars().count() == MAX_LINE_CHARS) {
            return Err(ToolError::new(
                ErrorKind::InvalidArgs,
                format!(
                    "old_string ends exactly where read_file clips line {} of '{shown}' \
                     ({MAX_LINE_CHARS} characters), but the line goes on",
                    line + 1
                ),
            )
            .with_hint("the rest of the line was not shown; match a shorter piece inside the line instead"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates_of(text: &str, old: &str, pass: Pass) -> Vec<(usize, usize)> {
        candidates(text, &Lines::new(text), old, pass).iter().map(|s| (s.start, s.end)).collect()
    }

    fn spans(text: &str, old: &str, pass: Pass) -> Vec<(usize, usize)> {
        find(text, &Lines::new(text), old, pass).iter().map(|s| (s.start, s.end)).collect()
    }

    fn pick<'a>(
        text: &'a str,
        old: &str,
        replace_all: bool,
        line_number: Option<usize>,
    ) -> Result<(Pass, Vec<&'a str>), ToolError> {
        let lines = Lines::new(text);
        let (p, s) = choose(text, &lines, old, Choice { replace_all, line_number }, "f.txt")?;
        Ok((p, s.iter().map(|s| &text[s.start..s.end]).collect()))
    }

    #[test]
    fn lines_table() {
        let l = Lines::new("a\nbc\n");
        assert_eq!(l.count(), 2);
        assert_eq!(l.range(1), (2, 4));
        assert_eq!(l.next_start(1), 5);
        assert_eq!(l.line_of(3), 1);
        assert_eq!(l.line_of(1), 0, "the newline belongs to its line");
        let l = Lines::new("a\nbc");
        assert_eq!((l.count(), l.next_start(1)), (2, 4));
        assert_eq!(Lines::new("").count(), 0);
        assert_eq!(l.span_lines(Span { start: 0, end: 2 }), (0, 0), "a span ending in \\n stays on its line");
    }

    #[test]
    fn exact_pass_finds_non_overlapping_substrings() {
        assert_eq!(spans("aaaa", "aa", Pass::Exact), vec![(0, 2), (2, 4)]);
        assert_eq!(spans("x foo y foo", "foo", Pass::Exact), vec![(2, 5), (8, 11)]);
        assert!(spans("abc", "abd", Pass::Exact).is_empty());
    }

    #[test]
    fn trimmed_pass_replaces_whole_original_lines() {
        let text = "fn a() {\n    let x = 1;\n\tlet y = 2;  \n}\n";
        // Different indentation on both lines of old.
        let old = "let x = 1;\n  let y = 2;";
        let got = spans(text, old, Pass::Trimmed);
        assert_eq!(got.len(), 1);
        let (s, e) = got[0];
        assert_eq!(&text[s..e], "    let x = 1;\n\tlet y = 2;  ");
        // With a trailing newline in old the span takes the last line's newline too.
        let (s, e) = spans(text, "let x = 1;\nlet y = 2;\n", Pass::Trimmed)[0];
        assert_eq!(&text[s..e], "    let x = 1;\n\tlet y = 2;  \n");
        // Only whole lines match: a fragment of a line is not a trimmed match.
        assert!(spans(text, "x = 1;", Pass::Trimmed).is_empty());
        // Blank-only patterns are not a fallback.
        assert!(spans("a\n\n  \nb", "   \n", Pass::Trimmed).is_empty());
    }

    #[test]
    fn trimmed_windows_do_not_overlap_and_ignore_carriage_returns() {
        assert_eq!(spans("x\nx\nx\n", "x\nx", Pass::Trimmed), vec![(0, 3)]);
        assert_eq!(candidates_of("x\nx\nx\n", "x\nx", Pass::Trimmed), vec![(0, 3), (2, 5)]);
        assert_eq!(spans("a\r\nb\r\n", "a\nb", Pass::Trimmed), vec![(0, 4)], "the last \\r stays");
        assert_eq!(spans("a\r\nb\r\n", "a\nb\n", Pass::Trimmed), vec![(0, 6)]);
    }

    #[test]
    fn normalization_maps_each_character_class() {
        assert_eq!(normalize("\u{2018}a\u{2019} \u{201A}\u{201B}"), "'a' ''");
        assert_eq!(normalize("\u{201C}q\u{201D}\u{201E}\u{201F}"), "\"q\"\"\"");
        for dash in ['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}'] {
            assert_eq!(normalize(&format!("a{dash}b")), "a-b", "{dash:?}");
        }
        assert_eq!(normalize("wait\u{2026}"), "wait...");
        for space in ['\u{00A0}', '\u{2002}', '\u{2009}', '\u{202F}', '\u{3000}'] {
            assert_eq!(normalize(&format!("a{space}b")), "a b", "{space:?}");
        }
        assert!(matches!(normalize("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn normalized_pass_matches_typography_on_either_side() {
        let text = "say(\u{201C}it\u{2019}s\u{201D});\nx = a \u{2014} b\u{2026}\nkeep\u{00A0}going\n";
        assert!(spans(text, "say(\"it's\");", Pass::Trimmed).is_empty());
        assert_eq!(
            spans(text, "say(\"it's\");", Pass::Normalized),
            vec![(0, 18)],
            "curly quotes are 3 bytes each"
        );
        assert_eq!(spans(text, "x = a - b...", Pass::Normalized).len(), 1);
        assert_eq!(spans(text, "keep going", Pass::Normalized).len(), 1);
        // The model's side is normalized too.
        assert_eq!(spans("a - b\n", "a \u{2013} b", Pass::Normalized), vec![(0, 5)]);
    }

    #[test]
    fn the_first_pass_with_a_hit_decides() {
        // Exact finds one; trimmed would find two.
        let text = "  foo\nfoo\n";
        let (p, s) = pick(text, "  foo", false, None).unwrap();
        assert_eq!((p, s), (Pass::Exact, vec!["  foo"]));
        let (p, _) = pick("  foo\n", " foo ", false, None).unwrap();
        assert_eq!(p, Pass::Trimmed);
        let (p, _) = pick("a \u{2014} b\n", "a - b", false, None).unwrap();
        assert_eq!(p, Pass::Normalized);
    }

    #[test]
    fn several_matches_list_five_and_count_the_rest() {
        let text = "x = 1\n".repeat(8);
        let e = pick(&text, "x = 1", false, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(
            e.message,
            "8 matches for old_string in 'f.txt'; add line_number or set replace_all=true\n  \
             line 1: 'x = 1'\n  line 2: 'x = 1'\n  line 3: 'x = 1'\n  line 4: 'x = 1'\n  line 5: 'x = 1'\n  \
             ... and 3 more"
        );
        let e = pick("a\nb a\n", "a", false, None).unwrap_err();
        assert_eq!(
            e.message,
            "2 matches for old_string in 'f.txt'; add line_number or set replace_all=true\n  \
             line 1: 'a'\n  line 2: 'b a'"
        );
    }

    #[test]
    fn replace_all_takes_every_match_of_the_deciding_pass() {
        let (p, s) = pick("a\n a\na\n", "a", true, None).unwrap();
        assert_eq!((p, s.len()), (Pass::Exact, 3));
        let (p, s) = pick("  b\nb \n", " b", true, None).unwrap();
        assert_eq!((p, s), (Pass::Exact, vec![" b"]));
    }

    #[test]
    fn line_number_picks_the_covering_match() {
        let text = "a\nb\na\nb\n";
        let lines = Lines::new(text);
        let (_, s) =
            choose(text, &lines, "a\nb", Choice { replace_all: false, line_number: Some(4) }, "f").unwrap();
        assert_eq!(s, vec![Span { start: 4, end: 7 }], "line 4 is the second line of the second match");
        let (_, s) =
            choose(text, &lines, "a\nb", Choice { replace_all: false, line_number: Some(1) }, "f").unwrap();
        assert_eq!(s, vec![Span { start: 0, end: 3 }]);
    }

    #[test]
    fn two_matches_on_the_chosen_line_is_an_error() {
        let e = pick("x x\nx\n", "x", false, Some(1)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(e.message, "2 matches of old_string are on line 1 of 'f.txt'");
    }

    #[test]
    fn stale_line_number_falls_back_to_a_single_match() {
        // One match only, but the model's line number is off.
        let (p, s) = pick("a\nb\nc\n", "b", false, Some(3)).unwrap();
        assert_eq!((p, s), (Pass::Exact, vec!["b"]));
        // The exact and the trimmed pass find the same line: still one distinct match.
        let (p, s) = pick("a\n  b\nc\n", "b", false, Some(1)).unwrap();
        assert_eq!((p, s), (Pass::Exact, vec!["b"]));
        // Several distinct matches: the error names their lines.
        let e = pick("b\nx\nb\nx\n", "b", false, Some(2)).unwrap_err();
        assert_eq!(
            e.message,
            "no match for old_string at line 2 of 'f.txt'; matches were found at lines 1, 3"
        );
        // A later pass's match on the given line is the one meant: the exact pass finds
        // "a b " inside line 3, the trimmed pass finds the whole of line 1.
        let (p, s) = pick("a b\nz\na b  x\n", "a b ", false, Some(1)).unwrap();
        assert_eq!((p, s), (Pass::Trimmed, vec!["a b"]));
        let (p, s) = pick("a b\nz\na b  x\n", "a b ", false, None).unwrap();
        assert_eq!((p, s), (Pass::Exact, vec!["a b "]));
        // Two matches on one line are not one distinct match.
        let e = pick("x x\n", "x", false, Some(5)).unwrap_err();
        assert_eq!(
            e.message,
            "no match for old_string at line 5 of 'f.txt'; matches were found at lines 1 (2 matches)"
        );
    }

    #[test]
    fn overlapping_candidates_are_refused_with_or_without_line_number() {
        // The case: " a\n a\n a\n" with "a\na" matches lines 1-2 and 2-3.
        for line in [None, Some(1), Some(2), Some(3)] {
            let e = pick(" a\n a\n a\n", "a\na", false, line).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Conflict);
            assert_eq!(
                e.message,
                "old_string matches 2 places in 'f.txt' that overlap one another, so the edit is ambiguous\n  \
                 lines 1-2: 'a'\n  lines 2-3: 'a'",
                "line_number {line:?}"
            );
        }
        // replace_all takes matches left to right, as str::replace does.
        let (_, s) = pick(" a\n a\n a\n", "a\na", true, None).unwrap();
        assert_eq!(s, vec![" a\n a"]);
        // The exact pass too: "aXa" twice in "aXaXa".
        let e = pick("aXaXa\n", "aXa", false, None).unwrap_err();
        assert!(e.message.starts_with("old_string matches 2 places"), "{}", e.message);
        // Matches side by side do not overlap and stay a plain choice.
        let text = "ab\nab\n";
        let (_, s) =
            choose(text, &Lines::new(text), "ab", Choice { replace_all: false, line_number: Some(2) }, "f")
                .unwrap();
        assert_eq!(s, vec![Span { start: 3, end: 5 }]);
        assert!(pick("aa\n", "a", false, None).unwrap_err().message.starts_with("2 matches"));
    }

    #[test]
    fn a_stale_line_number_lists_five_places_and_counts_the_rest() {
        let text = "m\nz\n".repeat(20_000);
        let e = pick(&text, "m", false, Some(2)).unwrap_err();
        assert_eq!(
            e.message,
            "no match for old_string at line 2 of 'f.txt'; matches were found at lines 1, 3, 5, 7, 9 \
             and 19995 more places"
        );
    }

    #[test]
    fn not_found_offers_the_closest_window() {
        let text = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{}\", total);\n}\n";
        let e = pick(text, "let total = compute(1, 3);\nprintln!(\"{}\", totl);", false, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(
            e.message.starts_with("old_string was not found in 'f.txt'; the closest text ("),
            "{}",
            e.message
        );
        assert!(
            e.message.ends_with(
                "similar) is at line 2:\n2:     let total = compute(1, 2);\n3:     println!(\"{}\", total);"
            ),
            "{}",
            e.message
        );
        let e = pick(text, "something else entirely", false, None).unwrap_err();
        assert_eq!(e.message, "old_string was not found in 'f.txt'");
    }

    #[test]
    fn closest_respects_ratio_and_size_limits() {
        let text = "alpha beta\ngamma delta\n";
        let lines = Lines::new(text);
        let (first, count, ratio) = closest(text, &lines, "gamma delts").unwrap();
        assert_eq!((first, count), (1, 1));
        assert!((ratio - 20.0 / 22.0).abs() < 1e-9, "{ratio}");
        assert!(closest(text, &lines, "zzzz").is_none());
        let big = "line\n".repeat(CLOSEST_MAX_LINES + 1);
        assert!(closest(&big, &Lines::new(&big), "lime").is_none());
        let ok = "line\n".repeat(CLOSEST_MAX_LINES);
        assert!(closest(&ok, &Lines::new(&ok), "lime").is_some());
    }

    fn lcs_dp(a: &[char], b: &[char]) -> usize {
        let mut prev = vec![0usize; b.len() + 1];
        for x in a {
            let mut cur = vec![0usize; b.len() + 1];
            for (j, y) in b.iter().enumerate() {
                cur[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn bit_parallel_lcs_agrees_with_dynamic_programming() {
        let cases = [
            ("", "abc"),
            ("abc", "abc"),
            ("kitten", "sitting"),
            ("the quick brown fox jumps over the lazy dog", "a quick brown dog leaps over lazy foxes"),
        ];
        let long_a: String = (0..200).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        let long_b: String = (0..150).map(|i| char::from(b'a' + (i * 11 % 26) as u8)).collect();
        for (a, b) in cases.iter().copied().chain([(long_a.as_str(), long_b.as_str())]) {
            let a: Vec<char> = a.chars().collect();
            let b: Vec<char> = b.chars().collect();
            assert_eq!(Lcs::new(&a).length(&b), lcs_dp(&a, &b), "{a:?} / {b:?}");
        }
    }

    #[test]
    fn a_match_ending_at_the_display_clip_is_refused() {
        let line = "y".repeat(MAX_LINE_CHARS + 10);
        let text = format!("a\n{line}\n");
        let lines = Lines::new(&text);
        let clipped = Span { start: 2, end: 2 + MAX_LINE_CHARS };
        let e = check_clipped(&text, &lines, &[clipped], "f").unwrap_err();
        assert!(
            e.message.starts_with("old_string ends exactly where read_file clips line 2 of 'f'"),
            "{}",
            e.message
        );
        let shorter = Span { start: 2, end: 2 + MAX_LINE_CHARS - 1 };
        assert!(check_clipped(&text, &lines, &[shorter], "f").is_ok());
        let whole = Span { start: 2, end: 2 + line.len() };
        assert!(check_clipped(&text, &lines, &[whole], "f").is_ok());
        let exact_line = format!("a\n{}\n", "y".repeat(MAX_LINE_CHARS));
        let span = Span { start: 2, end: 2 + MAX_LINE_CHARS };
        assert!(check_clipped(&exact_line, &Lines::new(&exact_line), &[span], "f").is_ok());
    }
}
