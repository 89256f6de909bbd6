//! Other MCP servers' tools inside corral: a real third-party server (the reference
//! `@modelcontextprotocol/server-everything` from npm, installed pinned by tests/tools/mcp-node.sh)
//! and a small misbehaving one (tests/tools/mcp_fault.py) driven through scripted sessions;
//! assertions on captured requests, files, the audit log, and the processes left in /proc.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use support::{Run, Sandbox};

/// The installed test servers, or `None` (with the reason printed) when Node.js is absent.
fn node_servers() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let has = |p: &str| {
            std::process::Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success())
        };
        if !has("node") || !has("npm") {
            eprintln!("SKIP: node or npm is not installed, so the npm MCP server cannot run");
            return None;
        }
        let out = std::process::Command::new(support::repo().join("tests/tools/mcp-node.sh"))
            .output()
            .expect("run tests/tools/mcp-node.sh");
        assert!(out.status.success(), "mcp-node.sh failed: {}", String::from_utf8_lossy(&out.stderr));
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

fn everything_js(dir: &Path) -> String {
    dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js").display().to_string()
}

/// The Python interpreter itself (not a version manager's shim, which reads the person's
/// home) and its installation folder, which the server's sandbox must be able to read.
fn python() -> (String, String) {
    static PY: OnceLock<(String, String)> = OnceLock::new();
    PY.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable); print(sys.base_prefix)"])
            .output()
            .expect("python3 runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        (lines.next().unwrap().to_string(), lines.next().unwrap().to_string())
    })
    .clone()
}

fn fault_py() -> String {
    support::repo().join("tests/tools/mcp_fault.py").display().to_string()
}

/// A folder in the workspace the servers write their start markers to; its path, unique to
/// this sandbox, is also in every server's command line (for the /proc scan).
fn markers(sb: &Sandbox) -> PathBuf {
    let d = sb.ws.join("markers");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The user config: the servers' folders readable in the command sandbox, plus `servers`.
fn configure(sb: &Sandbox, servers: &str) {
    let mut read = vec![support::repo().join("tests/tools").display().to_string(), python().1];
    if let Some(d) = node_servers() {
        read.push(d.display().to_string());
    }
    let text = format!("[commands]\nread_paths = {read:?}\n\n{servers}");
    std::fs::write(sb.config.join("config.toml"), text).unwrap();
}

/// `[mcp_servers.everything]`, required so its tools are in the first request.
fn everything(sb: &Sandbox, dir: &Path) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\", \"{}\"]\nrequired = true\n",
        everything_js(dir),
        markers(sb).display()
    )
}

fn fault(sb: &Sandbox, extra_args: &[&str], settings: &str) -> String {
    let mut args = vec![fault_py(), markers(sb).display().to_string()];
    args.extend(extra_args.iter().map(|s| s.to_string()));
    format!("[mcp_servers.fault]\ncommand = {:?}\nargs = {args:?}\n{settings}\n", python().0)
}

fn corral(sb: &Sandbox, server: &ModelServer, extra: &[&str], task: &str) -> Run {
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "test-model", "--no-stream"];
    args.extend(extra);
    args.push(task);
    sb.run(&args)
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
        .map(|t| t["function"]["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

/// The processes whose command line mentions `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else { continue };
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmd.contains(marker) {
            found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    found
}

/// Waits until no process mentions `marker` (a killed process needs a moment to go); fails
/// with what is left after 10 s.
fn assert_no_process_left(marker: &Path) {
    let marker = marker.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "server processes outlived corral: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn started(sb: &Sandbox) -> usize {
    std::fs::read_dir(markers(sb)).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn a_third_party_servers_tool_result_reaches_the_model() {
    let Some(dir) = node_servers() else { return };
    let sb = Sandbox::new();
    configure(&sb, &everything(&sb, &dir));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![tool("everything__echo", json!({"message": "hello from the test"})), text("done")],
    );
    let run = corral(&sb, &server, &[], "echo something");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let names = tool_names(&reqs[0]);
    assert!(names.iter().any(|n| n == "everything__echo"), "listed with the server's prefix: {names:?}");
    assert!(names.iter().any(|n| n == "read_file"), "beside corral's own tools: {names:?}");
    let echo = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "everything__echo");
    assert_eq!(echo.unwrap()["function"]["parameters"]["required"], json!(["message"]), "its schema is sent");
    let results = tool_results(&reqs[1]);
    assert_eq!(results, ["Echo: hello from the test"], "the server's answer reached the model");
    assert_no_process_left(&markers(&sb));
}

#[test]
fn a_result_over_20_kb_is_saved_to_a_file_with_a_pointer() {
    let Some(dir) = node_servers() else { return };
    let sb = Sandbox::new();
    configure(&sb, &everything(&sb, &dir));
    let long: String = (0..2600).map(|i| format!("word{i:04} ")).collect::<String>() + "THE END";
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![tool("everything__echo", json!({"message": long})), text("done")],
    );
    let run = corral(&sb, &server, &[], "echo a lot");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let result = &tool_results(&server.requests()[1])[0];
    assert!(result.len() < 4096, "only a preview stays inline: {} bytes", result.len());
    assert!(result.starts_with("Echo: word0000"), "{result}");
    let path = result.split("saved in ").nth(1).and_then(|r| r.split(':').next()).expect("a pointer");
    assert!(path.starts_with(".corral/out/mcp_output_"), "{result}");
    let saved = std::fs::read_to_string(sb.ws.join(path)).unwrap();
    assert_eq!(saved, format!("Echo: {long}"), "the whole result is in the file");
}

#[test]
fn a_hung_call_times_out_and_the_run_continues() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &[], "required = true\ntool_timeout_sec = 1"));
    let server = ModelServer::start(Flavor::OpenAi, vec![tool("fault__hang", json!({})), text("carried on")]);
    let run = corral(&sb, &server, &[], "call the hanging tool");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stdout.contains("carried on"));
    let result = &tool_results(&server.requests()[1])[0];
    assert!(
        result
            .contains("error (timeout): MCP server fault did not answer hang within 1 s (tool_timeout_sec)"),
        "{result}"
    );
    assert_no_process_left(&markers(&sb));
}

#[test]
fn a_crashed_server_is_an_error_its_tools_go_and_the_session_goes_on() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &[], "required = true"));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            tool("fault__crash", json!({})),
            tool("read_file", json!({"file_path": "hello.txt"})),
            text("ok"),
        ],
    );
    let run = corral(&sb, &server, &[], "crash it");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let result = &tool_results(&reqs[1])[0];
    assert!(result.starts_with("error (mcp): MCP server fault failed on crash"), "{result}");
    assert!(result.contains("going down"), "its stderr is quoted: {result}");
    assert!(!result.contains('\u{1b}'), "terminal escapes are removed from its text: {result:?}");
    assert!(tool_names(&reqs[1]).iter().all(|n| !n.starts_with("fault__")), "a dead server's tools go");
    assert!(
        run.stderr.contains("MCP server fault failed: the server stopped"),
        "the person is told: {}",
        run.stderr
    );
    assert!(tool_results(&reqs[2])[1].contains("hello"), "the session went on: {:?}", tool_results(&reqs[2]));
}

#[test]
fn a_flooding_server_yields_an_error_result() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &[], "required = true\ntool_timeout_sec = 5"));
    let server =
        ModelServer::start(Flavor::OpenAi, vec![tool("fault__flood", json!({})), text("still here")]);
    let run = corral(&sb, &server, &[], "flood");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let result = &tool_results(&server.requests()[1])[0];
    assert!(result.starts_with("error ("), "{result}");
    assert!(result.len() < 2000, "none of the flood reaches the model: {} bytes", result.len());
    assert_no_process_left(&markers(&sb));
}

#[test]
fn a_server_over_the_schema_budget_is_left_out() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &["--bulky", "1500"], "required = true"));
    let server = ModelServer::start(Flavor::OpenAi, vec![text("done")]);
    let run = corral(&sb, &server, &["--max-context-tokens", "18432"], "go");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(
        run.stderr.contains(
            "left out the tools of MCP server fault (fault__ok, fault__hang, fault__crash, fault__flood"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("mcp_servers.fault.enabled_tools"),
        "says how to get them back: {}",
        run.stderr
    );
    let names = tool_names(&server.requests()[0]);
    assert!(
        names.iter().all(|n| !n.starts_with("fault__")) && names.iter().any(|n| n == "read_file"),
        "{names:?}"
    );
}

#[test]
fn a_server_still_starting_does_not_delay_the_first_request() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &["--no-answer"], "startup_timeout_sec = 600"));
    let server = ModelServer::start(Flavor::OpenAi, vec![text("answered without it")]);
    let run = corral(&sb, &server, &[], "go");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stdout.contains("answered without it"));
    assert!(tool_names(&server.requests()[0]).iter().all(|n| !n.starts_with("fault__")));
    assert_no_process_left(&markers(&sb));
}

#[test]
fn a_required_server_that_cannot_start_stops_the_run_with_a_clear_error() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &["--no-answer"], "required = true\nstartup_timeout_sec = 1"));
    let server = ModelServer::start(Flavor::OpenAi, vec![text("never")]);
    let run = corral(&sb, &server, &[], "go");
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(
        run.stderr.contains(
            "MCP server fault is required (required = true) but did not start: it did not finish \
             starting within 1 s (startup_timeout_sec)"
        ),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty(), "no model call without it");
    assert_no_process_left(&markers(&sb));
}

/// Starts corral with the everything server and a model that never answers, waits for the
/// first request, then sends `signal`.
fn killed_with(signal: &str) {
    let Some(dir) = node_servers() else { return };
    let sb = Sandbox::new();
    configure(&sb, &everything(&sb, &dir));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![Step::Delay(Duration::from_secs(60), Box::new(text("late")))],
    );
    let url = server.url();
    let mut child = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "--no-stream", "wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    server.wait_for_requests(1);
    let marker = markers(&sb).display().to_string();
    assert!(!processes_with(&marker).is_empty(), "the server runs while corral waits");
    let status = std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    child.wait().unwrap();
    assert_no_process_left(&markers(&sb));
}

#[test]
fn no_server_process_outlives_corral_interrupted() {
    killed_with("-INT");
}

#[test]
fn no_server_process_outlives_corral_killed() {
    killed_with("-KILL");
}

#[test]
fn an_untrusted_projects_server_is_ignored_and_never_started() {
    let sb = Sandbox::new();
    configure(&sb, "");
    std::fs::write(sb.ws.join("corral.toml"), fault(&sb, &[], "required = true")).unwrap();
    let server = ModelServer::start(Flavor::OpenAi, vec![text("done")]);
    let run = corral(&sb, &server, &[], "go");
    assert_eq!(run.code, 0, "{}", fail(&run));
    let notice: Vec<&str> = run.stderr.lines().filter(|l| l.contains("mcp_servers.fault")).collect();
    assert_eq!(notice.len(), 1, "one line says so: {}", run.stderr);
    assert!(notice[0].contains("not trusted") && notice[0].contains("corral trust"), "{}", notice[0]);
    assert_eq!(started(&sb), 0, "the server never ran");
    assert!(tool_names(&server.requests()[0]).iter().all(|n| !n.starts_with("fault__")));
    sb.trust();
    let server = ModelServer::start(Flavor::OpenAi, vec![tool("fault__ok", json!({})), text("done")]);
    let run = corral(&sb, &server, &[], "go");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(tool_results(&server.requests()[1]), ["fault server ok"], "trusted, it runs");
}

#[test]
fn ci_audits_each_call_with_the_servers_identity_and_a_policy_refuses_unpinned_servers() {
    let sb = Sandbox::new();
    configure(&sb, &fault(&sb, &[], "required = true"));
    let server = ModelServer::start(Flavor::OpenAi, vec![tool("fault__ok", json!({})), text("done")]);
    let url = server.url();
    let run = sb.run(&["exec", "--base-url", &url, "--model", "m", "--no-stream", "go"]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let log = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).unwrap();
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let get = sb.run(&["mcp", "get", "fault", "--json"]).ok();
    let pin: Value = serde_json::from_str(&get.stdout).unwrap();
    let sha = pin["pin"]["command_sha256"].as_str().unwrap().to_string();
    let identity = format!("command sha256:{sha}");
    assert_eq!(lines[0]["mcp_servers"], json!([{"name": "fault", "identity": identity}]));
    let call = lines.iter().find(|l| l["type"] == "tool_call").expect("a tool_call line");
    assert_eq!(call["tool"], "fault__ok");
    assert_eq!(call["mcp_server"], json!({"name": "fault", "identity": identity}));

    let policy = sb.tmp.path().join("policy.toml");
    let mut read: Vec<String> = vec![support::repo().join("tests/tools").display().to_string(), python().1];
    read.extend(node_servers().map(|d| d.display().to_string()));
    let bounds = format!("[bounds]\ncommand_read_paths = {read:?}\n");
    std::fs::write(&policy, format!("network = \"llm-only\"\n{bounds}")).unwrap();
    let p = policy.display().to_string();
    let server = ModelServer::start(Flavor::OpenAi, vec![text("never")]);
    let url = server.url();
    let run = sb.run(&["exec", "--base-url", &url, "--model", "m", "--policy", &p, "go"]);
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains("refused by the policy pin rule: MCP server fault"), "{}", run.stderr);
    assert!(run.stderr.contains("[mcp_servers.fault]"), "says how to pin it: {}", run.stderr);
    let pinned = format!("network = \"llm-only\"\n[mcp_servers.fault]\ncommand_sha256 = \"{sha}\"\n{bounds}");
    std::fs::write(&policy, pinned).unwrap();
    let server = ModelServer::start(Flavor::OpenAi, vec![tool("fault__ok", json!({})), text("done")]);
    let url = server.url();
    let run = sb.run(&["exec", "--base-url", &url, "--model", "m", "--policy", &p, "go"]);
    assert_eq!(run.code, 0, "pinned as it is, it runs: {}", fail(&run));
    assert_eq!(tool_results(&server.requests()[1]), ["fault server ok"]);
}

#[test]
fn mcp_add_list_get_remove_round_trip_keeps_the_file() {
    let sb = Sandbox::new();
    let file = sb.config.join("config.toml");
    let original = "# my settings\n[model]\nname = \"m\" # keep this comment\n";
    std::fs::write(&file, original).unwrap();
    let run = sb.run(&["mcp", "add", "docs", "--env", "TOKEN=abc", "--", "node", "server.js", "--flag"]).ok();
    assert!(run.stdout.contains("added MCP server docs"), "{}", run.stdout);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(original), "the rest of the file is kept: {text}");
    assert!(
        text.contains("[mcp_servers.docs]\ncommand = \"node\"\nargs = [\"server.js\", \"--flag\"]"),
        "{text}"
    );
    sb.run(&["mcp", "add", "web", "--url", "https://mcp.example.com/mcp"]).ok();
    let list = sb.run(&["mcp", "list"]).ok().stdout;
    assert!(list.contains("docs") && list.contains("stdio: node server.js --flag"), "{list}");
    assert!(list.contains("web") && list.contains("http: https://mcp.example.com/mcp"), "{list}");
    let get = sb.run(&["mcp", "get", "web"]).ok().stdout;
    assert!(get.contains("policy pin: [mcp_servers.web] url = \"https://mcp.example.com/mcp\""), "{get}");
    let again = sb.run(&["mcp", "add", "docs", "--", "other"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already configured; `corral mcp remove docs` first"), "{}", again.stderr);
    sb.run(&["mcp", "remove", "docs"]).ok();
    sb.run(&["mcp", "remove", "web"]).ok();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "back to the file as it was");
    let gone = sb.run(&["mcp", "remove", "docs"]);
    assert!(gone.code == 2 && gone.stderr.contains("no MCP server named docs"), "{}", gone.stderr);
}

/// A process started by the test, killed when the test ends.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_http_server_is_reached_only_when_the_person_allows_its_address() {
    let sb = Sandbox::new();
    let m = markers(&sb);
    let _http = Background(
        std::process::Command::new(python().0).arg(fault_py()).arg(&m).arg("--http").spawn().unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        if let Ok(p) = std::fs::read_to_string(m.join("port")) {
            break p;
        }
        assert!(Instant::now() < deadline, "the HTTP test server did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let table = format!(
        "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nbearer_token_env_var = \"WEB_TOKEN\"\nrequired = true\n"
    );
    configure(&sb, &table);
    let server = ModelServer::start(Flavor::OpenAi, vec![text("never")]);
    let url = server.url();
    let args = ["--base-url", url.as_str(), "--model", "m", "--no-stream", "go"];
    let token = [("WEB_TOKEN", "sekrit-token-123")];
    let run = sb.run_with_env(&args, &token);
    assert_eq!(run.code, 1, "{}", fail(&run));
    assert!(run.stderr.contains("127.0.0.1 is in"), "the SSRF rule refuses loopback: {}", run.stderr);
    assert!(run.stderr.contains("network.allow_private"), "says how the person allows it: {}", run.stderr);
    assert!(!m.join("auth").exists(), "nothing was sent to it");

    configure(&sb, &format!("[network]\nallow_private = [\"127.0.0.1:{port}\"]\n\n{table}"));
    let server = ModelServer::start(Flavor::OpenAi, vec![tool("web__ok", json!({})), text("done")]);
    let url = server.url();
    let args = ["--base-url", url.as_str(), "--model", "m", "--no-stream", "go"];
    let run = sb.run_with_env(&args, &token);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["fault server ok (sse)"],
        "the answer came as a server-sent event"
    );
    let auth = std::fs::read_to_string(m.join("auth")).unwrap();
    assert!(auth.lines().count() >= 3, "initialize, initialized, tools/list, the call: {auth}");
    assert!(auth.lines().all(|l| l == "Bearer sekrit-token-123"), "the token from the variable: {auth}");
}

#[test]
fn slash_mcp_shows_each_servers_state_and_tools() {
    let sb = Sandbox::new();
    let servers = fault(&sb, &[], "required = true\ndisabled_tools = [\"hang\"]")
        + "[mcp_servers.off]\ncommand = \"nothing\"\nenabled = false\n";
    configure(&sb, &servers);
    let server = ModelServer::start(Flavor::OpenAi, vec![]);
    let shown = sb.repl(&server.url(), &[], &["/mcp", "/exit"]);
    assert!(shown.contains("fault: ready (4 tools) [command sha256:"), "{shown}");
    assert!(!shown.contains("fault__hang"), "disabled_tools are not offered: {shown}");
    assert!(shown.contains("  fault__ok") && shown.contains("  fault__big"), "its tools are listed: {shown}");
    assert!(shown.contains("off: disabled (enabled = false)"), "{shown}");
}
