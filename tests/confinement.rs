//! Sandbox attacks through the real binary: the built-in tools and a hostile plugin that
//! calls WASI and the host interfaces directly try to read, create, change or delete
//! things outside the workspace roots, or corral's own files. Nothing may escape: every
//! case is refused and the disk outside the workspace is byte-for-byte unchanged.

use crate::support;

use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use support::Sandbox;

/// The secret never appears in any output; searching for it uses a pattern that does
/// not contain it literally.
const SECRET: &str = "top secret";

/// Plants the escape hatches: links out (absolute, relative, to files and directories,
/// chained, dangling), links in, corral's own state, and a file to steal.
fn hostile_workspace() -> Sandbox {
    let sb = Sandbox::new();
    let ws = &sb.ws;
    let out = &sb.outside;
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join(".corral")).unwrap();
    std::fs::write(ws.join(".corral/state.json"), "{}").unwrap();
    std::fs::write(ws.join("corral.toml"), "").unwrap();
    symlink(out.join("secret.txt"), ws.join("link_abs_out")).unwrap();
    symlink("../outside/secret.txt", ws.join("link_rel_out")).unwrap();
    symlink("../outside", ws.join("link_dir_out")).unwrap();
    symlink(out, ws.join("link_dir_out_abs")).unwrap();
    symlink("chain2", ws.join("chain1")).unwrap();
    symlink("../outside/secret.txt", ws.join("chain2")).unwrap();
    symlink("../outside/created_by_dangling.txt", ws.join("dangling_out")).unwrap();
    symlink("../../outside/secret.txt", ws.join("sub/deep_out")).unwrap();
    symlink("hello.txt", ws.join("link_in")).unwrap();
    symlink(".corral", ws.join("state_link")).unwrap();
    sb
}

struct Case {
    tool: &'static str,
    args: Value,
    /// Expected text in stderr (the refusal).
    expect: &'static str,
}

fn case(tool: &'static str, args: Value, expect: &'static str) -> Case {
    Case { tool, args, expect }
}

/// Runs every case with the hostile plugin loaded and checks refusal, secrecy and disk.
fn run_cases(sb: &Sandbox, cases: Vec<Case>, extra_flags: &[&str]) {
    let hostile = support::test_plugin("hostile");
    let hostile = hostile.to_str().unwrap();
    let before = sb.outside_state();
    let ws_before = std::fs::read(sb.ws.join("hello.txt")).unwrap();
    let mut failures = Vec::new();
    for c in &cases {
        let mut flags = vec!["--plugin", hostile, "--grant", "hostile=workspace-write"];
        flags.extend_from_slice(extra_flags);
        let r = sb.tool(&flags, c.tool, &c.args);
        let label = format!("{} {}", c.tool, c.args);
        if r.code != 1 {
            failures.push(format!(
                "{label}: exit {} (want 1)\nstdout: {}\nstderr: {}",
                r.code, r.stdout, r.stderr
            ));
        } else if !r.stderr.contains(c.expect) {
            failures.push(format!("{label}: stderr lacks {:?}\nstderr: {}", c.expect, r.stderr));
        }
        if r.stdout.contains(SECRET) || r.stderr.contains(SECRET) {
            failures.push(format!("{label}: the secret leaked"));
        }
        let now = sb.outside_state();
        if now != before {
            failures.push(format!("{label}: the disk outside the workspace changed"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    assert_eq!(std::fs::read(sb.ws.join("hello.txt")).unwrap(), ws_before, "hello.txt changed");
    assert!(sb.ws.join(".corral/state.json").exists() && sb.ws.join("corral.toml").exists());
    assert!(!sb.ws.join(".corral/evil.txt").exists());
}

#[test]
fn built_in_tools_cannot_reach_outside() {
    let sb = hostile_workspace();
    let out = sb.outside.display().to_string();
    let ws = sb.ws.display().to_string();
    let abs_secret = format!("{out}/secret.txt");
    let dotdot_abs = format!("{ws}/../outside/secret.txt");
    let long = "a/".repeat(2100) + "x.txt";
    let cases = vec![
        // Reading: `..`, absolute paths, and every kind of link out.
        case("read_file", json!({"file_path": "../outside/secret.txt"}), "outside the workspace"),
        case("read_file", json!({"file_path": abs_secret}), "outside the workspace"),
        case("read_file", json!({"file_path": "sub/../../outside/secret.txt"}), "outside the workspace"),
        case("read_file", json!({"file_path": "./../outside/secret.txt"}), "outside the workspace"),
        case("read_file", json!({"file_path": dotdot_abs}), "outside the workspace"),
        case("read_file", json!({"file_path": "/etc/passwd"}), "outside the workspace"),
        case("read_file", json!({"file_path": "link_abs_out"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "link_rel_out"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "link_rel_out/"}), "link_rel_out"),
        case("read_file", json!({"file_path": "link_dir_out/secret.txt"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "link_dir_out/"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "link_dir_out_abs/secret.txt"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "chain1"}), "cannot be accessed"),
        case("read_file", json!({"file_path": "sub/deep_out"}), "cannot be accessed"),
        case("read_file", json!({"file_path": long.clone()}), "limit"),
        case("read_file", json!({"file_path": "hello.txt\u{0}../../outside/secret.txt"}), "NUL"),
        case("list_files", json!({"pattern": "../outside/*"}), ".."),
        case("list_files", json!({"pattern": "*", "path": "../outside"}), "outside the workspace"),
        case("list_files", json!({"pattern": "*", "path": "link_dir_out"}), "cannot be accessed"),
        case("grep", json!({"pattern": "top sec[r]et", "path": "../outside"}), "outside the workspace"),
        case("grep", json!({"pattern": "top sec[r]et", "path": "link_dir_out"}), "cannot be accessed"),
        case("grep", json!({"pattern": "top sec[r]et", "path": "link_abs_out"}), "cannot be accessed"),
        // Writing: out through `..`, absolute paths, links; into corral's own files.
        case(
            "write_file",
            json!({"file_path": "../outside/new.txt", "content": "x"}),
            "outside the workspace",
        ),
        case(
            "write_file",
            json!({"file_path": format!("{out}/new.txt"), "content": "x"}),
            "outside the workspace",
        ),
        case(
            "write_file",
            json!({"file_path": "link_dir_out/new.txt", "content": "x"}),
            "outside the workspace",
        ),
        case("write_file", json!({"file_path": "link_rel_out", "content": "x"}), "outside the workspace"),
        case("write_file", json!({"file_path": "link_abs_out", "content": "x"}), "outside the workspace"),
        case("write_file", json!({"file_path": "chain1", "content": "x"}), "outside the workspace"),
        case("write_file", json!({"file_path": "dangling_out", "content": "x"}), "outside the workspace"),
        case("write_file", json!({"file_path": "sub/deep_out", "content": "x"}), "outside the workspace"),
        case("write_file", json!({"file_path": ".corral/evil.txt", "content": "x"}), "corral's own files"),
        case("write_file", json!({"file_path": "corral.toml", "content": "x"}), "corral's own files"),
        case("write_file", json!({"file_path": "state_link/evil.txt", "content": "x"}), "corral's own files"),
        case("write_file", json!({"file_path": "a\u{0}b", "content": "x"}), "NUL"),
        case("write_file", json!({"file_path": long, "content": "x"}), "limit"),
        case(
            "write_file",
            json!({"file_path": "stolen.txt", "move_from": "../outside/secret.txt"}),
            "outside",
        ),
        case("write_file", json!({"file_path": "../outside/moved.txt", "move_from": "hello.txt"}), "outside"),
        case(
            "write_file",
            json!({"file_path": "link_dir_out/moved.txt", "move_from": "hello.txt"}),
            "outside",
        ),
        case(
            "write_file",
            json!({"file_path": "sneaky.txt", "move_from": ".corral/state.json"}),
            "corral's own",
        ),
        case(
            "edit_file",
            json!({"file_path": "link_rel_out", "old_string": "top", "new_string": "x"}),
            "link_rel_out",
        ),
        case(
            "edit_file",
            json!({"file_path": "../outside/secret.txt", "old_string": "a", "new_string": "b"}),
            "outside",
        ),
        case("delete_file", json!({"file_path": "../outside/secret.txt"}), "outside the workspace"),
        case("delete_file", json!({"file_path": "link_dir_out/secret.txt"}), "outside the workspace"),
        case("delete_file", json!({"file_path": ".corral/state.json"}), "corral's own files"),
        case("delete_file", json!({"file_path": "corral.toml"}), "corral's own files"),
        case("read_multiple_files", json!({"files": []}), "file"),
    ];
    run_cases(&sb, cases, &["--no-read-guard"]);
}

#[test]
fn read_multiple_files_refuses_each_escape_and_keeps_the_rest() {
    let sb = hostile_workspace();
    let r = sb
        .tool(
            &[],
            "read_multiple_files",
            &json!({"files": ["hello.txt", "../outside/secret.txt", "link_rel_out", "link_dir_out/secret.txt"]}),
        )
        .ok();
    assert!(r.stdout.contains("1: hello"), "{}", r.stdout);
    assert!(!r.stdout.contains(SECRET), "{}", r.stdout);
    assert!(
        r.stdout.contains("files_with_errors: 3") || r.stdout.contains("\"files_with_errors\": 3"),
        "{}",
        r.stdout
    );
}

#[test]
fn walkers_do_not_follow_links_out() {
    let sb = hostile_workspace();
    let r = sb.tool(&[], "grep", &json!({"pattern": "top sec[r]et"})).ok();
    assert!(!r.stdout.contains(SECRET) && !r.stdout.contains("secret.txt"), "{}", r.stdout);
    let r = sb.tool(&[], "list_files", &json!({"pattern": "**/*"})).ok();
    assert!(!r.stdout.contains("secret.txt"), "{}", r.stdout);
    assert!(r.stdout.contains("hello.txt"), "{}", r.stdout);
}

#[test]
fn hostile_plugin_cannot_escape_through_wasi_or_the_host() {
    let sb = hostile_workspace();
    let out = sb.outside.display().to_string();
    let ws = sb.ws.display().to_string();
    let long = "b/".repeat(2100) + "x";
    let cases = vec![
        // Straight WASI: the preopens are read-only and confined.
        case("wasi_read", json!({"path": format!("{out}/secret.txt")}), "denied"),
        case("wasi_read", json!({"path": format!("{ws}/../outside/secret.txt")}), "denied"),
        case("wasi_read", json!({"path": format!("{ws}/link_rel_out")}), "denied"),
        case("wasi_read", json!({"path": format!("{ws}/link_abs_out")}), "denied"),
        case("wasi_read", json!({"path": format!("{ws}/link_dir_out/secret.txt")}), "denied"),
        case("wasi_read", json!({"path": format!("{ws}/link_dir_out/")}), "denied"),
        case("wasi_read", json!({"path": "/etc/passwd"}), "denied"),
        case("wasi_list", json!({"path": out.clone()}), "denied"),
        case("wasi_list", json!({"path": "/"}), "denied"),
        case("wasi_write", json!({"path": format!("{ws}/new.txt"), "content": "x"}), "denied"),
        case("wasi_write", json!({"path": format!("{ws}/hello.txt"), "content": "x"}), "denied"),
        case("wasi_write", json!({"path": format!("{ws}/link_rel_out"), "content": "x"}), "denied"),
        case("wasi_append", json!({"path": format!("{ws}/hello.txt")}), "denied"),
        case("wasi_remove", json!({"path": format!("{ws}/hello.txt")}), "denied"),
        case("wasi_mkdir", json!({"path": format!("{ws}/newdir")}), "denied"),
        case(
            "wasi_rename",
            json!({"from": format!("{ws}/hello.txt"), "to": format!("{ws}/h2.txt")}),
            "denied",
        ),
        case("wasi_stat", json!({"path": format!("{out}/secret.txt")}), "denied"),
        // The host interfaces, with no SDK path checks in front of them.
        case("host_write", json!({"path": "../outside/pwn.txt", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": format!("{out}/pwn.txt"), "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "sub/../../outside/pwn.txt", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "link_dir_out/pwn.txt", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "link_dir_out/", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "link_dir_out_abs/pwn.txt", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "link_rel_out", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "link_abs_out", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "chain1", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "dangling_out", "content": "x"}), "OutsideRoots"),
        case("host_write", json!({"path": "dangling_out/x", "content": "x"}), "host"),
        case("host_write", json!({"path": ".corral/evil.txt", "content": "x"}), "Protected"),
        case("host_write", json!({"path": "./.corral/../.corral/evil.txt", "content": "x"}), "Protected"),
        case("host_write", json!({"path": format!("{ws}/.corral/evil.txt"), "content": "x"}), "Protected"),
        case("host_write", json!({"path": "state_link/evil.txt", "content": "x"}), "Protected"),
        case("host_write", json!({"path": "corral.toml", "content": "x"}), "Protected"),
        case("host_write", json!({"path": ".", "content": "x"}), "host"),
        case("host_write", json!({"path": "", "content": "x"}), "InvalidPath"),
        case("host_write", json!({"path": "a\u{0}/../../outside/x", "content": "x"}), "InvalidPath"),
        case("host_write", json!({"path": long, "content": "x"}), "InvalidPath"),
        case("host_move", json!({"from": "../outside/secret.txt", "to": "got.txt"}), "OutsideRoots"),
        case("host_move", json!({"from": "link_dir_out/secret.txt", "to": "got.txt"}), "OutsideRoots"),
        case("host_move", json!({"from": "hello.txt", "to": "../outside/x"}), "OutsideRoots"),
        case("host_move", json!({"from": "hello.txt", "to": "link_dir_out/x"}), "OutsideRoots"),
        case("host_move", json!({"from": ".corral/state.json", "to": "x.json"}), "Protected"),
        case("host_move", json!({"from": "hello.txt", "to": ".corral/x"}), "Protected"),
        case("host_trash", json!({"path": "../outside/secret.txt"}), "OutsideRoots"),
        case("host_trash", json!({"path": "link_dir_out/secret.txt"}), "OutsideRoots"),
        case("host_trash", json!({"path": ".corral/state.json"}), "Protected"),
        case("host_trash", json!({"path": "sub"}), "IsDirectory"),
        case("host_trash", json!({"path": "."}), "host"),
    ];
    run_cases(&sb, cases, &[]);
}

#[test]
fn hostile_plugin_has_no_environment_and_no_network() {
    let sb = hostile_workspace();
    let hostile = support::test_plugin("hostile");
    let mut cmd = sb.cmd();
    let grant = ["--grant", "hostile=workspace-write"];
    cmd.env("CORRAL_TEST_SECRET_ENV", "leak-me")
        .args(["--plugin", hostile.to_str().unwrap()])
        .args(grant)
        .args(["tool", "env"]);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.trim(), "vars= args=0", "the plugin saw the host's environment or arguments");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let flags = ["--plugin", hostile.to_str().unwrap(), "--grant", "hostile=workspace-write"];
    let r = sb.tool(&flags, "connect", &json!({ "addr": addr })).tool_err();
    assert!(r.stderr.contains("denied"), "{}", r.stderr);
    assert!(listener.accept().is_err(), "the plugin reached a loopback server");
}

#[test]
fn read_only_roots_refuse_writes_and_read_write_roots_accept_them() {
    let sb = hostile_workspace();
    let ro = sb.tmp.path().join("ro");
    let rw = sb.tmp.path().join("rw");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::create_dir_all(&rw).unwrap();
    std::fs::write(ro.join("data.txt"), "read me\n").unwrap();
    let ro_s = std::fs::canonicalize(&ro).unwrap().display().to_string();
    let rw_s = std::fs::canonicalize(&rw).unwrap().display().to_string();
    let flags = ["--add-dir-ro", ro_s.as_str(), "--add-dir", rw_s.as_str()];
    let r = sb.tool(&flags, "read_file", &json!({"file_path": format!("{ro_s}/data.txt")})).ok();
    assert!(r.stdout.contains("1: read me"), "{}", r.stdout);
    let r = sb
        .tool(&flags, "write_file", &json!({"file_path": format!("{ro_s}/new.txt"), "content": "x"}))
        .tool_err();
    assert!(r.stderr.contains("read-only root"), "{}", r.stderr);
    assert!(!ro.join("new.txt").exists());
    sb.tool(&flags, "write_file", &json!({"file_path": format!("{rw_s}/new.txt"), "content": "ok"})).ok();
    assert_eq!(std::fs::read_to_string(rw.join("new.txt")).unwrap(), "ok");
}

#[test]
fn the_file_system_root_cannot_be_added_and_home_paths_say_why() {
    let sb = hostile_workspace();
    for flag in ["--add-dir", "--add-dir-ro"] {
        let r = sb.tool(&[flag, "/"], "read_file", &json!({"file_path": "/etc/hostname"}));
        assert_ne!(r.code, 0, "{flag} / was accepted\n{}", r.stdout);
        assert!(r.stderr.contains("root / is the whole file system"), "{}", r.stderr);
        assert!(r.stderr.contains("name the folders the task needs"), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    let r = sb.tool(&[], "read_file", &json!({"file_path": "~/.ssh/id_rsa"})).tool_err();
    assert!(r.stderr.contains("'~' is not expanded and home paths are not available"), "{}", r.stderr);
    assert!(r.stderr.contains("--add-dir"), "{}", r.stderr);
    let r = sb.tool(&[], "list_files", &json!({"pattern": "~/**"})).tool_err();
    assert!(r.stderr.contains("the pattern '~/**' starts with '~'"), "{}", r.stderr);
}

#[test]
fn links_that_stay_inside_work() {
    let sb = hostile_workspace();
    let r = sb.tool(&[], "read_file", &json!({"file_path": "link_in"})).ok();
    assert!(r.stdout.contains("1: hello"), "{}", r.stdout);
    // Writing through an inside link changes its target and keeps the link.
    sb.tool(&["--no-read-guard"], "write_file", &json!({"file_path": "link_in", "content": "changed\n"}))
        .ok();
    assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "changed\n");
    assert!(std::fs::symlink_metadata(sb.ws.join("link_in")).unwrap().file_type().is_symlink());
}

#[test]
fn names_that_are_not_utf8_do_not_break_the_tools() {
    use std::os::unix::ffi::OsStrExt;
    let sb = hostile_workspace();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname.txt");
    std::fs::write(sb.ws.join(name), "needle\n").unwrap();
    let r = sb.tool(&[], "list_files", &json!({"pattern": "*.txt"})).ok();
    assert!(r.stdout.contains("hello.txt"), "{}", r.stdout);
    sb.tool(&[], "grep", &json!({"pattern": "needle"})).ok();
    let r = sb.tool(&[], "read_file", &json!({"file_path": "."})).ok();
    assert!(r.stdout.contains("hello.txt"), "{}", r.stdout);
}

/// A FIFO no one writes to: a plugin opening it through WASI is stopped at its timeout (the
/// open runs off the runtime's thread) and corral exits; the built-in tools refuse or skip it.
#[test]
fn a_fifo_in_the_workspace_cannot_hang_a_tool_call() {
    let sb = hostile_workspace();
    let pipe = sb.ws.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let hostile = support::test_plugin("hostile");
    let flags =
        ["--timeout", "2", "--plugin", hostile.to_str().unwrap(), "--grant", "hostile=workspace-write"];
    let r = sb.tool(&flags, "wasi_read", &json!({ "path": pipe.to_str().unwrap() })).tool_err();
    assert!(r.stderr.contains("error (timeout)") && r.stderr.contains("was stopped"), "{}", r.stderr);

    let r = sb.tool(&["--timeout", "2"], "read_file", &json!({ "file_path": "pipe" })).tool_err();
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    let r = sb.tool(&["--timeout", "2"], "grep", &json!({ "pattern": "zzz-nothing" })).ok();
    assert!(!r.stdout.contains("pipe:"), "{}", r.stdout);
}
