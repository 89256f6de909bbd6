use super::*;
use corral_plugin_sdk::host::fake::FakeWorkspace;
use std::fs;
use std::path::PathBuf;

struct Fixture {
    _dir: tempfile::TempDir,
    ws: FakeWorkspace,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = FakeWorkspace::new(dir.path());
        let root = ws.roots()[0].path.clone();
        Fixture { _dir: dir, ws, root }
    }

    /// Creates `name` with `content` and notes it as read.
    fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.root.join(name);
        fs::write(&p, content).unwrap();
        self.ws.note_read(&p);
        p
    }

    fn edit(&self, args: Value) -> Result<Output, ToolError> {
        run(&self.ws, &args)
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.root.join(name)).unwrap()
    }
}

fn sum(s: &str) -> String {
    common::checksum(s.as_bytes())
}

#[test]
fn spec_is_a_writing_tool() {
    let s = spec();
    assert_eq!(s.name, "edit_file");
    assert!(!s.read_only && s.destructive && !s.idempotent);
    assert_eq!(s.schema["required"], json!(["file_path", "old_string", "new_string"]));
}

#[test]
fn exact_edit_writes_and_reports_checksum_and_diff() {
    let f = Fixture::new();
    f.file("a.rs", b"fn main() {\n    println!(\"hi\");\n}\n");
    let out =
        f.edit(json!({"file_path": "a.rs", "old_string": "\"hi\"", "new_string": "\"hello\""})).unwrap();
    let want = "fn main() {\n    println!(\"hello\");\n}\n";
    assert_eq!(f.read("a.rs"), want);
    assert_eq!(
        out.text,
        format!(
            "Edited a.rs (1 replacement)\n[checksum={}]\n@@ -2,1 +2,1 @@\n-    println!(\"hi\");\n+    println!(\"hello\");",
            sum(want)
        )
    );
}

#[test]
fn trimmed_pass_replaces_the_whole_lines_and_says_so() {
    let f = Fixture::new();
    f.file("a.py", b"def f():\n    if x:\n        return 1\n    return 2\n");
    let out = f
        .edit(json!({
            "file_path": "a.py",
            "old_string": "if x:\n    return 1",
            "new_string": "    if y:\n        return 3"
        }))
        .unwrap();
    assert_eq!(f.read("a.py"), "def f():\n    if y:\n        return 3\n    return 2\n");
    assert!(
        out.text.contains("\nNote: old_string matched only with whitespace trimmed on each line; the whole lines were replaced.\n"),
        "{}",
        out.text
    );
    assert!(
        out.text.ends_with("@@ -2,2 +2,2 @@\n-    if x:\n-        return 1\n+    if y:\n+        return 3"),
        "{}",
        out.text
    );
}

#[test]
fn unicode_pass_matches_typographic_characters() {
    let f = Fixture::new();
    f.file(
        "doc.md",
        "Title\n  \u{201C}Don\u{2019}t panic\u{201D} \u{2014} the guide\u{2026}\u{00A0}end\nTail\n"
            .as_bytes(),
    );
    let out = f
        .edit(json!({
            "file_path": "doc.md",
            "old_string": "\"Don't panic\" - the guide... end",
            "new_string": "Keep calm"
        }))
        .unwrap();
    assert_eq!(f.read("doc.md"), "Title\nKeep calm\nTail\n");
    assert!(out.text.contains("typographic characters normalized"), "{}", out.text);
}

#[test]
fn several_matches_are_refused_with_a_list() {
    let f = Fixture::new();
    let body: String = (1..=7).map(|i| format!("v{i} = item\n")).collect();
    let p = f.file("m.txt", body.as_bytes());
    let e = f.edit(json!({"file_path": "m.txt", "old_string": "item", "new_string": "thing"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(
        e.message,
        "7 matches for old_string in 'm.txt'; add line_number or set replace_all=true\n  \
         line 1: 'v1 = item'\n  line 2: 'v2 = item'\n  line 3: 'v3 = item'\n  line 4: 'v4 = item'\n  \
         line 5: 'v5 = item'\n  ... and 2 more"
    );
    assert_eq!(fs::read_to_string(p).unwrap(), body, "nothing written");
}

#[test]
fn line_number_chooses_among_matches() {
    let f = Fixture::new();
    f.file("m.txt", b"x = 0\ny = 1\nx = 0\n");
    let out = f
        .edit(json!({"file_path": "m.txt", "old_string": "x = 0", "new_string": "x = 9", "line_number": 3}))
        .unwrap();
    assert_eq!(f.read("m.txt"), "x = 0\ny = 1\nx = 9\n");
    assert!(out.text.ends_with("@@ -3,1 +3,1 @@\n-x = 0\n+x = 9"), "{}", out.text);
    let e = f
        .edit(json!({"file_path": "m.txt", "old_string": "0", "new_string": "1", "line_number": 0}))
        .unwrap_err();
    assert_eq!(e.message, "'line_number' is 1-based; 0 is not a line");
}

#[test]
fn stale_line_number_errors_name_the_lines() {
    let f = Fixture::new();
    f.file("m.txt", b"a\nb\na\nb\n");
    let e = f
        .edit(json!({"file_path": "m.txt", "old_string": "a", "new_string": "c", "line_number": 2}))
        .unwrap_err();
    assert_eq!(e.message, "no match for old_string at line 2 of 'm.txt'; matches were found at lines 1, 3");
    let e = f
        .edit(json!({"file_path": "m.txt", "old_string": "b\na\nb", "new_string": "c", "line_number": 1}))
        .map(|o| o.text)
        .unwrap();
    assert!(e.starts_with("Edited m.txt (1 replacement)"), "one match: the stale line is forgiven");
    assert_eq!(f.read("m.txt"), "a\nc\n");
}

#[test]
fn replace_all_replaces_every_match() {
    let f = Fixture::new();
    f.file("r.txt", b"foo foo\nbar\nfoo\n");
    let out = f
        .edit(json!({"file_path": "r.txt", "old_string": "foo", "new_string": "baz", "replace_all": true}))
        .unwrap();
    assert_eq!(f.read("r.txt"), "baz baz\nbar\nbaz\n");
    assert_eq!(
        out.text,
        format!(
            "Edited r.txt (3 replacements)\n[checksum={}]\n@@ -1,1 +1,1 @@\n-foo foo\n+baz baz\n@@ -3,1 +3,1 @@\n-foo\n+baz",
            sum("baz baz\nbar\nbaz\n")
        )
    );
}

#[test]
fn not_found_shows_the_closest_line() {
    let f = Fixture::new();
    f.file("c.rs", b"let alpha = 1;\nlet beta = compute(alpha, 2);\nlet gamma = 3;\n");
    let e = f
        .edit(json!({"file_path": "c.rs", "old_string": "let beta = compute(alfa, 2);", "new_string": "x"}))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(
        e.message,
        "old_string was not found in 'c.rs'; the closest text (94% similar) is at line 2:\n\
         2: let beta = compute(alpha, 2);"
    );
    assert!(e.hint.unwrap().contains("without the line-number prefixes"));
}

#[test]
fn crlf_files_round_trip() {
    let f = Fixture::new();
    f.file("w.txt", b"one\r\ntwo\r\nthree\r\n");
    // old_string written with LF and with CRLF both match.
    f.edit(json!({"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2\n2.5"})).unwrap();
    assert_eq!(fs::read(f.root.join("w.txt")).unwrap(), b"1\r\n2\r\n2.5\r\nthree\r\n");
    let out = f.edit(json!({"file_path": "w.txt", "old_string": "2.5\r\nthree", "new_string": "3"})).unwrap();
    assert_eq!(fs::read(f.root.join("w.txt")).unwrap(), b"1\r\n2\r\n3\r\n");
    assert!(out.text.contains(&format!("[checksum={}]", sum("1\r\n2\r\n3\r\n"))), "{}", out.text);
}

#[test]
fn mixed_line_endings_are_left_alone() {
    let f = Fixture::new();
    f.file("mix.txt", b"a\r\nb\nc\r\n");
    f.edit(json!({"file_path": "mix.txt", "old_string": "b", "new_string": "B"})).unwrap();
    assert_eq!(fs::read(f.root.join("mix.txt")).unwrap(), b"a\r\nB\nc\r\n");
    // A trimmed match keeps the line's own "\r".
    f.edit(json!({"file_path": "mix.txt", "old_string": "c ", "new_string": "C"})).unwrap();
    assert_eq!(fs::read(f.root.join("mix.txt")).unwrap(), b"a\r\nB\nC\r\n");
}

#[test]
fn a_missing_final_newline_is_preserved() {
    let f = Fixture::new();
    f.file("n.txt", b"a\nb");
    f.edit(json!({"file_path": "n.txt", "old_string": "b", "new_string": "c"})).unwrap();
    assert_eq!(f.read("n.txt"), "a\nc");
    // new_string's trailing newline stands for the line break, and the last line has none.
    f.edit(json!({"file_path": "n.txt", "old_string": "c", "new_string": "d\n"})).unwrap();
    assert_eq!(f.read("n.txt"), "a\nd");
    f.file("crlf.txt", b"x\r\ny");
    f.edit(json!({"file_path": "crlf.txt", "old_string": "y", "new_string": "z"})).unwrap();
    assert_eq!(fs::read(f.root.join("crlf.txt")).unwrap(), b"x\r\nz");
}

#[test]
fn trailing_newline_absorption() {
    let f = Fixture::new();
    f.file("t.txt", b"a\nb\nc\n");
    // old lacks "\n", new ends with it: the "\n" after the match is consumed, no blank line.
    let out = f.edit(json!({"file_path": "t.txt", "old_string": "b", "new_string": "x\ny\n"})).unwrap();
    assert_eq!(f.read("t.txt"), "a\nx\ny\nc\n");
    assert!(out.text.ends_with("@@ -2,1 +2,2 @@\n-b\n+x\n+y"), "{}", out.text);
    // Without a trailing "\n" in new nothing is absorbed: the line is emptied, not removed.
    f.edit(json!({"file_path": "t.txt", "old_string": "x", "new_string": ""})).unwrap();
    assert_eq!(f.read("t.txt"), "a\n\ny\nc\n");
    // Deleting a whole line means including its "\n" in old_string.
    let out = f.edit(json!({"file_path": "t.txt", "old_string": "y\n", "new_string": ""})).unwrap();
    assert_eq!(f.read("t.txt"), "a\n\nc\n");
    assert!(out.text.ends_with("@@ -3,1 +3,0 @@\n-y"), "{}", out.text);
    // old and new both ending in "\n": nothing extra is consumed.
    f.edit(json!({"file_path": "t.txt", "old_string": "a\n", "new_string": "A\n"})).unwrap();
    assert_eq!(f.read("t.txt"), "A\n\nc\n");
}

#[test]
fn replace_all_with_absorption_on_adjacent_lines() {
    let f = Fixture::new();
    f.file("adj.txt", b"k\nk\nz\n");
    f.edit(json!({"file_path": "adj.txt", "old_string": "k", "new_string": "k2\n", "replace_all": true}))
        .unwrap();
    assert_eq!(f.read("adj.txt"), "k2\nk2\nz\n");
}

#[test]
fn argument_errors() {
    let f = Fixture::new();
    let p = f.file("s.txt", b"same\n");
    let e = f.edit(json!({"file_path": "s.txt", "old_string": "same", "new_string": "same"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert_eq!(e.message, "old_string and new_string are the same; the edit would change nothing");
    let e = f.edit(json!({"file_path": "s.txt", "old_string": "", "new_string": "x"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert_eq!(e.message, "old_string is empty; it must be the text to replace");
    let e = f.edit(json!({"file_path": "s.txt", "old_string": "same"})).unwrap_err();
    assert_eq!(e.message, "missing required field 'new_string'");
    let e = f
        .edit(json!({"file_path": "s.txt", "old_string": "same", "new_string": "x", "replace_all": 3}))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert_eq!(fs::read_to_string(p).unwrap(), "same\n");
}

#[test]
fn missing_file_directory_binary_and_non_utf8() {
    let f = Fixture::new();
    let e = f.edit(json!({"file_path": "none.txt", "old_string": "a", "new_string": "b"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(e.message, "'none.txt' does not exist");
    fs::create_dir(f.root.join("dir")).unwrap();
    let e = f.edit(json!({"file_path": "dir", "old_string": "a", "new_string": "b"})).unwrap_err();
    assert_eq!(e.message, "'dir' is a directory; edit_file edits one file");
    f.file("bin.dat", b"a\0b");
    let e = f.edit(json!({"file_path": "bin.dat", "old_string": "a", "new_string": "b"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(e.message, "'bin.dat' is a binary file; edit_file only edits text");
    f.file("latin1.txt", b"caf\xe9\n");
    let e = f.edit(json!({"file_path": "latin1.txt", "old_string": "caf", "new_string": "b"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("not valid UTF-8"), "{}", e.message);
    assert_eq!(fs::read(f.root.join("bin.dat")).unwrap(), b"a\0b");
}

#[test]
fn checksum_guard() {
    let f = Fixture::new();
    f.file("g.txt", b"hello\n");
    let e = f
        .edit(
            json!({"file_path": "g.txt", "old_string": "hello", "new_string": "bye", "checksum": "deadbeef"}),
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    let sum = crate::common::checksum(b"hello\n");
    assert_eq!(
        e.message,
        format!("'g.txt' has changed since you read it: its checksum is {sum}, not deadbeef")
    );
    assert!(e.hint.unwrap().contains("read the file again"));
    assert_eq!(f.read("g.txt"), "hello\n");
    // Malformed values are ignored.
    for bad in ["xyz", &sum[..7], &format!("{sum}a"), "zzzzzzzz", ""] {
        f.edit(json!({"file_path": "g.txt", "old_string": "hello", "new_string": "HELLO", "checksum": bad}))
            .unwrap();
        f.edit(json!({"file_path": "g.txt", "old_string": "HELLO", "new_string": "hello"})).unwrap();
    }
    // The right checksum, in either case, lets the edit through.
    let upper = sum.to_uppercase();
    f.edit(json!({"file_path": "g.txt", "old_string": "hello", "new_string": "bye", "checksum": upper}))
        .unwrap();
    assert_eq!(f.read("g.txt"), "bye\n");
}

#[test]
fn an_unread_file_is_refused_by_the_host() {
    let f = Fixture::new();
    fs::write(f.root.join("u.txt"), "text\n").unwrap();
    let e = f.edit(json!({"file_path": "u.txt", "old_string": "text", "new_string": "other"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert!(e.message.contains("has not been read"), "{}", e.message);
    assert_eq!(e.hint.as_deref(), Some("read the file with read_file first, then retry"));
    assert_eq!(f.read("u.txt"), "text\n");
}

#[test]
fn a_match_that_changes_nothing_writes_nothing() {
    let f = Fixture::new();
    fs::write(f.root.join("same.txt"), "  keep\n").unwrap();
    // Not noted as read: a write would fail, so success shows nothing was written.
    let out =
        f.edit(json!({"file_path": "same.txt", "old_string": "keep ", "new_string": "  keep"})).unwrap();
    assert_eq!(
        out.text,
        format!(
            "'same.txt' already has this text where old_string matched; nothing was written\n[checksum={}]",
            sum("  keep\n")
        )
    );
}

#[test]
fn the_diff_is_capped() {
    let f = Fixture::new();
    let body: String = (0..60).map(|i| format!("line {i}\n")).collect();
    f.file("big.txt", body.as_bytes());
    let out = f
        .edit(json!({"file_path": "big.txt", "old_string": "line", "new_string": "row", "replace_all": true}))
        .unwrap();
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines[0], "Edited big.txt (60 replacements)");
    // Header, checksum, 40 diff lines, and the note of what was left out.
    assert_eq!(lines.len(), 2 + 40 + 1, "{}", out.text);
    assert_eq!(lines[2], "@@ -1,1 +1,1 @@");
    assert_eq!(lines[lines.len() - 1], "... (140 more diff lines)");
    assert_eq!(f.read("big.txt"), body.replace("line", "row"));
}

#[test]
fn long_diff_lines_are_clipped() {
    let f = Fixture::new();
    let long = format!("{}\n", "x".repeat(300));
    f.file("long.txt", long.as_bytes());
    let out = f.edit(json!({"file_path": "long.txt", "old_string": "xx", "new_string": "y", "line_number": 1, "replace_all": true})).unwrap();
    assert!(out.text.contains(&format!("\n-{} [+100 chars]\n", "x".repeat(200))), "{}", out.text);
    assert!(out.text.ends_with(&format!("\n+{}", "y".repeat(150))), "{}", out.text);
}

#[test]
fn a_change_of_final_newline_only_has_no_diff_lines() {
    let f = Fixture::new();
    f.file("e.txt", b"a\nb");
    let out = f.edit(json!({"file_path": "e.txt", "old_string": "a\nb", "new_string": "a\nb\n"})).unwrap();
    assert_eq!(f.read("e.txt"), "a\nb\n");
    assert_eq!(out.text, format!("Edited e.txt (1 replacement)\n[checksum={}]", sum("a\nb\n")));
}

#[test]
fn hunk_trims_shared_lines() {
    let h = hunk(5, 5, "a\nb\nc\n", "a\nB\nc\n");
    assert_eq!(h, Hunk { old_first: 6, new_first: 6, old: vec!["b".into()], new: vec!["B".into()] });
}

#[test]
fn crlf_detection() {
    assert!(is_crlf("a\r\nb\r\n"));
    assert!(is_crlf("a\r\nb"));
    assert!(!is_crlf("a\nb\r\n"));
    assert!(!is_crlf("no newline"));
    assert!(is_checksum("0123abCD") && !is_checksum("0123abc") && !is_checksum("0123abcg"));
}
