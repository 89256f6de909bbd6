//! The job store: one SQLite file (`cron.db`) in the workspace's state folder, holding the jobs
//! and their runs, and the scheduler lock (`cron.lock`, an flock the kernel drops with its holder).

use super::ceiling::Ceiling;
use super::schedule::Schedule;
use super::{CronError, Job, Run};
use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database file's name in the workspace's state folder.
pub const DB_FILE: &str = "cron.db";
/// The lock file's name beside it.
pub const LOCK_FILE: &str = "cron.lock";
/// Longest answer kept in a run's history row, in characters.
pub const ANSWER_MAX_CHARS: usize = 2000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    prompt TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    next_run INTEGER,
    ceiling TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL,
    job_name TEXT NOT NULL,
    at INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    answer TEXT NOT NULL,
    missed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs (job_id, at);
PRAGMA user_version = 1;
";

/// An open job store.
pub struct Store {
    conn: Connection,
    dir: PathBuf,
}

/// The scheduler lock, held until dropped.
pub struct Lock {
    _file: std::fs::File,
}

fn seconds(t: Timestamp) -> i64 {
    t.as_second()
}

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH)
}

impl Store {
    /// Opens (creating it) the store in the workspace state folder `dir`.
    pub fn open(dir: &Path) -> Result<Store, CronError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| CronError::Io(format!("cannot create {}: {e}", dir.display())))?;
        let conn = Connection::open(dir.join(DB_FILE))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn, dir: dir.to_path_buf() })
    }

    /// Takes the scheduler lock without waiting; `None` when another scheduler holds it.
    pub fn try_lock(&self) -> Result<Option<Lock>, CronError> {
        use rustix::fs::{FlockOperation, flock};
        let path = self.dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| CronError::Io(format!("cannot open {}: {e}", path.display())))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Lock { _file: file })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(CronError::Io(format!("cannot lock {}: {e}", path.display()))),
        }
    }

    /// Adds a job; its first run is its first time after `now`.
    pub fn create(
        &self,
        name: &str,
        schedule: &Schedule,
        prompt: &str,
        ceiling: &Ceiling,
        now: Timestamp,
    ) -> Result<Job, CronError> {
        let exists: Option<i64> =
            self.conn.query_row("SELECT id FROM jobs WHERE name = ?1", [name], |r| r.get(0)).optional()?;
        if exists.is_some() {
            return Err(CronError::Exists(format!(
                "a job named '{name}' already exists; pick another name, or delete it first"
            )));
        }
        let ceiling = serde_json::to_string(ceiling).map_err(|e| CronError::Io(e.to_string()))?;
        self.conn.execute(
            "INSERT INTO jobs (name, schedule, timezone, prompt, enabled, created_at, next_run, ceiling)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7)",
            params![
                name,
                schedule.expr(),
                schedule.timezone(),
                prompt,
                seconds(now),
                schedule.next_after(now).map(seconds),
                ceiling
            ],
        )?;
        self.get(name)
    }

    /// Every job, by name, with its last run.
    pub fn list(&self) -> Result<Vec<Job>, CronError> {
        let mut st = self.conn.prepare(
            "SELECT id, name, schedule, timezone, prompt, enabled, created_at, next_run, ceiling FROM jobs ORDER BY name",
        )?;
        let rows = st.query_map([], job_row)?;
        let mut jobs = Vec::new();
        for j in rows {
            let mut j = j?;
            j.last = self.runs(Some(j.id), 1)?.into_iter().next();
            jobs.push(j);
        }
        Ok(jobs)
    }

    /// The job named `name` (or with that id, when `name` is a number).
    pub fn get(&self, name: &str) -> Result<Job, CronError> {
        let found = self
            .conn
            .query_row(
                "SELECT id, name, schedule, timezone, prompt, enabled, created_at, next_run, ceiling FROM jobs
                 WHERE name = ?1 OR CAST(id AS TEXT) = ?1 ORDER BY name = ?1 DESC LIMIT 1",
                [name],
                job_row,
            )
            .optional()?;
        let Some(mut job) = found else {
            let names: Vec<String> = self.list()?.into_iter().map(|j| j.name).collect();
            let known = if names.is_empty() { "there are no jobs".to_string() } else { names.join(", ") };
            let shown: String = name.chars().take(64).collect();
            return Err(CronError::NotFound(format!(
                "there is no job named '{shown}'; the jobs are: {known}"
            )));
        };
        job.last = self.runs(Some(job.id), 1)?.into_iter().next();
        Ok(job)
    }

    /// Turns a job on or off. Turned on, its next run is its first time after `now`: the time
    /// it spent off counts as no missed run.
    pub fn set_enabled(&self, name: &str, on: bool, now: Timestamp) -> Result<Job, CronError> {
        let job = self.get(name)?;
        let next = if on {
            Schedule::parse(&job.schedule, &job.timezone)?.next_after(now).map(seconds)
        } else {
            job.next_run.map(seconds)
        };
        self.conn.execute(
            "UPDATE jobs SET enabled = ?1, next_run = ?2 WHERE id = ?3",
            params![on, next, job.id],
        )?;
        self.get(&job.name)
    }

    /// Removes a job and its history.
    pub fn delete(&self, name: &str) -> Result<Job, CronError> {
        let job = self.get(name)?;
        self.conn.execute("DELETE FROM runs WHERE job_id = ?1", [job.id])?;
        self.conn.execute("DELETE FROM jobs WHERE id = ?1", [job.id])?;
        Ok(job)
    }

    /// The last `limit` runs, newest first: of one job, or of all.
    pub fn runs(&self, job: Option<i64>, limit: u32) -> Result<Vec<Run>, CronError> {
        let mut st = self.conn.prepare(
            "SELECT job_name, at, outcome, answer, missed FROM runs WHERE ?1 IS NULL OR job_id = ?1
             ORDER BY at DESC, id DESC LIMIT ?2",
        )?;
        let rows = st.query_map(params![job, limit], |r| {
            Ok(Run {
                job: r.get(0)?,
                at: at(r.get(1)?),
                outcome: r.get(2)?,
                answer: r.get(3)?,
                missed: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Claims the job's due run: moves its next time from `due` to `next` only if no one else
    /// did. False: another scheduler already took this run.
    pub fn claim(&self, job: &Job, due: Timestamp, next: Option<Timestamp>) -> Result<bool, CronError> {
        let n = self.conn.execute(
            "UPDATE jobs SET next_run = ?1 WHERE id = ?2 AND enabled = 1 AND next_run = ?3",
            params![next.map(seconds), job.id, seconds(due)],
        )?;
        Ok(n == 1)
    }

    /// Records a finished run (the answer cut to [`ANSWER_MAX_CHARS`]).
    pub fn record(&self, job: &Job, run: &Run) -> Result<(), CronError> {
        let answer = cap(&run.answer);
        self.conn.execute(
            "INSERT INTO runs (job_id, job_name, at, outcome, answer, missed) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![job.id, job.name, seconds(run.at), run.outcome, answer, run.missed],
        )?;
        Ok(())
    }
}

fn cap(answer: &str) -> String {
    let answer = answer.trim();
    if answer.chars().count() <= ANSWER_MAX_CHARS {
        return answer.to_string();
    }
    let mut s: String = answer.chars().take(ANSWER_MAX_CHARS).collect();
    s.push_str(" [...]");
    s
}

fn job_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    let ceiling: String = r.get(8)?;
    Ok(Job {
        id: r.get(0)?,
        name: r.get(1)?,
        schedule: r.get(2)?,
        timezone: r.get(3)?,
        prompt: r.get(4)?,
        enabled: r.get(5)?,
        created_at: at(r.get(6)?),
        next_run: r.get::<_, Option<i64>>(7)?.map(at),
        // A row this corral cannot read allows nothing beyond the defaults.
        ceiling: serde_json::from_str(&ceiling).unwrap_or_default(),
        last: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn jobs_round_trip_and_runs_are_claimed_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cron");
        let s = Store::open(&dir).unwrap();
        let sched = Schedule::parse("0 9 * * *", "UTC").unwrap();
        let c = Ceiling { network: "llm-only".into(), ..Ceiling::default() };
        let j = s.create("daily", &sched, "summarise", &c, ts("2026-01-01T08:00:00Z")).unwrap();
        assert_eq!(j.next_run, Some(ts("2026-01-01T09:00:00Z")));
        assert_eq!(j.ceiling, c);
        let e = s.create("daily", &sched, "again", &c, ts("2026-01-01T08:00:00Z")).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        // Two schedulers race for the same due run: one wins.
        let other = Store::open(&dir).unwrap();
        let next = Some(ts("2026-01-02T09:00:00Z"));
        assert!(s.claim(&j, ts("2026-01-01T09:00:00Z"), next).unwrap());
        assert!(!other.claim(&j, ts("2026-01-01T09:00:00Z"), next).unwrap());
        let run = Run {
            job: j.name.clone(),
            at: ts("2026-01-01T09:00:00Z"),
            outcome: "ok".into(),
            answer: "x".repeat(3000),
            missed: 2,
        };
        s.record(&j, &run).unwrap();
        let h = other.runs(Some(j.id), 10).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].answer.chars().count(), ANSWER_MAX_CHARS + 6);
        assert_eq!((h[0].missed, h[0].outcome.as_str()), (2, "ok"));
        assert_eq!(s.get("daily").unwrap().last.unwrap().at, ts("2026-01-01T09:00:00Z"));
        // Off, then on a week later: the next run is counted from then.
        s.set_enabled("daily", false, ts("2026-01-02T00:00:00Z")).unwrap();
        assert!(!s.claim(&j, ts("2026-01-02T09:00:00Z"), None).unwrap(), "a disabled job is not claimed");
        let j = s.set_enabled("daily", true, ts("2026-01-09T10:00:00Z")).unwrap();
        assert_eq!(j.next_run, Some(ts("2026-01-10T09:00:00Z")));
        s.delete("daily").unwrap();
        let e = s.get("daily").unwrap_err().to_string();
        assert!(e.contains("no job named 'daily'") && e.contains("there are no jobs"), "{e}");
        assert!(s.runs(None, 10).unwrap().is_empty());
    }

    #[test]
    fn one_scheduler_holds_the_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cron");
        let a = Store::open(&dir).unwrap();
        let b = Store::open(&dir).unwrap();
        let held = a.try_lock().unwrap().expect("free");
        assert!(b.try_lock().unwrap().is_none());
        drop(held);
        assert!(b.try_lock().unwrap().is_some());
    }
}
