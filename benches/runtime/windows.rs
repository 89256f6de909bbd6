//! Small windows: the realistic task of tests/support/small_window.rs (read a 30 KB log in
//! pages, grep, read notes and a config, edit it, answer) run by the release binary at 4K, 8K
//! and 16K against a server that enforces the window. Model calls, compactions and tokens per
//! task (deterministic: one run each gives them), and the wall time of the whole task.

use crate::cli::Corral;
use crate::report::{Row, Unit};
use crate::small_window;
use crate::support::model_server::{Flavor, ModelServer, max_tokens, prompt_tokens};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;
pub const WINDOWS: [u64; 3] = [4096, 8192, 16_384];

/// What one task cost at one window.
struct Task {
    wall: Duration,
    stats: Value,
    summary_calls: usize,
    largest: u64,
}

pub fn rows(c: &Corral) -> Result<(Vec<Row>, Vec<String>)> {
    let home = tempfile::tempdir().context("cannot create a home directory")?;
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for w in WINDOWS {
        let mut walls = Vec::with_capacity(RUNS);
        let mut last = None;
        for i in 0..RUNS {
            let t = task(c, home.path(), w).with_context(|| format!("the {w}-token task, run {}", i + 1))?;
            walls.push(t.wall);
            last = Some(t);
        }
        if let Some(t) = last {
            let s = &t.stats;
            let turns = s["turns"].as_u64().unwrap_or(0);
            let calls = s["llm_calls"].as_u64().unwrap_or(0);
            notes.push(format!(
                "window {w}: {turns} agent turns, {calls} model calls ({:.2} per turn; {} summary), {} compactions \
                 ({} reactive, {} turns dropped), {} input + {} output tokens, largest request {} of {w} tokens \
                 (server count)",
                calls as f64 / turns.max(1) as f64,
                t.summary_calls,
                s["compactions"],
                s["reactive_compactions"],
                s["turns_dropped"],
                s["input_tokens"],
                s["output_tokens"],
                t.largest,
            ));
        }
        rows.push(Row::new(
            format!("windows: realistic task at {w} tokens, spawn to exit"),
            Unit::Millis,
            walls,
            "",
        ));
    }
    Ok((rows, notes))
}

/// One task in a fresh workspace; fails unless it finishes with the edit on disk.
fn task(c: &Corral, home: &Path, window: u64) -> Result<Task> {
    let dir = tempfile::tempdir().context("cannot create the run directory")?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).context("cannot create the workspace")?;
    small_window::files(&ws);
    let server = ModelServer::start(Flavor::OpenAi, small_window::script());
    server.set_summaries(small_window::summaries(40));
    server.enforce_window(window);
    let url = server.url();
    let w = window.to_string();
    let started = Instant::now();
    let out = Command::new(&c.bin)
        .args(["--base-url", &url, "--model", "test-model", "--no-history", "--max-context-tokens", &w])
        .args(["--output-format", "json", small_window::TASK])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORRAL_CONFIG_DIR", c.config.path())
        .env("CORRAL_CACHE_DIR", c.warm_cache.path())
        .stdin(Stdio::null())
        .output()
        .context("cannot run corral")?;
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!("corral failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let config = std::fs::read_to_string(ws.join("config.toml")).unwrap_or_default();
    if !config.contains("retries = 5") {
        bail!("config.toml was not edited: {stdout}");
    }
    let result: Value = serde_json::from_str(stdout.trim()).context("the result is not JSON")?;
    let all: Vec<_> = server.requests().into_iter().chain(server.summary_requests()).collect();
    let largest = all.iter().map(|r| prompt_tokens(&r.body) + max_tokens(&r.body)).max().unwrap_or(0);
    Ok(Task { wall, stats: result["stats"].clone(), summary_calls: server.summary_requests().len(), largest })
}
