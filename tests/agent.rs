//! End-to-end agent sessions: the real `corral` binary against scripted model servers on
//! 127.0.0.1 (OpenAI-compatible and Anthropic, streaming and not). Assertions are on files,
//! stdout, exit codes and the request bodies the servers captured.

use crate::support;

use serde_json::{Value, json};
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use support::{Run, Sandbox};

#[derive(Clone, Copy)]
enum Mode {
    OpenAiStream,
    OpenAiPlain,
    AnthropicStream,
    AnthropicPlain,
}

const ALL_MODES: [Mode; 4] =
    [Mode::OpenAiStream, Mode::OpenAiPlain, Mode::AnthropicStream, Mode::AnthropicPlain];

impl Mode {
    fn flavor(self) -> Flavor {
        match self {
            Mode::OpenAiStream | Mode::OpenAiPlain => Flavor::OpenAi,
            _ => Flavor::Anthropic,
        }
    }
    fn anthropic(self) -> bool {
        matches!(self, Mode::AnthropicStream | Mode::AnthropicPlain)
    }
    fn stream(self) -> bool {
        matches!(self, Mode::OpenAiStream | Mode::AnthropicStream)
    }
}

/// Runs corral on `task` against `server` with `extra` flags.
fn corral(sb: &Sandbox, server: &ModelServer, mode: Mode, extra: &[&str], task: &str) -> Run {
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "test-model"];
    if mode.anthropic() {
        args.extend(["--provider", "anthropic"]);
    }
    if !mode.stream() {
        args.push("--no-stream");
    }
    args.extend(extra);
    args.push(task);
    sb.run_with_env(&args, &[("ANTHROPIC_API_KEY", "test-key"), ("CORRAL_RETRY_BASE_MS", "10")])
}

fn start(mode: Mode, script: Vec<Step>) -> ModelServer {
    ModelServer::start(mode.flavor(), script)
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

fn text(t: &str) -> Step {
    Step::Reply(Reply::text(t))
}

/// The system prompt of a captured request, in either wire format.
fn system(c: &Captured) -> String {
    if let Some(s) = c.body.get("system") {
        return match s {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    }
    c.body["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

/// Every tool result text in a captured request, in order, in either wire format.
fn tool_results(c: &Captured) -> Vec<String> {
    let mut out = Vec::new();
    for m in c.body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap_or_default().to_string());
        }
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks {
                if b["type"] == "tool_result" {
                    let c = match &b["content"] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    out.push(c);
                }
            }
        }
    }
    out
}

/// Names of the tools offered in a request, in either wire format.
fn tool_names(c: &Captured) -> Vec<String> {
    c.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().or(t["name"].as_str()).unwrap_or_default().to_string())
        .collect()
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

#[test]
fn read_grep_edit_answer_in_every_wire_mode() {
    for mode in ALL_MODES {
        let sb = Sandbox::new();
        let server = start(
            mode,
            vec![
                tool("read_file", json!({"file_path": "hello.txt"})),
                tool("grep", json!({"pattern": "wor"})),
                tool(
                    "edit_file",
                    json!({"file_path": "hello.txt", "old_string": "world", "new_string": "corral"}),
                ),
                text("Replaced world with corral in hello.txt."),
            ],
        );
        let run = corral(&sb, &server, mode, &[], "replace world with corral");
        assert_eq!(run.code, 0, "{}", fail(&run));
        assert_eq!(run.stdout, "Replaced world with corral in hello.txt.\n", "{}", fail(&run));
        assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "hello\ncorral\n");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 4);
        let names = tool_names(&reqs[0]);
        for t in ["read_file", "grep", "edit_file", "write_file", "think", "todo", "question"] {
            assert!(names.iter().any(|n| n == t), "{t} missing from {names:?}");
        }
        let sys = system(&reqs[0]);
        assert!(sys.contains(&sb.ws.display().to_string()), "workspace root in the prompt");
        assert!(sys.contains("## Tools") && sys.contains("- read_file:"), "{sys}");
        assert!(sys.contains("Today is"), "date in the prompt");
        let results = tool_results(&reqs[3]);
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(results[0].contains("1: hello") && results[0].contains("2: world"), "{}", results[0]);
        assert!(results[1].contains("hello.txt"), "{}", results[1]);
        assert!(results[2].contains("Edited"), "{}", results[2]);
        let history = std::fs::read_to_string(sb.state_file("HISTORY.md")).unwrap();
        assert!(history.contains("*replace world with corral*"));
        assert!(history.contains("Replaced world with corral in hello.txt."));
    }
}

#[test]
fn several_tool_calls_in_one_reply_all_run_in_order() {
    for mode in [Mode::OpenAiStream, Mode::AnthropicPlain] {
        let sb = Sandbox::new();
        std::fs::write(sb.ws.join("b.txt"), "bee\n").unwrap();
        let server = start(
            mode,
            vec![
                Step::Reply(Reply::tools(vec![
                    ("read_file", r#"{"file_path":"hello.txt"}"#),
                    ("read_file", r#"{"file_path":"b.txt"}"#),
                    ("write_file", r#"{"file_path":"new.txt","content":"fresh\n"}"#),
                ])),
                text("done"),
            ],
        );
        let run = corral(&sb, &server, mode, &[], "read both");
        assert_eq!(run.code, 0, "{}", fail(&run));
        assert_eq!(std::fs::read_to_string(sb.ws.join("new.txt")).unwrap(), "fresh\n");
        let results = tool_results(&server.requests()[1]);
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(results[0].contains("hello"));
        assert!(results[1].contains("bee"));
        assert!(results[2].contains("Wrote"));
    }
}

#[test]
fn malformed_arguments_and_unknown_tools_become_corrections() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let server = start(
        mode,
        vec![
            Step::Reply(Reply::tool("read_file", r#"{"file_path": "hello.txt"#)),
            tool("read_file", json!({"path": "hello.txt"})),
            tool("read_fil", json!({"file_path": "hello.txt"})),
            tool("read_file", json!({"file_path": "hello.txt"})),
            text("It says hello world."),
        ],
    );
    let run = corral(&sb, &server, mode, &[], "what does hello.txt say?");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(run.stdout, "It says hello world.\n");
    let results = tool_results(&server.requests()[4]);
    assert!(results[0].contains("not valid JSON"), "{}", results[0]);
    assert!(results[1].contains("missing required property 'file_path'"), "{}", results[1]);
    assert!(
        results[2].contains("no tool named 'read_fil'") && results[2].contains("read_file"),
        "{}",
        results[2]
    );
    assert!(results[3].contains("1: hello"), "{}", results[3]);
}

#[test]
fn rate_limit_with_retry_after_is_waited_out() {
    for mode in [Mode::OpenAiPlain, Mode::AnthropicStream] {
        let sb = Sandbox::new();
        let server = start(
            mode,
            vec![
                Step::Status { code: 429, retry_after: Some("1".into()), body: "slow down".into() },
                text("ok"),
            ],
        );
        let run = corral(&sb, &server, mode, &[], "hi");
        assert_eq!(run.code, 0, "{}", fail(&run));
        assert_eq!(run.stdout, "ok\n");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2);
        let gap = reqs[1].at.duration_since(reqs[0].at);
        assert!(gap.as_millis() >= 900, "Retry-After honoured: {gap:?}");
    }
}

#[test]
fn server_errors_are_retried_until_success() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let err = || Step::Status { code: 500, retry_after: None, body: "boom".into() };
    let server = start(mode, vec![err(), err(), err(), text("recovered")]);
    let run = corral(&sb, &server, mode, &[], "hi");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(run.stdout, "recovered\n");
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn a_stream_cut_mid_answer_is_retried() {
    for mode in [Mode::OpenAiStream, Mode::AnthropicStream] {
        let sb = Sandbox::new();
        let server = start(
            mode,
            vec![
                Step::CutStream(Reply::text("this answer will be cut somewhere in the middle")),
                text("whole answer"),
            ],
        );
        let run = corral(&sb, &server, mode, &[], "hi");
        assert_eq!(run.code, 0, "{}", fail(&run));
        assert_eq!(run.stdout, "whole answer\n");
        assert_eq!(server.requests().len(), 2);
    }
}

#[test]
fn provider_errors_exit_1_with_advice() {
    let mode = Mode::OpenAiPlain;
    let sb = Sandbox::new();
    let server = start(mode, vec![Step::Status { code: 401, retry_after: None, body: "bad key".into() }]);
    let run = corral(&sb, &server, mode, &[], "hi");
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stdout.is_empty());
    assert!(run.stderr.to_lowercase().contains("key"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 1, "authentication errors are not retried");
}

#[test]
fn max_turns_exits_2_and_the_next_run_continues() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let server = start(
        mode,
        vec![
            tool("todo", json!({"action": "add", "tasks": ["rename the module"]})),
            tool("read_file", json!({"file_path": "hello.txt"})),
        ],
    );
    let run = corral(&sb, &server, mode, &["--max-turns", "2"], "rename the module");
    assert_eq!(run.code, 2, "{}", fail(&run));
    let note = std::fs::read_to_string(sb.state_file("continue.md")).expect("continue.md written");
    assert!(note.contains("rename the module"), "{note}");
    assert!(note.contains("turn limit"), "{note}");
    assert!(note.contains("- [ ] rename the module"), "todo in the note: {note}");
    assert!(note.contains("read_file"), "recent activity: {note}");

    let server = start(mode, vec![text("continued")]);
    let run = corral(&sb, &server, mode, &[], "go on");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let sys = system(&server.requests()[0]);
    assert!(sys.contains("<continue-here>") && sys.contains("rename the module"), "{sys}");
    assert!(!sb.state_file("continue.md").exists(), "the note is used once");
}

#[test]
fn think_and_todo_state_reaches_the_next_request() {
    for mode in [Mode::OpenAiStream, Mode::AnthropicPlain] {
        let sb = Sandbox::new();
        let server = start(
            mode,
            vec![
                tool("todo", json!({"action": "add", "tasks": ["write tests", "fix bug"]})),
                tool("think", json!({"thought": "the bug is in the parser's escape handling"})),
                tool("todo", json!({"action": "done", "tasks": "write"})),
                text("done"),
            ],
        );
        let run = corral(&sb, &server, mode, &[], "plan it");
        assert_eq!(run.code, 0, "{}", fail(&run));
        let reqs = server.requests();
        let sys1 = system(&reqs[1]);
        assert!(sys1.contains("- [ ] write tests") && sys1.contains("- [ ] fix bug"), "{sys1}");
        let sys3 = system(&reqs[3]);
        assert!(sys3.contains("- [x] write tests"), "{sys3}");
        assert!(sys3.contains("the bug is in the parser's escape handling"), "{sys3}");
        let todo = std::fs::read_to_string(sb.state_file("todo.md")).unwrap();
        assert!(todo.contains("- [x] write tests") && todo.contains("- [ ] fix bug"), "{todo}");
    }
}

#[test]
fn an_idle_todo_list_gets_a_reminder() {
    let mode = Mode::OpenAiPlain;
    let sb = Sandbox::new();
    let read = || tool("read_file", json!({"file_path": "hello.txt"}));
    let server = start(
        mode,
        vec![
            tool("todo", json!({"action": "add", "tasks": ["step one"]})),
            read(),
            read(),
            read(),
            text("ok"),
        ],
    );
    let run = corral(&sb, &server, mode, &[], "work");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let last = reqs[4].body["messages"].to_string();
    assert!(last.contains("Reminder: your todo list has 1 unfinished item"), "{last}");
    assert!(!reqs[3].body["messages"].to_string().contains("Reminder:"), "not before 3 idle turns");
}

#[test]
fn question_in_one_shot_tells_the_model_no_one_answers() {
    let mode = Mode::AnthropicStream;
    let sb = Sandbox::new();
    let server =
        start(mode, vec![tool("question", json!({"question": "Which branch?"})), text("assumed main")]);
    let run = corral(&sb, &server, mode, &[], "deploy");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("no one can answer"), "{results:?}");
}

#[test]
fn instruction_files_and_empty_replies() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "Always answer in French.\n").unwrap();
    let server = start(mode, vec![text(""), text("bonjour")]);
    let run = corral(&sb, &server, mode, &[], "greet");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(run.stdout, "bonjour\n");
    let reqs = server.requests();
    assert!(system(&reqs[0]).contains("Always answer in French."));
    assert!(reqs[1].body["messages"].to_string().contains("Your last reply was empty"));
}

#[test]
fn json_and_stream_json_output_carry_a_schema_version() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let server = start(mode, vec![tool("read_file", json!({"file_path": "hello.txt"})), text("hello world")]);
    let run = corral(&sb, &server, mode, &["--output-format", "json"], "read");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON object");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["outcome"], "done");
    assert_eq!(v["answer"], "hello world");
    assert_eq!(v["stats"]["tool_calls"], 1);

    let server = start(mode, vec![tool("read_file", json!({"file_path": "hello.txt"})), text("hi")]);
    let run = corral(&sb, &server, mode, &["--output-format", "stream-json"], "read");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let events: Vec<Value> =
        run.stdout.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
    assert!(events.iter().all(|e| e["schema_version"] == 1));
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"start"));
    assert_eq!(types.last(), Some(&"result"));
    assert!(types.contains(&"tool_result") && types.contains(&"text"), "{types:?}");
}

/// `corral -` reads the task from stdin rather than sending "-" to the model.
#[test]
fn a_dash_reads_the_task_from_stdin() {
    use std::io::Write;
    let sb = Sandbox::new();
    let server = start(Mode::OpenAiStream, vec![text("done")]);
    let url = server.url();
    let mut child = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "-q", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"the piped task").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("the piped task") && !sent.contains(r#""content":"-""#), "{sent}");
}

#[test]
fn the_task_can_come_on_stdin_and_quiet_prints_only_the_answer() {
    use std::io::Write;
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let server = start(mode, vec![tool("read_file", json!({"file_path": "hello.txt"})), text("the answer")]);
    let url = server.url();
    let mut child = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "-q"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"task from stdin").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "the answer\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "quiet");
    assert!(server.requests()[0].body["messages"].to_string().contains("task from stdin"));
}

#[test]
fn ctrl_c_stops_the_session_with_130_and_leaves_a_note() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let server = start(
        mode,
        vec![
            tool("read_file", json!({"file_path": "hello.txt"})),
            Step::Delay(std::time::Duration::from_secs(20), Box::new(text("too late"))),
        ],
    );
    let url = server.url();
    let child = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "summarise hello.txt"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_for_requests(2);
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    // The reply was still being held back when corral stopped: it did not wait for it.
    assert!(server.requests()[1].replied.is_none(), "stopped promptly, not after the model's reply");
    assert!(out.stdout.is_empty());
    let note = std::fs::read_to_string(sb.state_file("continue.md")).expect("continue.md");
    assert!(note.contains("interrupted") && note.contains("summarise hello.txt"), "{note}");
}

/// Runs the interactive session against `server`, typing `lines`; returns the terminal's text.
fn repl(sb: &Sandbox, server: &ModelServer, lines: &[&str]) -> String {
    sb.repl(&server.url(), &[], lines)
}

#[test]
fn the_interactive_session_keeps_context_and_answers_slash_commands() {
    let sb = Sandbox::new();
    let server = start(
        Mode::OpenAiStream,
        vec![
            tool("todo", json!({"action": "add", "tasks": ["look around"]})),
            text("first answer"),
            text("second answer"),
            text("after clear"),
        ],
    );
    server.set_context_window(16384);
    let out = repl(
        &sb,
        &server,
        &["hello there", "/status", "and again", "/tools", "/clear", "fresh start", "/exit"],
    );
    assert!(out.contains("first answer") && out.contains("second answer"), "{out}");
    assert!(out.contains("1 unfinished"), "/status shows the todo count: {out}");
    assert!(out.contains("16384 tokens (from the server's model list)"), "{out}");
    assert!(out.contains("read_file"), "/tools lists tools: {out}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "{out}");
    let second = reqs[2].body["messages"].to_string();
    assert!(second.contains("hello there") && second.contains("and again"), "context kept: {second}");
    let after = &reqs[3];
    let msgs = after.body["messages"].to_string();
    assert!(!msgs.contains("hello there") && msgs.contains("fresh start"), "/clear forgets: {msgs}");
    assert!(!system(after).contains("look around"), "/clear resets the todo list");
}

/// What reaches the person's terminal: tool lines with the telling argument and text results,
/// no control sequence from the model, no model-only reminder, a did-you-mean for a mistyped
/// command and a summary on /exit.
#[test]
fn the_terminal_shows_clean_tool_lines_and_a_summary() {
    let sb = Sandbox::new();
    let server = start(
        Mode::OpenAiStream,
        vec![
            tool("grep", json!({"path": ".", "pattern": "hello"})),
            tool("todo", json!({"action": "add", "tasks": ["first step", "second step"]})),
            text("done \u{1b}]0;pwned\u{7}\u{1b}[2Jwith **care**"),
        ],
    );
    let out = repl(&sb, &server, &["look", "/stauts", "/exit"]);
    assert!(out.contains("✓ grep hello →"), "grep shows its pattern: {out}");
    assert!(out.contains("2 items, 2 to do") && out.contains("[ ] first step"), "todo as text: {out}");
    assert!(!out.contains(r#""remaining""#), "no raw JSON: {out}");
    assert!(out.contains("done with") && !out.contains("pwned") && !out.contains("\u{1b}]0"), "{out}");
    assert!(out.contains("care") && !out.contains("**care**"), "streamed Markdown is drawn: {out}");
    assert!(!out.contains("\u{1b}[2J"), "{out}");
    assert!(out.contains("unknown command /stauts; did you mean /status?"), "{out}");
    assert!(out.contains("session: 3 model calls"), "{out}");
}

/// A one-shot run in a terminal draws the streamed answer's Markdown block by block; the same
/// answer redirected is printed as the model wrote it.
#[test]
fn a_streamed_answer_is_drawn_as_markdown_in_a_terminal_and_raw_when_redirected() {
    let sb = Sandbox::new();
    let answer = "# Findings\n\nThe **bug** is in `parse`.\n\n```rust\nlet a = 1;\n\nlet b = 2;\n```\n\n- fix it\n- test it";
    let server = start(Mode::OpenAiStream, vec![text(answer)]);
    let args = ["--base-url", &server.url(), "--model", "test-model", "--color", "never", "look"];
    let screen = sb.in_terminal(&args, &[], &[]);
    for drawn in
        ["# Findings", "The bug is in `parse`.", "    let a = 1;", "    let b = 2;", "• fix it", "• test it"]
    {
        assert!(screen.contains(drawn), "{drawn:?} in {screen}");
    }
    assert!(!screen.contains("**bug**") && !screen.contains("```"), "{screen}");
    let server = start(Mode::OpenAiStream, vec![text(answer)]);
    let r = sb.run(&["--base-url", &server.url(), "--model", "test-model", "look"]);
    assert_eq!(r.stdout.trim_end(), answer);
}

#[test]
fn ctrl_c_in_the_interactive_session_stops_the_turn_not_the_session() {
    let sb = Sandbox::new();
    let server = start(
        Mode::OpenAiStream,
        vec![Step::Delay(std::time::Duration::from_secs(30), Box::new(text("too late"))), text("still here")],
    );
    // Ctrl-C once the slow request is in; every other line at its prompt (the Ctrl-C line
    // answers none, so line i > 1 waits for prompt i).
    let args = ["--base-url", &server.url(), "--model", "test-model", "--color", "never"];
    let out = sb.in_terminal_when(
        &args,
        &[("CORRAL_RETRY_BASE_MS", "10")],
        &["a slow task", "\x03", "next task", "/exit"],
        |i, screen| match i {
            1 => !server.requests().is_empty(),
            0 => support::terminal::prompts(screen) > 0,
            _ => support::terminal::prompts(screen) >= i,
        },
    );
    assert!(server.requests()[0].replied.is_none(), "the slow reply was not awaited: {out}");
    assert!(out.contains("interrupted"), "{out}");
    assert!(out.contains("still here"), "the session went on: {out}");
    assert!(!out.contains("too late"));
}

#[test]
fn a_question_in_the_interactive_session_is_answered_by_the_person() {
    let sb = Sandbox::new();
    let server = start(
        Mode::OpenAiStream,
        vec![
            tool("question", json!({"question": "Which colour?", "options": ["red", "blue"]})),
            text("blue it is"),
        ],
    );
    let out = repl(&sb, &server, &["paint it", "2", "/exit"]);
    assert!(out.contains("Which colour?") && out.contains("2. blue"), "{out}");
    assert!(out.contains("blue it is"), "{out}");
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("blue") && !results[0].contains("no one can answer"), "{results:?}");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn exec_writes_an_audit_line_for_every_call() {
    let mode = Mode::OpenAiStream;
    let sb = Sandbox::new();
    let read_args = r#"{"file_path":"hello.txt"}"#;
    let bad_args = r#"{"file_path":"nope.txt"}"#;
    let server = start(
        mode,
        vec![
            Step::Reply(Reply::tools(vec![("read_file", read_args), ("read_file", bad_args)])),
            tool("question", json!({"question": "May I?"})),
            text("all done"),
        ],
    );
    let url = server.url();
    let run = sb.run(&["exec", "--base-url", &url, "--model", "test-model", "audit me"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(run.stdout, "all done\n");
    let plugins: Value = serde_json::from_str(&sb.run(&["plugins", "--json"]).ok().stdout).unwrap();
    let sha_of = |name: &str| {
        plugins.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["sha256"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let log = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).expect("audit log");
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session_start",
            "model_call",
            "tool_call",
            "tool_call",
            "model_call",
            "tool_call",
            "model_call",
            "session_end"
        ],
        "{log}"
    );
    for l in &lines {
        assert_eq!(l["schema_version"], 1);
        assert!(l["time"].as_str().is_some_and(|t| t.starts_with("20") && t.ends_with('Z')), "{l}");
    }
    assert_eq!(lines[0]["task_sha256"], sha256_hex(b"audit me"));
    assert_eq!(lines[0]["model"], "test-model");
    assert_eq!(lines[1]["tool_calls"], 2);
    assert!(lines[1]["input_tokens"].as_u64().unwrap() > 0 && lines[1]["duration_ms"].as_f64().is_some());
    let ok = &lines[2];
    assert_eq!(ok["tool"], "read_file");
    assert_eq!(ok["plugin"], "read_file");
    assert_eq!(ok["plugin_sha256"], sha_of("read_file"));
    assert_eq!(ok["args_sha256"], sha256_hex(read_args.as_bytes()));
    assert_eq!(ok["outcome"], "ok");
    assert!(ok["bytes"].as_u64().unwrap() > 10 && ok["duration_ms"].as_f64().unwrap() > 0.0);
    let bad = &lines[3];
    assert_eq!(bad["outcome"], "error");
    assert_eq!(bad["error_kind"], "not-found");
    assert_eq!(bad["args_sha256"], sha256_hex(bad_args.as_bytes()));
    let q = &lines[5];
    assert_eq!(q["tool"], "question");
    assert_eq!(q["outcome"], "error", "no one is asked in CI");
    assert_eq!(lines[7]["outcome"], "done");
    assert_eq!(lines[7]["exit_code"], 0);
    assert_eq!(lines[7]["stats"]["tool_calls"], 3);
    assert!(
        !log.contains("hello.txt") && !log.contains("audit me"),
        "arguments and task appear only as digests"
    );
}

#[test]
fn exec_audit_log_path_can_be_chosen() {
    let mode = Mode::AnthropicPlain;
    let sb = Sandbox::new();
    let server = start(mode, vec![text("fine")]);
    let log = sb.tmp.path().join("logs/ci.jsonl");
    let run = corral(&sb, &server, mode, &["--ci", "--audit-log", log.to_str().unwrap()], "quick");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let text = std::fs::read_to_string(&log).expect("audit log at the chosen path");
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(!sb.ws.join(".corral/audit.jsonl").exists());
}

#[test]
fn file_search_finds_files_by_fuzzy_name_and_skips_ignored_ones() {
    let sb = Sandbox::new();
    for (p, body) in [
        ("host/src/config/keys.rs", ""),
        ("host/src/agent/mod.rs", ""),
        ("target/config/keys.rs", ""),
        (".gitignore", "target/\n"),
    ] {
        let path = sb.ws.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let server = start(
        Mode::OpenAiStream,
        vec![tool("file_search", json!({"query": "cfg keys", "limit": 5})), text("found it")],
    );
    let run = corral(&sb, &server, Mode::OpenAiStream, &[], "where are the config keys?");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    assert!(tool_names(&reqs[0]).iter().any(|n| n == "file_search"));
    let results = tool_results(&reqs[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].starts_with("host/src/config/keys.rs\n"), "{results:?}");
    assert!(!results[0].contains("target/") && !results[0].contains("agent/mod.rs"), "{results:?}");
}

#[test]
fn edit_file_refuses_overlapping_whitespace_tolerant_matches() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("o.txt"), " a\n a\n a\n").unwrap();
    let server = start(
        Mode::AnthropicStream,
        vec![
            tool("read_file", json!({"file_path": "o.txt"})),
            tool(
                "edit_file",
                json!({"file_path": "o.txt", "old_string": "a\na", "new_string": "b", "line_number": 2}),
            ),
            text("could not"),
        ],
    );
    let run = corral(&sb, &server, Mode::AnthropicStream, &[], "edit");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let results = tool_results(&server.requests()[2]);
    assert!(results[1].contains("overlap one another, so the edit is ambiguous"), "{results:?}");
    assert_eq!(std::fs::read_to_string(sb.ws.join("o.txt")).unwrap(), " a\n a\n a\n", "nothing written");
}

#[test]
fn patch_applies_a_diff_to_two_files_through_the_agent() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("b.txt"), "one\ntwo\n").unwrap();
    let diff = "--- a/hello.txt\n+++ b/hello.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+corral\n\
                --- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n";
    let server = start(
        Mode::OpenAiPlain,
        vec![
            Step::Reply(Reply::tools(vec![
                ("read_file", r#"{"file_path":"hello.txt"}"#),
                ("read_file", r#"{"file_path":"b.txt"}"#),
            ])),
            tool("patch", json!({"diff": diff})),
            text("patched"),
        ],
    );
    let run = corral(&sb, &server, Mode::OpenAiPlain, &[], "patch them");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "hello\ncorral\n");
    assert_eq!(std::fs::read_to_string(sb.ws.join("b.txt")).unwrap(), "one\ntwo\nthree\n");
    let results = tool_results(&server.requests()[2]);
    assert!(results[2].starts_with("Applied the patch to 2 files:"), "{results:?}");
    assert!(results[2].contains("b.txt: hunk 1 at line 1"), "{results:?}");
}

#[test]
fn notebook_edit_replaces_a_cell_after_read_file_shows_the_cells() {
    let sb = Sandbox::new();
    let nb = r#"{"cells": [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["1\n"]}], "source": ["print(1)"]}],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "P"}},
        "nbformat": 4, "nbformat_minor": 5}"#;
    std::fs::write(sb.ws.join("a.ipynb"), nb).unwrap();
    let server = start(
        Mode::AnthropicPlain,
        vec![
            tool("read_file", json!({"file_path": "a.ipynb"})),
            tool(
                "notebook_edit",
                json!({"notebook_path": "a.ipynb", "cell_id": "c1", "new_source": "print(2)"}),
            ),
            text("edited"),
        ],
    );
    let run = corral(&sb, &server, Mode::AnthropicPlain, &[], "edit the notebook");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let results = tool_results(&server.requests()[2]);
    assert!(
        results[0].contains("--- cell 0 [code] id=c1 ---") && results[0].contains("[1 output]"),
        "{results:?}"
    );
    assert!(results[1].starts_with("Replaced cell 0 (code) of a.ipynb"), "{results:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(sb.ws.join("a.ipynb")).unwrap()).unwrap();
    assert_eq!(v["cells"][0]["source"], json!(["print(2)"]));
    assert_eq!(v["cells"][0]["outputs"], json!([]));
    assert_eq!(v["metadata"]["kernelspec"]["name"], "python3");
}

/// An image file read by the model reaches it as an image, scaled down to the provider's
/// longest side; a model that takes no images gets the description line only.
#[test]
fn an_image_file_reaches_the_model_scaled_down_to_what_it_takes() {
    let sb = Sandbox::new();
    let img = image::RgbImage::from_fn(4000, 3000, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 60]));
    image::DynamicImage::ImageRgb8(img).save(sb.ws.join("photo.png")).unwrap();
    let server =
        start(Mode::OpenAiStream, vec![tool("read_file", json!({"file_path": "photo.png"})), text("seen")]);
    let r = sb.run(&["--base-url", &server.url(), "--model", "test-model", "--images", "true", "look"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "seen"), "{}", r.stderr);
    let reqs = server.requests();
    let body = reqs[1].body["messages"].to_string();
    assert!(body.contains("photo.png: PNG image, 4000x3000 pixels"), "{body}");
    assert!(body.contains("scaled down from 4000x3000 to 2048x1536 pixels"), "{body}");
    let url = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find_map(|p| p["image_url"]["url"].as_str().map(str::to_string))
        .expect("an image part");
    let (head, b64) = url.split_once(";base64,").unwrap();
    assert!(head == "data:image/png" || head == "data:image/jpeg", "{head}");
    let bytes = decode_base64(b64);
    let seen = image::load_from_memory(&bytes).unwrap();
    assert_eq!((seen.width(), seen.height()), (2048, 1536));

    // A model that takes no images: the line, and a note instead of the image.
    let server =
        start(Mode::OpenAiStream, vec![tool("view_image", json!({"path": "photo.png"})), text("ok")]);
    let r = sb.run(&["--base-url", &server.url(), "--model", "test-model", "--images", "false", "look"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = server.requests()[1].body["messages"].to_string();
    assert!(body.contains("4000x3000 pixels") && body.contains("not shown"), "{body}");
    assert!(!body.contains("image_url"), "{body}");
}

fn decode_base64(s: &str) -> Vec<u8> {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|c| *c != b'=') {
        acc = (acc << 6) | ABC.iter().position(|a| *a == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[test]
fn outline_shows_a_files_structure_to_the_model() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.ws.join("lib.py"),
        "import os\n\nclass Store:\n    def get(self, key):\n        return key\n",
    )
    .unwrap();
    let server = start(
        Mode::AnthropicPlain,
        vec![tool("outline", json!({"file_path": "lib.py"})), text("Store.get is on line 4")],
    );
    let run = corral(&sb, &server, Mode::AnthropicPlain, &[], "where is get?");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    assert!(tool_names(&reqs[0]).iter().any(|n| n == "outline"));
    let results = tool_results(&reqs[1]);
    assert_eq!(results, ["lib.py (Python, 5 lines)\n  3-5  class Store:\n  4-5    def get(self, key):\n"]);
}
