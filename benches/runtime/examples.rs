//! The example plugins of plugins/examples/ (Rust, Python, JavaScript, C), built with their
//! toolchains: component size, first-load compile time (empty cache), cached load time
//! (deserialize from the compile cache) and the time of one typical call, in-process.

use crate::report::{Row, Unit};
use crate::support::guests::example;
use anyhow::{Context, Result};
use corral::capabilities::{Policy, Roots, Session, log};
use corral::runtime::{Candidate, Limits, LoadRules, Origin, Registry, Runtime};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const COMPILE_RUNS: usize = 3;
const LOAD_RUNS: usize = 20;
const CALL_WARMUP: usize = 5;
const CALL_RUNS: usize = 200;

/// (language, tool, arguments of the timed call).
const EXAMPLES: &[(&str, &str, &str)] = &[
    ("rust", "validate_config", r#"{"paths": ["config"]}"#),
    ("python", "code_stats", r#"{"path": "src"}"#),
    ("js", "json_query", r#"{"path": "package.json", "query": "dependencies.*"}"#),
    ("c", "checksum", r#"{"paths": ["package.json"]}"#),
];

fn fixture(ws: &Path) -> Result<()> {
    let files = [
        ("package.json", r#"{"name": "demo", "dependencies": {"left-pad": "^1.3.0", "react": "18.2.0"}}"#),
        ("config/app.toml", "[server]\nport = 8080\n"),
        ("config/ci.yml", "jobs:\n  test:\n    runs-on: linux\n"),
        ("src/main.rs", "// entry\nfn main() {\n    println!(\"hi\");\n}\n"),
        ("src/util.py", "# helpers\ndef f():\n    return 1\n"),
    ];
    for (rel, text) in files {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().context("fixture path")?)?;
        std::fs::write(p, text)?;
    }
    Ok(())
}

pub fn rows() -> Result<Vec<Row>> {
    let ws = tempfile::tempdir().context("cannot create the workspace directory")?;
    fixture(ws.path())?;
    let tokio = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let roots = Roots::open(ws.path(), &[], &[]).context("cannot open the workspace root")?;
    let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
    let limits = Limits::default();
    let mut rows = Vec::new();
    for (lang, tool, args) in EXAMPLES {
        eprintln!("  {tool} ({lang}): building...");
        let path = example(lang);
        let bytes = std::fs::read(&path)?;
        let sha = corral::authoring::sha256_hex(&bytes);
        let label = |what: &str| format!("{tool} ({lang}): {what}");
        rows.push(Row::bytes(label("component size"), &[bytes.len() as u64], ""));

        eprintln!("  {tool} ({lang}): compiling...");
        let mut compile = Vec::new();
        for _ in 0..COMPILE_RUNS {
            let cache = tempfile::tempdir()?;
            let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
            let started = Instant::now();
            rt.cache().load(rt.engine(), &bytes, &sha).map_err(|e| anyhow::anyhow!("{e:#}"))?;
            compile.push(started.elapsed());
        }
        rows.push(Row::new(label("first load (compile + store in cache)"), Unit::Millis, compile, ""));

        let cache = tempfile::tempdir()?;
        let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
        rt.cache().load(rt.engine(), &bytes, &sha).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let mut load = Vec::new();
        for _ in 0..LOAD_RUNS {
            let started = Instant::now();
            rt.cache().load(rt.engine(), &bytes, &sha).map_err(|e| anyhow::anyhow!("{e:#}"))?;
            load.push(started.elapsed());
        }
        rows.push(Row::new(label("cached load (deserialize)"), Unit::Millis, load, ""));

        let candidate = Candidate {
            name: tool.to_string(),
            origin: Origin::Flag,
            path: Some(path.clone()),
            bytes: Cow::Owned(bytes),
            sha256: None,
            built: None,
        };
        let registry = tokio.block_on(Registry::load(
            &rt,
            &session,
            vec![candidate],
            &LoadRules::default().trusting(tool),
            &limits,
        ))?;
        let (_, plugin) = registry.tool(tool).with_context(|| format!("{tool} not offered"))?;
        let mut calls: Vec<Duration> = Vec::new();
        for i in 0..CALL_WARMUP + CALL_RUNS {
            let started = Instant::now();
            let report = tokio.block_on(rt.invoke(plugin, &session, tool, args, &limits));
            let took = started.elapsed();
            report.result.map_err(|e| anyhow::anyhow!("{tool} failed: {}", e.message))?;
            if i >= CALL_WARMUP {
                calls.push(took);
            }
        }
        rows.push(Row::new(label(&format!("call {args}")), Unit::Micros, calls, ""));
    }
    Ok(rows)
}
