//! patch against real `git diff` output of real changes, and each rule on its own.

use super::*;
use crate::testutil::*;
use corral_plugin_sdk::host::fake::FakeWorkspace;
use std::fs;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A repository holding `files`, committed.
fn repo(files: &[(&str, &[u8])]) -> (tempfile::TempDir, FakeWorkspace) {
    let (dir, ws) = setup();
    git(dir.path(), &["init", "-q"]);
    for (p, body) in files {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    (dir, ws)
}

/// The staged change as `git diff` prints it, then the work tree put back to the commit.
fn diff_and_reset(dir: &Path) -> String {
    git(dir, &["add", "-A"]);
    let diff = git(dir, &["diff", "--cached", "-M", "HEAD"]);
    git(dir, &["reset", "-q", "--hard", "HEAD"]);
    git(dir, &["clean", "-qfd"]);
    diff
}

fn read_all(ws: &FakeWorkspace, dir: &Path, names: &[&str]) {
    for n in names {
        ws.note_read(&dir.join(n));
    }
}

fn patch(ws: &FakeWorkspace, diff: &str) -> Result<Output, ToolError> {
    run(ws, &json!({ "diff": diff }))
}

#[test]
fn a_git_diff_of_several_files_applies_whole() {
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let (dir, ws) =
        repo(&[("a.txt", body.as_bytes()), ("old/name.rs", b"fn main() {}\n"), ("gone.txt", b"bye\n")]);
    let d = dir.path();
    let changed = body.replace("line 3\n", "line three\n").replace("line 25\n", "line 25\nadded\n");
    fs::write(d.join("a.txt"), &changed).unwrap();
    fs::create_dir_all(d.join("new")).unwrap();
    fs::rename(d.join("old/name.rs"), d.join("new/name.rs")).unwrap();
    fs::write(d.join("fresh.md"), "# hi\n").unwrap();
    fs::remove_file(d.join("gone.txt")).unwrap();
    let diff = diff_and_reset(d);
    assert!(diff.contains("rename from old/name.rs"), "{diff}");
    read_all(&ws, d, &["a.txt", "old/name.rs", "gone.txt"]);
    let out = patch(&ws, &diff).unwrap();
    assert_eq!(fs::read_to_string(d.join("a.txt")).unwrap(), changed);
    assert_eq!(fs::read_to_string(d.join("new/name.rs")).unwrap(), "fn main() {}\n");
    assert!(!d.join("old/name.rs").exists() && !d.join("gone.txt").exists());
    assert_eq!(fs::read_to_string(d.join("fresh.md")).unwrap(), "# hi\n");
    assert!(out.text.starts_with("Applied the patch to 4 files:"), "{}", out.text);
    assert!(
        out.text.contains("a.txt: hunk 1 at line 1") && out.text.contains("old/name.rs -> new/name.rs"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("gone.txt: deleted (to the trash)") && out.text.contains("fresh.md: created"),
        "{}",
        out.text
    );
}

#[test]
fn a_rename_with_changes_moves_and_edits() {
    let body: String = (1..=20).map(|i| format!("x{i}\n")).collect();
    let (dir, ws) = repo(&[("src/a.rs", body.as_bytes())]);
    let d = dir.path();
    fs::write(d.join("src/b.rs"), body.replace("x10\n", "ten\n")).unwrap();
    fs::remove_file(d.join("src/a.rs")).unwrap();
    let diff = diff_and_reset(d);
    assert!(diff.contains("rename to src/b.rs") && diff.contains("+ten"), "{diff}");
    read_all(&ws, d, &["src/a.rs"]);
    patch(&ws, &diff).unwrap();
    assert_eq!(fs::read_to_string(d.join("src/b.rs")).unwrap(), body.replace("x10\n", "ten\n"));
    assert!(!d.join("src/a.rs").exists());
}

#[test]
fn crlf_files_stay_crlf() {
    let (dir, ws) = repo(&[("w.txt", b"one\r\ntwo\r\nthree\r\n")]);
    let d = dir.path();
    fs::write(d.join("w.txt"), "one\r\n2\r\nthree\r\n").unwrap();
    let diff = diff_and_reset(d);
    read_all(&ws, d, &["w.txt"]);
    patch(&ws, &diff).unwrap();
    assert_eq!(fs::read(d.join("w.txt")).unwrap(), b"one\r\n2\r\nthree\r\n");
    // A diff written with LF lines applies to the CRLF file and keeps it CRLF.
    let lf = "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+two\n three\n";
    patch(&ws, lf).unwrap();
    assert_eq!(fs::read(d.join("w.txt")).unwrap(), b"one\r\ntwo\r\nthree\r\n");
}

#[test]
fn binary_changes_are_refused_and_nothing_is_written() {
    let (dir, ws) = repo(&[("img.bin", b"\x00\x01\x02"), ("t.txt", b"a\n")]);
    let d = dir.path();
    fs::write(d.join("img.bin"), b"\x00\x09\x09").unwrap();
    fs::write(d.join("t.txt"), "b\n").unwrap();
    let diff = diff_and_reset(d);
    assert!(diff.contains("Binary files"), "{diff}");
    read_all(&ws, d, &["img.bin", "t.txt"]);
    let e = patch(&ws, &diff).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("'img.bin': the diff holds a binary change"), "{}", e.message);
    assert_eq!(fs::read_to_string(d.join("t.txt")).unwrap(), "a\n", "the text file is untouched too");
}

#[test]
fn no_newline_at_end_of_file_is_kept_added_and_removed() {
    let (dir, ws) = repo(&[("n.txt", b"a\nb")]);
    let d = dir.path();
    fs::write(d.join("n.txt"), "a\nc").unwrap();
    let diff = diff_and_reset(d);
    assert!(diff.contains("\\ No newline at end of file"), "{diff}");
    read_all(&ws, d, &["n.txt"]);
    patch(&ws, &diff).unwrap();
    assert_eq!(fs::read_to_string(d.join("n.txt")).unwrap(), "a\nc");
    git(d, &["commit", "-qam", "c"]);
    fs::write(d.join("n.txt"), "a\nc\n").unwrap();
    let diff = diff_and_reset(d);
    patch(&ws, &diff).unwrap();
    assert_eq!(fs::read_to_string(d.join("n.txt")).unwrap(), "a\nc\n");
    git(d, &["commit", "-qam", "nl"]);
    fs::write(d.join("n.txt"), "a\nc").unwrap();
    let diff = diff_and_reset(d);
    patch(&ws, &diff).unwrap();
    assert_eq!(fs::read_to_string(d.join("n.txt")).unwrap(), "a\nc");
}

#[test]
fn offsets_and_fuzz_are_reported() {
    let (dir, ws) = setup();
    let body: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    put(dir.path(), "f.txt", &format!("new0\nnew1\n{body}"), 0);
    ws.note_read(&dir.path().join("f.txt"));
    let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n l4\n-l5\n+five\n l6\n";
    let out = patch(&ws, diff).unwrap();
    assert!(out.text.contains("f.txt: hunk 1 at line 6 (offset +2)"), "{}", out.text);
    // Context that differs in whitespace lands with fuzz 1; a changed outer context line with fuzz 2.
    let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -6,3 +6,3 @@\n   l4  \n-five\n+5\n l6\n";
    let out = patch(&ws, diff).unwrap();
    assert!(out.text.contains("(fuzz 1)"), "{}", out.text);
    let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -6,3 +6,3 @@\n WRONG\n-5\n+V\n l6\n";
    let out = patch(&ws, diff).unwrap();
    assert!(out.text.contains("(fuzz 2)"), "{}", out.text);
    assert!(fs::read_to_string(dir.path().join("f.txt")).unwrap().contains("l4\nV\nl6\n"));
}

#[test]
fn a_failing_hunk_names_file_hunk_and_nearest_match_and_writes_nothing() {
    let (dir, ws) = setup();
    put(dir.path(), "ok.txt", "a\nb\nc\n", 0);
    put(dir.path(), "bad.txt", "fn x() {\n    let y = 1;\n}\n", 0);
    ws.note_read(&dir.path().join("ok.txt"));
    ws.note_read(&dir.path().join("bad.txt"));
    let diff = "--- a/ok.txt\n+++ b/ok.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\
                --- a/bad.txt\n+++ b/bad.txt\n@@ -1,3 +1,3 @@\n fn x() {\n-    let y = 2;\n+    let y = 3;\n }\n";
    let e = patch(&ws, diff).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert!(
        e.message.starts_with("hunk 1 of 'bad.txt' (at line 1 in the diff's header) does not match the file"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("the nearest match is at line 1 where 2 of its 3 lines agree"),
        "{}",
        e.message
    );
    assert!(e.message.ends_with("Nothing was changed."), "{}", e.message);
    assert_eq!(fs::read_to_string(dir.path().join("ok.txt")).unwrap(), "a\nb\nc\n");
}

#[test]
fn a_write_refused_midway_is_rolled_back() {
    let (dir, ws) = setup();
    put(dir.path(), "a.txt", "a\n", 0);
    put(dir.path(), "b.txt", "b\n", 0);
    ws.note_read(&dir.path().join("a.txt"));
    // b.txt was never read: the host's guard refuses it after a.txt was written.
    let diff =
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n";
    let e = patch(&ws, diff).unwrap_err();
    assert!(e.message.contains("has not been read"), "{}", e.message);
    assert!(
        e.message.ends_with("the files already patched were restored, so nothing was changed"),
        "{}",
        e.message
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "a\n");
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "b\n");
}

#[test]
fn protected_paths_creation_conflicts_and_bad_diffs_are_refused() {
    let (dir, ws) = setup();
    let e = patch(&ws, "--- /dev/null\n+++ b/.corral/x\n@@ -0,0 +1 @@\n+x\n").unwrap_err();
    assert!(!dir.path().join(".corral/x").exists(), "{}", e.message);
    put(dir.path(), "here.txt", "x\n", 0);
    let e = patch(&ws, "--- /dev/null\n+++ b/here.txt\n@@ -0,0 +1 @@\n+y\n").unwrap_err();
    assert_eq!(
        e.message,
        "'here.txt' already exists, but the diff creates it (--- /dev/null); nothing was changed"
    );
    let e = patch(&ws, "just words").unwrap_err();
    assert!(
        e.message.starts_with("cannot read the diff at its line 1: no file patches found"),
        "{}",
        e.message
    );
    let e = patch(&ws, "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
    assert_eq!(e.kind, ErrorKind::PermissionDenied);
}

#[test]
fn diff_u_output_without_git_headers() {
    let (dir, ws) = setup();
    put(dir.path(), "p.txt", "1\n2\n3\n", 0);
    ws.note_read(&dir.path().join("p.txt"));
    let diff = "--- p.txt\t2024-01-01 10:00:00.000000000 +0000\n+++ p.txt\t2024-01-02 10:00:00.000000000 +0000\n\
                @@ -1,3 +1,4 @@\n 1\n+1.5\n 2\n 3\n";
    patch(&ws, diff).unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("p.txt")).unwrap(), "1\n1.5\n2\n3\n");
}

#[test]
fn a_file_named_twice_is_refused() {
    let (dir, ws) = setup();
    put(dir.path(), "d.txt", "1\n2\n", 0);
    ws.note_read(&dir.path().join("d.txt"));
    let diff =
        "--- a/d.txt\n+++ b/d.txt\n@@ -1 +1 @@\n-1\n+one\n--- a/d.txt\n+++ b/d.txt\n@@ -2 +2 @@\n-2\n+two\n";
    let e = patch(&ws, diff).unwrap_err();
    assert_eq!(e.message, "the diff changes 'd.txt' in two places; nothing was changed");
    assert_eq!(fs::read_to_string(dir.path().join("d.txt")).unwrap(), "1\n2\n");
}
