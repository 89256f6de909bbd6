//! `corral mcp serve` driven by the official MCP Python SDK over stdio and HTTP: the tools an
//! agent run has, with its checks; faults, bad tokens, malformed input and signals handled.

use crate::support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use support::Sandbox;

fn python() -> Option<PathBuf> {
    support::mcp::python()
}

/// A plan for the client that starts `corral mcp serve` over stdio with `flags`.
fn stdio_plan(sb: &Sandbox, flags: &[&str], steps: Value) -> Value {
    let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    args.extend(["mcp".into(), "serve".into()]);
    json!({
        "transport": "stdio",
        "command": env!("CARGO_BIN_EXE_corral"),
        "args": args,
        "env": {
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "HOME": sb.tmp.path().join("home"),
            "CORRAL_CONFIG_DIR": sb.config,
            "CORRAL_CACHE_DIR": Sandbox::cache_dir(),
        },
        "cwd": sb.ws,
        "steps": steps,
    })
}

fn run(py: &Path, plan: &Value) -> Value {
    support::mcp::client(py, plan)
}

fn tool<'a>(tools: &'a Value, name: &str) -> Option<&'a Value> {
    tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == name)
}

/// The text of a tool result, and whether it is an error.
fn text(result: &Value) -> (String, bool) {
    let t = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}"));
    (t.to_string(), result["isError"] == true)
}

/// The first line of the error `corral tool` prints for the same call.
fn cli_error(sb: &Sandbox, flags: &[&str], name: &str, args: &Value) -> String {
    let r = sb.tool(flags, name, args).tool_err();
    r.stderr.lines().find(|l| l.starts_with("error (")).unwrap().to_string()
}

#[test]
fn stdio_lists_the_tools_with_their_annotations_and_schemas() {
    let Some(py) = python() else { return };
    let sb = Sandbox::new();
    // With the network on, the web tools load too.
    let flags = ["--network", "on"];
    let out = run(&py, &stdio_plan(&sb, &flags, json!([{"op": "list"}])));
    assert_eq!(out["protocol"], "2025-11-25");
    assert_eq!(out["server"], "corral");
    let tools = &out["results"][0];
    let want = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
    let read = tool(tools, "read_file").expect("read_file is served");
    assert_eq!(read["annotations"], want);
    assert_eq!(read["inputSchema"]["type"], "object");
    assert!(read["inputSchema"]["properties"]["file_path"].is_object(), "{read}");
    assert!(read["description"].as_str().unwrap().len() > 20);
    let write = tool(tools, "write_file").expect("write_file is served");
    assert_eq!(write["annotations"]["readOnlyHint"], false);
    assert_eq!(write["annotations"]["destructiveHint"], true);
    assert_eq!(write["annotations"]["openWorldHint"], false);
    let web = tool(tools, "fetch_url").expect("fetch_url is served");
    assert_eq!(web["annotations"]["readOnlyHint"], false, "the network is never read-only");
    assert_eq!(web["annotations"]["openWorldHint"], true);
    for name in ["grep", "list_files", "edit_file", "delete_file", "todo"] {
        assert!(tool(tools, name).is_some(), "{name} is missing");
    }
    for name in ["question", "snapshot"] {
        assert!(tool(tools, name).is_none(), "{name} must not be served");
    }
    // use_skill carries the skill catalogue an agent run puts in its system prompt.
    let skill = tool(tools, "use_skill").expect("use_skill is served");
    let d = skill["description"].as_str().unwrap();
    assert!(d.contains("\n\nThe skills:\n- ") && d.contains("\n- markdown-docs: "), "{d}");
    assert_eq!(skill["annotations"], want);
    // The same catalogue as `corral tools`, less what is never served.
    let listed: Vec<Value> =
        serde_json::from_str(&sb.run(&["--network", "on", "tools", "--json"]).ok().stdout).unwrap();
    let mut want: Vec<&str> = listed
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .filter(|n| !["question", "snapshot"].contains(n))
        .collect();
    want.sort();
    let got: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(got, want);
}

#[test]
fn stdio_calls_run_with_the_checks_of_an_agent_run() {
    let Some(py) = python() else { return };
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".git/hooks")).unwrap();
    let before = sb.outside_state();
    let outside = json!({"file_path": "../outside/secret.txt"});
    let hook = json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\necho pwned\n"});
    let steps = json!([
        {"op": "call", "name": "write_file", "args": {"file_path": "made/by_mcp.txt", "content": "from mcp\n"}},
        {"op": "call", "name": "read_file", "args": {"file_path": "made/by_mcp.txt"}},
        {"op": "call", "name": "read_file", "args": outside},
        {"op": "call", "name": "write_file", "args": hook},
        // The read guard: hello.txt was not read in this session yet.
        {"op": "call", "name": "write_file", "args": {"file_path": "hello.txt", "content": "changed\n"}},
        {"op": "call", "name": "read_file", "args": {"file_path": "hello.txt"}},
        {"op": "call", "name": "write_file", "args": {"file_path": "hello.txt", "content": "changed\n"}},
        // The argument schema is checked before any plugin runs.
        {"op": "call", "name": "read_file", "args": {"file_path": 7}},
        {"op": "call", "name": "question", "args": {"question": "ok?"}},
    ]);
    let mut plan = stdio_plan(&sb, &[], steps);
    plan["protocol"] = json!("2025-06-18");
    let out = run(&py, &plan);
    assert_eq!(out["protocol"], "2025-06-18");
    let r = out["results"].as_array().unwrap();
    assert_eq!(std::fs::read_to_string(sb.ws.join("made/by_mcp.txt")).unwrap(), "from mcp\n");
    let (t, err) = text(&r[0]);
    assert!(!err, "{t}");
    let (t, err) = text(&r[1]);
    assert!(!err && t.contains("from mcp"), "{t}");
    // Refusals carry the very text an agent run gets.
    let (t, err) = text(&r[2]);
    assert!(err && t.contains("outside the workspace"), "{t}");
    assert_eq!(t.lines().next().unwrap(), cli_error(&sb, &[], "read_file", &outside));
    let (t, err) = text(&r[3]);
    assert!(err, "{t}");
    assert_eq!(t.lines().next().unwrap(), cli_error(&sb, &[], "write_file", &hook));
    assert!(!sb.ws.join(".git/hooks/pre-commit").exists());
    let (t, err) = text(&r[4]);
    assert!(err && t.contains("read"), "the read guard: {t}");
    assert!(!text(&r[5]).1 && !text(&r[6]).1, "{} / {}", r[5], r[6]);
    assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "changed\n");
    let (t, err) = text(&r[7]);
    assert!(err && t.starts_with("error (invalid-args)") && t.contains("schema"), "{t}");
    let e = &r[8]["rpc_error"];
    assert_eq!(e["code"], -32602, "{}", r[8]);
    assert!(e["message"].as_str().unwrap().contains("not served over MCP"), "{e}");
    assert_eq!(sb.outside_state(), before, "the disk outside the workspace changed");
}

#[test]
fn an_untrusted_projects_plugins_are_not_served() {
    let Some(py) = python() else { return };
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".corral/plugins")).unwrap();
    std::fs::copy(support::test_plugin("faulty"), sb.ws.join(".corral/plugins/evil.wasm")).unwrap();
    let steps = json!([{"op": "list"}, {"op": "call", "name": "ok", "args": {}}]);
    let out = run(&py, &stdio_plan(&sb, &[], steps.clone()));
    assert!(tool(&out["results"][0], "ok").is_none(), "an untrusted plugin's tool was served");
    assert_eq!(out["results"][1]["rpc_error"]["code"], -32602);
    // Once the person trusts the workspace, the same plugin is served.
    sb.trust();
    let out = run(&py, &stdio_plan(&sb, &[], steps));
    assert!(tool(&out["results"][0], "ok").is_some());
    assert_eq!(text(&out["results"][1]), ("fine".to_string(), false));
}

#[test]
fn faults_become_error_results_and_the_server_keeps_serving() {
    let Some(py) = python() else { return };
    let sb = Sandbox::new();
    let faulty = support::test_plugin("faulty");
    let flags = ["--plugin", faulty.to_str().unwrap(), "--timeout", "2", "--max-output-kb", "8"];
    let steps = json!([
        {"op": "call", "name": "panic"},
        {"op": "call", "name": "ok"},
        {"op": "call", "name": "spin"},
        {"op": "call", "name": "ok"},
        {"op": "call", "name": "flood"},
        {"op": "call", "name": "huge", "args": {"mb": 1}},
        {"op": "call", "name": "ok"},
        {"op": "parallel", "calls": [
            {"name": "ok"},
            {"name": "read_file", "args": {"file_path": "hello.txt"}},
            {"name": "write_file", "args": {"file_path": "p1.txt", "content": "1"}},
            {"name": "write_file", "args": {"file_path": "p2.txt", "content": "2"}},
            {"name": "ok"},
        ]},
    ]);
    let out = run(&py, &stdio_plan(&sb, &flags, steps));
    let r = out["results"].as_array().unwrap();
    let (t, err) = text(&r[0]);
    assert!(err && t.starts_with("error (crashed)") && t.contains("deliberate panic"), "{t}");
    assert_eq!(text(&r[1]), ("fine".to_string(), false));
    let (t, err) = text(&r[2]);
    assert!(err && t.starts_with("error (timeout)"), "{t}");
    assert_eq!(text(&r[3]), ("fine".to_string(), false));
    // The plugin's 20 MiB of stdout never reach the client (within 2 s on a loaded machine,
    // the flood may also end at the time limit).
    let (t, _) = text(&r[4]);
    assert!(t == "flooded 20 MiB" || t.starts_with("error (timeout)"), "{}", &t[..t.len().min(300)]);
    // A result over --max-output-kb is cut, and the whole of it kept under .corral/.
    let (t, err) = text(&r[5]);
    assert!(!err && t.len() < 16 * 1024, "{} bytes", t.len());
    assert!(t.contains(".corral/"), "no pointer to the saved result: {}", &t[t.len().saturating_sub(300)..]);
    assert_eq!(text(&r[6]), ("fine".to_string(), false));
    let par = r[7].as_array().unwrap();
    assert_eq!(par.len(), 5);
    for p in par {
        assert!(!text(p).1, "{p}");
    }
    assert!(text(&par[1]).0.contains("hello"));
    assert_eq!(std::fs::read_to_string(sb.ws.join("p1.txt")).unwrap(), "1");
    assert_eq!(std::fs::read_to_string(sb.ws.join("p2.txt")).unwrap(), "2");
}

#[test]
fn serve_refuses_other_addresses_and_weak_tokens() {
    let sb = Sandbox::new();
    for addr in ["0.0.0.0:0", "[::]:8765", "192.0.2.1:80"] {
        let r = sb.run(&["mcp", "serve", "--http", addr]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("refusing to listen on") && r.stderr.contains("loopback address only"),
            "{}",
            r.stderr
        );
    }
    let r = sb.run(&["mcp", "serve", "--http", "127.0.0.1:0", "--token-env", "NO_SUCH_TOKEN_VAR"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("NO_SUCH_TOKEN_VAR") && r.stderr.contains("not set"), "{}", r.stderr);
    let r =
        sb.run_with_env(&["mcp", "serve", "--http", "127.0.0.1:0", "--token-env", "T"], &[("T", "short")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("at least 16"), "{}", r.stderr);
}

/// A running `corral mcp serve --http`: the child and its URL.
struct HttpServer {
    child: Child,
    url: String,
    stderr: BufReader<std::process::ChildStderr>,
}

impl HttpServer {
    fn start(sb: &Sandbox, flags: &[&str], token: &str) -> HttpServer {
        let mut child = sb
            .cmd()
            .args(flags)
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--token-env", "MCP_TOKEN"])
            .env("MCP_TOKEN", token)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let url = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended before listening:\n{seen}");
            seen.push_str(&line);
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        HttpServer { child, url, stderr }
    }

    /// Sends one raw HTTP request and returns the status line and the body.
    fn raw(&self, headers: &[(&str, &str)], body: &str) -> (String, String) {
        let rest = self.url.strip_prefix("http://").unwrap();
        let (authority, path) = rest.split_at(rest.find('/').unwrap());
        let mut s = std::net::TcpStream::connect(authority).unwrap();
        let host = headers.iter().find(|(k, _)| *k == "Host").map_or(authority, |(_, v)| *v);
        let mut req = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (k, v) in headers.iter().filter(|(k, _)| *k != "Host") {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.write_all(req.as_bytes()).unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let status = resp.lines().next().unwrap_or_default().to_string();
        let body = resp.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
        (status, body)
    }

    /// Sends SIGTERM and returns the exit code and the rest of stderr.
    fn stop(mut self) -> (i32, String) {
        signal(self.child.id(), libc::SIGTERM);
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        (code, rest)
    }
}

fn signal(pid: u32, sig: i32) {
    let ok = Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().unwrap();
    assert!(ok.success());
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

#[test]
fn http_serves_the_same_tools_behind_the_token() {
    let Some(py) = python() else { return };
    let sb = Sandbox::new();
    let token = "a-test-token-of-32-characters-ok";
    let server = HttpServer::start(&sb, &[], token);
    assert!(server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"), "{}", server.url);
    let steps = json!([
        {"op": "list"},
        {"op": "call", "name": "write_file", "args": {"file_path": "via_http.txt", "content": "over http\n"}},
        {"op": "call", "name": "read_file", "args": {"file_path": "../outside/secret.txt"}},
    ]);
    let plan = json!({"transport": "http", "url": server.url, "token": token, "steps": steps});
    let out = run(&py, &plan);
    assert_eq!(out["protocol"], "2025-11-25");
    let read = tool(&out["results"][0], "read_file").unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert!(!text(&out["results"][1]).1);
    assert_eq!(std::fs::read_to_string(sb.ws.join("via_http.txt")).unwrap(), "over http\n");
    let (t, err) = text(&out["results"][2]);
    assert!(err && t.contains("outside the workspace"), "{t}");

    // Without the token, or with another, nothing is served.
    let auth = format!("Bearer {token}");
    for headers in [
        vec![],
        vec![("Authorization", "Bearer wrong-token-of-32-characters-ok")],
        vec![("Authorization", token)],
    ] {
        let (status, body) = server.raw(&headers, INIT);
        assert!(status.contains(" 401 "), "{headers:?}: {status}");
        assert!(body.contains("Authorization: Bearer"), "{body}");
    }
    // A web page's request (another Origin) is refused even with the token (DNS rebinding).
    let (status, _) = server.raw(&[("Authorization", &auth), ("Origin", "http://evil.example")], INIT);
    assert!(status.contains(" 403 "), "{status}");
    let (status, _) = server.raw(&[("Authorization", &auth), ("Host", "evil.example")], INIT);
    assert!(status.contains(" 403 "), "a rebound name must not pass: {status}");
    let (status, body) = server.raw(&[("Authorization", &auth)], INIT);
    assert!(status.contains(" 200 "), "{status}: {body}");
    assert!(body.contains("\"serverInfo\"") && body.contains("corral"), "{body}");
    let (code, rest) = server.stop();
    assert_eq!(code, 0, "{rest}");
}

/// A raw stdio session: the child with its pipes.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Raw {
    /// Starts the server and opens the session with `initialize` (revision 2025-06-18).
    fn start(sb: &Sandbox, flags: &[&str]) -> Raw {
        let mut raw = Raw::spawn(sb, flags);
        raw.send(INIT);
        let init = raw.recv();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn spawn(sb: &Sandbox, flags: &[&str]) -> Raw {
        let mut child = sb
            .cmd()
            .args(flags)
            .args(["mcp", "serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Raw { child, stdin, stdout }
    }

    fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{line}").unwrap();
        w.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_eof_ends_the_server_with_0() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb, &[]);
    // A line that is not JSON gets a parse error (its id cannot be known).
    raw.send("{this is not json");
    let e = raw.recv();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert!(e["id"].is_null(), "{e}");
    // Well-formed JSON of the wrong shape is answered with an error and serving goes on.
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"}"#);
    let e = raw.recv();
    assert!(e["error"]["code"].is_i64(), "{e}");
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}"#);
    let e = raw.recv();
    assert_eq!(e["id"], 3);
    assert_eq!(e["error"]["code"], -32601, "{e}");
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"hello.txt"}}}"#);
    let ok = raw.recv();
    assert_eq!(ok["id"], 4);
    assert!(ok["result"]["content"][0]["text"].as_str().unwrap().contains("hello"), "{ok}");
    drop(raw.stdin.take());
    let status = raw.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// The process group of `pid`, from /proc.
fn pgid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split_whitespace().nth(2)?.parse().ok()
}

/// The live (not zombie) processes in process group `group`.
fn live_in_group(group: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(close) = stat.rfind(')') else { continue };
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(group) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

#[test]
fn sigterm_ends_the_server_and_the_commands_it_started() {
    let sb = Sandbox::new();
    let flags = ["--yolo", "--timeout", "600"];
    let mut raw = Raw::start(&sb, &flags);
    let cmd = "echo $$ > started.pid; exec sleep 600";
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"run_command","arguments":{{"command":"{cmd}","timeout":120}}}}}}"#
    ));
    // Wait for the command to start (the file it writes), then stop the server.
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        if let Some(pid) =
            std::fs::read_to_string(sb.ws.join("started.pid")).ok().and_then(|s| s.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let group = pgid(pid).expect("the command runs");
    assert_ne!(group, pgid(raw.child.id()).unwrap(), "commands run in their own process group");
    signal(raw.child.id(), libc::SIGTERM);
    let status = raw.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // Killed with the server: nothing of the command's group is left running.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !live_in_group(group).is_empty() {
        assert!(Instant::now() < deadline, "left behind: {:?}", live_in_group(group));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_stateless_revision_is_served_without_a_handshake() {
    let sb = Sandbox::new();
    let mut raw = Raw::spawn(&sb, &[]);
    let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}"#;
    raw.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#));
    let list = raw.recv();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"read_file") && !names.contains(&"question"), "{list}");
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"read_file","arguments":{{"file_path":"hello.txt"}},"_meta":{meta}}}}}"#
    ));
    let call = raw.recv();
    assert_eq!(call["id"], 2);
    assert!(call["result"]["content"][0]["text"].as_str().unwrap().contains("world"), "{call}");
    drop(raw.stdin.take());
    assert_eq!(raw.child.wait().unwrap().code(), Some(0));
}

#[test]
fn the_audit_log_records_every_served_call() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb, &["--audit-log", "audit.jsonl"]);
    for (id, args) in [(2, r#"{"file_path":"hello.txt"}"#), (3, r#"{"file_path":"../outside/secret.txt"}"#)] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_file","arguments":{args}}}}}"#
        ));
        assert_eq!(raw.recv()["id"], id);
    }
    drop(raw.stdin.take());
    assert_eq!(raw.child.wait().unwrap().code(), Some(0));
    let text = std::fs::read_to_string(sb.ws.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0]["type"], "session_start");
    assert_eq!(lines[0]["mode"], "mcp serve");
    assert_eq!(lines[0]["transport"], "stdio");
    let plugin = lines[0]["plugins"].as_array().unwrap().iter().find(|p| p["name"] == "read_file").unwrap();
    for (line, outcome) in [(&lines[1], "ok"), (&lines[2], "error")] {
        assert_eq!(line["type"], "tool_call");
        assert_eq!(line["tool"], "read_file");
        assert_eq!(line["plugin_sha256"], plugin["sha256"]);
        assert_eq!(line["outcome"], outcome, "{line}");
        assert_eq!(line["args_sha256"].as_str().unwrap().len(), 64);
    }
    assert_eq!(lines[3]["type"], "session_end");
}

#[test]
fn a_policy_file_decides_what_is_served() {
    let sb = Sandbox::new();
    let plugins: Value = serde_json::from_str(&sb.run(&["plugins", "--json"]).ok().stdout).unwrap();
    let sha =
        plugins.as_array().unwrap().iter().find(|p| p["name"] == "read_file").unwrap()["sha256"].clone();
    let policy = sb.tmp.path().join("policy.toml");
    std::fs::write(&policy, format!("[plugins.read_file]\nsha256 = {sha}\n")).unwrap();
    let mut raw = Raw::start(&sb, &["--policy", policy.to_str().unwrap()]);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let list = raw.recv();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_file", "view_image"], "only the pinned plugin (its two tools) is served");
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"file_path":"x.txt","content":"x"}}}"#);
    let refused = raw.recv();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(!sb.ws.join("x.txt").exists());
    drop(raw.stdin.take());
    assert_eq!(raw.child.wait().unwrap().code(), Some(0));
}
