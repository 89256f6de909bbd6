//! Saved sessions end to end: every run is saved as JSONL in corral's state for the workspace;
//! `corral sessions` lists them; `--resume`, `--continue` and `--fork` go on from one after the
//! process exited (the next request holds the earlier conversation, compacted as it was, and
//! the todo list); retention deletes the oldest; a newer or broken file is refused clearly.

use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use support::model_server::{Captured, Flavor, ModelServer, OverflowServer, Reply, Step, system_of};
use support::{Run, Sandbox};

fn corral(sb: &Sandbox, server: &ModelServer, extra: &[&str]) -> Run {
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "test-model", "--no-history"];
    args.extend(extra);
    sb.run_with_env(&args, &[("CORRAL_RETRY_BASE_MS", "10")])
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

fn text(t: &str) -> Step {
    Step::Reply(Reply::text(t))
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

fn messages(c: &Captured) -> String {
    c.body["messages"].to_string()
}

/// Every saved session file of the sandbox, by name.
fn session_files(sb: &Sandbox) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ws in std::fs::read_dir(sb.state_dir().join("workspaces")).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(ws.path().join("sessions")).into_iter().flatten().flatten() {
            out.push(f.path());
        }
    }
    out.sort();
    out
}

/// `corral sessions --json`: the ids, newest first.
fn listed(sb: &Sandbox) -> Vec<Value> {
    let run = sb.run(&["sessions", "--json"]).ok();
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("JSON listing");
    assert_eq!(v["schema_version"], 1);
    v["sessions"].as_array().unwrap().clone()
}

fn newest_id(sb: &Sandbox) -> String {
    listed(sb)[0]["id"].as_str().unwrap().to_string()
}

fn records(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_saved_session_is_listed_and_resumed_with_its_tool_result() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            tool("read_file", json!({"file_path": "hello.txt"})),
            text("FIRST-ANSWER"),
            text("SECOND-ANSWER"),
        ],
    );
    let run = corral(&sb, &server, &["FIRST-TASK: read hello.txt\nand more"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let files = session_files(&sb);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    let recs = records(&files[0]);
    assert_eq!(recs[0]["schema_version"], 1);
    assert_eq!(
        (recs[0]["model"].as_str(), recs[0]["provider"].as_str()),
        (Some("test-model"), Some("openai-compatible"))
    );
    let types: Vec<&str> = recs[1..].iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["message", "message", "message", "message", "end"], "{recs:?}");
    assert_eq!(recs.last().unwrap()["outcome"], "done");

    let list = listed(&sb);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["turns"], 2);
    assert_eq!(list[0]["task"], "FIRST-TASK: read hello.txt\nand more");
    let id = list[0]["id"].as_str().unwrap().to_string();
    let table = sb.run(&["sessions"]).ok().stdout;
    let row = table.lines().find(|l| l.starts_with(&id)).unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("FIRST-TASK: read hello.txt") && !row.contains("and more"), "{row}");
    assert!(table.starts_with("ID "), "{table}");

    // A new process goes on with it, by a prefix of its id.
    let prefix = &id[..id.len() - 2];
    let run = corral(&sb, &server, &["--resume", prefix, "SECOND-TASK"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stdout.contains("SECOND-ANSWER"), "{}", fail(&run));
    let reqs = server.requests();
    let resumed = messages(&reqs[2]);
    for earlier in ["FIRST-TASK", "2: world", "FIRST-ANSWER", "SECOND-TASK"] {
        assert!(resumed.contains(earlier), "{earlier} in {resumed}");
    }
    assert_eq!(session_files(&sb), files, "a resumed session appends to its own file");
    let recs = records(&files[0]);
    let resumed_rec = recs.iter().find(|r| r["type"] == "resumed").expect("a resumed record");
    assert_eq!(resumed_rec["model"], "test-model");
    assert_eq!(recs.last().unwrap()["type"], "end");
    assert_eq!(listed(&sb)[0]["turns"], 3);
}

#[test]
fn continue_picks_the_latest_and_fork_leaves_the_original_as_it_was() {
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![text("ANSWER-A"), text("ANSWER-B"), text("ANSWER-C"), text("ANSWER-D")],
    );
    corral(&sb, &server, &["TASK-A"]).ok();
    let a = newest_id(&sb);
    corral(&sb, &server, &["TASK-B"]).ok();
    let b = newest_id(&sb);
    assert_ne!(a, b);

    let run = corral(&sb, &server, &["--continue", "TASK-C"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let c = messages(&server.requests()[2]);
    assert!(c.contains("TASK-B") && c.contains("ANSWER-B") && c.contains("TASK-C"), "{c}");
    assert!(!c.contains("TASK-A"), "{c}");
    assert_eq!(newest_id(&sb), b, "--continue appended to the latest session");

    let a_file = session_files(&sb).into_iter().find(|f| f.to_string_lossy().contains(&a)).unwrap();
    let before = std::fs::read(&a_file).unwrap();
    // Forked (or resumed) under another model: it works, and says so once.
    let url = server.url();
    let args = ["--base-url", &url, "--model", "other-model", "--no-history", "--fork", &a, "TASK-D"];
    let run = sb.run_with_env(&args, &[("CORRAL_RETRY_BASE_MS", "10")]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let warned =
        format!("session {a} was made with test-model (openai-compatible); it goes on with other-model");
    assert_eq!(run.stderr.matches(&warned).count(), 1, "{}", fail(&run));
    let d = messages(&server.requests()[3]);
    assert!(d.contains("TASK-A") && d.contains("ANSWER-A") && d.contains("TASK-D"), "{d}");
    assert!(!d.contains("TASK-B"), "{d}");
    assert_eq!(std::fs::read(&a_file).unwrap(), before, "the forked file is byte-identical");
    let fork = newest_id(&sb);
    assert!(fork != a && fork != b, "a fork is a new session: {fork}");
    assert_eq!(session_files(&sb).len(), 3);
    let fork_file = session_files(&sb).into_iter().find(|f| f.to_string_lossy().contains(&fork)).unwrap();
    assert_eq!(records(&fork_file)[0]["forked_from"], a.as_str());
}

#[test]
fn a_compacted_session_resumes_with_its_recap_and_todo_list() {
    let sb = Sandbox::new();
    for i in 0..4 {
        let body: String =
            (0..200).map(|l| format!("f{i} line {l}: the quick brown fox jumps over it\n")).collect();
        std::fs::write(sb.ws.join(format!("f{i}.txt")), body).unwrap();
    }
    let mut script = vec![
        tool("todo", json!({"action": "add", "tasks": ["fix the parser", "write a test"]})),
        tool("snapshot", json!({"action": "restore", "summary": "SNAP: the parser lives in p.rs"})),
    ];
    script.extend((0..4).map(|i| tool("read_file", json!({"file_path": format!("f{i}.txt")}))));
    script.push(Step::OverflowAs { server: OverflowServer::OpenAi, limit: 5000, prompt: 9000 });
    script.push(text("done"));
    script.push(text("resumed and done"));
    let server = ModelServer::start(Flavor::OpenAi, script);
    server.set_summaries(vec![
        Step::Reply(Reply::text("RECAP-A: read f0 and f1")),
        Step::Reply(Reply::text("RECAP-B: everything")),
    ]);
    let run = corral(&sb, &server, &["--output-format", "json", "fix the parser"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let result: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert!(result["stats"]["turns_dropped"].as_u64().unwrap() >= 3, "{result}");
    let file = &session_files(&sb)[0];
    assert!(records(file).iter().any(|r| r["type"] == "compaction"), "the compaction is saved");
    // The uncompacted reads are in the file (they were saved as they came), not in the resumed context.
    assert!(std::fs::read_to_string(file).unwrap().contains("f0 line 1"));

    let run = corral(&sb, &server, &["--continue", "NEXT-TASK"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let next = reqs.last().unwrap();
    let m = messages(next);
    assert!(m.contains("NEXT-TASK") && m.contains("non-instructional context recap"), "{m}");
    assert!(!m.contains("f0 line") && !m.contains("f1 line"), "the dropped reads stay dropped: {m}");
    assert!(m.contains("fix the parser"), "the first task is kept");
    let sys = system_of(&next.body);
    assert!(sys.contains("<todo>\n- [ ] fix the parser\n- [ ] write a test\n</todo>"), "{sys}");
    assert!(sys.contains("SNAP: the parser lives in p.rs"), "{sys}");
}

#[test]
fn retention_deletes_the_oldest_and_saving_can_be_turned_off() {
    let sb = Sandbox::new();
    std::fs::write(sb.config.join("config.toml"), "[sessions]\nkeep = 2\n").unwrap();
    let server =
        ModelServer::start(Flavor::OpenAi, vec![text("one"), text("two"), text("three"), text("four")]);
    let mut ids = Vec::new();
    for task in ["T1", "T2", "T3"] {
        corral(&sb, &server, &[task]).ok();
        ids.push(newest_id(&sb));
    }
    let left: Vec<String> = listed(&sb).iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(left, [ids[2].clone(), ids[1].clone()], "the oldest went: {ids:?}");
    assert_eq!(session_files(&sb).len(), 2);

    let removed = sb.run(&["sessions", "rm", &ids[1][..ids[1].len() - 1]]).ok();
    assert_eq!(removed.stdout, format!("Removed session {}.\n", ids[1]));
    assert_eq!(session_files(&sb).len(), 1);

    std::fs::write(sb.config.join("config.toml"), "[sessions]\nsave = false\n").unwrap();
    corral(&sb, &server, &["T4"]).ok();
    assert_eq!(session_files(&sb).len(), 1, "nothing saved with sessions.save = false");
}

#[test]
fn newer_and_broken_files_are_refused_and_ci_resumes_only_by_id() {
    let sb = Sandbox::new();
    let server = ModelServer::start(Flavor::OpenAi, vec![text("first"), text("ci answer")]);
    corral(&sb, &server, &["T1"]).ok();
    let file = session_files(&sb)[0].clone();
    let dir = file.parent().unwrap();
    std::fs::write(
        dir.join("20990101-000000-aaaaaa.jsonl"),
        "{\"schema_version\":7,\"id\":\"20990101-000000-aaaaaa\"}\n",
    )
    .unwrap();
    let run = corral(&sb, &server, &["--resume", "2099", "go"]);
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains("was written by a newer corral (session format 7"), "{}", fail(&run));

    let mut text = std::fs::read_to_string(&file).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "{\"type\":\"message\",\"id\":\n");
    std::fs::write(&file, text).unwrap();
    let id = file.file_stem().unwrap().to_string_lossy().to_string();
    let run = corral(&sb, &server, &["--resume", &id, "go"]);
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains(&format!("{id}.jsonl line 2: not a session record")), "{}", fail(&run));
    // The listing still shows both, naming what is wrong.
    let table = sb.run(&["sessions"]).ok().stdout;
    assert!(table.contains("cannot be read") && table.contains("newer corral"), "{table}");

    let run = corral(&sb, &server, &["--ci", "--continue", "go"]);
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains("CI mode resumes a saved session only by its id"), "{}", fail(&run));
    assert_eq!(server.requests().len(), 1, "no refused run reached the model");
    // CI mode saves its run too: it is the record.
    corral(&sb, &server, &["--ci", "CI-TASK"]).ok();
    let files = session_files(&sb);
    assert_eq!(files.len(), 3);
    assert!(files.iter().any(|f| std::fs::read_to_string(f).unwrap().contains("CI-TASK")));
}

#[test]
fn the_interactive_session_lists_and_switches_to_a_saved_session() {
    let sb = Sandbox::new();
    let server =
        ModelServer::start(Flavor::OpenAi, vec![text("ANSWER-A"), text("ANSWER-B"), text("ANSWER-C")]);
    corral(&sb, &server, &["TASK-A"]).ok();
    let a = newest_id(&sb);
    let prefix = &a[..a.len() - 3];
    let out = sb.repl(
        &server.url(),
        &["--no-history"],
        &["TASK-B", "/resume", &format!("/resume {prefix}"), "TASK-C", "/exit"],
    );
    let b = listed(&sb).iter().map(|s| s["id"].as_str().unwrap().to_string()).find(|id| *id != a).unwrap();
    assert!(out.contains(&format!("session {b}")), "the banner names the new session: {out}");
    let row = out.lines().find(|l| l.starts_with(&a)).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("TASK-A"), "{row}");
    assert!(out.contains(&format!("this session: {b}")), "{out}");
    assert!(out.contains(&format!("resumed session {a}: 2 messages")), "{out}");
    let c = messages(&server.requests()[2]);
    assert!(c.contains("TASK-A") && c.contains("ANSWER-A") && c.contains("TASK-C"), "{c}");
    assert!(!c.contains("TASK-B"), "the switch left the interactive session's own conversation: {c}");
    let b_file = session_files(&sb).into_iter().find(|f| f.to_string_lossy().contains(&b)).unwrap();
    assert!(std::fs::read_to_string(b_file).unwrap().contains("TASK-B"), "the first session was saved");
}
