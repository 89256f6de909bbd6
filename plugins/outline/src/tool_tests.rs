use super::*;
use corral_plugin_sdk::host::Root;
use corral_plugin_sdk::json;
use std::fs;

struct Ws {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    resolver: Resolver,
}

fn ws(files: &[(&str, &str)]) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (p, text) in files {
        fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
        fs::write(root.join(p), text).unwrap();
    }
    let resolver = Resolver::from_roots(vec![Root { path: root.clone(), writable: false }]);
    Ws { _dir: dir, root, resolver }
}

fn ok(w: &Ws, args: Value) -> Output {
    run_in(&w.resolver, &args).unwrap()
}

fn err(w: &Ws, args: Value) -> ToolError {
    run_in(&w.resolver, &args).unwrap_err()
}

const RS: &str = "struct A;\n\nimpl A {\n    fn f(&self) {}\n}\n";

#[test]
fn a_file_shows_its_title_and_aligned_items_at_depth_two() {
    let w = ws(&[("src/a.rs", RS)]);
    let out = ok(&w, json!({"file_path": "src/a.rs"}));
    assert_eq!(out.text, "src/a.rs (Rust, 5 lines)\n  1-1  struct A;\n  3-5  impl A\n  4-4    fn f(&self)\n");
    assert!(!out.truncated);
    let top = ok(&w, json!({"file_path": "src/a.rs", "depth": 1}));
    assert!(!top.text.contains("fn f"), "{}", top.text);
    // Out-of-range depths are brought within 1..=3 instead of refused.
    assert_eq!(ok(&w, json!({"file_path": "src/a.rs", "depth": 0})).text, top.text);
    assert_eq!(
        ok(&w, json!({"file_path": "src/a.rs", "depth": 9})).text,
        ok(&w, json!({"file_path": "src/a.rs", "depth": 3})).text
    );
}

#[test]
fn a_folder_outlines_every_source_file_under_it_at_depth_one() {
    let w = ws(&[
        ("src/a.rs", RS),
        ("src/b.py", "class B:\n    def m(self):\n        pass\n"),
        ("src/notes.md", "# not code\n"),
        ("node_modules/x.js", "function x() {}\n"),
    ]);
    let out = ok(&w, json!({"file_path": "."}));
    assert!(out.text.starts_with("2 source files under ., depth 1:\n\n"), "{}", out.text);
    assert!(out.text.contains("src/a.rs (Rust, 5 lines)\n  1-1  struct A;\n  3-5  impl A\n"), "{}", out.text);
    assert!(out.text.contains("src/b.py (Python, 3 lines)\n  1-3  class B:\n"), "{}", out.text);
    assert!(!out.text.contains("def m") && !out.text.contains("x.js"), "{}", out.text);
    let deeper = ok(&w, json!({"file_path": "src", "depth": 2}));
    assert!(deeper.text.contains("    def m(self):"), "{}", deeper.text);
    let empty = ws(&[("README.md", "x")]);
    assert!(ok(&empty, json!({"file_path": "."})).text.contains("no Rust, Python"));
}

#[test]
fn files_takes_paths_and_objects_and_reports_each_failure_inline() {
    let w = ws(&[("a.rs", RS), ("b.go", "package b\n\nfunc F() {}\n")]);
    let out =
        ok(&w, json!({"files": ["a.rs", {"file_path": "b.go", "depth": 1}, "missing.rs", "notes.txt"]}));
    assert!(out.text.contains("a.rs (Rust, 5 lines)"), "{}", out.text);
    assert!(out.text.contains("b.go (Go, 3 lines)\n  3-3  func F()\n"), "{}", out.text);
    assert!(out.text.contains("missing.rs: "), "{}", out.text);
    assert!(out.text.contains("notes.txt: "), "{}", out.text);
    let many: Vec<String> = (0..21).map(|i| format!("f{i}.rs")).collect();
    assert!(err(&w, json!({"files": many})).message.contains("limit is 20"));
}

#[test]
fn arguments_are_checked_and_empty_fields_count_as_absent() {
    let w = ws(&[("a.rs", RS)]);
    assert!(err(&w, json!({})).message.contains("`file_path` is missing"));
    assert!(err(&w, json!({"file_path": "a.rs", "files": ["a.rs"]})).message.contains("not both"));
    // Weak models send empty optional fields.
    assert!(ok(&w, json!({"file_path": "a.rs", "files": []})).text.starts_with("a.rs (Rust"));
    assert!(ok(&w, json!({"file_path": "", "files": ["a.rs"]})).text.starts_with("a.rs (Rust"));
    assert!(ok(&w, json!({"file_path": "a.rs", "files": null})).text.starts_with("a.rs (Rust"));
}

#[test]
fn refusals_say_why_and_what_to_use_instead() {
    let w = ws(&[("notes.txt", "hello\n"), ("bin.rs", "fn a() {}\0\n"), ("latin.py", "")]);
    fs::write(w.root.join("latin.py"), b"x = '\xe9'\n").unwrap();
    let e = err(&w, json!({"file_path": "notes.txt"}));
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.message.contains("parses Rust, Python, JavaScript, TypeScript, Go, C, C++ and Java"),
        "{}",
        e.message
    );
    assert!(e.hint.unwrap().contains("grep"));
    assert!(err(&w, json!({"file_path": "bin.rs"})).message.contains("binary"));
    assert!(err(&w, json!({"file_path": "latin.py"})).message.contains("not valid UTF-8"));
    assert_eq!(err(&w, json!({"file_path": "nope.rs"})).kind, ErrorKind::NotFound);
    assert_eq!(err(&w, json!({"file_path": "../x.rs"})).kind, ErrorKind::PermissionDenied);
    assert_eq!(err(&w, json!({"file_path": "~/x.rs"})).kind, ErrorKind::PermissionDenied);
    let big = "fn a() {}\n".repeat((MAX_FILE_BYTES as usize / 10) + 1);
    fs::write(w.root.join("big.rs"), big).unwrap();
    let e = err(&w, json!({"file_path": "big.rs"}));
    assert_eq!(e.kind, ErrorKind::TooLarge);
    assert!(e.message.contains("up to 2048 KB"), "{}", e.message);
}

#[test]
fn output_stays_under_the_cap_and_says_what_was_left_out() {
    // One file whose outline alone is over the cap: cut at a line, with a note.
    let many: String =
        (0..4000).map(|i| format!("fn function_number_{i}(a: u32) -> u32 {{ a }}\n")).collect();
    let w = ws(&[("many.rs", &many)]);
    let out = ok(&w, json!({"file_path": "many.rs", "depth": 1}));
    assert!(out.truncated);
    assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
    assert!(
        out.text.ends_with("more lines of this outline not shown; use depth 1, or read_file with offset]\n")
    );
    // Ranges are aligned to the widest ("3999-3999").
    assert!(out.text.contains("  1-1        fn function_number_0(a: u32) -> u32\n"), "{}", &out.text[..200]);
    // A folder with more files than fit: whole files only, then a note.
    let files: Vec<(String, String)> = (0..30).map(|i| (format!("m{i:02}.rs"), many.clone())).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let w = ws(&refs);
    let out = ok(&w, json!({"file_path": "."}));
    assert!(out.truncated);
    assert!(out.text.len() <= MAX_OUTPUT_BYTES, "{}", out.text.len());
    assert!(out.text.contains("m00.rs (Rust, 4000 lines)\n  1-1 "), "{}", &out.text[..300]);
    assert!(
        out.text.ends_with("29 more files not shown; outline a subfolder or use depth 1]\n"),
        "{}",
        &out.text[out.text.len() - 300..]
    );
}
