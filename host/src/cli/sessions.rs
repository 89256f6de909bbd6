//! Saved sessions from the command line: `corral sessions` (the list, `rm`), and what a run
//! does with them as it starts: a new session's file, or a saved session resumed or forked.

use super::GlobalArgs;
use super::report::print;
use super::setup::{self, Env};
use crate::agent::{Agent, Observer};
use crate::capabilities::local::Local;
use crate::config::Settings;
use crate::context::saved::{self, Header, Journal, Retention, Summary, load, store};
use crate::llm::Client;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Remove a saved session
    Rm {
        /// Its id, or a unique start of it
        id: String,
    },
}

/// The retention limits the settings give.
pub fn retention(s: &Settings) -> Retention {
    Retention {
        keep: usize::try_from(s.sessions.keep).unwrap_or(usize::MAX),
        max_total: s.sessions.max_mb.saturating_mul(1 << 20),
        max_file: s.sessions.max_file_mb.saturating_mul(1 << 20),
    }
}

/// What the run was asked to do with saved sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice<'a> {
    /// A new session.
    New,
    /// Go on with a saved session (by id or prefix; None: the most recent), in its own file.
    Resume(Option<&'a str>),
    /// A new session starting from a copy of a saved one.
    Fork(&'a str),
}

impl<'a> Choice<'a> {
    pub fn of(g: &'a GlobalArgs) -> Choice<'a> {
        match (&g.fork, &g.resume, g.continue_last) {
            (Some(id), ..) => Choice::Fork(id.as_str()),
            (None, Some(id), _) if !id.is_empty() => Choice::Resume(Some(id.as_str())),
            (None, Some(_), _) | (None, None, true) => Choice::Resume(None),
            (None, None, false) => Choice::New,
        }
    }

    /// Whether the run goes on from a saved session.
    pub fn resumes(self) -> bool {
        self != Choice::New
    }
}

/// The provider's name as the settings give it.
fn provider_name(s: &Settings) -> String {
    s.model.provider.clone().unwrap_or_else(|| "openai-compatible".to_string())
}

/// Collects the notices of a save made outside a task.
struct Notes(Vec<String>);

impl Observer for Notes {
    fn notice(&mut self, text: &str) {
        self.0.push(text.to_string());
    }
}

/// Starts the run's session as `choice` asks: a saved one is read and put back into `agent`,
/// and (unless `sessions.save` is off) the session's file is opened or made and the oldest
/// sessions past the retention limits are deleted. Returns warnings for the person; Err when
/// the saved session cannot be had (the run must not go on without it).
pub fn begin(
    agent: &mut Agent<'_>,
    env: &Env,
    client: &Client,
    choice: Choice<'_>,
    ci: bool,
) -> Result<Vec<String>, String> {
    let s = &env.settings;
    let local = &env.session.local();
    let r = retention(s);
    let (model, provider) = (client.config().model.clone(), provider_name(s));
    if ci && choice == Choice::Resume(None) {
        return Err("CI mode resumes a saved session only by its id (--resume ID or --fork ID): \
                    --continue and --resume without an id would pick whichever ran last"
            .to_string());
    }
    let prefix = match choice {
        Choice::New => None,
        Choice::Resume(p) => Some(p),
        Choice::Fork(id) => Some(Some(id)),
    };
    let loaded = match prefix {
        None => None,
        Some(p) => {
            let id = store::resolve(local, p).map_err(|e| e.to_string())?;
            Some(load::load(local, &id, r.max_file).map_err(|e| e.to_string())?)
        }
    };
    // The session saved so far (the REPL's /resume) is brought up to date, then gets nothing
    // of the next one.
    let mut notes = Notes(Vec::new());
    agent.save_session(&mut notes);
    let mut notes = notes.0;
    agent.set_journal(None);
    let loaded = match loaded {
        None => None,
        Some(l) => {
            let id = l.header.id.clone();
            notes.extend(l.warnings.iter().cloned());
            notes.extend(agent.resume_from(&l));
            if l.model != model || l.provider != provider {
                notes.push(format!(
                    "session {id} was made with {} ({}); it goes on with {model} ({provider})",
                    l.model, l.provider
                ));
            }
            Some(l)
        }
    };
    if !s.sessions.save {
        return Ok(notes);
    }
    let journal = match (choice, &loaded) {
        (Choice::Resume(_), Some(l)) => Journal::reopen(local, l, &model, &provider, r.max_file),
        _ => {
            let header = Header {
                schema_version: saved::SCHEMA_VERSION,
                id: saved::new_id(),
                created: jiff::Timestamp::now().to_string(),
                workspace: env.session.roots().workspace().path.display().to_string(),
                model,
                provider,
                corral_version: env!("CARGO_PKG_VERSION").to_string(),
                forked_from: loaded.as_ref().map(|l| l.header.id.clone()),
            };
            Journal::create(local, &header, r.max_file)
        }
    };
    match journal {
        Ok(j) => {
            let id = j.id().to_string();
            agent.set_journal(Some(j));
            let mut saved_notes = Notes(Vec::new());
            agent.save_session(&mut saved_notes);
            notes.extend(saved_notes.0);
            if let Err(e) = store::prune(local, &r, &id) {
                notes.push(format!("cannot delete old sessions: {e}"));
            }
        }
        Err(e) => notes.push(format!("this session is not saved: {e}")),
    }
    Ok(notes)
}

/// `corral sessions [rm ID]`; returns the exit code.
pub fn run(g: &GlobalArgs, json: bool, command: Option<SessionsCommand>) -> i32 {
    match command_result(g, json, command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e));
            2
        }
    }
}

fn command_result(g: &GlobalArgs, json: bool, command: Option<SessionsCommand>) -> Result<i32, String> {
    let resolved = setup::resolve(g, g.ci, false).map_err(|e| e.to_string())?;
    let dir = super::cron_settings::state_folder(&resolved.workspace)?;
    let real = std::fs::canonicalize(&resolved.workspace)
        .map_err(|e| format!("cannot open the workspace {}: {e}", resolved.workspace.display()))?;
    let local = Local::open(&dir, &real).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let r = retention(&resolved.settings);
    match command {
        Some(SessionsCommand::Rm { id }) => {
            let id = store::resolve(&local, Some(&id)).map_err(|e| e.to_string())?;
            store::remove(&local, &id).map_err(|e| e.to_string())?;
            Ok(print(&format!("Removed session {id}.\n")))
        }
        None => {
            let all = store::list(&local, r.max_file).map_err(|e| e.to_string())?;
            let text = if json { listing_json(&all) } else { listing(&all) };
            Ok(print(&crate::redact::text(&text)))
        }
    }
}

/// The start time in local time, `YYYY-MM-DD HH:MM`.
fn started(created: &str) -> String {
    match created.parse::<jiff::Timestamp>() {
        Ok(t) => t.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M").to_string(),
        Err(_) => "?".to_string(),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / f64::from(1u32 << 20)),
    }
}

/// The first line of a task, clipped to `max` characters.
pub fn task_line(task: &str, max: usize) -> String {
    let line = crate::termtext::clean(task.trim().lines().next().unwrap_or(""));
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.push_str("...");
    }
    out
}

/// The sessions as a table, newest first.
pub fn listing(all: &[Summary]) -> String {
    if all.is_empty() {
        return "No saved sessions in this workspace.\n".to_string();
    }
    let mut out = format!("{:<22}  {:<16}  {:>5}  {:>8}  TASK\n", "ID", "STARTED", "TURNS", "SIZE");
    for s in all {
        let task = match (&s.problem, &s.task) {
            (Some(p), _) => format!("(cannot be read: {})", task_line(p, 100)),
            (None, Some(t)) => task_line(t, 60),
            (None, None) => String::new(),
        };
        out.push_str(&format!(
            "{:<22}  {:<16}  {:>5}  {:>8}  {task}\n",
            s.id,
            started(&s.created),
            s.turns,
            size(s.size)
        ));
    }
    out
}

fn listing_json(all: &[Summary]) -> String {
    let sessions: Vec<serde_json::Value> = all
        .iter()
        .map(|s| {
            let modified = s.modified.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            serde_json::json!({
                "id": s.id,
                "created": s.created,
                "modified_unix": modified,
                "turns": s.turns,
                "size": s.size,
                "task": s.task,
                "model": s.model,
                "problem": s.problem,
            })
        })
        .collect();
    format!("{}\n", serde_json::json!({"schema_version": 1, "sessions": sessions}))
}

/// The most recent sessions for the REPL's `/resume`.
pub fn recent(env: &Env, current: Option<&str>) -> String {
    let r = retention(&env.settings);
    match store::list(env.session.local(), r.max_file) {
        Ok(all) if all.is_empty() => "no saved sessions in this workspace yet".to_string(),
        Ok(all) => {
            let mut text = listing(&all[..all.len().min(10)]);
            if let Some(id) = current {
                text.push_str(&format!("this session: {id}; /resume ID switches to another\n"));
            }
            text.trim_end().to_string()
        }
        Err(e) => format!("error: {e}"),
    }
}
