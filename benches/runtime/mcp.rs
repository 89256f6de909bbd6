//! `corral mcp serve`: from the start of the process to the answer to the first `tools/list`
//! (stdio), and the cost of one call of a cheap tool (`ok` of the faulty test plugin) over
//! stdio, against the same call through the server in-process (no JSON-RPC, no pipes).

use crate::cli::Corral;
use crate::report::{Row, Unit};
use anyhow::{Context, Result, bail};
use corral::capabilities::{Policy, Roots, Session, log};
use corral::mcp::{Served, Server};
use corral::runtime::skills::SkillSet;
use corral::runtime::{self, Limits, LoadRules, Registry, Runtime};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const START_RUNS: usize = 15;
const CALL_WARMUP: usize = 50;
const CALL_RUNS: usize = 1000;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn call_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ok","arguments":{{}}}}}}"#
    )
}

/// Reads lines until the answer to request `id`.
fn answer(out: &mut BufReader<ChildStdout>, id: usize) -> Result<String> {
    let want = format!(r#""id":{id}"#);
    loop {
        let mut line = String::new();
        if out.read_line(&mut line)? == 0 {
            bail!("corral mcp serve closed stdout before answering request {id}");
        }
        if line.contains(&want) {
            return Ok(line);
        }
    }
}

fn send(stdin: &mut ChildStdin, line: &str) -> Result<()> {
    writeln!(stdin, "{line}")?;
    stdin.flush()?;
    Ok(())
}

pub fn rows(c: &Corral) -> Result<Vec<Row>> {
    let ws = tempfile::tempdir().context("workspace")?;
    let faulty = crate::fixtures::faulty_plugin()?;
    let faulty = faulty.to_str().context("plugin path")?;
    let serve = || {
        let mut cmd = Command::new(&c.bin);
        cmd.args(["--plugin", faulty, "mcp", "serve"])
            .current_dir(ws.path())
            .env("CORRAL_CACHE_DIR", c.warm_cache.path())
            .env("CORRAL_CONFIG_DIR", c.config.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd
    };
    // Start to the first tools/list answer; the first run (which may compile) is not counted.
    let mut start = Vec::with_capacity(START_RUNS);
    for i in 0..=START_RUNS {
        let t = Instant::now();
        let mut child = serve().spawn().context("cannot start corral mcp serve")?;
        let mut stdin = child.stdin.take().context("stdin")?;
        let mut out = BufReader::new(child.stdout.take().context("stdout")?);
        for line in [INIT, INITIALIZED, LIST] {
            send(&mut stdin, line)?;
        }
        let listed = answer(&mut out, 2)?;
        let took = t.elapsed();
        if !listed.contains(r#""name":"ok""#) {
            bail!("tools/list did not list the faulty plugin's ok: {listed}");
        }
        drop(stdin);
        child.wait()?;
        if i > 0 {
            start.push(took);
        }
    }

    // One session, many round trips.
    let mut child = serve().spawn().context("cannot start corral mcp serve")?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut out = BufReader::new(child.stdout.take().context("stdout")?);
    send(&mut stdin, INIT)?;
    answer(&mut out, 1)?;
    send(&mut stdin, INITIALIZED)?;
    let mut stdio = Vec::with_capacity(CALL_RUNS);
    for i in 0..CALL_WARMUP + CALL_RUNS {
        let id = 10 + i;
        let t = Instant::now();
        send(&mut stdin, &call_line(id))?;
        let reply = answer(&mut out, id)?;
        let took = t.elapsed();
        if !reply.contains("fine") {
            bail!("ok did not answer fine: {reply}");
        }
        if i >= CALL_WARMUP {
            stdio.push(took);
        }
    }
    drop(stdin);
    child.wait()?;

    let inproc = in_process(&faulty.into())?;
    let med = |s: &[Duration]| {
        let mut v = s.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let added = med(&stdio).saturating_sub(med(&inproc));
    Ok(vec![
        Row::new("`corral mcp serve` start to first tools/list answer (stdio)", Unit::Millis, start, ""),
        Row::new("tools/call `ok` over stdio (write request, read answer)", Unit::Micros, stdio, ""),
        Row::new(
            "the same call through the server in-process (`Server::call`)",
            Unit::Micros,
            inproc,
            format!("stdio adds {} µs (medians)", added.as_micros()),
        ),
    ])
}

/// `ok` through `mcp::Server::call`: the dispatch, the caps and the lock, without JSON-RPC.
fn in_process(faulty: &std::path::PathBuf) -> Result<Vec<Duration>> {
    let ws = tempfile::tempdir().context("workspace")?;
    let cache = tempfile::tempdir().context("cache")?;
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
    let roots = Roots::open(ws.path(), &[], &[]).context("cannot open the workspace root")?;
    let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
    let limits = Limits::default();
    let candidates: Vec<_> = runtime::registry::discover(None, None, std::slice::from_ref(faulty))?
        .into_iter()
        .filter(|c| c.name == "faulty")
        .collect();
    let registry =
        tokio.block_on(Registry::load(&rt, &session, candidates, &LoadRules::default(), &limits))?;
    let server = Server::new(Served {
        runtime: rt,
        registry,
        skills: SkillSet::default(),
        session,
        limits,
        max_lines: 2000,
        log: None,
    });
    let args = serde_json::json!({});
    tokio.block_on(async {
        let mut samples = Vec::with_capacity(CALL_RUNS);
        for i in 0..CALL_WARMUP + CALL_RUNS {
            let t = Instant::now();
            let o = server.call("ok", &args).await.context("ok is not served")?;
            let took = t.elapsed();
            if o.is_error || o.content != "fine" {
                bail!("ok failed in-process: {}", o.content);
            }
            if i >= CALL_WARMUP {
                samples.push(took);
            }
        }
        Ok(samples)
    })
}
