//! Misbehaving plugins: each fault becomes a typed tool error within its limit, and the
//! next call to the same loaded plugin works. Run in-process against the library (so the
//! same `InstancePre` is reused) and once through the binary for the user-facing text.

use crate::support;

use corral::runtime::{CallReport, ErrorKind, Limits, ToolOutput};
use std::time::{Duration, Instant};
use support::Sandbox;
use support::inproc::{Loaded, load};

fn call(l: &Loaded, tool: &str, args: &str, limits: &Limits) -> CallReport<ToolOutput> {
    l.call(tool, args, limits)
}

fn limits() -> Limits {
    Limits { timeout: Duration::from_secs(2), memory_bytes: 64 << 20, ..Limits::default() }
}

/// Runs `tool`, checks the error kind and the time it took, then checks `ok` still works.
fn fault(l: &Loaded, tool: &str, want: ErrorKind, within: Duration) -> String {
    let started = Instant::now();
    let r = call(l, tool, "{}", &limits());
    let took = started.elapsed();
    let err = r.result.expect_err("the fault must be an error");
    assert_eq!(err.kind, want, "{tool}: {err:?}");
    assert!(took < within, "{tool} took {took:?}, limit {within:?}");
    let next = call(l, "ok", "{}", &limits());
    assert_eq!(next.result.expect("the next call works").text, "fine");
    err.message
}

#[test]
fn a_panic_is_a_crash_with_the_panic_message() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    let msg = fault(&l, "panic", ErrorKind::Crashed, Duration::from_secs(5));
    assert!(msg.contains("panicked") && msg.contains("deliberate panic"), "{msg}");
}

#[test]
fn an_infinite_loop_times_out() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    let started = Instant::now();
    let msg = fault(&l, "spin", ErrorKind::Timeout, Duration::from_secs(4));
    assert!(started.elapsed() >= Duration::from_secs(2), "stopped before its limit");
    assert!(msg.contains("within 2 s"), "{msg}");
}

#[test]
fn calls_past_the_pools_size_wait_for_a_slot_instead_of_failing_to_start() {
    // More calls at once than the engine's pool holds instances (32, as with several branches
    // or MCP clients at once): every one must run (here: spin until its timeout), none may
    // fail to start for want of a slot.
    let short = Limits { timeout: Duration::from_millis(300), ..limits() };
    let l = load(&["faulty"], &[], &short).unwrap();
    let (_, plugin) = l.registry.tool("spin").unwrap();
    let calls = (0..40).map(|_| l.runtime.invoke(plugin, &l.session, "spin", "{}", &short));
    let reports = support::inproc::block(futures_util::future::join_all(calls));
    assert_eq!(reports.len(), 40);
    for r in reports {
        let err = r.result.expect_err("a spinning call times out");
        assert_eq!(err.kind, ErrorKind::Timeout, "{err:?}");
    }
}

#[test]
fn a_memory_bomb_hits_the_cap() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    let msg = fault(&l, "membomb", ErrorKind::OutOfMemory, Duration::from_secs(5));
    assert!(msg.contains("64 MiB"), "{msg}");
}

#[test]
fn runaway_recursion_crashes_cleanly() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    fault(&l, "recurse", ErrorKind::Crashed, Duration::from_secs(5));
}

#[test]
fn a_malformed_result_is_rejected() {
    let l = load(&["faulty", "malformed"], &[], &limits()).unwrap();
    let r = call(&l, "bad_utf8", "{}", &limits());
    let err = r.result.expect_err("invalid UTF-8 must not pass");
    assert_eq!(err.kind, ErrorKind::Malformed, "{err:?}");
    assert_eq!(call(&l, "bad_utf8", "{}", &limits()).result.unwrap_err().kind, ErrorKind::Malformed);
    assert_eq!(call(&l, "ok", "{}", &limits()).result.unwrap().text, "fine");
}

#[test]
fn an_output_flood_is_cut_not_fatal() {
    // 40 MiB through WASI's 4 KiB stream writes: this checks the cut, not speed, so the
    // call gets room on a loaded machine.
    let roomy = Limits { timeout: Duration::from_secs(60), ..limits() };
    let l = load(&["faulty"], &[], &roomy).unwrap();
    let r = call(&l, "flood", "{}", &roomy);
    assert_eq!(r.result.expect("a flood is not an error").text, "flooded 20 MiB");
    assert_eq!(r.stdout.bytes.len(), limits().stdio_bytes, "kept exactly the stdio limit");
    assert_eq!(r.stdout.dropped as usize, 320 * 64 * 1024 - limits().stdio_bytes);
    assert_eq!(call(&l, "ok", "{}", &limits()).result.unwrap().text, "fine");
}

#[test]
fn a_huge_result_is_capped_and_flagged() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    let out = call(&l, "huge", r#"{"mb": 8}"#, &limits()).result.expect("capped, not failed");
    assert!(out.truncated);
    assert!(out.text.len() < limits().output_bytes + 200, "{} bytes", out.text.len());
    assert!(out.text.ends_with("over the 50 KB limit]"), "{}", &out.text[out.text.len() - 80..]);
    // A result too big to build inside the memory cap is a memory error, not a host crash.
    let err = call(&l, "huge", r#"{"mb": 100}"#, &limits()).result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfMemory, "{err:?}");
    assert_eq!(call(&l, "ok", "{}", &limits()).result.unwrap().text, "fine");
}

#[test]
fn every_call_starts_from_fresh_memory() {
    let l = load(&["faulty"], &[], &limits()).unwrap();
    for _ in 0..3 {
        assert_eq!(call(&l, "count", "{}", &limits()).result.unwrap().text, "1");
    }
}

#[test]
fn a_bad_tool_description_refuses_the_plugin() {
    let err = load(&["badspec"], &[], &limits()).err().expect("must be refused");
    let text = err.to_string();
    assert!(text.contains("badspec.wasm") && text.contains("broken_schema"), "{text}");
    assert!(text.contains("\"type\": \"object\""), "{text}");
}

#[test]
fn two_plugins_with_one_tool_name_is_an_error_naming_both() {
    let err = load(&["clash"], &[], &limits()).err().expect("clash must be refused");
    let text = err.to_string();
    assert!(text.contains("'read_file'"), "{text}");
    assert!(text.contains("embedded in corral") && text.contains("clash.wasm"), "{text}");
    assert!(text.contains("disabled = [\"clash\"]"), "{text}");
    // Disabling either one resolves it.
    let l = load(&["clash"], &["built-in:read_file"], &limits()).unwrap();
    let (_, p) = l.registry.tool("read_file").unwrap();
    assert_eq!(p.info.name, "clash");
    let l = load(&["clash"], &["clash"], &limits()).unwrap();
    assert_eq!(l.registry.tool("read_file").unwrap().1.info.name, "read_file");
}

#[test]
fn the_binary_reports_a_crash_and_exits_1() {
    let sb = Sandbox::new();
    let faulty = support::test_plugin("faulty");
    let r = sb.run(&["--plugin", faulty.to_str().unwrap(), "--timeout", "1", "tool", "panic"]).tool_err();
    assert!(r.stderr.contains("error (crashed)") && r.stderr.contains("deliberate panic"), "{}", r.stderr);
    let r = sb.run(&["--plugin", faulty.to_str().unwrap(), "--timeout", "1", "tool", "spin"]).tool_err();
    assert!(r.stderr.contains("error (timeout)"), "{}", r.stderr);
    let r = sb.run(&["--plugin", faulty.to_str().unwrap(), "tool", "flood"]).ok();
    assert!(r.stderr.contains("output streams were cut"), "{}", r.stderr);
}

/// Puts test plugin `name` into the workspace's `.corral/plugins` as `file`.
fn project_plugin(sb: &Sandbox, name: &str, file: &str) {
    std::fs::create_dir_all(sb.ws.join(".corral/plugins")).unwrap();
    std::fs::copy(support::test_plugin(name), sb.ws.join(".corral/plugins").join(file)).unwrap();
}

#[test]
fn a_hanging_or_broken_project_plugin_is_reported_and_skipped() {
    use support::model_server::{Flavor, ModelServer, Reply, Step};
    let sb = Sandbox::new();
    project_plugin(&sb, "hangs", "spinner.wasm");
    std::fs::write(sb.ws.join(".corral/plugins/junk.wasm"), b"\0asm not really").unwrap();
    sb.trust();
    // Unrelated commands work, and say what was skipped and why.
    let r = sb.tool(&[], "read_file", &serde_json::json!({"file_path": "hello.txt"})).ok();
    assert!(r.stdout.contains("1: hello"), "{}", r.stdout);
    assert!(r.stderr.contains("plugin spinner") && r.stderr.contains("spinner.wasm"), "{}", r.stderr);
    assert!(r.stderr.contains("could not describe its tools"), "{}", r.stderr);
    assert!(r.stderr.contains("plugin junk") && r.stderr.contains("not a valid component"), "{}", r.stderr);
    assert!(r.stderr.contains("disabled = [\"project:spinner\"]"), "{}", r.stderr);
    let list: serde_json::Value = serde_json::from_str(&sb.run(&["plugins", "--json"]).ok().stdout).unwrap();
    let spinner = list.as_array().unwrap().iter().find(|p| p["name"] == "spinner").unwrap();
    assert_eq!(spinner["loaded"], false, "{spinner}");
    assert_eq!(spinner["origin"], "project", "{spinner}");
    // A session starts and its first request offers the built-ins.
    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("done"))]);
    let url = server.url();
    let r = sb
        .run_with_env(
            &["--base-url", &url, "--model", "m", "hi"],
            &[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")],
        )
        .ok();
    assert_eq!(r.stdout, "done\n");
    let body = &server.requests()[0].body;
    let names: Vec<&str> =
        body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"read_file") && !names.contains(&"never"), "{names:?}");
}
