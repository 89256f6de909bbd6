//! Skills, in-process through the library: the shipped component skill (`markdown-docs`)
//! and folder skill (`code-review`, through the built-in folder server): load with an empty
//! cache and with a filled one (either way from the answer built in: nothing compiled or
//! run), and the cost of a call (the first compiles or maps the component); and, for
//! scale, what loading every skill adds to a warm start next to loading the built-in tools.

use crate::report::{Row, Unit};
use anyhow::{Context, Result, bail};
use corral::builtins::{SHIPPED_SKILLS, SKILL_SERVER};
use corral::capabilities::{Policy, Roots, Session, log};
use corral::runtime::skills::{self, Ctx, Kind, SkillSet};
use corral::runtime::{self, Limits, LoadRules, Registry, Runtime};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LOAD_RUNS: usize = 5;
const WARM_LOAD_RUNS: usize = 30;
const CALL_WARMUP: usize = 20;
const CALL_RUNS: usize = 500;

/// The rows of the skills section, and notes with the components' sizes.
pub fn rows() -> Result<(Vec<Row>, Vec<String>)> {
    let ws = tempfile::tempdir().context("cannot create the workspace directory")?;
    let readme = "# Demo\n\n## Install\n\n### From source\n\n## Use\n\nSee [install](#install).\n".repeat(20);
    std::fs::write(ws.path().join("README.md"), readme).context("cannot write README.md")?;
    let unpack = tempfile::tempdir().context("cannot create the unpack directory")?;
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the tokio runtime")?;
    let roots = Roots::open(ws.path(), &[], &[]).context("cannot open the workspace root")?;
    let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
    let limits = Limits::default();
    let load = |rt: &Runtime, kind: Kind| -> Result<(SkillSet, Duration)> {
        let mut warnings = Vec::new();
        let found: Vec<_> = skills::discover(Some(ws.path()), None, unpack.path(), &mut warnings)
            .into_iter()
            .filter(|c| c.kind == kind)
            .collect();
        let started = Instant::now();
        let set = tokio.block_on(SkillSet::load(rt, &session, found, &limits));
        let took = started.elapsed();
        if set.all().len() != 1 || !set.warnings.is_empty() || !warnings.is_empty() {
            bail!("expected one {kind:?} skill, got {:?} ({:?} {warnings:?})", set.all(), set.warnings);
        }
        Ok((set, took))
    };

    let mut rows = Vec::new();
    for (kind, what) in
        [(Kind::Component, "markdown-docs (component)"), (Kind::Folder, "code-review (folder)")]
    {
        let mut cold = Vec::with_capacity(LOAD_RUNS);
        for _ in 0..LOAD_RUNS {
            let cache = tempfile::tempdir().context("cannot create a cache directory")?;
            let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
            cold.push(load(&rt, kind)?.1);
        }
        let cache = tempfile::tempdir().context("cannot create a cache directory")?;
        let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
        load(&rt, kind)?;
        let mut warm = Vec::with_capacity(WARM_LOAD_RUNS);
        for _ in 0..WARM_LOAD_RUNS {
            warm.push(load(&rt, kind)?.1);
        }
        let (set, _) = load(&rt, kind)?;
        let ctx = Ctx { runtime: &rt, session: &session, limits: &limits };
        let calls = tokio.block_on(time_calls(&set, ctx, kind))?;
        rows.push(Row::new(format!("{what}: load, empty cache (answer built in)"), Unit::Millis, cold, ""));
        rows.push(Row::new(format!("{what}: load, filled cache (answer built in)"), Unit::Millis, warm, ""));
        rows.extend(calls);
    }
    rows.extend(startup_share(&tokio, ws.path(), unpack.path(), &session, &limits)?);
    let notes = vec![
        format!(
            "Component sizes: markdown-docs {} bytes, the folder server (skill_folder) {} bytes.",
            SHIPPED_SKILLS.iter().find(|b| b.name == "markdown_docs").map_or(0, |b| b.bytes.len()),
            SKILL_SERVER.bytes.len()
        ),
        format!(
            "The toc script reads a README.md of {} bytes.",
            std::fs::metadata(ws.path().join("README.md"))?.len()
        ),
    ];
    Ok((rows, notes))
}

/// A warm start's two loads, each timed alone: every built-in tool plugin, and discovering
/// and loading every skill (as `corral` does at start-up); and, for scale, loading every
/// built-in's code, which a session leaves to a background thread and first calls.
fn startup_share(
    tokio: &tokio::runtime::Runtime,
    ws: &std::path::Path,
    unpack: &std::path::Path,
    session: &Arc<Session>,
    limits: &Limits,
) -> Result<Vec<Row>> {
    let cache = tempfile::tempdir().context("cannot create a cache directory")?;
    let rt = Runtime::new(Some(cache.path().to_path_buf()))?;
    let (mut tools, mut code, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=WARM_LOAD_RUNS {
        let started = Instant::now();
        let candidates = runtime::registry::discover(Some(ws), None, &[])?;
        let registry =
            tokio.block_on(Registry::load(&rt, session, candidates, &LoadRules::default(), limits))?;
        let t = started.elapsed();
        let started = Instant::now();
        registry.load_all();
        let c = started.elapsed();
        let started = Instant::now();
        let mut warnings = Vec::new();
        let found = skills::discover(Some(ws), None, unpack, &mut warnings);
        let set = tokio.block_on(SkillSet::load(&rt, session, found, limits));
        let s = started.elapsed();
        if registry.plugins().len() < 10 || set.all().len() != 2 {
            bail!(
                "expected the built-ins and 2 skills, got {} and {}",
                registry.plugins().len(),
                set.all().len()
            );
        }
        // The first round fills the cache.
        if i > 0 {
            tools.push(t);
            code.push(c);
            all.push(s);
        }
    }
    Ok(vec![
        Row::new(
            "for scale: every built-in tool plugin, load (described from the cache), warm cache",
            Unit::Millis,
            tools,
            "",
        ),
        Row::new(
            "  then loading all their code (what the background thread does), warm cache",
            Unit::Millis,
            code,
            "",
        ),
        Row::new("every shipped skill (2), discover + load, warm cache", Unit::Millis, all, ""),
    ])
}

/// Times the calls `use_skill` makes: instructions (activate's first call), and for the
/// component a script run, for the folder a resource read.
async fn time_calls(set: &SkillSet, ctx: Ctx<'_>, kind: Kind) -> Result<Vec<Row>> {
    let skill = &set.all()[0];
    let mut instructions = Vec::with_capacity(CALL_RUNS);
    let mut other = Vec::with_capacity(CALL_RUNS);
    for i in 0..CALL_WARMUP + CALL_RUNS {
        let started = Instant::now();
        let text = set.instructions(ctx, skill).await.result.map_err(|e| anyhow::anyhow!("{e}"))?;
        let t1 = started.elapsed();
        if text.len() < 100 {
            bail!("short instructions: {text}");
        }
        let started = Instant::now();
        let ok = match kind {
            Kind::Component => {
                let args = ["README.md".to_string()];
                let out = set
                    .run_script(ctx, skill, "toc", &args)
                    .await
                    .result
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                out.text.contains("- [Install](#install)")
            }
            Kind::Folder => {
                let bytes = set
                    .read_resource(ctx, skill, "references/checklist.md")
                    .await
                    .result
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                bytes.starts_with(b"# Review checklist")
            }
        };
        let t2 = started.elapsed();
        if !ok {
            bail!("a {kind:?} call answered something unexpected");
        }
        if i >= CALL_WARMUP {
            instructions.push(t1);
            other.push(t2);
        }
    }
    let (name, second) = match kind {
        Kind::Component => ("markdown-docs", "script `toc README.md`"),
        Kind::Folder => ("code-review", "read `references/checklist.md`"),
    };
    Ok(vec![
        Row::new(format!("{name}: call `instructions`"), Unit::Micros, instructions, ""),
        Row::new(format!("{name}: call {second}"), Unit::Micros, other, ""),
    ])
}
