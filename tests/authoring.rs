//! Plugin authoring end to end: `corral plugin new` projects in each language build and pass
//! their own tests by their README's commands; `plugin inspect` and `plugin add` show and
//! install components, refuse clashes and broken files; `plugin wit`, `c-bindings` and
//! `componentize` write what authors need.

use crate::support;

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;
use support::guests::{path_with_corral, readme_commands, toolchain};
use support::{Sandbox, test_plugin};

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `script` with `sh -e` in `dir`, with the corral under test first on PATH and the
/// sandbox's private configuration and cache.
fn sh(sb: &Sandbox, dir: &Path, script: &str, envs: &[(&str, &Path)]) -> (bool, String) {
    let mut cmd = Command::new("sh");
    cmd.arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path_with_corral())
        .env("CORRAL_CONFIG_DIR", &sb.config)
        .env("CORRAL_CACHE_DIR", Sandbox::cache_dir())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run sh");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Creates a project with `corral plugin new`, then runs its README's Build and Test commands.
fn new_project_builds_and_passes_its_test(lang: &str, envs: &[(&str, &Path)]) {
    let sb = Sandbox::new();
    let r = sb.run(&["plugin", "new", "word-count", "--lang", lang]).ok();
    let dir = sb.ws.join("word-count");
    assert!(r.stdout.contains("created the word-count plugin project"), "{}", r.stdout);
    assert!(dir.join("wit/plugin.wit").is_file() && dir.join("README.md").is_file());
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let build = readme_commands(&readme, "Build");
    let test = readme_commands(&readme, "Test");
    assert!(
        !build.trim().is_empty() && !test.trim().is_empty(),
        "README lacks Build/Test commands:\n{readme}"
    );
    let (ok, out) = sh(&sb, &dir, &build, envs);
    assert!(ok, "{lang}: the README's build failed:\n{out}");
    let wasm = dir.join("dist/word-count.wasm");
    assert!(wasm.is_file(), "{lang}: no dist/word-count.wasm after the build:\n{out}");
    let (ok, out) = sh(&sb, &dir, &test, envs);
    assert!(ok, "{lang}: the README's test failed:\n{out}");
    assert!(out.contains("word-count: all tests passed"), "{out}");
    // The component works as the README says, through the corral under test.
    let plugin = wasm.display().to_string();
    let r = sb.tool(&["--plugin", &plugin], "word_count", &serde_json::json!({"path": "hello.txt"})).ok();
    assert_eq!(r.stdout, "hello.txt: 2 lines, 2 words, 12 bytes\n");
    let r = sb.tool(&["--plugin", &plugin], "word_count", &serde_json::json!({})).tool_err();
    // The missing field is named (Rust's serde says "missing field `path`", the others "'path' is required").
    assert!(r.stderr.starts_with("error (invalid-args): ") && r.stderr.contains("path"), "{}", r.stderr);
}

#[test]
fn a_new_rust_project_builds_and_passes_its_own_test() {
    // Dependencies are compiled once per checkout, not once per run, and shared with the Rust
    // example (plugins/examples/build.sh builds it in the same target folder).
    let shared = support::guests::examples_dir().join("rust-target");
    new_project_builds_and_passes_its_test("rust", &[("CARGO_TARGET_DIR", &shared)]);
}

#[test]
fn a_new_python_project_builds_and_passes_its_own_test() {
    new_project_builds_and_passes_its_test("python", &[]);
}

#[test]
fn a_new_js_project_builds_and_passes_its_own_test() {
    new_project_builds_and_passes_its_test("js", &[]);
}

#[test]
fn a_new_c_project_builds_and_passes_its_own_test() {
    toolchain("c");
    new_project_builds_and_passes_its_test("c", &[]);
}

#[test]
fn new_refuses_bad_names_and_existing_folders() {
    let sb = Sandbox::new();
    let r = sb.run(&["plugin", "new", "Bad Name", "--lang", "c"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid plugin name 'Bad Name'"), "{}", r.stderr);
    std::fs::create_dir_all(sb.ws.join("taken")).unwrap();
    std::fs::write(sb.ws.join("taken/mine.txt"), "keep").unwrap();
    let r = sb.run(&["plugin", "new", "taken", "--lang", "rust"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already exists and is not empty"), "{}", r.stderr);
    assert_eq!(std::fs::read_dir(sb.ws.join("taken")).unwrap().count(), 1);
    let r = sb.run(&["plugin", "new", "x", "--lang", "cobol"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn inspect_shows_tools_schemas_imports_and_hashes() {
    let sb = Sandbox::new();
    let path = test_plugin("clash");
    let bytes = std::fs::read(&path).unwrap();
    let file = path.display().to_string();
    let r = sb.run(&["plugin", "inspect", &file]).ok();
    let t = &r.stdout;
    assert!(t.starts_with("clash (tool plugin)\n"), "{t}");
    assert!(t.contains(&format!("  sha256:       {}\n", sha256(&bytes))), "{t}");
    assert!(t.contains(&format!("  file:         {file}\n")), "{t}");
    assert!(t.contains("  contract:     corral:plugin@0.1.0\n"), "{t}");
    assert!(t.contains("  capabilities: none (reads the workspace only)\n"), "{t}");
    assert!(t.contains("    read_file  [read-only, idempotent]\n      an impostor read_file\n"), "{t}");
    assert!(t.contains("      input schema: {\"type\":\"object\"}\n"), "{t}");
    assert!(t.contains("  exports:      corral:plugin/tool@0.1.0\n"), "{t}");
    assert!(t.lines().any(|l| l.starts_with("  imports WASI: wasi:")), "{t}");
    assert!(t.lines().any(|l| l.starts_with("  imports host: corral:plugin/")), "{t}");
    // The same as JSON.
    let r = sb.run(&["plugin", "inspect", "--json", &file]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "tool");
    assert_eq!(v["contract"], "corral:plugin@0.1.0");
    assert_eq!(v["size"], bytes.len());
    assert_eq!(v["sha256"], sha256(&bytes));
    assert_eq!(v["tools"][0]["name"], "read_file");
    assert_eq!(v["tools"][0]["input_schema"], serde_json::json!({"type": "object"}));
    assert_eq!(v["tools"][0]["hints"]["read_only"], true);
    assert_eq!(v["exports"], serde_json::json!(["corral:plugin/tool@0.1.0"]));
    assert!(
        v["imports"]["wasi"].as_array().unwrap().iter().all(|i| i.as_str().unwrap().starts_with("wasi:"))
    );
    // The SDK's bindings import only the host interfaces the code uses: here the types.
    assert_eq!(v["imports"]["corral"], serde_json::json!(["corral:plugin/types@0.1.0"]));
    // Inspect does not install anything.
    assert!(!sb.ws.join(".corral/plugins").exists());
}

/// A component built against another version of the contract is refused by name and version,
/// with what to do, when it is loaded and when it is inspected.
#[test]
fn a_plugin_built_for_another_contract_version_is_told_to_rebuild() {
    let sb = Sandbox::new();
    // The same component, its corral names moved to 0.3.0 (a string of the same length, so
    // the binary stays valid): what a plugin built by a future corral looks like.
    let mut bytes = std::fs::read(test_plugin("clash")).unwrap();
    for (from, to) in [
        (&b"plugin/types@0.1.0"[..], &b"plugin/types@0.3.0"[..]),
        (b"plugin/tool@0.1.0", b"plugin/tool@0.3.0"),
    ] {
        let mut at = 0;
        while let Some(i) = bytes[at..].windows(from.len()).position(|w| w == from) {
            bytes[at + i..at + i + to.len()].copy_from_slice(to);
            at += i + to.len();
        }
    }
    let path = sb.tmp.path().join("future.wasm");
    std::fs::write(&path, &bytes).unwrap();
    let file = path.display().to_string();
    let why = "was built for corral:plugin@0.3.0 (it uses corral:plugin/types@0.3.0); this corral knows \
               corral:plugin 0.1. Rebuild it against the WIT that `corral plugin wit` of this corral \
               writes, or upgrade corral";
    let r = sb.run(&["--plugin", &file, "tools"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(&format!("plugin {file} {why}")), "{}", r.stderr);
    let r = sb.run(&["plugin", "inspect", &file]);
    assert!(r.stderr.contains(&format!("{file} {why}")), "{}", r.stderr);
}

#[test]
fn add_validates_installs_and_refuses_clashes() {
    let sb = Sandbox::new();
    let faulty = test_plugin("faulty");
    let bytes = std::fs::read(&faulty).unwrap();
    let r = sb.run(&["plugin", "add", &faulty.display().to_string()]).ok();
    let dest = sb.ws.join(".corral/plugins/faulty.wasm");
    assert!(r.stdout.starts_with("faulty: tool plugin with "), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("  sha256:       {}\n", sha256(&bytes))), "{}", r.stdout);
    assert!(r.stdout.contains("  capabilities: "), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("installed for this project: {}\n", dest.display())), "{}", r.stdout);
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);
    assert!(r.stdout.contains("`corral trust`"), "{}", r.stdout);
    // It loads in a normal run, from the project's folder, once the workspace is trusted.
    sb.trust();
    assert_eq!(sb.tool(&[], "ok", &serde_json::json!({})).ok().stdout, "fine\n");
    // Adding the same file again changes nothing.
    let r = sb.run(&["plugin", "add", &faulty.display().to_string()]).ok();
    assert!(r.stdout.contains("already installed with the same sha256"), "{}", r.stdout);
    // A plugin whose tool clashes with a built-in is refused with the registry's error.
    let clash = test_plugin("clash");
    let r = sb.run(&["plugin", "add", &clash.display().to_string()]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("cannot add") && r.stderr.contains("tool 'read_file' is offered by two plugins"),
        "{}",
        r.stderr
    );
    assert!(!sb.ws.join(".corral/plugins/clash.wasm").exists());
    // --user installs into the user's folder; the same tools there clash with the project's copy.
    let r = sb.run(&["plugin", "add", "--user", "--name", "other", &faulty.display().to_string()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("offered by two plugins"), "{}", r.stderr);
    std::fs::remove_file(&dest).unwrap();
    let r = sb.run(&["plugin", "add", "--user", "--name", "other", &faulty.display().to_string()]).ok();
    let user_dest = sb.config.join("plugins/other.wasm");
    assert!(r.stdout.contains(&format!("installed for the user: {}\n", user_dest.display())), "{}", r.stdout);
    assert_eq!(std::fs::read(&user_dest).unwrap(), bytes);
    let r = sb.run(&["plugin", "add", "--name", "Bad.Name", &faulty.display().to_string()]);
    assert!(r.stderr.contains("cannot use 'Bad.Name' as a plugin name"), "{}", r.stderr);
    // A plugin that needs a grant installs, and says what to grant and how.
    let needs = test_plugin("needs_http");
    let r = sb.run(&["plugin", "add", "--user", &needs.display().to_string()]).ok();
    assert!(r.stdout.contains("as your settings stand, it will not load yet"), "{}", r.stdout);
    assert!(r.stdout.contains("--grant needs_http=http"), "{}", r.stdout);
    assert!(!r.stdout.contains("all checks passed"), "{}", r.stdout);
}

#[test]
fn broken_files_get_clear_errors_and_install_nothing() {
    let sb = Sandbox::new();
    let write = |name: &str, bytes: &[u8]| {
        let p = sb.ws.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    };
    let text = write("notes.wasm", b"not wasm at all");
    let core = write("core.wasm", b"\0asm\x01\0\0\0");
    let mut cut = std::fs::read(test_plugin("faulty")).unwrap();
    cut.truncate(cut.len() / 2);
    let cut = write("cut.wasm", &cut);
    let cases = [
        (text.as_str(), "is not a WebAssembly file"),
        (core.as_str(), "is a core WebAssembly module, not a component"),
        (cut.as_str(), "is not a valid component"),
        ("missing.wasm", "cannot read missing.wasm"),
    ];
    for (file, want) in cases {
        for cmd in ["inspect", "add"] {
            let r = sb.run(&["plugin", cmd, file]);
            assert_eq!(r.code, 2, "{cmd} {file}: {}", r.stdout);
            assert!(r.stderr.starts_with("error: ") && r.stderr.contains(want), "{cmd} {file}: {}", r.stderr);
        }
    }
    let r = sb.run(&["plugin", "inspect", &core]);
    assert!(r.stderr.contains("corral plugin componentize"), "{}", r.stderr);
    assert!(!sb.ws.join(".corral/plugins").exists(), "nothing installed");
}

#[test]
fn wit_bindings_and_componentize_write_what_authors_need() {
    let sb = Sandbox::new();
    sb.run(&["plugin", "wit", "--out", "w"]).ok();
    let embedded = std::fs::read_to_string(sb.ws.join("w/plugin.wit")).unwrap();
    assert_eq!(embedded, std::fs::read_to_string(support::repo().join("wit/0.1/plugin.wit")).unwrap());
    assert!(!sb.ws.join("w/deps").exists());
    let r = sb.run(&["plugin", "wit", "--js", "--out", "wjs"]).ok();
    for f in ["plugin.wit", "tool-plugin-js.wit", "deps/io.wit", "deps/clocks.wit", "deps/filesystem.wit"] {
        assert!(sb.ws.join("wjs").join(f).is_file(), "{f} missing: {}", r.stdout);
    }
    let r = sb.run(&["plugin", "c-bindings", "--out", "gen"]).ok();
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    let header = std::fs::read_to_string(sb.ws.join("gen/tool_plugin.h")).unwrap();
    assert!(header.contains("exports_corral_plugin_tool_invoke"), "the export is declared");
    let r = sb.run(&["plugin", "componentize", "w/plugin.wit", "-o", "x.wasm"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not a WebAssembly module"), "{}", r.stderr);
    let faulty = test_plugin("faulty").display().to_string();
    let r = sb.run(&["plugin", "componentize", &faulty, "-o", "x.wasm"]);
    assert!(r.stderr.contains("is already a component"), "{}", r.stderr);
    assert!(!sb.ws.join("x.wasm").exists());
}

#[test]
fn wit_can_be_narrowed_to_capabilities() {
    let sb = Sandbox::new();
    sb.run(&["plugin", "wit", "--capabilities", "none", "--out", "n"]).ok();
    let none = std::fs::read_to_string(sb.ws.join("n/plugin.wit")).unwrap();
    assert!(none.starts_with("// Written by `corral plugin wit --capabilities none`"), "{none}");
    for gone in ["import kv;", "import http;", "import process;", "import context;", "write: func("] {
        assert!(!none.contains(gone), "{gone} is in the narrowed contract");
    }
    // Marking files as read is part of writing: without workspace-write only `roots` is left.
    assert!(none.contains("import workspace;") && none.contains("roots: func("), "{none}");
    assert!(!none.contains("note-read: func("), "{none}");
    sb.run(&["plugin", "wit", "--js", "--capabilities", "http,workspace-write", "--out", "j"]).ok();
    let js = std::fs::read_to_string(sb.ws.join("j/plugin.wit")).unwrap();
    assert!(js.contains("import http;") && js.contains("write: func(") && !js.contains("import kv;"));
    assert!(js.contains("world tool-plugin-js {") && sb.ws.join("j/deps/filesystem.wit").is_file());
    let r = sb.run(&["plugin", "wit", "--capabilities", "network", "--out", "x"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: unknown capability 'network' in --capabilities; use workspace-write, kv, http, process, \
         context or none\n"
    );
    assert!(!sb.ws.join("x").exists(), "nothing is written");
}
