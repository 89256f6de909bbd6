//! The scheduler: under the workspace's cron lock, each due job is claimed, run as a child
//! `corral exec` (one at a time), and its outcome and answer recorded in the job's history.
//!
//! The foreground scheduler stops on SIGINT (Ctrl-C) and SIGTERM (a service manager, `kill`).
//! Between jobs it stops at once; during a job it passes SIGTERM on to the job's session
//! (which stops its turn in order: its command killed, its note written), waits for it, and
//! records the run as `stopped` before it ends, so no claimed run is left without a history.

use super::super::cron_settings::JOB_VAR;
use crate::cron::{self, Job, Plan, Run, Schedule, Store};
use crate::signals::Stops;
use jiff::Timestamp;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Longest wait between two looks at the store in the foreground scheduler.
const MAX_NAP: Duration = Duration::from_secs(60);

/// `corral cron run`: runs what is due, then (without `once`) waits for the next due job
/// until Ctrl-C or SIGTERM. `fixed`: the time taken as now (a testing aid).
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
    let mut stops = Stops::new(true);
    loop {
        let (ran, stopped) = run_due(&store, workspace, now()?, Some(&mut stops)).await?;
        if stopped {
            eprintln!("cron: stopped");
            return Ok(0);
        }
        if once {
            if ran == 0 {
                eprintln!("cron: no job is due at {}", now()?);
            }
            return Ok(0);
        }
        let nap = next_nap(&store, now()?)?;
        tokio::select! {
            _ = tokio::time::sleep(nap) => {}
            () = stops.next() => {
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

/// Runs every job due at `now`, one at a time; returns how many ran, and whether a signal in
/// `stops` stopped them (the job it stopped is recorded; none is started after it).
async fn run_due(
    store: &Store,
    workspace: &Path,
    now: Timestamp,
    mut stops: Option<&mut Stops>,
) -> Result<(usize, bool), String> {
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
        let (outcome, answer, stopped) = run_job(job, workspace, stops.as_deref_mut()).await;
        eprintln!("cron: job '{}' finished: {outcome}", job.name);
        let run = Run { job: job.name.clone(), at: now, outcome, answer, missed };
        store.record(job, &run).map_err(|e| e.to_string())?;
        ran += 1;
        if stopped {
            return Ok((ran, true));
        }
    }
    Ok((ran, false))
}

/// Runs one job as `corral exec` in CI mode, its settings narrowed to the job's ceiling;
/// returns its outcome (`ok`, `limit`, `error` or `stopped`), its answer (or error), and
/// whether a signal in `stops` arrived meanwhile (passed on to the session as SIGTERM).
async fn run_job(job: &Job, workspace: &Path, mut stops: Option<&mut Stops>) -> (String, String, bool) {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            return ("error".into(), format!("cannot find the corral program to run the job: {e}"), false);
        }
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
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return ("error".into(), format!("cannot start the job's session: {e}"), false),
    };
    // The output is read beside the wait, so a long answer cannot fill the pipe and stall it.
    let mut stdout = child.stdout.take();
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        if let Some(s) = stdout.as_mut() {
            // What was read before an error is kept; the result line is the last one.
            let _ = s.read_to_end(&mut buf).await;
        }
        buf
    });
    let mut stopped = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            () = next_stop(&mut stops), if !stopped => {
                stopped = true;
                if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                    // SAFETY: kill(2) sends SIGTERM to `pid`, the job's session, which has not
                    // been reaped (tokio's `id` is None once it is), so it cannot be reused.
                    unsafe {
                        libc::kill(pid, libc::SIGTERM);
                    }
                }
            }
        }
    };
    let stdout = reader.await.unwrap_or_default();
    let status = match status {
        Ok(s) => s.to_string(),
        Err(e) => format!("not known: {e}"),
    };
    let (outcome, answer) = job_outcome(&String::from_utf8_lossy(&stdout), &status);
    (outcome, answer, stopped)
}

/// Waits for the next signal in `stops`; with none, never.
async fn next_stop(stops: &mut Option<&mut Stops>) {
    match stops {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// The outcome and answer of a job's session, from the result line of its JSON output. A
/// session a signal interrupted (the scheduler's, passed on, or Ctrl-C at its terminal) is
/// `stopped`; what it had answered so far is kept.
fn job_outcome(stdout: &str, status: &str) -> (String, String) {
    let result = stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("type").and_then(|t| t.as_str()) == Some("result"));
    let Some(r) = result else {
        return ("error".into(), format!("the job's session ended ({status}) without a result"));
    };
    let field = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    match field("outcome").as_str() {
        "done" => ("ok".into(), field("answer")),
        "max_turns" => ("limit".into(), field("answer")),
        "interrupted" => {
            let said = field("answer");
            let said = if said.is_empty() { String::new() } else { format!("; it had said: {said}") };
            ("stopped".into(), format!("stopped by SIGINT or SIGTERM before it finished{said}"))
        }
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
    match run_due(&store, workspace, now, None).await {
        Ok((n, _)) if n > 0 => {
            eprintln!("cron: ran {n} due job(s) between turns; `corral cron list` shows them")
        }
        Ok(_) => {}
        Err(e) => eprintln!("cron: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::job_outcome;

    fn result(outcome: &str, answer: &str, error: Option<&str>) -> String {
        let line =
            serde_json::json!({"type": "result", "outcome": outcome, "answer": answer, "error": error});
        format!("{{\"type\":\"start\"}}\n{line}\n")
    }

    #[test]
    fn a_jobs_outcome_comes_from_its_result_line() {
        let done = job_outcome(&result("done", "all fine", None), "exit status: 0");
        assert_eq!(done, ("ok".into(), "all fine".into()));
        let limit = job_outcome(&result("max_turns", "half way", None), "exit status: 2");
        assert_eq!(limit, ("limit".into(), "half way".into()));
        let failed = job_outcome(&result("error", "", Some("the model refused")), "exit status: 1");
        assert_eq!(failed, ("error".into(), "the model refused".into()));
        let stopped = job_outcome(&result("interrupted", "looked at a.txt", None), "exit status: 130");
        assert_eq!(
            stopped,
            (
                "stopped".into(),
                "stopped by SIGINT or SIGTERM before it finished; it had said: looked at a.txt".into()
            )
        );
        let silent = job_outcome(&result("interrupted", "", None), "exit status: 130");
        assert_eq!(silent.1, "stopped by SIGINT or SIGTERM before it finished");
        let none = job_outcome("not json\n", "signal: 9 (SIGKILL)");
        assert_eq!(
            none,
            ("error".into(), "the job's session ended (signal: 9 (SIGKILL)) without a result".into())
        );
    }
}
