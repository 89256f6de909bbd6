//! The `branch` tool end to end: a sub-agent with its own small context on the same client and
//! session. The scripted server answers each branch by the key in its description (branches
//! run side by side, so their requests arrive in no fixed order).

use crate::support;

use serde_json::{Value, json};
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step, system_of};
use support::{Run, Sandbox};

const TASK: &str = "PARENT-TASK: look into the notes";

fn corral(sb: &Sandbox, server: &ModelServer, extra: &[&str]) -> Run {
    let url = server.url();
    let mut args =
        vec!["--base-url", url.as_str(), "--model", "test-model", "--output-format", "stream-json"];
    args.extend_from_slice(extra);
    args.push(TASK);
    sb.run(&args)
}

fn branch_call(args: Value) -> (String, String) {
    ("branch".to_string(), args.to_string())
}

/// The parent's script: one reply with these branch calls, then its answer.
fn parent(calls: &[(String, String)]) -> Vec<Step> {
    let calls: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    vec![Step::Reply(Reply::tools(calls)), Step::Reply(Reply::text("parent done"))]
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

fn text(t: &str) -> Step {
    Step::Reply(Reply::text(t))
}

fn tool_results(c: &Captured) -> Vec<String> {
    c.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_names(c: &Captured) -> Vec<String> {
    c.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn events(run: &Run) -> Vec<Value> {
    run.stdout.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

#[test]
fn a_branch_reads_and_concludes_in_its_own_context_while_the_parent_continues() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("notes.txt"), "remember the milk\n").unwrap();
    let server = ModelServer::start(
        Flavor::OpenAi,
        parent(&[branch_call(json!({"description": "KEY-A: what does notes.txt say?"}))]),
    );
    server.set_routes(vec![(
        "KEY-A",
        vec![tool("read_file", json!({"file_path": "notes.txt"})), text("notes.txt says: remember the milk")],
    )]);
    let run = corral(&sb, &server, &[]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stdout.contains("parent done"), "{}", fail(&run));

    let branch = server.routed_requests("KEY-A");
    assert_eq!(branch.len(), 2, "the branch made two model calls");
    let parents = server.requests();
    assert_eq!(parents.len(), 2, "the parent made two model calls");
    for b in &branch {
        assert!(!b.body.to_string().contains("PARENT-TASK"), "a branch never sees the parent's transcript");
        assert_eq!(
            system_of(&b.body),
            system_of(&parents[0].body),
            "the branch starts from the parent's system prompt"
        );
    }
    let offered = tool_names(&branch[0]);
    for t in ["read_file", "grep", "list_files"] {
        assert!(offered.iter().any(|n| n == t), "{t} offered to the branch: {offered:?}");
    }
    for t in ["write_file", "edit_file", "run_command", "branch"] {
        assert!(!offered.iter().any(|n| n == t), "{t} not offered to a read-only branch: {offered:?}");
    }
    assert!(tool_names(&parents[0]).iter().any(|n| n == "branch"), "the parent is offered branch");
    assert!(tool_results(&branch[1])[0].contains("remember the milk"), "the branch read the file");

    let results = tool_results(&parents[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("branch-1 concluded after 2 turn(s)"), "{}", results[0]);
    assert!(results[0].contains("notes.txt says: remember the milk"), "{}", results[0]);

    let ev = events(&run);
    let (starts, ends) = (of_type(&ev, "branch_start"), of_type(&ev, "branch_end"));
    assert_eq!(starts.len(), 1);
    assert_eq!((starts[0]["id"].as_str(), starts[0]["max_turns"].as_u64()), (Some("branch-1"), Some(10)));
    assert_eq!(starts[0]["allow_writes"], false);
    assert_eq!(ends.len(), 1);
    assert_eq!((ends[0]["id"].as_str(), ends[0]["outcome"].as_str()), (Some("branch-1"), Some("done")));
    assert_eq!(ends[0]["turns"], 2);
    let call_id = of_type(&ev, "assistant")[0]["tool_calls"][0]["id"].clone();
    assert_eq!(starts[0]["call_id"], call_id);
}

#[test]
fn two_branches_in_one_reply_both_run_and_answer_in_call_order() {
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        parent(&[
            branch_call(json!({"description": "KEY-ONE: the first question"})),
            branch_call(json!({"description": "KEY-TWO: the second question", "max_turns": 3})),
        ]),
    );
    server.set_routes(vec![("KEY-ONE", vec![text("answer one")]), ("KEY-TWO", vec![text("answer two")])]);
    let run = corral(&sb, &server, &[]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(server.routed_requests("KEY-ONE").len(), 1);
    assert_eq!(server.routed_requests("KEY-TWO").len(), 1);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("answer one") && !results[0].contains("answer two"), "{}", results[0]);
    assert!(results[1].contains("answer two"), "{}", results[1]);

    let ev = events(&run);
    let calls = of_type(&ev, "assistant")[0]["tool_calls"].clone();
    let started: Vec<(Value, Value)> =
        of_type(&ev, "branch_start").iter().map(|e| (e["call_id"].clone(), e["id"].clone())).collect();
    assert_eq!(started.len(), 2);
    assert_eq!(started[0].0, calls[0]["id"]);
    assert_eq!(started[1].0, calls[1]["id"]);
    let mut ended: Vec<&str> = of_type(&ev, "branch_end").iter().map(|e| e["id"].as_str().unwrap()).collect();
    ended.sort();
    assert_eq!(ended, ["branch-1", "branch-2"]);
}

#[test]
fn a_read_only_branch_is_refused_a_write_and_allow_writes_offers_it_but_never_a_restore() {
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        parent(&[
            branch_call(json!({"description": "KEY-RO: try to write"})),
            branch_call(json!({"description": "KEY-RW: write it", "allow_writes": true})),
        ]),
    );
    let write = |p: &str| tool("write_file", json!({"file_path": p, "content": "written\n"}));
    server.set_routes(vec![
        ("KEY-RO", vec![write("ro.txt"), text("could not write")]),
        (
            "KEY-RW",
            vec![
                write("rw.txt"),
                tool("snapshot", json!({"action": "restore", "summary": "wrote rw.txt", "force": true})),
                text("wrote it"),
            ],
        ),
    ]);
    let run = corral(&sb, &server, &[]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(!sb.ws.join("ro.txt").exists(), "a read-only branch wrote a file");
    let refusal = &tool_results(&server.routed_requests("KEY-RO")[1])[0];
    assert!(refusal.contains("read-only tools only") && refusal.contains("allow_writes"), "{refusal}");
    assert_eq!(std::fs::read_to_string(sb.ws.join("rw.txt")).unwrap(), "written\n");
    let rw = server.routed_requests("KEY-RW");
    let restore = tool_results(&rw[2]).pop().unwrap();
    assert!(restore.contains("a branch cannot restore a snapshot"), "{restore}");
    let offered = tool_names(&rw[0]);
    assert!(offered.iter().any(|n| n == "write_file"), "{offered:?}");
    assert!(!offered.iter().any(|n| n == "branch"), "a branch cannot start a branch: {offered:?}");
}

#[test]
fn a_branch_stops_at_its_turn_limit_and_a_provider_error_ends_only_the_branch() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("notes.txt"), "remember the milk\n").unwrap();
    let server = ModelServer::start(
        Flavor::OpenAi,
        parent(&[
            branch_call(json!({"description": "KEY-LIMIT: read the notes", "max_turns": 1})),
            branch_call(json!({"description": "KEY-FAIL: anything"})),
        ]),
    );
    let refused = Step::Status {
        code: 400,
        retry_after: None,
        body: json!({"error": {"message": "bad request from the test", "type": "invalid_request_error"}})
            .to_string(),
    };
    server.set_routes(vec![
        (
            "KEY-LIMIT",
            vec![Step::Reply(Reply::tool("read_file", r#"{"file_path":"notes.txt"}"#).with_text("looking"))],
        ),
        ("KEY-FAIL", vec![refused]),
    ]);
    let run = corral(&sb, &server, &[]);
    assert_eq!(run.code, 0, "the parent carries on: {}", fail(&run));
    assert_eq!(server.routed_requests("KEY-LIMIT").len(), 1, "one turn only");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("reached its turn limit (1)") && results[0].contains("looking"),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with("error (branch-failed)") && results[1].contains("model call failed"),
        "{}",
        results[1]
    );
    let ev = events(&run);
    let outcomes: Vec<(&str, &str)> = of_type(&ev, "branch_end")
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
        .collect();
    assert!(
        outcomes.contains(&("branch-1", "max_turns")) && outcomes.contains(&("branch-2", "error")),
        "{outcomes:?}"
    );
    let results_ev = of_type(&ev, "tool_result");
    assert_eq!(
        (results_ev[0]["is_error"].as_bool(), results_ev[1]["is_error"].as_bool()),
        (Some(false), Some(true))
    );
}

#[test]
fn the_audit_log_records_a_branchs_model_and_tool_calls_under_its_id() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("notes.txt"), "remember the milk\n").unwrap();
    let server =
        ModelServer::start(Flavor::OpenAi, parent(&[branch_call(json!({"description": "KEY-AUDIT: read"}))]));
    server.set_routes(vec![(
        "KEY-AUDIT",
        vec![tool("read_file", json!({"file_path": "notes.txt"})), text("it says remember the milk")],
    )]);
    let url = server.url();
    let run = sb.run(&["exec", "--base-url", &url, "--model", "test-model", "--no-stream", TASK]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let log = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).expect("audit log");
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let shape: Vec<String> = lines
        .iter()
        .map(|l| format!("{} {}", l["type"].as_str().unwrap(), l["branch"].as_str().unwrap_or("-")))
        .collect();
    assert_eq!(
        shape,
        [
            "session_start -",
            "model_call -",
            "branch_start branch-1",
            "model_call branch-1",
            "tool_call branch-1",
            "model_call branch-1",
            "branch_end branch-1",
            "tool_call -",
            "model_call -",
            "session_end -",
        ]
    );
    let branch_calls: Vec<&Value> = lines.iter().filter(|l| l["branch"] == "branch-1").collect();
    assert_eq!(branch_calls[1]["purpose"], "branch");
    assert_eq!(branch_calls[2]["tool"], "read_file");
    assert_eq!(branch_calls[2]["outcome"], "ok");
    assert_eq!(branch_calls[4]["outcome"], "done");
    assert!(!log.contains("KEY-AUDIT"), "the description is recorded by digest only");
    let tool_call = lines.iter().find(|l| l["type"] == "tool_call" && l["branch"].is_null()).unwrap();
    assert_eq!(tool_call["tool"], "branch");
}

#[test]
fn the_repl_shows_a_branch_starting_and_status_lists_none_once_it_ended() {
    let sb = Sandbox::new();
    let server =
        ModelServer::start(Flavor::OpenAi, parent(&[branch_call(json!({"description": "KEY-REPL: look"}))]));
    server.set_routes(vec![("KEY-REPL", vec![text("nothing to see")])]);
    let out = sb.repl(&server.url(), &[], &["look around", "/status", "/exit"]);
    assert!(out.contains("branch-1: KEY-REPL: look"), "the start is shown: {out}");
    assert!(out.contains("parent done"), "{out}");
    assert!(out.contains("branches:   none running"), "an ended branch is not listed: {out}");
}
