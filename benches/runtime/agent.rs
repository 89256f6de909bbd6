//! A scripted four-turn agent session run by the release binary against the test model server
//! (OpenAI wire format, streamed): read_file, grep, edit_file, then the answer. Measures the
//! time to the first model request, the host's time between a reply and the next request,
//! the whole session, and the process's peak RSS; warm (a filled compile cache, one HOME) and
//! cold (every run a fresh HOME and an empty cache dir, as a new user or a CI container).

use crate::cli::Corral;
use crate::report::{Row, Stats, Unit};
use crate::support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Untimed runs first: the first fills the compile cache if it is empty.
const WARMUP: usize = 2;
const RUNS: usize = 20;
const COLD_RUNS: usize = 10;
/// A run that takes longer than this is killed and reported as a failure.
const RUN_LIMIT: Duration = Duration::from_secs(60);

const FILE: &str = "greet.rs";
const SOURCE: &str = "/// Greets someone.\npub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}!\")\n}\n\n\
                      #[test]\nfn greets() {\n    assert_eq!(greet(\"Ann\"), \"Howdy, Ann!\");\n}\n";
const ANSWER: &str = "Replaced Hello with Howdy in greet.rs.";
/// The tools whose replies are followed by host work, in script order.
const TOOLS: [&str; 3] = ["read_file", "grep", "edit_file"];

/// Targets (issue 13): medians of the first request and the turn, the largest peak RSS.
const FIRST_TARGET: Duration = Duration::from_millis(10);
const COLD_FIRST_TARGET: Duration = Duration::from_millis(50);
const TURN_TARGET: Duration = Duration::from_millis(1);
const RSS_TARGET_BYTES: u64 = 30_000_000;

/// The four replies: read, grep and edit greet.rs, then answer.
fn script() -> Vec<Step> {
    let tool = |name: &str, args: serde_json::Value| Step::Reply(Reply::tool(name, &args.to_string()));
    vec![
        tool("read_file", json!({"file_path": FILE})),
        tool("grep", json!({"pattern": "Hello"})),
        tool("edit_file", json!({"file_path": FILE, "old_string": "Hello", "new_string": "Howdy"})),
        Step::Reply(Reply::text(ANSWER)),
    ]
}

/// What one session took.
struct Sample {
    /// Spawn to the arrival of the first completion request.
    first: Duration,
    /// Per tool reply: the server done writing it to the next request's arrival.
    turns: [Duration; 3],
    /// Spawn to exit.
    wall: Duration,
    /// Peak RSS of the corral process (wait4's ru_maxrss).
    rss_bytes: u64,
}

/// The rows and the notes (targets met or not).
pub fn rows(c: &Corral) -> Result<(Vec<Row>, Vec<String>)> {
    let home = tempfile::tempdir().context("cannot create a home directory")?;
    let mut samples = Vec::with_capacity(RUNS);
    for i in 0..WARMUP + RUNS {
        let s = session(c, home.path(), c.warm_cache.path())
            .with_context(|| format!("agent session {} failed", i + 1))?;
        if i >= WARMUP {
            samples.push(s);
        }
    }
    let mut cold = Vec::with_capacity(COLD_RUNS);
    for i in 0..COLD_RUNS {
        let (home, cache) = (tempfile::tempdir()?, tempfile::tempdir()?);
        let s = session(c, home.path(), cache.path())
            .with_context(|| format!("cold agent session {} failed", i + 1))?;
        cold.push(s);
    }
    let first: Vec<_> = samples.iter().map(|s| s.first).collect();
    let turns: Vec<_> = samples.iter().flat_map(|s| s.turns).collect();
    let wall: Vec<_> = samples.iter().map(|s| s.wall).collect();
    let rss: Vec<_> = samples.iter().map(|s| s.rss_bytes).collect();
    let cold_first: Vec<_> = cold.iter().map(|s| s.first).collect();
    let cold_rss: Vec<_> = cold.iter().map(|s| s.rss_bytes).collect();

    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    let median = |v: &[Duration]| Stats::of(v.to_vec()).map(|s| s.median).unwrap_or(Duration::MAX);
    let max = |v: &[u64]| v.iter().copied().max().unwrap_or(u64::MAX);
    let target = |t: &str, ok: bool| format!("{t} / {}", verdict(ok));
    let mut notes = Vec::new();
    notes.push(format!(
        "agent targets: first request warm {:.1} ms (median) <= 10 ms: {}; cold {:.1} ms <= 50 ms: {}; \
         host time per turn {:.2} ms (median) <= 1 ms: {}; peak RSS warm {:.1} MB, cold {:.1} MB (max) <= 30 MB: {}",
        ms(median(&first)),
        verdict(median(&first) <= FIRST_TARGET),
        ms(median(&cold_first)),
        verdict(median(&cold_first) <= COLD_FIRST_TARGET),
        ms(median(&turns)),
        verdict(median(&turns) <= TURN_TARGET),
        max(&rss) as f64 / 1e6,
        max(&cold_rss) as f64 / 1e6,
        verdict(max(&rss).max(max(&cold_rss)) <= RSS_TARGET_BYTES),
    ));

    let first_ok = median(&first) <= FIRST_TARGET;
    let cold_ok = median(&cold_first) <= COLD_FIRST_TARGET;
    let turn_ok = median(&turns) <= TURN_TARGET;
    let mut rows = vec![
        Row::new(
            "agent: start to first model request (warm cache)",
            Unit::Millis,
            first,
            target("<= 10 ms", first_ok),
        ),
        Row::new(
            "agent: start to first model request (cold: fresh HOME, empty cache)",
            Unit::Millis,
            cold_first,
            target("<= 50 ms", cold_ok),
        ),
        Row::new(
            "agent: host time per turn (reply written to next request)",
            Unit::Millis,
            turns,
            target("<= 1 ms", turn_ok),
        ),
    ];
    for (i, tool) in TOOLS.iter().enumerate() {
        let after: Vec<_> = samples.iter().map(|s| s.turns[i]).collect();
        rows.push(Row::new(format!("  of which: after the {tool} reply"), Unit::Millis, after, ""));
    }
    rows.push(Row::new("agent: whole session, spawn to exit (4 model calls)", Unit::Millis, wall, ""));
    let rss_ok = max(&rss) <= RSS_TARGET_BYTES;
    let cold_rss_ok = max(&cold_rss) <= RSS_TARGET_BYTES;
    rows.push(Row::bytes(
        "agent: peak RSS of the corral process (warm)",
        &rss,
        target("<= 30 MB (max)", rss_ok),
    ));
    rows.push(Row::bytes(
        "agent: peak RSS of the corral process (cold)",
        &cold_rss,
        target("<= 30 MB (max)", cold_rss_ok),
    ));
    Ok((rows, notes))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One session in a fresh workspace against a fresh server; fails unless corral exits 0,
/// the edit is on disk and the server saw the four requests with the expected tool results.
fn session(c: &Corral, home: &Path, cache: &Path) -> Result<Sample> {
    let dir = tempfile::tempdir().context("cannot create the run directory")?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).context("cannot create the workspace")?;
    std::fs::write(ws.join(FILE), SOURCE).context("cannot write the source file")?;
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()));

    let server = ModelServer::start(Flavor::OpenAi, script());
    let url = server.url();
    let mut cmd = Command::new(&c.bin);
    cmd.args(["--base-url", &url, "--model", "test-model", "replace Hello with Howdy in greet.rs"])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORRAL_CONFIG_DIR", c.config.path())
        .env("CORRAL_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&err)?);

    let started = Instant::now();
    let child = cmd.spawn().with_context(|| format!("cannot run {cmd:?}"))?;
    let (code, ended, rss_kib) = wait(child.id() as libc::pid_t)?;
    let wall = ended - started;

    let stdout = std::fs::read_to_string(&out).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    let failed = |why: String| anyhow::anyhow!("{why}\nstdout:\n{stdout}\nstderr:\n{}", stderr.trim_end());
    if code != Some(0) {
        return Err(failed(format!("corral exited with {code:?}")));
    }
    let edited = std::fs::read_to_string(ws.join(FILE)).unwrap_or_default();
    if edited != SOURCE.replacen("Hello", "Howdy", 1) {
        return Err(failed(format!("greet.rs was not edited as asked:\n{edited}")));
    }
    if !stdout.contains(ANSWER) {
        return Err(failed("the answer is not on stdout".into()));
    }
    let reqs = server.requests();
    if reqs.len() != 4 {
        return Err(failed(format!("the server saw {} completion requests, not 4", reqs.len())));
    }
    for (i, expect) in [(1, "Hello, {name}"), (2, FILE), (3, "Edited")] {
        let result = last_tool_result(&reqs[i]);
        if !result.contains(expect) {
            bail!("the result of {} lacks {expect:?}: {result}", TOOLS[i - 1]);
        }
    }
    let mut turns = [Duration::ZERO; 3];
    for (i, t) in turns.iter_mut().enumerate() {
        let replied = reqs[i].replied.context("the server has no end time for a reply")?;
        // The server notes a reply's end after its last write returns; corral can read that
        // last chunk and send the next request before the writing thread gets to note it, so
        // the difference can come out below zero: that turn took no measurable host time.
        *t = reqs[i + 1].at.saturating_duration_since(replied);
    }
    Ok(Sample { first: reqs[0].at - started, turns, wall, rss_bytes: rss_kib * 1024 })
}

/// The content of the last tool message in an OpenAI request.
fn last_tool_result(c: &Captured) -> String {
    let messages = c.body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "tool");
    last.and_then(|m| m["content"].as_str()).unwrap_or_default().to_string()
}

/// Waits for `pid` to exit: its exit code (None if killed), when it exited, and its peak
/// RSS in KiB. It is killed if it runs longer than RUN_LIMIT. The exit is first observed
/// without reaping (waitid WNOWAIT), so the watchdog can never signal a reused pid.
fn wait(pid: libc::pid_t) -> Result<(Option<i32>, Instant, u64)> {
    let exited = Arc::new(Mutex::new(false));
    let (wake, woken) = mpsc::channel::<()>();
    let watch = exited.clone();
    std::thread::spawn(move || {
        if woken.recv_timeout(RUN_LIMIT) == Err(mpsc::RecvTimeoutError::Timeout) {
            let done = watch.lock().unwrap_or_else(|p| p.into_inner());
            if !*done {
                // SAFETY: the child is not reaped while `done` is false, so `pid` is still ours.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    });
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain system call on our own child with a valid out-pointer.
        let r =
            unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("waitid on corral failed");
        }
    }
    let ended = Instant::now();
    *exited.lock().unwrap_or_else(|p| p.into_inner()) = true;
    let _ = wake.send(());
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter for wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: reaps our own exited child; both out-pointers are valid.
    if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } != pid {
        return Err(std::io::Error::last_os_error()).context("wait4 on corral failed");
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, ended, usage.ru_maxrss as u64))
}
