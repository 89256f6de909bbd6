//! Scheduled jobs: the schedule rules, the SQLite job store in the workspace's state folder,
//! the settings ceiling a job runs under, and the `cron` tool's actions. Knows nothing of the agent.

pub mod ceiling;
pub mod schedule;
pub mod store;
pub mod tool;

pub use ceiling::Ceiling;
pub use schedule::{Plan, Schedule};
pub use store::{Lock, Store};

use jiff::Timestamp;

/// The variable that fixes the clock the scheduler and the `cron` tool read (RFC 3339, e.g.
/// `2026-01-01T09:00:00Z`): a testing aid, documented as such.
pub const FAKE_NOW_VAR: &str = "CORRAL_FAKE_NOW";

/// What went wrong with a job or the store.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    #[error("invalid schedule: {0}")]
    Schedule(String),
    #[error("invalid timezone: {0}")]
    Timezone(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Exists(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Io(String),
    #[error("the job store failed: {0}")]
    Store(#[from] rusqlite::Error),
}

/// One scheduled job.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: i64,
    pub name: String,
    pub schedule: String,
    pub timezone: String,
    pub prompt: String,
    pub enabled: bool,
    pub created_at: Timestamp,
    /// When it runs next; `None` when its schedule fires no more.
    pub next_run: Option<Timestamp>,
    /// What it may reach, saved when it was created.
    pub ceiling: Ceiling,
    /// Its latest run, when listed.
    pub last: Option<Run>,
}

/// One finished run of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub job: String,
    pub at: Timestamp,
    /// `ok`, `error` or `limit` (the turn limit was reached).
    pub outcome: String,
    pub answer: String,
    /// Slots that passed unrun before this run (skipped by the missed-run rule).
    pub missed: u32,
}

/// The time now, to the second: `CORRAL_FAKE_NOW` when set (a testing aid), else the clock.
pub fn now() -> Result<Timestamp, CronError> {
    match std::env::var(FAKE_NOW_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_time(&v),
        _ => Ok(Timestamp::from_second(Timestamp::now().as_second()).unwrap_or(Timestamp::UNIX_EPOCH)),
    }
}

/// An RFC 3339 time such as `2026-01-01T09:00:00Z`.
pub fn parse_time(v: &str) -> Result<Timestamp, CronError> {
    v.trim().parse::<Timestamp>().map_err(|e| {
        CronError::Invalid(format!(
            "'{}' is not a time: {e}; write it as RFC 3339, e.g. 2026-01-01T09:00:00Z",
            v.chars().take(60).collect::<String>()
        ))
    })
}

/// The person's own time zone (its IANA name), or UTC when the system names none.
pub fn local_zone() -> String {
    jiff::tz::TimeZone::try_system()
        .ok()
        .and_then(|z| z.iana_name().map(str::to_string))
        .unwrap_or_else(|| "UTC".to_string())
}
