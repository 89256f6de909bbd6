//! Read-only calls of one reply run side by side: results come back in the model's order, a
//! write between reads stays a barrier, stream-json shows the grouping, and the audit log
//! keeps one line per call. Timing-independent: the order of events is what is asserted.

use crate::support;

use serde_json::{Value, json};
use std::io::Read;
use std::sync::{Mutex, mpsc};
use std::time::Duration;
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use support::stops::{ends, signal};
use support::web_server::{Response, WebServer};
use support::{Run, Sandbox};

fn run(sb: &Sandbox, server: &ModelServer, extra: &[&str], task: &str) -> Run {
    let url = server.url();
    let mut args =
        vec!["--base-url", url.as_str(), "--model", "test-model", "--output-format", "stream-json"];
    args.extend_from_slice(extra);
    args.push(task);
    sb.run(&args)
}

/// Every tool result text in a captured (OpenAI-shaped) request, in order.
fn tool_results(c: &Captured) -> Vec<String> {
    c.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The stream-json tool events as `start <id>` / `end <id>`.
fn tool_events(run: &Run) -> Vec<String> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("each line is JSON"))
        .filter_map(|e| match e["type"].as_str() {
            Some("tool_start") => Some(format!("start {}", e["id"].as_str().unwrap())),
            Some("tool_result") => Some(format!("end {}", e["id"].as_str().unwrap())),
            _ => None,
        })
        .collect()
}

fn reads_around_a_write() -> Vec<Step> {
    let read = |p: &str| json!({"file_path": p}).to_string();
    let (a, b, c) = (read("a.txt"), read("b.txt"), read("c.txt"));
    let write = json!({"file_path": "c.txt", "content": "rewritten\n"}).to_string();
    vec![
        Step::Reply(Reply::tools(vec![
            ("read_file", a.as_str()),
            ("read_file", b.as_str()),
            ("read_file", c.as_str()),
            ("write_file", write.as_str()),
            ("read_file", c.as_str()),
            ("grep", r#"{"pattern":"beta"}"#),
        ])),
        Step::Reply(Reply::text("done")),
    ]
}

fn fixture() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(sb.ws.join("b.txt"), "beta\n").unwrap();
    std::fs::write(sb.ws.join("c.txt"), "first\n").unwrap();
    sb
}

/// The ids the server gave the calls of the first reply, in the model's order.
fn call_ids(run: &Run) -> Vec<String> {
    let assistant = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "assistant")
        .expect("an assistant event");
    assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn read_only_calls_run_together_between_writes_and_answer_in_order() {
    let sb = fixture();
    let server = ModelServer::start(Flavor::OpenAi, reads_around_a_write());
    let out = run(&sb, &server, &[], "read them");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(results[0].contains("alpha"), "{}", results[0]);
    assert!(results[1].contains("beta"), "{}", results[1]);
    assert!(results[2].contains("first"), "the read before the write sees the old text: {}", results[2]);
    assert!(results[3].contains("Wrote"), "{}", results[3]);
    assert!(results[4].contains("rewritten"), "the read after the write sees the new text: {}", results[4]);
    assert!(results[5].contains("b.txt"), "{}", results[5]);
    assert_eq!(std::fs::read_to_string(sb.ws.join("c.txt")).unwrap(), "rewritten\n");

    let ids = call_ids(&out);
    let start = |i: usize| format!("start {}", ids[i]);
    let end = |i: usize| format!("end {}", ids[i]);
    let cores = std::thread::available_parallelism().unwrap().get();
    let expected: Vec<String> = if cores > 1 {
        // The three reads run together, the write alone, then the last read and the grep.
        vec![
            start(0),
            start(1),
            start(2),
            end(0),
            end(1),
            end(2),
            start(3),
            end(3),
            start(4),
            start(5),
            end(4),
            end(5),
        ]
    } else {
        (0..6).flat_map(|i| [start(i), end(i)]).collect()
    };
    assert_eq!(tool_events(&out), expected);
}

#[test]
fn one_parallel_call_at_a_time_runs_every_call_in_turn() {
    let sb = fixture();
    std::fs::write(sb.config.join("config.toml"), "[agent]\nparallel_calls = 1\n").unwrap();
    let server = ModelServer::start(Flavor::OpenAi, reads_around_a_write());
    let out = run(&sb, &server, &[], "read them");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ids = call_ids(&out);
    let expected: Vec<String> =
        ids.iter().flat_map(|id| [format!("start {id}"), format!("end {id}")]).collect();
    assert_eq!(tool_events(&out), expected);
    let results = tool_results(&server.requests()[1]);
    assert!(results[2].contains("first") && results[4].contains("rewritten"), "{results:?}");
}

#[test]
fn the_audit_log_keeps_one_line_per_parallel_call() {
    let sb = fixture();
    let server = ModelServer::start(Flavor::OpenAi, reads_around_a_write());
    let url = server.url();
    let out = sb.run(&["exec", "--base-url", &url, "--model", "test-model", "--no-stream", "read them"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let log = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).expect("audit log");
    let calls: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "tool_call")
        .collect();
    let tools: Vec<&str> = calls.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read_file", "read_file", "read_file", "write_file", "read_file", "grep"]);
    assert!(calls.iter().all(|c| c["outcome"] == "ok"), "{calls:?}");
}

#[test]
fn sigterm_stops_an_unattended_run_while_its_read_only_calls_wait() {
    // A site that answers only when the test lets it (at the latest when the test ends).
    let (release, held) = mpsc::channel::<()>();
    let held = Mutex::new(held);
    let site = WebServer::start("127.0.0.1", None, move |_| {
        let _ = held.lock().unwrap().recv_timeout(Duration::from_secs(120));
        Response::new(200, "text/plain", "late")
    });
    let fetch = |path: &str| json!({"url": site.url(path), "timeout": 120}).to_string();
    let (a, b) = (fetch("/a"), fetch("/b"));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tools(vec![("fetch_url", a.as_str()), ("fetch_url", b.as_str())])),
            Step::Reply(Reply::text("never reached")),
        ],
    );
    let sb = Sandbox::new();
    let allowed = format!("[network]\nallow_private = [\"127.0.0.1:{}\"]\n", site.port());
    std::fs::write(sb.config.join("config.toml"), allowed).unwrap();
    let url = server.url();
    let mut corral = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "--network", "on", "fetch both"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Both fetches are waiting on the site (side by side where there are two cores).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while site.requests().is_empty() {
        assert!(corral.try_wait().unwrap().is_none(), "corral ended before fetching");
        assert!(std::time::Instant::now() < deadline, "no fetch reached the site");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&corral, "-TERM");
    let status = ends(&mut corral);
    let mut stderr = String::new();
    corral.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(server.requests().len(), 1, "stopped during the calls, before asking the model again");
    let note = std::fs::read_to_string(sb.state_file("continue.md")).expect("continue.md");
    assert!(note.contains("interrupted") && note.contains("fetch both"), "{note}");
    drop(release);
}
