//! The scheduler: under the workspace's cron lock, each due job is claimed, run as a child
//! `corral exec` (one at a time), and its outcome and answer recorded in the job's history.

use super::super::cron_settings::JOB_VAR;
use crate::cron::{self, Job, Plan, Run, Schedule, Store};
use jiff::Timestamp;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Longest wait between two looks at the store in the foreground scheduler.
const MAX_NAP: Duration = Duration::from_secs(60);

/// `corral cron run`: runs what is due, then (without `once`) waits for the next due job
/// until Ctrl-C. `fixed`: the time taken as now (a testing aid).
pub async fn schedule(
    dir: &Path,
    workspace: &Path,
    once: bool,
    fixed: Option<Timestamp>,
) -> Result<i32, String> {
    let now = || -> Result<Timestamp, String> {
        match fixed {
            Some(t) => Ok(t),
            None => cron::now().map_err(|e| e.to_string()),
        }
    };
    let store = Store::open(dir).map_err(|e| e.to_string())?;
    let Some(_lock) = store.try_lock().map_err(|e| e.to_string())? else {
        eprintln!(
            "cron: another scheduler is running this workspace's jobs (it holds {}); nothing run",
            dir.join(cron::store::LOCK_FILE).display()
        );
        return Ok(0);
    };
    loop {
        let ran = run_due(&store, workspace, now()?).await?;
        if once {
            if ran == 0 {
                eprintln!("cron: no job is due at {}", now()?);
            }
            return Ok(0);
        }
        let nap = next_nap(&store, now()?)?;
        tokio::select! {
            _ = tokio::time::sleep(nap) => {}
            _ = tokio::signal::ctrl_c() => {
                eprintln!("cron: stopped");
                return Ok(0);
            }
        }
    }
}

/// How long to wait before the next look: until the earliest next run, at most a minute.
fn next_nap(store: &Store, now: Timestamp) -> Result<Duration, String> {
    let jobs = store.list().map_err(|e| e.to_string())?;
    let earliest = jobs.iter().filter(|j| j.enabled).filter_map(|j| j.next_run).min();
    let secs = earliest.map_or(MAX_NAP.as_secs() as i64, |t| (t.as_second() - now.as_second()).max(1));
    Ok(Duration::from_secs(secs as u64).min(MAX_NAP))
}

/// Runs every job due at `now`, one at a time; returns how many ran.
async fn run_due(store: &Store, workspace: &Path, now: Timestamp) -> Result<usize, String> {
    let jobs = store.list().map_err(|e| e.to_string())?;
    let mut ran = 0;
    for job in jobs.iter().filter(|j| j.enabled) {
        let Some(due) = job.next_run else { continue };
        let schedule = match Schedule::parse(&job.schedule, &job.timezone) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cron: job '{}' skipped: {e}; delete it and create it again", job.name);
                continue;
            }
        };
        let Plan::Run { missed, next } = schedule.plan(due, now) else { continue };
        // Another scheduler (or an older lock holder) may have taken this run already.
        if !store.claim(job, due, next).map_err(|e| e.to_string())? {
            continue;
        }
        let skipped = if missed > 0 { format!(" ({missed} missed times skipped)") } else { String::new() };
        eprintln!("cron: running job '{}' (due {}){skipped}", job.name, schedule.local(due));
        let (outcome, answer) = run_job(job, workspace).await;
        eprintln!("cron: job '{}' finished: {outcome}", job.name);
        let run = Run { job: job.name.clone(), at: now, outcome, answer, missed };
        store.record(job, &run).map_err(|e| e.to_string())?;
        ran += 1;
    }
    Ok(ran)
}

/// Runs one job as `corral exec` in CI mode, its settings narrowed to the job's ceiling;
/// returns its outcome (`ok`, `limit` or `error`) and answer (or error).
async fn run_job(job: &Job, workspace: &Path) -> (String, String) {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return ("error".into(), format!("cannot find the corral program to run the job: {e}")),
    };
    let child = tokio::process::Command::new(exe)
        .arg("exec")
        .arg("--workspace")
        .arg(workspace)
        .args(["--output-format", "json", "--"])
        .arg(&job.prompt)
        .env(JOB_VAR, job.id.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await;
    let out = match child {
        Ok(o) => o,
        Err(e) => return ("error".into(), format!("cannot start the job's session: {e}")),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let result = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("type").and_then(|t| t.as_str()) == Some("result"));
    let Some(r) = result else {
        return ("error".into(), format!("the job's session ended ({}) without a result", out.status));
    };
    let field = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    match field("outcome").as_str() {
        "done" => ("ok".into(), field("answer")),
        "max_turns" => ("limit".into(), field("answer")),
        _ => {
            let e = field("error");
            ("error".into(), if e.is_empty() { field("answer") } else { e })
        }
    }
}

/// The interactive session, between turns: runs the jobs that are due, saying so.
pub async fn between_turns(dir: Option<&Path>, workspace: &Path) {
    // No job store yet: nothing to run, and no file made for it.
    let Some(dir) = dir.filter(|d| d.join(cron::store::DB_FILE).exists()) else { return };
    let Ok(now) = cron::now() else { return };
    let Ok(store) = Store::open(dir) else { return };
    let due =
        store.list().is_ok_and(|jobs| jobs.iter().any(|j| j.enabled && j.next_run.is_some_and(|t| t <= now)));
    if !due {
        return;
    }
    let Ok(Some(_lock)) = store.try_lock() else {
        eprintln!("cron: jobs are due, but another scheduler is running them");
        return;
    };
    match run_due(&store, workspace, now).await {
        Ok(n) if n > 0 => eprintln!("cron: ran {n} due job(s) between turns; `corral cron list` shows them"),
        Ok(_) => {}
        Err(e) => eprintln!("cron: {e}"),
    }
}
