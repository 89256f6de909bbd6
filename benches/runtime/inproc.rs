//! In-process measurements through the library: the cost of one plugin call (fresh store,
//! instantiate, invoke) and of `read_file` on a 1 MB file.

use crate::fixtures::{self, BIG_FILE};
use crate::report::{Row, Unit};
use anyhow::{Context, Result, bail};
use corral::capabilities::{Policy, Roots, Session, log};
use corral::runtime::{self, Limits, LoadRules, Registry, Runtime};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

const OVERHEAD_WARMUP: usize = 50;
const OVERHEAD_RUNS: usize = 2000;
const READ_WARMUP: usize = 3;
const READ_RUNS: usize = 50;

/// Loads the `faulty` test plugin and the built-in `read_file` plugin into one registry
/// over a workspace holding `big.txt`, and times calls to them.
pub fn rows() -> Result<Vec<Row>> {
    let ws = tempfile::tempdir().context("cannot create the workspace directory")?;
    fixtures::write_big_file(ws.path())?;
    let cache = tempfile::tempdir().context("cannot create the cache directory")?;
    let faulty = fixtures::faulty_plugin()?;

    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the tokio runtime")?;
    let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
    let roots = Roots::open(ws.path(), &[], &[]).context("cannot open the workspace root")?;
    let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
    let limits = Limits::default();
    // Only the two plugins used here: compiling every built-in would just slow the start.
    let candidates: Vec<_> = runtime::registry::discover(Some(ws.path()), None, &[faulty])?
        .into_iter()
        .filter(|c| c.name == "faulty" || c.name == "read_file")
        .collect();
    let registry = tokio
        .block_on(Registry::load(&rt, &session, candidates, &LoadRules::default(), &limits))
        .context("cannot load the faulty and read_file plugins")?;

    let host = Host { rt: &rt, session: &session, registry: &registry, limits: &limits };
    let overhead = tokio.block_on(host.time("ok", "{}", &|t| t == "fine", OVERHEAD_WARMUP, OVERHEAD_RUNS))?;
    // Default limits: the first 2000 lines (~180 KB) are cut to the 50 KB output cap.
    let read_args = format!(r#"{{"file_path": "{BIG_FILE}"}}"#);
    let starts_right = |t: &str| t.starts_with("1: 000001");
    let read = tokio.block_on(host.time("read_file", &read_args, &starts_right, READ_WARMUP, READ_RUNS))?;
    let wasi = wasi_ctx_samples(ws.path(), OVERHEAD_RUNS)?;

    let mut overhead = Row::new(
        "tool-call overhead in-process (`ok`: new store + instantiate + invoke)",
        Unit::Micros,
        overhead,
        "",
    );
    overhead.target =
        crate::report::target("<= 30 µs", crate::report::within(&overhead, Duration::from_micros(30)));
    Ok(vec![
        overhead,
        Row::new(
            "  of which: the WASI context (builder, build, the session's preopens)",
            Unit::Micros,
            wasi,
            "",
        ),
        Row::new("read_file 1 MB in-process (default limits, 50 KB output)", Unit::Millis, read, ""),
    ])
}

/// What a call needs from the host side.
struct Host<'a> {
    rt: &'a Runtime,
    session: &'a Arc<Session>,
    registry: &'a Registry,
    limits: &'a Limits,
}

impl Host<'_> {
    /// Times `runs` calls of `tool` after `warmup` untimed ones; every result must pass `check`.
    async fn time(
        &self,
        tool: &str,
        args: &str,
        check: &dyn Fn(&str) -> bool,
        warmup: usize,
        runs: usize,
    ) -> Result<Vec<Duration>> {
        let (_, plugin) =
            self.registry.tool(tool).with_context(|| format!("no plugin offers the tool '{tool}'"))?;
        let mut samples = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let started = Instant::now();
            let report = self.rt.invoke(plugin, self.session, tool, args, self.limits).await;
            let took = started.elapsed();
            let out = report.result.map_err(|e| anyhow::anyhow!("{tool} failed: {e}"))?;
            if !check(&out.text) {
                bail!(
                    "{tool} answered something unexpected: {:?}",
                    out.text.chars().take(200).collect::<String>()
                );
            }
            if i >= warmup {
                samples.push(took);
            }
        }
        Ok(samples)
    }
}

/// The part of a call's setup spent building the WASI context (what `invoke` does per call
/// before it creates the store), measured alone: the session's preopens are opened once and
/// each call's context gets a copy.
fn wasi_ctx_samples(root: &Path, runs: usize) -> Result<Vec<Duration>> {
    let root = std::fs::canonicalize(root).context("cannot resolve the workspace path")?;
    let guest = root.to_string_lossy().into_owned();
    let mut roots = WasiCtxBuilder::new();
    roots.allow_blocking_current_thread(true);
    roots
        .preopened_dir(&root, &guest, FsPerms::ReadOnly)
        .map_err(|e| anyhow::anyhow!("cannot preopen the workspace: {e}"))?;
    let shared = std::mem::take(roots.build().filesystem());
    Ok((0..runs)
        .map(|_| {
            let started = Instant::now();
            let mut b = WasiCtxBuilder::new();
            b.allow_blocking_current_thread(true);
            let mut ctx = b.build();
            *ctx.filesystem() = shared.clone();
            let took = started.elapsed();
            drop(ctx);
            took
        })
        .collect())
}
