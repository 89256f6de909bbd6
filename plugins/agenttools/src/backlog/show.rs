//! The backlog's read commands: ready work (open, every blocker closed, by priority then age),
//! filtered lists, and one issue in full with what blocks it and what it blocks.

use super::file::{Backlog, Issue, STATUSES, TYPES};
use corral_plugin_sdk::args::opt_str;
use corral_plugin_sdk::{ToolError, Value};

fn line(i: Issue<'_>) -> String {
    format!("{} [P{}] [{}] {} - {}", i.id(), i.priority(), i.issue_type(), i.status(), i.title())
}

/// The open blockers of `i`: `blocks` dependencies on issues in the file that are not closed.
pub fn open_blockers<'a>(b: &'a Backlog, i: Issue<'a>) -> Vec<&'a str> {
    i.dependencies()
        .into_iter()
        .filter(|(_, kind)| *kind == "blocks")
        .filter(|(on, _)| b.get(on).is_some_and(|d| d.status() != "closed"))
        .map(|(on, _)| on)
        .collect()
}

/// Open issues with no open blocker, most urgent first, then oldest.
pub fn ready_issues(b: &Backlog) -> Vec<Issue<'_>> {
    let mut ready: Vec<Issue<'_>> =
        b.issues().filter(|i| i.status() == "open" && open_blockers(b, *i).is_empty()).collect();
    ready.sort_by(|a, c| (a.priority(), a.created_at(), a.id()).cmp(&(c.priority(), c.created_at(), c.id())));
    ready
}

pub fn ready(b: &Backlog, limit: usize) -> String {
    let ready = ready_issues(b);
    if ready.is_empty() {
        let open = b.issues().filter(|i| i.status() != "closed").count();
        return if open == 0 {
            "No open issues.".into()
        } else {
            format!("No ready work: all {open} unclosed issue(s) are blocked or in progress.")
        };
    }
    let mut out = format!("Ready work ({} issue(s), most urgent first):\n", ready.len());
    for i in ready.iter().take(limit) {
        out.push_str(&line(*i));
        out.push('\n');
    }
    out.trim_end().to_string()
}

pub fn list(b: &Backlog, args: &Value, limit: usize) -> Result<String, ToolError> {
    let status = opt_str(args, "status")?;
    if let Some(s) = status.filter(|s| *s != "all" && !STATUSES.contains(s)) {
        return Err(ToolError::invalid_args(format!(
            "'status' {s:?} is not one of {}, all",
            STATUSES.join(", ")
        )));
    }
    let kind = opt_str(args, "issue_type")?;
    if let Some(t) = kind.filter(|t| !TYPES.contains(t)) {
        return Err(ToolError::invalid_args(format!(
            "'issue_type' {t:?} is not one of {}",
            TYPES.join(", ")
        )));
    }
    let priority = args.get("priority").and_then(Value::as_i64);
    let mut found: Vec<Issue<'_>> = b
        .issues()
        .filter(|i| match status {
            None => i.status() != "closed",
            Some("all") => true,
            Some(s) => i.status() == s,
        })
        .filter(|i| kind.is_none_or(|t| i.issue_type() == t))
        .filter(|i| priority.is_none_or(|p| i.priority() == p))
        .collect();
    found.sort_by(|a, c| (a.priority(), a.created_at(), a.id()).cmp(&(c.priority(), c.created_at(), c.id())));
    if found.is_empty() {
        return Ok("No issues match.".into());
    }
    let mut out = format!("{} issue(s):\n", found.len());
    for i in found.iter().take(limit) {
        out.push_str(&line(*i));
        out.push('\n');
    }
    if found.len() > limit {
        out.push_str(&format!("...and {} more (raise limit)\n", found.len() - limit));
    }
    Ok(out.trim_end().to_string())
}

pub fn one(b: &Backlog, id: &str) -> Result<String, ToolError> {
    let Some(i) = b.get(id) else { return Err(super::not_found(b, id)) };
    let mut out = format!("{}\n", line(i));
    for key in [
        "description",
        "design",
        "acceptance_criteria",
        "notes",
        "assignee",
        "created_at",
        "updated_at",
        "closed_at",
        "close_reason",
    ] {
        let v = i.str(key);
        if !v.is_empty() {
            out.push_str(&format!("{key}: {v}\n"));
        }
    }
    let labels = i.labels();
    if !labels.is_empty() {
        out.push_str(&format!("labels: {}\n", labels.join(", ")));
    }
    for (on, kind) in i.dependencies() {
        let state =
            b.get(on).map_or("not in this backlog".to_string(), |d| format!("{}: {}", d.status(), d.title()));
        out.push_str(&format!("depends on {on} ({kind}; {state})\n"));
    }
    for other in b.issues().filter(|o| o.dependencies().iter().any(|(d, _)| *d == id)) {
        out.push_str(&format!("needed by {} ({})\n", other.id(), other.status()));
    }
    let blockers = open_blockers(b, i);
    if i.status() == "open" {
        out.push_str(&if blockers.is_empty() {
            "ready: yes\n".to_string()
        } else {
            format!("ready: no, blocked by {}\n", blockers.join(", "))
        });
    }
    Ok(out.trim_end().to_string())
}
