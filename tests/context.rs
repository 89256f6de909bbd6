//! End-to-end context management: the real `corral` binary against scripted model servers
//! with small windows. Proactive compaction on a long investigation, each provider's real
//! overflow error and the retry, snapshot restore, knowledge that survives aggressive
//! compaction, checkpoint summaries, project memory and the interactive commands.
//!
//! The small-window cases run a realistic task against a server that enforces the window
//! with its own count, refuses what does not fit and answers a request without tools in text,
//! at 4K, 8K and 16K (see support/small_window.rs).

#[path = "support/small_window.rs"]
mod small_window;
use crate::support;

use serde_json::{Value, json};
use support::model_server::{
    Captured, Flavor, ModelServer, OverflowServer, Reply, Step, has_tools, max_tokens, prompt_tokens,
    system_of,
};
use support::{Run, Sandbox};

fn corral(sb: &Sandbox, server: &ModelServer, flavor: Flavor, extra: &[&str], task: &str) -> Run {
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "test-model", "--no-history"];
    if flavor == Flavor::Anthropic {
        args.extend(["--provider", "anthropic"]);
    }
    args.extend(extra);
    args.push(task);
    sb.run_with_env(&args, &[("ANTHROPIC_API_KEY", "test-key"), ("CORRAL_RETRY_BASE_MS", "10")])
}

/// A server whose summary requests come from `summaries` (then fail), never from `script`.
fn start(flavor: Flavor, script: Vec<Step>, summaries: Vec<Step>) -> ModelServer {
    let s = ModelServer::start(flavor, script);
    s.set_summaries(summaries);
    s
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

fn text(t: &str) -> Step {
    Step::Reply(Reply::text(t))
}

fn read(path: &str) -> Step {
    tool("read_file", json!({"file_path": path}))
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

/// `n` files `f0.txt`..: `lines` numbered lines each, every line naming its file.
fn files(sb: &Sandbox, n: usize, lines: usize) {
    for i in 0..n {
        let body: String =
            (0..lines).map(|l| format!("f{i} line {l}: the quick brown fox jumps over it\n")).collect();
        std::fs::write(sb.ws.join(format!("f{i}.txt")), body).unwrap();
    }
}

/// The messages of a request as one JSON text.
fn messages(c: &Captured) -> String {
    c.body["messages"].to_string()
}

/// Every tool result text in a request, in order, in either wire format.
fn tool_results(c: &Captured) -> Vec<String> {
    let mut out = Vec::new();
    for m in c.body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap_or_default().to_string());
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(b["content"].as_str().map_or_else(|| b["content"].to_string(), str::to_string));
            }
        }
    }
    out
}

/// Every assistant text in a request, in order, in either wire format.
fn assistant_texts(c: &Captured) -> Vec<String> {
    let mut out = Vec::new();
    for m in c.body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "assistant") {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .map(|b| b["text"].as_str().unwrap_or("").to_string()),
            ),
            _ => {}
        }
    }
    out
}

/// The host recap in a request that starts with `prefix`, to the end of its message: recaps go
/// on the person's side of the conversation (strict alternation), joined to the message before.
fn recap_in(c: &Captured, prefix: &str) -> Option<String> {
    c.body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "user").find_map(|m| {
        let text = match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => {
                blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
            }
            _ => String::new(),
        };
        text.find(prefix).map(|at| text[at..].to_string())
    })
}

/// Checks that every tool result in a request answers a call of the assistant message just
/// before it, and every call is answered (either wire format).
fn assert_paired(c: &Captured) {
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in c.body["messages"].as_array().into_iter().flatten().enumerate() {
        let mut calls = Vec::new();
        let mut results = Vec::new();
        if m["role"] == "tool" {
            results.push(m["tool_call_id"].as_str().unwrap_or("").to_string());
        }
        for tc in m["tool_calls"].as_array().into_iter().flatten() {
            calls.push(tc["id"].as_str().unwrap_or("").to_string());
        }
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => calls.push(b["id"].as_str().unwrap_or("").to_string()),
                Some("tool_result") => results.push(b["tool_use_id"].as_str().unwrap_or("").to_string()),
                _ => {}
            }
        }
        for r in &results {
            let at = pending.iter().position(|p| p == r);
            assert!(at.is_some(), "message {i}: result {r} answers no pending call\n{}", messages(c));
            pending.remove(at.unwrap());
        }
        if m["role"] == "assistant" {
            assert!(pending.is_empty(), "message {i}: calls {pending:?} unanswered\n{}", messages(c));
            pending = calls;
        }
    }
    assert!(pending.is_empty(), "calls {pending:?} unanswered at the end");
}

/// The JSON lines of a stream-json run.
fn events(run: &Run) -> Vec<Value> {
    run.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[test]
fn a_long_investigation_is_compacted_before_each_call_and_finishes() {
    let sb = Sandbox::new();
    files(&sb, 12, 40);
    let mut script: Vec<Step> = (0..12).map(|i| read(&format!("f{i}.txt"))).collect();
    script.push(text("Read all twelve files."));
    let server = start(Flavor::OpenAi, script, vec![]);
    let run = corral(
        &sb,
        &server,
        Flavor::OpenAi,
        &["--max-context-tokens", "8192", "--output-format", "stream-json"],
        "read f0.txt to f11.txt one by one",
    );
    assert_eq!(run.code, 0, "{}", fail(&run));
    let ev = events(&run);
    let result = ev.last().unwrap();
    assert_eq!(result["answer"], "Read all twelve files.");
    let compactions: Vec<&Value> = ev.iter().filter(|e| e["type"] == "compaction").collect();
    assert!(!compactions.is_empty(), "no compaction in {}", run.stdout);
    assert!(compactions.iter().all(|c| c["kind"] == "proactive"), "{compactions:?}");
    assert!(compactions.iter().all(|c| c["applied"].as_array().unwrap().iter().all(|r| r != "drop_turns")));
    assert_eq!(result["stats"]["compactions"], json!(compactions.len()));
    assert_eq!(result["stats"]["reactive_compactions"], 0);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 13);
    for r in &reqs {
        assert_paired(r);
    }
    let caps: Vec<u64> = reqs.iter().map(|r| r.body["max_tokens"].as_u64().unwrap()).collect();
    assert!(
        caps.iter().all(|c| (256..8192 * 9 / 10 - 1000).contains(c)),
        "the 32768 default is clamped to what fits in 90% of the window: {caps:?}"
    );
    assert!(caps[12] < caps[0], "and shrinks as the conversation grows: {caps:?}");
    let last = &reqs[12];
    let results = tool_results(last);
    assert_eq!(results.len(), 12, "every call keeps a result");
    let mut stubs = 0;
    for (i, r) in results[..10].iter().enumerate() {
        let stub = r.starts_with(&format!("[read_file f{i}.txt: 41 lines, dropped to save context"));
        assert!(stub || r.contains(&format!("f{i} line 39")), "an old read is a stub or whole: {r}");
        stubs += usize::from(stub);
    }
    // Compaction aims well below the budget, so the reads since the last one are still whole.
    assert!(stubs >= 5, "old reads become stubs: {results:?}");
    assert!(
        results[10].contains("f10 line 39") && results[11].contains("f11 line 39"),
        "the last two stay whole"
    );
    let uncompacted: usize =
        (0..12).map(|i| std::fs::read_to_string(sb.ws.join(format!("f{i}.txt"))).unwrap().len()).sum();
    let conversation: String = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m.to_string())
        .collect();
    assert!(
        conversation.len() < uncompacted * 2 / 3,
        "the conversation (system prompt aside) is well under the files: {} vs {uncompacted}",
        conversation.len()
    );
    for r in &reqs {
        assert!(prompt_tokens(&r.body) + max_tokens(&r.body) <= 8192, "within the window");
    }
}

#[test]
fn each_providers_overflow_error_is_compacted_and_retried() {
    let cases = [
        (Flavor::OpenAi, OverflowServer::OpenAi),
        (Flavor::Anthropic, OverflowServer::Anthropic),
        (Flavor::OpenAi, OverflowServer::Vllm),
        (Flavor::OpenAi, OverflowServer::LlamaCpp),
    ];
    for (flavor, kind) in cases {
        let sb = Sandbox::new();
        files(&sb, 6, 60);
        let mut script: Vec<Step> = (0..6).map(|i| read(&format!("f{i}.txt"))).collect();
        script.push(Step::OverflowAs { server: kind, limit: 16_384, prompt: 16_500 });
        script.push(tool("grep", json!({"pattern": "line 7:"})));
        script.push(text("All read."));
        let server = start(flavor, script, vec![]);
        // The window is known from the start, so the catalogue is already the one that fits it
        // and the refusal can only be answered by compacting the conversation.
        let args = ["--output-format", "json", "--max-context-tokens", "16384"];
        let run = corral(&sb, &server, flavor, &args, "read the six files");
        assert_eq!(run.code, 0, "{kind:?}: {}", fail(&run));
        let result: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(result["answer"], "All read.", "{kind:?}");
        assert_eq!(result["stats"]["reactive_compactions"], 1, "{kind:?}: {result}");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 9, "{kind:?}: six reads, the refused request, its retry, the answer");
        let (refused, retry) = (&reqs[6], &reqs[7]);
        assert_eq!(
            messages(refused).matches("f0 line 5:").count(),
            1,
            "{kind:?}: the refused request had f0 whole"
        );
        assert!(messages(retry).len() < messages(refused).len() * 85 / 100, "{kind:?}: the retry is smaller");
        assert!(!messages(retry).contains("f0 line 5:"), "{kind:?}: and lost f0's content");
        assert!(messages(retry).contains("f5 line 59:"), "{kind:?}: but kept the last turn whole");
        assert!(!refused.body["tools"].as_array().unwrap().is_empty());
        assert_eq!(
            reqs[8].body["tools"].as_array().map(Vec::len),
            refused.body["tools"].as_array().map(Vec::len),
            "{kind:?}: the next request has every tool"
        );
        for r in &reqs {
            assert_paired(r);
        }
    }
}

#[test]
fn snapshot_restore_collapses_the_scope_in_the_next_request() {
    for flavor in [Flavor::OpenAi, Flavor::Anthropic] {
        let sb = Sandbox::new();
        files(&sb, 2, 30);
        let summary = "SUMMARY: hello.txt says world on line 2; f1.txt only has fox lines.";
        let server = start(
            flavor,
            vec![
                tool("snapshot", json!({"action": "save", "label": "find the greeting"})),
                read("hello.txt"),
                tool("grep", json!({"pattern": "world"})),
                read("f1.txt"),
                tool("snapshot", json!({"action": "restore", "summary": summary})),
                text("The greeting is on line 2."),
            ],
            vec![],
        );
        let run = corral(&sb, &server, flavor, &[], "where is the greeting?");
        assert_eq!(run.code, 0, "{}", fail(&run));
        let reqs = server.requests();
        assert_eq!(reqs.len(), 6);
        let before = &reqs[4];
        let after = &reqs[5];
        assert!(messages(before).contains("f1 line 29"), "the read was there before the restore");
        assert!(!messages(after).contains("f1 line 29"), "and is gone after it: {}", messages(after));
        assert!(
            assistant_texts(after).iter().all(|t| !t.contains("[snapshot:")),
            "recaps are not the model's words"
        );
        let recap = recap_in(after, "[snapshot: find the greeting]").expect("a recap");
        assert!(
            recap.starts_with(&format!(
                "[snapshot: find the greeting]\n{summary}\n(collapsed 4 turns, saved ~"
            )),
            "{recap}"
        );
        let results = tool_results(after);
        assert_eq!(results.len(), 1, "only the restore call's own result is left: {results:?}");
        assert!(
            results[0].starts_with("Collapsed 4 turns into your summary 'find the greeting'"),
            "{}",
            results[0]
        );
        let sys = system_of(&after.body);
        assert!(
            sys.contains("<snapshots>") && sys.contains(&format!("### find the greeting\n{summary}")),
            "{sys}"
        );
        assert_paired(after);
    }
}

#[test]
fn a_dirty_scope_needs_force() {
    let sb = Sandbox::new();
    let server = start(
        Flavor::OpenAi,
        vec![
            tool("snapshot", json!({"action": "save", "label": "edit"})),
            read("hello.txt"),
            tool(
                "edit_file",
                json!({"file_path": "hello.txt", "old_string": "world", "new_string": "there"}),
            ),
            tool("snapshot", json!({"action": "restore", "summary": "changed world to there"})),
            tool(
                "snapshot",
                json!({"action": "restore", "summary": "changed world to there in hello.txt", "force": true}),
            ),
            text("done"),
        ],
        vec![],
    );
    let run = corral(&sb, &server, Flavor::OpenAi, &[], "edit hello");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let refused = tool_results(&reqs[4]).pop().unwrap();
    assert!(
        refused.contains("the scope is dirty: edit_file changed things since the checkpoint")
            && refused.contains("force=true"),
        "{refused}"
    );
    let done = tool_results(&reqs[5]).pop().unwrap();
    assert!(done.starts_with("Collapsed 4 turns"), "{done}");
    assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "hello\nthere\n");
}

#[test]
fn todo_list_and_snapshot_summaries_survive_aggressive_compaction() {
    let sb = Sandbox::new();
    // Large enough that, even with the short prompt and compact tools of the 5000-token window
    // the refusal reveals, turns must be dropped.
    files(&sb, 4, 200);
    let mut script = vec![
        tool("todo", json!({"action": "add", "tasks": ["fix the parser", "write a test"]})),
        tool("snapshot", json!({"action": "restore", "summary": "SNAP: the parser lives in p.rs"})),
    ];
    script.extend((0..4).map(|i| read(&format!("f{i}.txt"))));
    script.push(Step::OverflowAs { server: OverflowServer::OpenAi, limit: 5000, prompt: 9000 });
    script.push(text("done"));
    let server = start(
        Flavor::OpenAi,
        script,
        vec![
            Step::Reply(Reply::text("RECAP-A: read f0 and f1")),
            Step::Reply(Reply::text("RECAP-B: everything")),
        ],
    );
    let run = corral(&sb, &server, Flavor::OpenAi, &["--output-format", "json"], "fix the parser");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let result: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert!(result["stats"]["turns_dropped"].as_u64().unwrap() >= 3, "{result}");
    let reqs = server.requests();
    let retry = reqs.last().unwrap();
    assert!(
        !messages(retry).contains("f0 line") && !messages(retry).contains("f1 line"),
        "{}",
        messages(retry)
    );
    assert!(messages(retry).contains("non-instructional context recap"), "{}", messages(retry));
    assert!(messages(retry).contains("fix the parser"), "the task is kept");
    let sys = system_of(&retry.body);
    assert!(sys.contains("<todo>\n- [ ] fix the parser\n- [ ] write a test\n</todo>"), "{sys}");
    assert!(sys.contains("SNAP: the parser lives in p.rs"), "{sys}");
    assert_paired(retry);
    assert!(!server.summary_requests().is_empty());
}

#[test]
fn proactive_summaries_are_the_recap_when_no_fresh_summary_can_be_had() {
    let sb = Sandbox::new();
    files(&sb, 12, 160);
    let mut script: Vec<Step> = (0..12).map(|i| read(&format!("f{i}.txt"))).collect();
    script.push(Step::OverflowAs { server: OverflowServer::OpenAi, limit: 6000, prompt: 9000 });
    script.push(text("done"));
    let checkpoint = "CHECKPOINT: f0 to f9 hold fox lines only";
    let server = start(
        Flavor::OpenAi,
        script,
        vec![
            Step::Reply(Reply::text(checkpoint)),
            Step::Status {
                code: 400,
                retry_after: None,
                body: r#"{"error":{"message":"summaries are off"}}"#.into(),
            },
        ],
    );
    let run = corral(&sb, &server, Flavor::OpenAi, &["--proactive-summaries"], "read the files");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let sums = server.summary_requests();
    assert_eq!(sums.len(), 2, "one checkpoint after ten turns, one failed recap");
    assert!(system_of(&sums[0].body).starts_with("You write short factual recaps"));
    assert!(messages(&sums[0]).contains("agent called read_file") && messages(&sums[0]).contains("f9.txt"));
    let reqs = server.requests();
    let retry = reqs.last().unwrap();
    let recap = recap_in(retry, "[non-instructional context recap").expect("recap");
    assert!(recap.contains(&format!("(from checkpoint summaries)\n{checkpoint}")), "{recap}");
    assert_paired(retry);
}

#[test]
fn memory_entries_are_chosen_by_relevance_and_written_by_memory_write() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".corral/memory")).unwrap();
    std::fs::write(
        sb.ws.join(".corral/memory/MEMORY.md"),
        "<!-- bootstrap -->\n## Build\nAlways run `make check` first.\n\n## Lexer\nThe tokenizer lives in \
         src/lexer.rs and rejects tabs.\n\n## Deploy\nUse the staging cluster named kestrel.\n",
    )
    .unwrap();
    let server = start(
        Flavor::OpenAi,
        vec![
            tool(
                "memory_write",
                json!({"content": "Tabs are rejected on purpose (issue 12).", "title": "Tabs"}),
            ),
            text("noted"),
            text("again"),
        ],
        vec![],
    );
    let run = corral(&sb, &server, Flavor::OpenAi, &[], "why does the lexer reject tabs?");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let sys = system_of(&server.requests()[0].body);
    assert!(sys.contains("<memory>") && sys.contains("make check") && sys.contains("src/lexer.rs"), "{sys}");
    assert!(!sys.contains("kestrel"), "irrelevant entries stay out: {sys}");
    let file = std::fs::read_to_string(sb.ws.join(".corral/memory/MEMORY.md")).unwrap();
    assert!(
        file.ends_with("named kestrel.\n\n## Tabs\nTabs are rejected on purpose (issue 12).\n"),
        "{file}"
    );
    let run = corral(&sb, &server, Flavor::OpenAi, &["--memory-full"], "deploy");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let sys = system_of(&server.requests()[2].body);
    assert!(sys.contains("kestrel") && sys.contains("## Tabs"), "{sys}");
}

#[test]
fn interactive_save_restore_compact_and_status() {
    let sb = Sandbox::new();
    files(&sb, 2, 40);
    let server = start(
        Flavor::OpenAi,
        vec![read("f0.txt"), read("f1.txt"), text("read them"), text("ok")],
        vec![Step::Reply(Reply::text("MANUAL RECAP: f0 and f1 hold fox lines"))],
    );
    let out = sb.repl(
        &server.url(),
        &["--max-context-tokens", "16384"],
        &["/save look", "read two files", "/restore", "/status", "/compact", "/unsave", "what now?", "/exit"],
    );
    assert!(out.contains("checkpoint 'look' set"), "{out}");
    assert!(out.contains("collapsed 3 turns into a summary, saving ~"), "{out}");
    assert!(out.contains("snapshots:  no checkpoint, 1 restored"), "{out}");
    assert!(out.contains("of a 12697-token budget"), "{out}");
    assert!(out.contains("compacted: ") && out.contains(" saved"), "{out}");
    assert!(out.contains("error: there is no checkpoint to cancel"), "{out}");
    let reqs = server.requests();
    let last = reqs.last().unwrap();
    let recap = recap_in(last, "[snapshot: look]");
    assert!(recap.is_some_and(|r| r.starts_with("[snapshot: look]\nMANUAL RECAP")), "{}", messages(last));
    assert!(!messages(last).contains("f0 line 3"), "{}", messages(last));
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

#[test]
fn oversized_plugin_schemas_are_left_out_with_a_warning() {
    let sb = Sandbox::new();
    let bulky = support::test_plugin("bulky");
    let faulty = support::test_plugin("faulty");
    let server = start(Flavor::OpenAi, vec![tool("bulky_one", json!({})), text("done")], vec![]);
    let (b, f) = (bulky.to_string_lossy().into_owned(), faulty.to_string_lossy().into_owned());
    let run = corral(
        &sb,
        &server,
        Flavor::OpenAi,
        // Calibrated on the built-in catalogue without outline (a later built-in would shift it).
        &["--max-context-tokens", "18432", "--disable-plugin", "outline", "--plugin", &b, "--plugin", &f],
        "go",
    );
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stderr.contains("% of the 18432-token context window"), "{}", run.stderr);
    assert!(
        run.stderr.contains("left out the tools of plugin bulky (bulky_one, bulky_three, bulky_two: "),
        "the most expensive plugin goes: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("plugin faulty"), "one plugin was enough: {}", run.stderr);
    let reqs = server.requests();
    let names = tool_names(&reqs[0]);
    assert!(names.iter().any(|n| n == "ok") && names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("bulky")), "{names:?}");
    let refused = tool_results(&reqs[1]).pop().unwrap();
    assert!(
        refused.starts_with("error (not-found): the tool 'bulky_one' is not available in this session"),
        "{refused}"
    );
}

/// The realistic task at `window` tokens, on a server that enforces the window: the edit on
/// disk, tools on every agent turn, no request over the window, strict alternation, and at
/// most 1.5 model calls per agent turn. Returns the run's result line.
fn small_window_task(window: u64) -> Value {
    let sb = Sandbox::new();
    small_window::files(&sb.ws);
    let server = start(Flavor::OpenAi, small_window::script(), small_window::summaries(20));
    server.enforce_window(window);
    let w = window.to_string();
    let flags = ["--output-format", "stream-json", "--max-context-tokens", &w];
    let run = corral(&sb, &server, Flavor::OpenAi, &flags, small_window::TASK);
    let w = window;
    assert_eq!(run.code, 0, "{w}: {}", fail(&run));
    let config = std::fs::read_to_string(sb.ws.join("config.toml")).unwrap();
    assert!(
        config.contains("retries = 5") && !config.contains("retries = 1"),
        "{w}: no edit:\n{config}\n{}",
        fail(&run)
    );
    assert_eq!(server.remaining(), 0, "{w}: the whole script ran");
    let (main, summaries) = (server.requests(), server.summary_requests());
    for (i, c) in main.iter().chain(&summaries).enumerate() {
        let (p, m) = (prompt_tokens(&c.body), max_tokens(&c.body));
        assert!(p + m <= w, "{w}: request {i} asks for {p} + {m} tokens, over the window\n{}", fail(&run));
    }
    for (i, c) in main.iter().enumerate() {
        assert!(has_tools(&c.body), "{w}: agent request {i} went without tools\n{}", messages(c));
        assert_paired(c);
        if let Err(e) = small_window::render_strict(&c.body) {
            panic!("{w}: request {i} breaks strict alternation: {e}\n{}", messages(c));
        }
    }
    let calls = main.len() + summaries.len();
    assert!(
        calls as f64 <= 1.5 * small_window::TASK_TURNS as f64,
        "{w}: {calls} model calls ({} agent, {} summary) for {} turns",
        main.len(),
        summaries.len(),
        small_window::TASK_TURNS
    );
    let ev = events(&run);
    let result = ev.iter().find(|e| e["type"] == "result").cloned().expect("a result line");
    assert_eq!(result["stats"]["llm_calls"], json!(calls), "{w}: {result}");
    assert!(run.stdout.contains(small_window::ANSWER), "{w}: {}", run.stdout);
    assert_eq!(result["stats"]["tool_errors"], 0, "{w}: {result}");
    result
}

#[test]
fn the_task_finishes_at_a_4k_window_with_tools_on_every_turn() {
    let r = small_window_task(4096);
    assert!(r["stats"]["input_tokens"].as_u64().unwrap() > 0, "{r}");
}

#[test]
fn the_task_finishes_at_an_8k_window_with_tools_on_every_turn() {
    small_window_task(8192);
}

#[test]
fn the_task_finishes_at_a_16k_window_with_tools_on_every_turn() {
    small_window_task(16_384);
}

#[test]
fn a_4k_window_gets_the_short_prompt_and_compact_tools_and_reads_are_paged() {
    let sb = Sandbox::new();
    small_window::files(&sb.ws);
    let server = start(Flavor::OpenAi, small_window::script(), small_window::summaries(20));
    server.enforce_window(4096);
    let run = corral(&sb, &server, Flavor::OpenAi, &[], small_window::TASK);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stderr.contains("compact tool set"), "{}", run.stderr);
    let reqs = server.requests();
    let names = tool_names(&reqs[0]);
    assert!(
        names.contains(&"read_file".to_string()) && names.contains(&"edit_file".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"fetch_url".to_string()) && names.len() <= 9, "{names:?}");
    assert!(!system_of(&reqs[0].body).contains("## Tools"), "no catalogue beside the schemas");
    let log = &tool_results(&reqs[1])[0];
    assert!(log.len() < 3000, "the 30 KB read is cut to the window's share: {}", log.len());
    assert!(log.contains("to fit the context window; read on with offset="), "{log}");
}

#[test]
fn a_window_too_small_for_any_work_stops_at_start() {
    let sb = Sandbox::new();
    let server = start(Flavor::OpenAi, vec![text("never")], Vec::new());
    server.enforce_window(1024);
    let run = corral(&sb, &server, Flavor::OpenAi, &[], "do something");
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains("(1024 tokens) is too small to work in"), "{}", run.stderr);
    assert!(run.stderr.contains("--max-context-tokens"), "says what to do: {}", run.stderr);
    assert!(server.requests().is_empty(), "no toolless session was started");
}

#[test]
fn max_output_lines_caps_a_result_with_a_paging_hint() {
    let sb = Sandbox::new();
    files(&sb, 1, 100);
    let server = start(Flavor::OpenAi, vec![read("f0.txt"), text("done")], Vec::new());
    let run = corral(&sb, &server, Flavor::OpenAi, &["--max-output-lines", "10"], "read f0.txt");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let r = &tool_results(&server.requests()[1])[0];
    assert!(r.contains("10: f0 line 9") && !r.contains("11: f0 line 10"), "{r}");
    assert!(r.contains("offset=11"), "{r}");
}

#[test]
fn long_command_output_is_saved_with_a_pointer_scaled_to_the_window() {
    let sb = Sandbox::new();
    let big: String = (0..3000).map(|i| format!("grep hit {i}: needle in the haystack\n")).collect();
    std::fs::write(sb.ws.join("hay.txt"), &big).unwrap();
    let server =
        start(Flavor::OpenAi, vec![tool("grep", json!({"pattern": "needle"})), text("done")], Vec::new());
    server.enforce_window(8192);
    let run = corral(&sb, &server, Flavor::OpenAi, &[], "find the needles");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let r = &tool_results(&server.requests()[1])[0];
    assert!(r.len() <= 5000, "{}", r.len());
    let at = r.find(".corral/cmd_output_").expect("a pointer to the saved result");
    let path: String = r[at..].chars().take_while(|c| !c.is_whitespace() && *c != ':').collect();
    let saved = std::fs::read_to_string(sb.ws.join(&path)).unwrap();
    assert!(saved.len() > r.len() && saved.contains("needle"), "{path}: {}", saved.len());
}
