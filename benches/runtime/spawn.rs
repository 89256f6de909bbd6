//! The cost of the command sandbox: spawning and waiting for `true` bare, and with the
//! sandbox corral puts around every command (prepared per command: protected-path walk,
//! Landlock ruleset, seccomp program; then namespaces, Landlock and seccomp in the child).

use crate::report::{Row, Unit};
use anyhow::{Context, Result, bail};
use corral::capabilities::sandbox::{Sandbox, SandboxSpec, paths, probe};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WARMUP: usize = 20;
const RUNS: usize = 300;

fn true_cmd() -> Result<Command> {
    let prog = ["/usr/bin/true", "/bin/true"].into_iter().find(|p| std::path::Path::new(p).exists());
    let mut c = Command::new(prog.context("no `true` program")?);
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    Ok(c)
}

fn time(mut one: impl FnMut() -> Result<()>) -> Result<Vec<Duration>> {
    for _ in 0..WARMUP {
        one()?;
    }
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        one()?;
        samples.push(t.elapsed());
    }
    Ok(samples)
}

pub fn rows() -> Result<Vec<Row>> {
    if let Some(why) = probe().missing() {
        return Ok(vec![Row::skipped("spawn `true` sandboxed", format!("no sandbox here: {why}"))]);
    }
    let ws = tempfile::tempdir().context("workspace")?;
    let root = ws.path().canonicalize()?;
    std::fs::create_dir_all(root.join(".git/hooks"))?;
    std::fs::write(root.join("corral.toml"), "")?;
    let bare = time(|| {
        let st = true_cmd()?.status()?;
        if !st.success() {
            bail!("true failed");
        }
        Ok(())
    })?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let read = paths::default_read(home.as_deref(), &|k| std::env::var_os(k));
    let hidden = paths::secrets(home.as_deref(), &[]);
    let boxed = time(|| {
        let spec = SandboxSpec {
            read: read.iter().cloned().chain([root.clone()]).collect(),
            write: vec![root.clone()],
            protected: paths::protected_in(&root, true).map_err(anyhow::Error::msg)?,
            hidden: hidden.clone(),
            network: false,
        };
        let sandbox = Arc::new(Sandbox::prepare(&spec)?);
        let mut c = true_cmd()?;
        sandbox.apply_to(&mut c);
        let st = c.status()?;
        if !st.success() {
            bail!("true failed in the sandbox");
        }
        Ok(())
    })?;
    let added = |a: &[Duration], b: &[Duration]| {
        let med = |s: &[Duration]| {
            let mut v = s.to_vec();
            v.sort_unstable();
            v[v.len() / 2]
        };
        med(b).saturating_sub(med(a))
    };
    let diff = added(&bare, &boxed);
    Ok(vec![
        Row::new("spawn + wait `true`, no sandbox", Unit::Millis, bare, ""),
        Row::new("spawn + wait `true`, sandboxed (prepare included)", Unit::Millis, boxed, ""),
        Row::new("sandbox cost per command (difference of medians)", Unit::Millis, vec![diff], "< 5 ms"),
    ])
}
