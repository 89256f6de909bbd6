//! Running commands through the real binary: `run_command` and the host's `process`
//! interface. The allowlist and where programs may live, shell syntax with and without
//! --yolo, timeouts that kill grandchildren, long output saved and cleaned up, the
//! environment, the working directory, and asking the person (--commands ask).

use crate::support;

use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};
use support::Sandbox;
use support::script;
use support::stops::{assert_stops, held, holder, signal};

fn run(sb: &Sandbox, flags: &[&str], args: serde_json::Value) -> support::Run {
    sb.tool(flags, "run_command", &args)
}

#[test]
fn run_command_is_absent_until_commands_are_enabled() {
    let sb = Sandbox::new();
    let tools = sb.run(&["tools"]).ok().stdout;
    assert!(!tools.contains("run_command"), "{tools}");
    let plugins = sb.run(&["plugins"]).ok().stdout;
    assert!(
        plugins.contains("not loaded:\n  run_command (built-in, sha256 ")
            && plugins.contains("it runs commands: enable them with --allowed-commands LIST"),
        "{plugins}"
    );
    let tools = sb.run(&["--allowed-commands", "echo", "tools"]).ok().stdout;
    assert!(tools.contains("run_command"), "{tools}");
    let tools = sb.run(&["--allowed-commands", "echo", "--commands", "off", "tools"]).ok().stdout;
    assert!(!tools.contains("run_command"), "--commands off wins: {tools}");
}

#[test]
fn only_allowed_programs_run() {
    let sb = Sandbox::new();
    let r = run(&sb, &["--allowed-commands", "echo,ls"], json!({"command": ["echo", "hello", "a b"]})).ok();
    assert_eq!(r.stdout, "hello a b\n");
    let r = run(&sb, &["--allowed-commands", "echo,ls"], json!({"command": ["cat", "hello.txt"]})).tool_err();
    assert!(
        r.stderr.contains("error (permission-denied): 'cat' is not an allowed command (allowed: echo, ls); the user can add it with --allowed-commands"),
        "{}",
        r.stderr
    );
    // A path is accepted only when it is the very program the allowlist resolved.
    let echo = which("echo");
    let r = run(&sb, &["--allowed-commands", "echo"], json!({"command": [echo.to_str().unwrap(), "x"]})).ok();
    assert_eq!(r.stdout, "x\n");
    let r = run(&sb, &["--allowed-commands", "echo"], json!({"command": ["/bin/sh", "-c", "id"]})).tool_err();
    assert!(r.stderr.contains("'/bin/sh' is not an allowed command"), "{}", r.stderr);
    // A plain string without shell syntax is split into words.
    let r = run(&sb, &["--allowed-commands", "echo"], json!({"command": "echo 'one two'  three"})).ok();
    assert_eq!(r.stdout, "one two three\n");
    // A non-zero exit is reported, not hidden.
    let r = run(&sb, &["--allowed-commands", "ls"], json!({"command": ["ls", "no-such-file"]})).ok();
    assert!(r.stdout.starts_with("Exit code: 2\n[stderr]\nls: cannot access 'no-such-file'"), "{}", r.stdout);
}

fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file()).expect("on PATH")
}

#[test]
fn a_program_inside_the_workspace_is_refused_at_start_up() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join("bin")).unwrap();
    script(&sb.ws.join("bin/mytool"), "echo rewritten by the model");
    let path = format!("{}:{}", sb.ws.join("bin").display(), std::env::var("PATH").unwrap());
    let out = sb.cmd().env("PATH", &path).args(["--allowed-commands", "mytool", "tools"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "error: allowed command 'mytool' resolves to {}, inside {}: tools can change files there, so the \
             model could rewrite the program and then run it. Install it outside the workspace, or remove it \
             from commands.allowed (--allowed-commands)",
            sb.ws.join("bin/mytool").display(),
            sb.ws.display()
        )
    );
    // A link from outside into the workspace is refused the same way.
    let outside_bin = sb.outside.join("bin");
    std::fs::create_dir_all(&outside_bin).unwrap();
    std::os::unix::fs::symlink(sb.ws.join("bin/mytool"), outside_bin.join("mytool")).unwrap();
    let path = format!("{}:{}", outside_bin.display(), std::env::var("PATH").unwrap());
    let out = sb.cmd().env("PATH", &path).args(["--allowed-commands", "mytool", "tools"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("inside"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A name that is not on PATH is a start-up error too.
    let r = sb.run(&["--allowed-commands", "no-such-program-xyz", "tools"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("allowed command 'no-such-program-xyz' was not found on PATH"), "{}", r.stderr);
}

#[test]
fn shell_syntax_is_refused_unless_yolo() {
    let sb = Sandbox::new();
    let line = json!({"command": "echo hi there | tr a-z A-Z > shout.txt"});
    let r = run(&sb, &["--allowed-commands", "echo,tr"], line.clone()).tool_err();
    assert!(
        r.stderr.contains(
            "error (permission-denied): the command uses shell syntax (|), and shell commands are not allowed here"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint: pass the program and its arguments as an array"), "{}", r.stderr);
    assert!(!sb.ws.join("shout.txt").exists());
    run(&sb, &["--yolo"], line).ok();
    assert_eq!(std::fs::read_to_string(sb.ws.join("shout.txt")).unwrap(), "HI THERE\n");
    // In yolo mode programs need no allowlist.
    let r = run(&sb, &["--yolo"], json!({"command": ["cat", "hello.txt"]})).ok();
    assert_eq!(r.stdout, "hello\nworld\n");
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let sb = Sandbox::new();
    let spawner = sb.outside.join("spawner.sh");
    // The grandchild (sleep) writes nothing itself; the script records its pid, then waits.
    script(&spawner, "sleep 300 &\necho $! > grandchild.pid\necho started\nwait");
    let spawner = spawner.to_str().unwrap();
    let r =
        run(&sb, &["--allowed-commands", spawner], json!({"command": [spawner], "timeout": 1})).tool_err();
    assert!(
        r.stderr.contains(
            "error (timeout): the command did not finish within 1 s; it and everything it started were stopped. \
             Output so far:\nstarted"
        ),
        "{}",
        r.stderr
    );
    let pid = std::fs::read_to_string(sb.ws.join("grandchild.pid")).unwrap().trim().to_string();
    assert!(!pid.is_empty());
    assert_stops(&pid);
}

#[test]
fn ctrl_c_or_sigterm_stops_corral_tool_and_the_command_with_it() {
    for sig in ["-INT", "-TERM"] {
        let sb = Sandbox::new();
        let hold = holder(&sb);
        let mut child = sb
            .cmd()
            .args(["--allowed-commands", &hold, "tool", "run_command"])
            .arg(json!({ "command": [&hold] }).to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (pid, tmp) = held(&sb, &mut child);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{sig}: {stderr}");
        assert_eq!(stderr, "interrupted: the call was stopped, and the commands it started with it\n");
        assert_stops(&pid);
        assert!(!tmp.exists(), "{sig}: the command's temp folder {} is left behind", tmp.display());
    }
}

#[test]
fn sigterm_stops_an_unattended_run_like_ctrl_c() {
    use support::model_server::{Flavor, ModelServer, Reply, Step};
    let sb = Sandbox::new();
    let hold = holder(&sb);
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tool("run_command", &json!({ "command": [&hold] }).to_string())),
            Step::Reply(Reply::text("never reached")),
        ],
    );
    let url = server.url();
    let mut child = sb
        .cmd()
        .args(["--base-url", &url, "--model", "m", "--allowed-commands", &hold, "hold on"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (pid, tmp) = held(&sb, &mut child);
    signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_stops(&pid);
    assert!(!tmp.exists(), "the command's temp folder {} is left behind", tmp.display());
    assert_eq!(server.requests().len(), 1, "stopped during the call, before asking the model again");
    let note = std::fs::read_to_string(sb.state_file("continue.md")).expect("continue.md");
    assert!(note.contains("interrupted") && note.contains("hold on"), "{note}");
}

#[test]
fn long_output_is_spilled_and_old_spills_are_removed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".corral")).unwrap();
    let old = sb.ws.join(".corral/cmd_output_000000000000.txt");
    let recent = sb.ws.join(".corral/cmd_output_111111111111.txt");
    for f in [&old, &recent] {
        std::fs::write(f, "earlier output").unwrap();
    }
    let eleven_minutes_ago = SystemTime::now() - Duration::from_secs(11 * 60);
    std::fs::File::options().write(true).open(&old).unwrap().set_modified(eleven_minutes_ago).unwrap();

    let r = run(&sb, &["--allowed-commands", "seq"], json!({"command": ["seq", "100000"]})).ok();
    assert!(r.stdout.starts_with("1\n2\n3\n"), "{}", &r.stdout[..100]);
    assert!(r.stdout.contains("99999\n100000\n"), "the tail is kept");
    assert!(r.stdout.len() < 11 * 1024, "inline output is capped: {} bytes", r.stdout.len());
    let marker = "[the output was long; all of it is in ";
    let at = r.stdout.find(marker).expect("names the file");
    let path = r.stdout[at + marker.len()..].split(' ').next().unwrap();
    assert!(path.starts_with(".corral/cmd_output_") && path.ends_with(".txt"), "{path}");
    let saved = std::fs::read_to_string(sb.ws.join(path)).unwrap();
    assert!(saved.starts_with("$ seq 100000\n[exit code 0]\n--- stdout ---\n1\n2\n"), "{}", &saved[..80]);
    assert!(saved.contains("\n50000\n") && saved.contains("\n100000\n"));
    assert!(!old.exists(), "a spill older than ten minutes is removed");
    assert!(recent.exists(), "a recent spill is kept");
    // The saved file can be paged with read_file.
    let r = sb.tool(&[], "read_file", &json!({"file_path": path, "offset": 50000, "limit": 2})).ok();
    assert!(r.stdout.contains("50000: 49997"), "{}", r.stdout);
}

#[test]
fn the_environment_is_an_allowlist() {
    let sb = Sandbox::new();
    let env_run = |extra: &[&str]| {
        let mut flags = vec!["--allowed-commands", "env"];
        flags.extend_from_slice(extra);
        let out = sb
            .cmd()
            .env("CORRAL_TEST_SECRET", "s3cr3t-value")
            .env("LANG", "C.UTF-8")
            .args(&flags)
            .args(["tool", "run_command", r#"{"command": ["env"]}"#])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let vars = env_run(&[]);
    assert!(!vars.contains("CORRAL_TEST_SECRET") && !vars.contains("s3cr3t-value"), "{vars}");
    assert!(!vars.contains("CORRAL_CONFIG_DIR"), "{vars}");
    assert!(vars.lines().any(|l| l.starts_with("PATH=")) && vars.contains("LANG=C.UTF-8"), "{vars}");
    let vars = env_run(&["--command-env", "CORRAL_TEST_SECRET"]);
    assert!(vars.contains("CORRAL_TEST_SECRET=s3cr3t-value"), "passed on when listed: {vars}");
}

#[test]
fn the_working_directory_stays_inside_the_roots() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(&sb.outside, sb.ws.join("out_link")).unwrap();
    let flags = ["--allowed-commands", "pwd,ls"];
    let r = run(&sb, &flags, json!({"command": ["pwd"], "cwd": "sub"})).ok();
    assert_eq!(r.stdout, format!("{}\n", sb.ws.join("sub").display()));
    let r = run(&sb, &flags, json!({"command": ["pwd"]})).ok();
    assert_eq!(r.stdout, format!("{}\n", sb.ws.display()));
    let outside = sb.outside.display().to_string();
    for cwd in ["..", "out_link", "/etc", outside.as_str(), "sub/../.."] {
        let r = run(&sb, &flags, json!({"command": ["ls"], "cwd": cwd})).tool_err();
        assert!(
            r.stderr.contains("error (permission-denied): working directory: ")
                && r.stderr.contains("is outside the workspace roots"),
            "{cwd}: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("secret.txt"));
    }
    let r = run(&sb, &flags, json!({"command": ["ls"], "cwd": "hello.txt"})).tool_err();
    assert!(r.stderr.contains("'hello.txt' is not a directory"), "{}", r.stderr);
}

#[test]
fn stdin_is_closed() {
    let sb = Sandbox::new();
    // Had cat waited for input, the call would have ended in a timeout error, not output.
    let r = run(&sb, &["--allowed-commands", "cat"], json!({"command": ["cat"], "timeout": 20})).ok();
    assert_eq!(r.stdout, "(no output)\n");
}

#[test]
fn ask_mode_refuses_when_no_one_can_answer() {
    let sb = Sandbox::new();
    let r = run(&sb, &["--commands", "ask"], json!({"command": ["echo", "hi"]})).tool_err();
    assert!(
        r.stderr.contains(
            "`echo` needs the person's approval (--commands ask), and no one can answer in this run; the user \
             can allow the program without asking with --allowed-commands"
        ),
        "{}",
        r.stderr
    );
    // Allow-listed programs run without asking.
    let r =
        run(&sb, &["--commands", "ask", "--allowed-commands", "echo"], json!({"command": ["echo", "hi"]}))
            .ok();
    assert_eq!(r.stdout, "hi\n");
}

/// The tool results in a captured OpenAI-style request, in order.
fn tool_results(c: &support::model_server::Captured) -> Vec<String> {
    let messages = c.body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn ask_mode_asks_the_person_once_per_bucket_and_remembers_always() {
    use support::model_server::{Flavor, ModelServer, Reply, Step};
    let sb = Sandbox::new();
    let call =
        |argv: &[&str]| Step::Reply(Reply::tool("run_command", &json!({ "command": argv }).to_string()));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            call(&["echo", "first"]),
            call(&["echo", "second"]),
            call(&["ls", "-a"]),
            Step::Reply(Reply::text("all asked")),
        ],
    );
    let url = server.url();
    let args = ["--base-url", url.as_str(), "--model", "m", "--color", "never", "--commands", "ask"];
    let out = sb.in_terminal(&args, &[], &["run some commands", "always", "no", "/exit"]);
    assert!(out.contains("the agent wants to run this command (10 characters"), "{out}");
    assert!(out.contains("\r\n    echo first\r\n"), "the command alone on its line: {out}");
    assert!(out.contains("1. yes") && out.contains("2. no") && out.contains("3. always"), "{out}");
    assert!(!out.contains("    echo second\r\n"), "echo was approved with always: {out}");
    assert!(out.contains("ls -a") && out.contains("all asked"), "{out}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "{out}");
    let results = tool_results(&reqs[3]);
    assert_eq!(results[0], "first\n");
    assert_eq!(results[1], "second\n");
    assert!(results[2].contains("the person declined to run `ls -a`"), "{results:?}");
    assert!(!sb.ws.join(".corral/approved_commands").exists(), "approvals are kept outside the workspace");
    let saved = std::fs::read_to_string(sb.state_file("approved_commands")).unwrap();
    assert!(saved.lines().any(|l| l == "echo") && !saved.contains("ls"), "{saved}");
    // The next session remembers: echo runs without a person to ask; ls does not.
    let r = run(&sb, &["--commands", "ask"], json!({"command": ["echo", "again"]})).ok();
    assert_eq!(r.stdout, "again\n");
    let r = run(&sb, &["--commands", "ask"], json!({"command": ["ls"]})).tool_err();
    assert!(r.stderr.contains("`ls` needs the person's approval"), "{}", r.stderr);
}

#[test]
fn a_command_may_outlast_the_plugin_call_timeout_up_to_its_own() {
    let sb = Sandbox::new();
    // The plugin's own limit is 1 s; the command's is 10 s and it needs 2.
    let flags = ["--timeout", "1", "--allowed-commands", "sleep"];
    let r = run(&sb, &flags, json!({"command": ["sleep", "2"], "timeout": 10})).ok();
    assert_eq!(r.stdout, "(no output)\n");
}

#[test]
fn a_one_shot_run_at_a_terminal_asks_too() {
    use support::model_server::{Flavor, ModelServer, Reply, Step};
    let sb = Sandbox::new();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tool("run_command", &json!({ "command": ["echo", "asked"] }).to_string())),
            Step::Reply(Reply::text("ran it")),
        ],
    );
    let url = server.url();
    let args =
        ["--base-url", url.as_str(), "--model", "m", "--color", "never", "--commands", "ask", "say hi"];
    let out = sb.in_terminal(&args, &[], &["yes"]);
    assert!(out.contains("the agent wants to run this command") && out.contains("echo asked"), "{out}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    assert_eq!(tool_results(&reqs[1]), ["asked\n"]);
    // Without a terminal there is no one to ask, and the model is told so.
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tool("run_command", &json!({ "command": ["echo", "asked"] }).to_string())),
            Step::Reply(Reply::text("could not")),
        ],
    );
    let url = server.url();
    let r = sb.run(&["--base-url", &url, "--model", "m", "--no-stream", "--commands", "ask", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(tool_results(&server.requests()[1])[0].contains("no one can answer"), "{}", r.stderr);
}
