//! `corral cron list` and `corral cron run`: the person's side of scheduled jobs. Each due job
//! runs as `corral exec` (CI mode: no prompts, the audit log) narrowed to its saved settings.

mod runner;

use super::GlobalArgs;
pub use super::cron_settings::state_folder;
use super::setup::Env;
use crate::agent::cron_tool::CronHost;
use crate::cron::{self, Schedule, Store};
use clap::Subcommand;
use std::path::{Path, PathBuf};

pub use runner::between_turns;

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// List the jobs: name, schedule, time zone, enabled, next run, last outcome
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// A job's past runs (or every job's), newest first: time, outcome, answer
    History {
        /// The job's name or id [default: every job]
        name: Option<String>,
        /// How many runs
        #[arg(long, default_value_t = 10)]
        limit: u32,
    },
    /// Stop running a job until it is enabled again
    Disable { name: String },
    /// Run a job again; its next run counts from now (the time it was off is no missed run)
    Enable { name: String },
    /// Remove a job and its history
    Delete { name: String },
    /// Run due jobs, one at a time, until Ctrl-C or SIGTERM (or once, with --once)
    ///
    /// A job whose time passed while no scheduler ran runs once when the scheduler starts,
    /// not once per missed time; its next run is its first time after now. Each job runs as
    /// `corral exec "<prompt>"` under the settings in force when it was created, narrowed to
    /// yours now where they are narrower. Only one scheduler runs a workspace's jobs at a time.
    Run {
        /// Run what is due now, then exit
        #[arg(long)]
        once: bool,
        /// Testing aid: take this as the time now (RFC 3339, e.g. 2026-01-01T09:00:00Z); also
        /// read from CORRAL_FAKE_NOW
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
    },
}

fn workspace_of(g: &GlobalArgs) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot determine the current directory: {e}"))?;
    Ok(match &g.workspace {
        Some(w) => cwd.join(w),
        None => crate::capabilities::find_workspace_root(&cwd),
    })
}

/// The `cron` tool for a session, when the workspace keeps state.
pub fn host(env: &Env, ci: bool) -> Option<CronHost> {
    let dir = env.session.local().path()?.to_path_buf();
    Some(CronHost { dir, ceiling: super::cron_settings::ceiling_of(&env.settings), ci })
}

/// Runs `corral cron ...`; returns the exit code.
pub async fn run(command: CronCommand, g: &GlobalArgs) -> i32 {
    match command_result(command, g).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e));
            2
        }
    }
}

async fn command_result(command: CronCommand, g: &GlobalArgs) -> Result<i32, String> {
    let workspace = workspace_of(g)?;
    let dir = state_folder(&workspace)?;
    match command {
        CronCommand::List { json } => list(&dir, json),
        CronCommand::History { name, limit } => history(&dir, name.as_deref(), limit),
        CronCommand::Delete { name } => {
            let store = Store::open(&dir).map_err(|e| e.to_string())?;
            let job = store.delete(&name).map_err(|e| e.to_string())?;
            Ok(super::report::print(&crate::termtext::clean(&format!(
                "Deleted job '{}' and its history.\n",
                job.name
            ))))
        }
        CronCommand::Enable { name } => switch(&dir, &name, true),
        CronCommand::Disable { name } => switch(&dir, &name, false),
        CronCommand::Run { once, now } => {
            let fixed = match now {
                Some(t) => Some(cron::parse_time(&t).map_err(|e| e.to_string())?),
                None => None,
            };
            runner::schedule(&dir, &workspace, once, fixed).await
        }
    }
}

fn switch(dir: &Path, name: &str, on: bool) -> Result<i32, String> {
    let store = Store::open(dir).map_err(|e| e.to_string())?;
    let now = cron::now().map_err(|e| e.to_string())?;
    let job = store.set_enabled(name, on, now).map_err(|e| e.to_string())?;
    Ok(super::report::print(&crate::termtext::clean(&format!("{}\n", crate::cron::tool::describe(&job)))))
}

fn history(dir: &Path, name: Option<&str>, limit: u32) -> Result<i32, String> {
    let store = Store::open(dir).map_err(|e| e.to_string())?;
    let job = match name {
        Some(n) => Some(store.get(n).map_err(|e| e.to_string())?.id),
        None => None,
    };
    let runs = store.runs(job, limit.max(1)).map_err(|e| e.to_string())?;
    if runs.is_empty() {
        return Ok(super::report::print("No runs yet.\n"));
    }
    let mut out = String::new();
    for r in runs {
        let missed =
            if r.missed > 0 { format!(" ({} missed times skipped)", r.missed) } else { String::new() };
        out.push_str(&format!("{} {} {}{missed}\n", r.at, r.job, r.outcome));
        for line in r.answer.lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    Ok(super::report::print(&crate::termtext::clean(&out)))
}

fn list(dir: &Path, json: bool) -> Result<i32, String> {
    let jobs = Store::open(dir).and_then(|s| s.list()).map_err(|e| e.to_string())?;
    if json {
        let rows: Vec<serde_json::Value> = jobs
            .iter()
            .map(|j| {
                serde_json::json!({
                    "id": j.id, "name": j.name, "schedule": j.schedule, "timezone": j.timezone,
                    "enabled": j.enabled, "prompt": j.prompt,
                    "next_run": j.next_run.map(|t| t.to_string()),
                    "last_run": j.last.as_ref().map(|r| serde_json::json!({
                        "at": r.at.to_string(), "outcome": r.outcome, "answer": r.answer, "missed": r.missed
                    })),
                })
            })
            .collect();
        return Ok(super::report::print(&format!("{}\n", serde_json::json!({"jobs": rows}))));
    }
    if jobs.is_empty() {
        return Ok(super::report::print(
            "No cron jobs in this workspace. The model creates them with the cron tool.\n",
        ));
    }
    let mut rows = vec![["NAME", "SCHEDULE", "TZ", "ENABLED", "NEXT RUN", "LAST"].map(str::to_string)];
    for j in &jobs {
        let next = match (j.enabled, j.next_run, Schedule::parse(&j.schedule, &j.timezone)) {
            (false, _, _) => "-".to_string(),
            (true, Some(t), Ok(s)) => s.local(t),
            (true, Some(t), Err(_)) => t.to_string(),
            (true, None, _) => "never".to_string(),
        };
        let last = j.last.as_ref().map_or("never run".to_string(), |r| format!("{} at {}", r.outcome, r.at));
        rows.push([
            crate::termtext::clean(&j.name),
            j.schedule.clone(),
            j.timezone.clone(),
            if j.enabled { "yes" } else { "no" }.to_string(),
            next,
            last,
        ]);
    }
    let widths: Vec<usize> =
        (0..6).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    Ok(super::report::print(&out))
}
