//! The `outline` built-in through the real binary (`corral tool outline`, the component as
//! shipped: grammars compiled to wasm, reading through the workspace preopen), and the check
//! that its committed component was built from the sources in the repository.

use crate::support;

use serde_json::json;
use std::fs;
use std::path::Path;
use std::process::Command;
use support::Sandbox;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn outline_parses_each_language_inside_the_component() {
    let sb = Sandbox::new();
    let files = [
        (
            "a.rs",
            "pub struct S;\nimpl S {\n    pub fn go(&self) {}\n}\n",
            "  2-4  impl S\n  3-3    pub fn go(&self)\n",
        ),
        ("b.py", "class C:\n    def m(self):\n        pass\n", "  1-3  class C:\n  2-3    def m(self):\n"),
        ("c.js", "export class K {\n  run() {}\n}\n", "  1-3  export class K\n  2-2    run()\n"),
        ("d.ts", "interface I {\n  x(): void;\n}\n", "  1-3  interface I\n  2-2    x(): void\n"),
        (
            "e.go",
            "package e\n\nfunc (r *R) Do() error {\n\treturn nil\n}\n",
            "  3-5  func (r *R) Do() error\n",
        ),
        ("f.c", "int main(void) {\n  return 0;\n}\n", "  1-3  int main(void)\n"),
        ("g.cpp", "namespace n {\nclass A {};\n}\n", "  1-3  namespace n\n  2-2    class A\n"),
        ("H.java", "class H {\n  void h() {}\n}\n", "  1-3  class H\n  2-2    void h()\n"),
    ];
    for (name, text, _) in files {
        write(&sb.ws, name, text);
    }
    for (name, _, want) in files {
        let run = sb.tool(&[], "outline", &json!({"file_path": name})).ok();
        assert!(run.stdout.contains(want), "{name}:\n{}", run.stdout);
    }
    // A folder: every one of them, top level only, ignored files left out.
    write(&sb.ws, ".gitignore", "skip/\n");
    write(&sb.ws, "skip/z.rs", "fn hidden_from_outline() {}\n");
    let run = sb.tool(&[], "outline", &json!({"file_path": "."})).ok();
    assert!(run.stdout.starts_with("8 source files under ., depth 1:"), "{}", run.stdout);
    assert!(
        run.stdout.contains("a.rs (Rust, 4 lines)\n  1-1  pub struct S;\n  2-4  impl S\n\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("hidden_from_outline"), "{}", run.stdout);
}

#[test]
fn outline_refusals_reach_the_caller_with_what_to_do() {
    let sb = Sandbox::new();
    write(&sb.ws, "notes.txt", "plain\n");
    let run = sb.tool(&[], "outline", &json!({"file_path": "notes.txt"})).tool_err();
    assert!(
        run.stderr.contains("it parses Rust, Python, JavaScript, TypeScript, Go, C, C++ and Java"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint: use grep"), "{}", run.stderr);
    fs::write(sb.outside.join("x.rs"), "fn secret() {}\n").unwrap();
    let outside = sb.outside.join("x.rs").display().to_string();
    let run = sb.tool(&[], "outline", &json!({"file_path": outside})).tool_err();
    assert!(run.stderr.contains("outside the workspace"), "{}", run.stderr);
    assert!(!run.stdout.contains("secret") && !run.stderr.contains("fn secret"), "{}", run.stdout);
}

/// Copies what the prebuilt digest covers into `dst`, as build.sh finds it from its own place.
fn copy_sources(repo: &Path, dst: &Path) {
    let skip = |p: &Path| p.components().any(|c| c.as_os_str() == "target");
    fn copy(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
        if skip(from) {
            return;
        }
        if from.is_dir() {
            fs::create_dir_all(to).unwrap();
            for e in fs::read_dir(from).unwrap() {
                let e = e.unwrap();
                copy(&e.path(), &to.join(e.file_name()), skip);
            }
        } else {
            fs::copy(from, to).unwrap();
        }
    }
    for rel in [
        "plugins/outline",
        "plugins/sdk",
        "plugins/Cargo.toml",
        "contract",
        "wit/0.1",
        "plugins/examples/toolchains.sh",
    ] {
        let to = dst.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        copy(&repo.join(rel), &to, &skip);
    }
}

fn check(repo: &Path) -> std::process::Output {
    Command::new("bash").arg(repo.join("plugins/outline/build.sh")).arg("--check").output().unwrap()
}

#[test]
fn the_committed_outline_component_matches_its_sources() {
    let repo = support::repo();
    let out = check(&repo);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The check can fail: a changed source, or a replaced component, is caught with what to do.
    let tmp = tempfile::tempdir().unwrap();
    copy_sources(&repo, tmp.path());
    assert!(check(tmp.path()).status.success(), "a faithful copy passes");
    let lib = tmp.path().join("plugins/outline/src/lang.rs");
    fs::write(&lib, fs::read_to_string(&lib).unwrap() + "\n// changed\n").unwrap();
    let out = check(tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("Rebuild it with: make outline"), "{err}");
    copy_sources(&repo, tmp.path());
    fs::write(tmp.path().join("plugins/outline/prebuilt/outline.wasm"), b"\0asm").unwrap();
    let out = check(tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("is not the file its build recorded"), "{err}");
}
