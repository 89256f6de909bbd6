//! The `cron` tool's actions (create, list, delete, enable, disable, history) over the job
//! store; the agent offers the tool and turns the text or error into a tool result.

use super::{Ceiling, CronError, Job, Schedule, Store, local_zone};
use corral_contract::{ErrorKind, error::error_text};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::path::Path;

pub const NAME: &str = "cron";
pub const ACTIONS: &[&str] = &["create", "list", "delete", "enable", "disable", "history"];
/// Longest job name and prompt.
pub const NAME_MAX: usize = 64;
pub const PROMPT_MAX: usize = 8000;
const HISTORY_DEFAULT: u32 = 10;
const HISTORY_MAX: u32 = 50;

pub const DESCRIPTION: &str = "Recurring tasks for this workspace. create: name, schedule (5-field cron \
     \"min hour day month weekday\"), prompt, timezone (IANA, optional). list; delete, enable, disable: name; \
     history: past runs (name, limit). Each job runs later as its own session, never with wider settings than now.";

/// The tool's JSON Schema.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ACTIONS},
            "name": {"type": "string", "maxLength": NAME_MAX},
            "job_id": {"type": "integer"},
            "schedule": {"type": "string"},
            "prompt": {"type": "string", "maxLength": PROMPT_MAX},
            "timezone": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": HISTORY_MAX}
        },
        "required": ["action"],
        "additionalProperties": false
    })
}

/// What a call needs from the session.
pub struct Ctx<'a> {
    /// The workspace's state folder (where `cron.db` lives).
    pub dir: &'a Path,
    /// The person's settings now, saved with a new job.
    pub ceiling: &'a Ceiling,
    /// CI mode: nothing lasting may be changed.
    pub ci: bool,
    pub now: Timestamp,
}

fn text<'v>(args: &'v Value, key: &str) -> Result<Option<&'v str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(error_text(ErrorKind::InvalidArgs, &format!("'{key}' must be a string"), None)),
    }
}

/// Runs one call: the text for the model, or an error text (`error (kind): ...`).
pub fn run(ctx: &Ctx<'_>, args: &Value) -> Result<String, String> {
    let action = text(args, "action")?.unwrap_or("");
    if !ACTIONS.contains(&action) {
        return Err(error_text(
            ErrorKind::InvalidArgs,
            &format!("'action' must be one of {}", ACTIONS.join(", ")),
            None,
        ));
    }
    if ctx.ci && !matches!(action, "list" | "history") {
        return Err(error_text(
            ErrorKind::Denied,
            &format!(
                "the cron tool cannot {action} jobs in CI mode (--ci or corral exec): a CI run leaves \
             nothing behind that runs later. The person can manage jobs from a session without --ci, or list \
             them with `corral cron list`."
            ),
            None,
        ));
    }
    let store = Store::open(ctx.dir).map_err(|e| error_text(ErrorKind::Io, &e.to_string(), None))?;
    let fail = |e: CronError| match e {
        CronError::Schedule(_) | CronError::Timezone(_) | CronError::Invalid(_) => {
            error_text(ErrorKind::InvalidArgs, &e.to_string(), None)
        }
        CronError::NotFound(_) => error_text(ErrorKind::NotFound, &e.to_string(), None),
        CronError::Exists(_) => error_text(ErrorKind::Conflict, &e.to_string(), None),
        CronError::Io(_) | CronError::Store(_) => error_text(ErrorKind::Io, &e.to_string(), None),
    };
    let target = || -> Result<String, String> {
        if let Some(n) = text(args, "name")? {
            return Ok(n.to_string());
        }
        match args.get("job_id").and_then(Value::as_i64) {
            Some(id) => Ok(id.to_string()),
            None => Err(error_text(
                ErrorKind::InvalidArgs,
                &format!("'{action}' needs the job's name (or job_id)"),
                None,
            )),
        }
    };
    match action {
        "create" => create(ctx, &store, args).map_err(fail),
        "list" => {
            let jobs = store.list().map_err(fail)?;
            if jobs.is_empty() {
                return Ok("No cron jobs in this workspace. Create one with action \"create\".".into());
            }
            Ok(jobs.iter().map(describe).collect::<Vec<_>>().join("\n"))
        }
        "delete" => {
            let j = store.delete(&target()?).map_err(fail)?;
            Ok(format!("Deleted job '{}' and its history.", j.name))
        }
        "enable" | "disable" => {
            let on = action == "enable";
            let j = store.set_enabled(&target()?, on, ctx.now).map_err(fail)?;
            Ok(format!("Job '{}' is {}.\n{}", j.name, if on { "enabled" } else { "disabled" }, describe(&j)))
        }
        _ => {
            let limit = match args.get("limit") {
                None | Some(Value::Null) => HISTORY_DEFAULT,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..) => (n as u32).min(HISTORY_MAX),
                    _ => {
                        return Err(error_text(
                            ErrorKind::InvalidArgs,
                            "'limit' must be a positive integer",
                            None,
                        ));
                    }
                },
            };
            let job = match (text(args, "name")?, args.get("job_id").and_then(Value::as_i64)) {
                (None, None) => None,
                _ => Some(store.get(&target()?).map_err(fail)?),
            };
            let runs = store.runs(job.as_ref().map(|j| j.id), limit).map_err(fail)?;
            if runs.is_empty() {
                return Ok("No runs yet.".into());
            }
            Ok(runs
                .iter()
                .map(|r| {
                    let missed = if r.missed > 0 {
                        format!(" ({} missed slots skipped)", r.missed)
                    } else {
                        String::new()
                    };
                    format!("- {} {} {}{missed}: {}", r.at, r.job, r.outcome, one_line(&r.answer, 300))
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
    }
}

fn create(ctx: &Ctx<'_>, store: &Store, args: &Value) -> Result<String, CronError> {
    let req = |key: &str| -> Result<String, CronError> {
        match args.get(key).and_then(Value::as_str).map(str::trim) {
            Some(s) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(CronError::Invalid(format!("create needs '{key}'"))),
        }
    };
    let name = req("name")?;
    check_name(&name)?;
    let prompt = req("prompt")?;
    if prompt.chars().count() > PROMPT_MAX {
        return Err(CronError::Invalid(format!("'prompt' is longer than {PROMPT_MAX} characters")));
    }
    let tz = match args.get("timezone").and_then(Value::as_str).map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => local_zone(),
    };
    let schedule = Schedule::parse(&req("schedule")?, &tz)?;
    let job = store.create(&name, &schedule, &prompt, ctx.ceiling, ctx.now)?;
    Ok(format!(
        "Created job '{}'. It runs under the settings in force now (or narrower ones, if they shrink), \
         when `corral cron run` or an interactive session is running.\n{}",
        job.name,
        describe(&job)
    ))
}

/// A job name: 1 to 64 letters, digits, `.`, `_` or `-`, not all digits (ids are numbers).
pub fn check_name(name: &str) -> Result<(), CronError> {
    let ok = !name.is_empty()
        && name.chars().count() <= NAME_MAX
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.chars().all(|c| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(CronError::Invalid(format!(
            "'{}' is not a job name: use 1 to {NAME_MAX} letters, digits, '.', '_' or '-' (not only digits)",
            name.chars().take(NAME_MAX).collect::<String>()
        )))
    }
}

/// One job as listed.
pub fn describe(j: &Job) -> String {
    let next = match (j.enabled, j.next_run, Schedule::parse(&j.schedule, &j.timezone)) {
        (false, _, _) => "disabled".to_string(),
        (true, Some(t), Ok(s)) => format!("next {}", s.local(t)),
        (true, Some(t), Err(_)) => format!("next {t}"),
        (true, None, _) => "no next run".to_string(),
    };
    let last = match &j.last {
        Some(r) => format!("last {} at {}", r.outcome, r.at),
        None => "never run".to_string(),
    };
    format!(
        "- {} (id {}): \"{}\" {}, {}, {}, {next}, {last}\n  prompt: {}",
        j.name,
        j.id,
        j.schedule,
        j.timezone,
        if j.enabled { "enabled" } else { "disabled" },
        format_args!("created {}", j.created_at),
        one_line(&j.prompt, 200)
    )
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}...", flat.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(dir: &'a Path, c: &'a Ceiling, ci: bool) -> Ctx<'a> {
        Ctx { dir, ceiling: c, ci, now: "2026-01-01T08:00:00Z".parse().unwrap() }
    }

    #[test]
    fn actions_over_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cron");
        let c = Ceiling::default();
        let x = ctx(&dir, &c, false);
        let out = run(
            &x,
            &json!({"action": "create", "name": "daily", "schedule": "0 9 * * *", "prompt": "sum up", "timezone": "UTC"}),
        )
        .unwrap();
        assert!(out.contains("Created job 'daily'") && out.contains("next 2026-01-01 09:00 UTC"), "{out}");
        let e = run(&x, &json!({"action": "create", "name": "bad", "schedule": "* *", "prompt": "p"}))
            .unwrap_err();
        assert!(e.starts_with("error (invalid-args): invalid schedule") && e.contains("exactly 5"), "{e}");
        let e = run(
            &x,
            &json!({"action": "create", "name": "tz", "schedule": "0 9 * * *", "prompt": "p", "timezone": "Nowhere/Else"}),
        )
        .unwrap_err();
        assert!(e.contains("invalid timezone") && e.contains("IANA"), "{e}");
        let e = run(&x, &json!({"action": "create", "name": "../x", "schedule": "0 9 * * *", "prompt": "p"}))
            .unwrap_err();
        assert!(e.contains("not a job name"), "{e}");
        let out = run(&x, &json!({"action": "disable", "job_id": 1})).unwrap();
        assert!(out.contains("'daily' is disabled"), "{out}");
        assert!(run(&x, &json!({"action": "list"})).unwrap().contains("disabled, created"));
        assert_eq!(run(&x, &json!({"action": "history", "name": "daily"})).unwrap(), "No runs yet.");
        let e = run(&x, &json!({"action": "delete", "name": "nope"})).unwrap_err();
        assert!(e.starts_with("error (not-found)") && e.contains("the jobs are: daily"), "{e}");
        // CI mode: nothing lasting, but reading is fine.
        let ci = ctx(&dir, &c, true);
        let e = run(&ci, &json!({"action": "create", "name": "n", "schedule": "0 9 * * *", "prompt": "p"}))
            .unwrap_err();
        assert!(
            e.starts_with("error (denied)") && e.contains("CI mode") && e.contains("without --ci"),
            "{e}"
        );
        assert!(run(&ci, &json!({"action": "delete", "name": "daily"})).is_err());
        assert!(run(&ci, &json!({"action": "list"})).unwrap().contains("daily"));
        assert!(run(&x, &json!({"action": "delete", "name": "daily"})).unwrap().contains("Deleted"));
    }
}
