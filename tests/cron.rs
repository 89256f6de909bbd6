//! Scheduled jobs through the real binary: the model creates jobs with the cron tool,
//! `corral cron list` shows them, `corral cron run --once` at a fixed fake clock runs them as
//! `corral exec` (the scripted model answers), with the lock, the missed-run rule, the
//! settings ceiling, and the refusals checked.

use crate::support;

use serde_json::{Value, json};
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use support::{Run, Sandbox};

const CREATED_AT: &str = "2026-01-01T08:00:00Z";

/// A sandbox whose user file names the scripted model (the scheduler's job runs read it too).
fn sandbox(server: &ModelServer, extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    use_model(&sb, server, extra);
    sb
}

/// Writes the user file naming the scripted model, plus `extra` TOML.
fn use_model(sb: &Sandbox, server: &ModelServer, extra: &str) {
    std::fs::write(
        sb.config.join("config.toml"),
        format!(
            "[model]\nbase_url = \"{}\"\nname = \"test-model\"\nstream = false\nretries = 1\n{extra}",
            server.url()
        ),
    )
    .unwrap();
}

fn at(sb: &Sandbox, now: &str, args: &[&str]) -> Run {
    sb.run_with_env(args, &[("CORRAL_FAKE_NOW", now)])
}

fn create(name: &str, schedule: &str, prompt: &str) -> Step {
    let args =
        json!({"action": "create", "name": name, "schedule": schedule, "prompt": prompt, "timezone": "UTC"});
    Step::Reply(Reply::tool("cron", &args.to_string()))
}

fn jobs(sb: &Sandbox) -> Vec<Value> {
    let r = sb.run(&["cron", "list", "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v["jobs"].as_array().unwrap().clone()
}

/// The text of the last user message of a request (the task, for a job's run).
fn task_of(c: &Captured) -> String {
    let msgs = c.body["messages"].as_array().unwrap();
    let user = msgs.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the tool answered, as the model saw it in the request after the call.
fn tool_result(c: &Captured) -> String {
    let msgs = c.body["messages"].as_array().unwrap();
    msgs.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"].to_string()
}

#[test]
fn the_model_creates_a_job_and_the_scheduler_runs_it_once() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("standup", "0 9 * * *", "Summarise hello.txt for the standup"),
            Step::Reply(Reply::text("Scheduled.")),
            Step::Reply(Reply::text("hello and world, nothing else")),
        ],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["schedule a standup summary"]).ok();
    assert!(tool_result(&server.requests()[1]).contains("Created job 'standup'"));
    let offered: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(offered.contains(&"cron".to_string()), "{offered:?}");
    assert!(!offered.contains(&"backlog".to_string()), "no .beads/ here, so no backlog tool: {offered:?}");
    let r = sb.run(&["cron", "list"]).ok();
    let line = r.stdout.lines().find(|l| l.starts_with("standup")).unwrap_or_else(|| panic!("{}", r.stdout));
    for part in ["0 9 * * *", "UTC", "yes", "2026-01-01 09:00 UTC", "never run"] {
        assert!(line.contains(part), "{part} in {line}");
    }
    assert!(r.stdout.starts_with("NAME"), "{}", r.stdout);
    // Before its time: nothing runs.
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-01T08:59:00Z"]).ok();
    assert!(r.stderr.contains("no job is due"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2);
    // At its time: one run, as corral exec with the job's prompt.
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-01T09:00:00Z"]).ok();
    assert!(r.stderr.contains("running job 'standup'") && r.stderr.contains("finished: ok"), "{}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(task_of(&reqs[2]), "Summarise hello.txt for the standup");
    // It ran in CI mode: the audit log names the task.
    let audit = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).unwrap();
    assert!(audit.contains("\"session_start\""), "{audit}");
    let j = &jobs(&sb)[0];
    assert_eq!(j["last_run"]["outcome"], "ok");
    assert_eq!(j["last_run"]["answer"], "hello and world, nothing else");
    assert_eq!(j["last_run"]["at"], "2026-01-01T09:00:00Z");
    assert_eq!(j["next_run"], "2026-01-02T09:00:00Z");
    // The same time again: already run.
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-01T09:00:30Z"]).ok();
    assert!(r.stderr.contains("no job is due"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 3);
    let h = sb.run(&["cron", "history", "standup"]).ok().stdout;
    assert_eq!(h, "2026-01-01T09:00:00Z standup ok\n    hello and world, nothing else\n");
    // The person manages the job from the shell too.
    assert!(sb.run(&["cron", "disable", "standup"]).ok().stdout.contains("disabled"));
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-02T09:00:00Z"]).ok();
    assert!(r.stderr.contains("no job is due"), "{}", r.stderr);
    assert!(sb.run(&["cron", "delete", "standup"]).ok().stdout.contains("Deleted job 'standup'"));
    let r = sb.run(&["cron", "delete", "standup"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("there is no job named 'standup'"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_second_scheduler_does_not_run_what_the_first_holds() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("nightly", "0 2 * * *", "check the build"),
            Step::Reply(Reply::text("ok")),
            Step::Reply(Reply::text("build is fine")),
        ],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["nightly check"]).ok();
    // The test holds the scheduler lock, as a running `corral cron run` would.
    let lock = std::fs::OpenOptions::new().write(true).open(sb.state_file("cron.lock"));
    let lock = lock.or_else(|_| std::fs::File::create(sb.state_file("cron.lock"))).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-02T02:00:00Z"]).ok();
    assert!(r.stderr.contains("another scheduler is running this workspace's jobs"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2, "the job did not run");
    assert!(jobs(&sb)[0]["last_run"].is_null());
    drop(lock);
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-02T02:00:00Z"]).ok();
    assert!(r.stderr.contains("running job 'nightly'"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(jobs(&sb)[0]["last_run"]["answer"], "build is fine");
}

#[test]
fn missed_times_run_once_at_start() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("hourly", "0 * * * *", "look at the queue"),
            Step::Reply(Reply::text("ok")),
            Step::Reply(Reply::text("queue empty")),
        ],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["hourly queue check"]).ok();
    // No scheduler ran from 09:00 to 12:30: one run, three times skipped, next at 13:00.
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-01T12:30:00Z"]).ok();
    assert!(r.stderr.contains("(3 missed times skipped)"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 3, "one run, not four");
    let j = &jobs(&sb)[0];
    assert_eq!(j["last_run"]["missed"], 3);
    assert_eq!(j["next_run"], "2026-01-01T13:00:00Z");
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-01T12:59:00Z"]).ok();
    assert!(r.stderr.contains("no job is due"), "{}", r.stderr);
}

#[test]
fn jobs_are_disabled_enabled_and_deleted_and_bad_ones_refused() {
    let call = |args: Value| Step::Reply(Reply::tool("cron", &args.to_string()));
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("report", "30 9 * * 1", "weekly report"),
            call(json!({"action": "create", "name": "bad", "schedule": "every monday", "prompt": "p"})),
            call(
                json!({"action": "create", "name": "tz", "schedule": "0 9 * * *", "prompt": "p", "timezone": "Moon/Base"}),
            ),
            call(json!({"action": "disable", "name": "report"})),
            Step::Reply(Reply::text("done")),
            // Second session, a week later.
            call(json!({"action": "enable", "name": "report"})),
            call(json!({"action": "history", "name": "report", "limit": 5})),
            call(json!({"action": "delete", "name": "report"})),
            call(json!({"action": "list"})),
            Step::Reply(Reply::text("done")),
        ],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["manage jobs"]).ok();
    let reqs = server.requests();
    let bad = tool_result(&reqs[2]);
    assert!(
        bad.contains("invalid schedule") && bad.contains("has 2 fields; a schedule has exactly 5"),
        "{bad}"
    );
    let tz = tool_result(&reqs[3]);
    assert!(tz.contains("'Moon/Base' is not a known IANA time zone"), "{tz}");
    assert!(tool_result(&reqs[4]).contains("'report' is disabled"));
    let listed = jobs(&sb);
    assert_eq!(listed.len(), 1, "the refused jobs were not saved");
    assert_eq!(listed[0]["enabled"], false);
    // Disabled: its time passes without a run.
    let r = sb.run(&["cron", "run", "--once", "--now", "2026-01-05T09:30:00Z"]).ok();
    assert!(r.stderr.contains("no job is due"), "{}", r.stderr);
    // Enabled on Wednesday 7 January: the next run is the next Monday, nothing missed.
    at(&sb, "2026-01-07T12:00:00Z", &["manage jobs again"]).ok();
    let reqs = server.requests();
    let enabled = tool_result(&reqs[6]);
    assert!(enabled.contains("is enabled") && enabled.contains("next 2026-01-12 09:30 UTC"), "{enabled}");
    assert!(tool_result(&reqs[7]).contains("No runs yet"));
    assert!(tool_result(&reqs[8]).contains("Deleted job 'report'"));
    assert!(tool_result(&reqs[9]).contains("No cron jobs"));
    assert!(sb.run(&["cron", "list"]).ok().stdout.contains("No cron jobs in this workspace"));
}

#[test]
fn ci_runs_cannot_create_jobs() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![create("sneaky", "* * * * *", "do things later"), Step::Reply(Reply::text("ok"))],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["exec", "schedule something"]).ok();
    let refused = tool_result(&server.requests()[1]);
    assert!(refused.contains("error (denied)") && refused.contains("CI mode"), "{refused}");
    assert!(refused.contains("without --ci"), "{refused}");
    assert!(jobs(&sb).is_empty());
}

#[test]
fn a_job_runs_no_wider_than_when_it_was_created() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("tidy", "0 9 * * *", "tidy up"),
            Step::Reply(Reply::text("ok")),
            Step::Reply(Reply::text("tidied")),
        ],
    );
    // Created when only `ls` was allowed...
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["--allowed-commands", "ls", "schedule tidying"]).ok();
    // ...run after the person allowed `cat` too, and the network for plugins.
    let user = sb.config.join("config.toml");
    let mut text = std::fs::read_to_string(&user).unwrap();
    text.push_str("[commands]\nallowed = [\"ls\", \"cat\"]\n[network]\nmode = \"on\"\n");
    std::fs::write(&user, text).unwrap();
    sb.run(&["cron", "run", "--once", "--now", "2026-01-01T09:00:00Z"]).ok();
    let audit = std::fs::read_to_string(sb.ws.join(".corral/audit.jsonl")).unwrap();
    let start: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(start["type"], "session_start");
    let names: Vec<&str> = start["commands"]["allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["ls"], "{start}");
    assert_eq!(start["network"], "llm-only", "{start}");
    assert_eq!(jobs(&sb)[0]["last_run"]["answer"], "tidied");
}

#[test]
fn the_interactive_session_runs_due_jobs_between_turns() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("digest", "0 9 * * *", "write the morning digest"),
            Step::Reply(Reply::text("Scheduled.")),
            // The REPL's own turn at 09:05, then the due job's run.
            Step::Reply(Reply::text("repl answer")),
            Step::Reply(Reply::text("digest written")),
        ],
    );
    let sb = sandbox(&server, "");
    at(&sb, CREATED_AT, &["schedule the digest"]).ok();
    let url = server.url();
    let shown = sb.in_terminal(
        &["--base-url", &url, "--model", "test-model", "--no-stream", "--color", "never"],
        &[("CORRAL_FAKE_NOW", "2026-01-01T09:05:00Z")],
        &["hello", "/exit"],
    );
    assert!(shown.contains("repl answer"), "{shown}");
    assert!(shown.contains("cron: running job 'digest'"), "{shown}");
    assert!(shown.contains("cron: ran 1 due job(s) between turns"), "{shown}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "{shown}");
    assert_eq!(task_of(&reqs[3]), "write the morning digest");
    assert_eq!(jobs(&sb)[0]["last_run"]["answer"], "digest written");
}

#[test]
fn sigterm_stops_the_scheduler_after_stopping_the_job_it_runs() {
    use support::stops::{assert_stops, ends, held, holder, signal};
    let sb = Sandbox::new();
    let hold = holder(&sb);
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            create("hold", "0 9 * * *", "hold on"),
            Step::Reply(Reply::text("Scheduled.")),
            // The job's run: a command that holds on until it is killed.
            Step::Reply(Reply::tool("run_command", &json!({ "command": [&hold] }).to_string())),
            Step::Reply(Reply::text("never reached")),
        ],
    );
    use_model(&sb, &server, &format!("[commands]\nallowed = [\"{hold}\"]\n"));
    at(&sb, CREATED_AT, &["--allowed-commands", &hold, "schedule it"]).ok();
    // The foreground scheduler (not --once), stopped as a service manager stops it: SIGTERM to
    // the scheduler alone, while the job's command runs.
    let mut scheduler = sb
        .cmd()
        .args(["cron", "run", "--now", "2026-01-01T09:00:00Z"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (pid, tmp) = held(&sb, &mut scheduler);
    signal(&scheduler, "-TERM");
    let status = ends(&mut scheduler);
    let out = scheduler.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("cron: job 'hold' finished: stopped\n"), "{stderr}");
    assert!(stderr.ends_with("cron: stopped\n"), "{stderr}");
    assert_stops(&pid);
    assert!(!tmp.exists(), "the command's temp folder {} is left behind", tmp.display());
    assert_eq!(server.requests().len(), 3, "the job asked once, then stopped");
    let last = &jobs(&sb)[0]["last_run"];
    assert_eq!(last["outcome"], "stopped", "{last}");
    let answer = last["answer"].as_str().unwrap();
    assert!(answer.starts_with("stopped by SIGINT or SIGTERM before it finished"), "{answer}");
}
