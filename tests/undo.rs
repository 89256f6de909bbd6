//! Undo and rewind through the real binary: a session's file changes make one checkpoint per
//! model turn, kept in the workspace's state; `corral undo` puts them back after the session
//! ended (across a restart), the model's `undo` tool reverts its own latest turn, an outside
//! edit is refused until `--force`, and `--to N` rewinds over several checkpoints.

use crate::support;

use serde_json::{Value, json};
use support::Sandbox;
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};

fn sandbox(server: &ModelServer, extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    std::fs::write(
        sb.config.join("config.toml"),
        format!(
            "[model]\nbase_url = \"{}\"\nname = \"test-model\"\nstream = false\nretries = 1\n{extra}",
            server.url()
        ),
    )
    .unwrap();
    sb
}

fn call(name: &str, args: Value) -> (String, String) {
    (name.to_string(), args.to_string())
}

fn reply(calls: Vec<(String, String)>) -> Step {
    Step::Reply(Reply::tools(calls.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect()))
}

fn write(path: &str, content: &str) -> (String, String) {
    call("write_file", json!({"file_path": path, "content": content}))
}

fn read(path: &str) -> (String, String) {
    call("read_file", json!({"file_path": path}))
}

/// The tool results the model saw in a request, in order.
fn tool_results(c: &Captured) -> Vec<String> {
    let msgs = c.body["messages"].as_array().unwrap();
    msgs.iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn file(sb: &Sandbox, name: &str) -> Option<String> {
    std::fs::read_to_string(sb.ws.join(name)).ok()
}

#[test]
fn a_session_edit_and_creation_are_undone_from_the_shell_after_it_ended() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![read("hello.txt")]),
            reply(vec![write("hello.txt", "changed\n"), write("notes/new.txt", "new\n")]),
            Step::Reply(Reply::text("Done.")),
        ],
    );
    let sb = sandbox(&server, "");
    sb.run(&["edit hello and add a note"]).ok();
    assert_eq!(file(&sb, "hello.txt").as_deref(), Some("changed\n"));

    // A new process: the checkpoint was kept in the workspace's state.
    let list = sb.run(&["undo", "--list"]).ok();
    let line = list.stdout.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap_or_else(|| {
        panic!("no checkpoint 1 listed:\n{}", list.stdout);
    });
    assert!(line.contains("turn 2 by write_file: hello.txt, notes/new.txt"), "{line}");
    assert_eq!(list.stdout.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 1);

    let undo = sb.run(&["undo"]).ok();
    assert!(undo.stdout.contains("restored hello.txt"), "{}", undo.stdout);
    assert!(undo.stdout.contains("deleted notes/new.txt (it did not exist before)"), "{}", undo.stdout);
    assert_eq!(file(&sb, "hello.txt").as_deref(), Some("hello\nworld\n"));
    assert_eq!(file(&sb, "notes/new.txt"), None);
    assert!(!sb.ws.join("notes").exists(), "the folder the session made is removed too: {}", undo.stdout);
    assert!(sb.run(&["undo", "--list"]).ok().stdout.contains("(undone)"));

    let again = sb.run(&["undo"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(again.stderr.contains("nothing to undo"), "{}", again.stderr);
}

#[test]
fn the_model_undoes_its_own_latest_turn() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![write("made.txt", "by the model\n")]),
            reply(vec![call("undo", json!({}))]),
            Step::Reply(Reply::text("Reverted.")),
        ],
    );
    let sb = sandbox(&server, "");
    sb.run(&["make a file, then think better of it"]).ok();
    let reqs = server.requests();
    let offered: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"undo"), "{offered:?}");
    let results = tool_results(&reqs[2]);
    assert!(
        results[1].contains("Undid checkpoint 1") && results[1].contains("deleted made.txt"),
        "{results:?}"
    );
    assert_eq!(file(&sb, "made.txt"), None);
}

#[test]
fn an_outside_change_is_refused_naming_the_file_until_forced() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![write("a.txt", "by corral\n"), write("b.txt", "also by corral\n")]),
            Step::Reply(Reply::text("Done.")),
        ],
    );
    let sb = sandbox(&server, "");
    sb.run(&["write two files"]).ok();
    std::fs::write(sb.ws.join("a.txt"), "by the person\n").unwrap();

    let refused = sb.run(&["undo"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("'a.txt' (edited since)"), "{}", refused.stderr);
    assert!(refused.stderr.contains("corral undo --force"), "{}", refused.stderr);
    assert_eq!(file(&sb, "a.txt").as_deref(), Some("by the person\n"));
    assert_eq!(file(&sb, "b.txt").as_deref(), Some("also by corral\n"), "all or nothing");

    sb.run(&["undo", "--force"]).ok();
    assert_eq!((file(&sb, "a.txt"), file(&sb, "b.txt")), (None, None));
}

#[test]
fn rewind_to_a_checkpoint_undoes_it_and_every_later_one() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![write("a.txt", "one\n")]),
            reply(vec![write("a.txt", "two\n"), write("b.txt", "made in turn 2\n")]),
            reply(vec![write("a.txt", "three\n")]),
            Step::Reply(Reply::text("Done.")),
        ],
    );
    let sb = sandbox(&server, "");
    sb.run(&["write in three steps"]).ok();
    let list = sb.run(&["undo", "--list"]).ok().stdout;
    assert_eq!(list.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 3, "{list}");

    let r = sb.run(&["undo", "--to", "2"]).ok();
    assert!(r.stdout.contains("Undid checkpoints 2"), "{}", r.stdout);
    assert_eq!((file(&sb, "a.txt").as_deref(), file(&sb, "b.txt")), (Some("one\n"), None));
    sb.run(&["undo", "--to", "1"]).ok();
    assert_eq!(file(&sb, "a.txt"), None);
    let none = sb.run(&["undo", "--to", "7"]);
    assert!(none.code == 1 && none.stderr.contains("no checkpoint 7"), "{}", none.stderr);
}

#[test]
fn a_change_too_big_to_keep_says_it_cannot_be_undone() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![read("hello.txt")]),
            reply(vec![write("hello.txt", "x\n")]),
            Step::Reply(Reply::text("Done.")),
        ],
    );
    let sb = sandbox(&server, "[undo]\nmax_bytes = 4\n");
    sb.run(&["shrink hello"]).ok();
    let results = tool_results(&server.requests()[2]);
    assert!(
        results[1].contains("this change to 'hello.txt' cannot be undone")
            && results[1].contains("undo.max_bytes"),
        "{results:?}"
    );
    let r = sb.run(&["undo"]).ok();
    assert!(r.stdout.contains("Not restored") && r.stdout.contains("hello.txt"), "{}", r.stdout);
    assert_eq!(file(&sb, "hello.txt").as_deref(), Some("x\n"));
}

/// In the interactive session: `/undo` reverts the latest turn's changes, `/rewind` lists the
/// checkpoints, and `/rewind 1` puts the workspace back to before the first one and trims the
/// conversation to match (the next request no longer holds the rewound task).
#[test]
fn the_repl_undoes_and_rewinds_with_the_conversation() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            reply(vec![write("a.txt", "one\n")]),
            Step::Reply(Reply::text("wrote a")),
            reply(vec![write("b.txt", "two\n")]),
            Step::Reply(Reply::text("wrote b")),
            Step::Reply(Reply::text("fresh answer")),
        ],
    );
    let sb = Sandbox::new();
    let out = sb.repl(
        &server.url(),
        &[],
        &["first task", "second task", "/undo", "/rewind", "/rewind 1", "third task", "/exit"],
    );
    assert_eq!(file(&sb, "a.txt"), None, "rewound to before checkpoint 1: {out}");
    assert_eq!(file(&sb, "b.txt"), None, "/undo removed the file the second turn made: {out}");
    assert!(out.contains("a.txt") && out.contains("(undone)"), "/rewind lists the checkpoints: {out}");
    let last = server.requests().pop().unwrap();
    let msgs = last.body["messages"].to_string();
    assert!(msgs.contains("third task"), "{msgs}");
    assert!(
        !msgs.contains("first task") && !msgs.contains("second task"),
        "the conversation was trimmed: {msgs}"
    );
}
