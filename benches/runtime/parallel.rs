//! One model reply holding N read-only calls (grep over N generated files), run by the release
//! binary with the calls side by side (the default) and one at a time (`agent.parallel_calls
//! = 1`): the host time from the reply to the next request, which is the calls' time.

use crate::cli::Corral;
use crate::report::{Row, Unit};
use crate::support::model_server::{Flavor, ModelServer, Reply, Step};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Calls in the reply.
const CALLS: usize = 8;
const RUNS: usize = 10;
/// Lines in each file the calls search.
const LINES: usize = 20_000;

/// Rows: the reply's calls side by side, and one at a time.
pub fn rows(c: &Corral) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (label, width) in [("side by side (default)", None), ("one at a time (parallel_calls = 1)", Some(1))]
    {
        let config = tempfile::tempdir().context("cannot create a config dir")?;
        if let Some(n) = width {
            std::fs::write(config.path().join("config.toml"), format!("[agent]\nparallel_calls = {n}\n"))?;
        }
        let mut samples = Vec::with_capacity(RUNS);
        for i in 0..RUNS + 1 {
            let t =
                session(c, config.path()).with_context(|| format!("parallel session {} failed", i + 1))?;
            // The first run fills the compile cache.
            if i > 0 {
                samples.push(t);
            }
        }
        rows.push(Row::new(
            format!("parallel: one reply of {CALLS} grep calls, {label}"),
            Unit::Millis,
            samples,
            "",
        ));
    }
    Ok(rows)
}

/// One session: the reply with the calls, then the answer. The time from the server's end
/// of the first reply to the second request.
fn session(c: &Corral, config: &Path) -> Result<Duration> {
    let dir = tempfile::tempdir().context("cannot create the run directory")?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git"))?;
    let body: String =
        (0..LINES).map(|i| format!("line {i}: some text to search through, {}\n", i * 7)).collect();
    let args: Vec<String> = (0..CALLS)
        .map(|i| {
            let name = format!("f{i}.txt");
            std::fs::write(ws.join(&name), &body)?;
            Ok(json!({"pattern": "through, [0-9]*7\\b", "path": name}).to_string())
        })
        .collect::<Result<_>>()?;
    let calls: Vec<(&str, &str)> = args.iter().map(|a| ("grep", a.as_str())).collect();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![Step::Reply(Reply::tools(calls)), Step::Reply(Reply::text("done"))],
    );
    let url = server.url();
    let home = dir.path().join("home");
    let out = Command::new(&c.bin)
        .args(["--base-url", &url, "--model", "test-model", "search the files"])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CORRAL_CONFIG_DIR", config)
        .env("CORRAL_CACHE_DIR", c.warm_cache.path())
        .stdin(Stdio::null())
        .output()
        .context("cannot run corral")?;
    if !out.status.success() {
        bail!("corral failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let reqs = server.requests();
    if reqs.len() != 2 {
        bail!("the server saw {} requests, not 2", reqs.len());
    }
    let replied = reqs[0].replied.context("the server has no end time for the reply")?;
    Ok(reqs[1].at.saturating_duration_since(replied))
}
