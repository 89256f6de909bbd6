//! `backlog`: the beads issue tracker's backlog (`.beads/issues.jsonl`, the file `bd` reads and
//! writes): ready work, list, show, create, update, close and dependencies. Every change is a
//! whole-file atomic write through the host's workspace interface.

pub mod file;
pub mod ids;
mod show;
#[cfg(test)]
mod tests;

use corral_plugin_sdk::args::{opt_str, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use file::{Backlog, DEP_TYPES, STATUSES, TYPES};
use ids::Clock;
use serde_json::Map;

/// Where beads keeps its issues, from the workspace root.
pub const PATH: &str = ".beads/issues.jsonl";
pub const COMMANDS: &[&str] = &["ready", "list", "show", "create", "update", "close", "dep_add"];
const LIST_DEFAULT: usize = 50;

pub fn spec() -> Spec {
    Spec::new(
        "backlog",
        "The beads backlog (.beads/issues.jsonl, as `bd` keeps it). ready: open issues with no open blocker, \
         most urgent first. list (status|all, priority, issue_type), show, create (title, ...), update, \
         close (reason), dep_add (id depends on depends_on). Priority 0 is most urgent.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": COMMANDS},
                "id": {"type": "string"},
                "title": {"type": "string"},
                "description": {"type": "string"},
                "priority": {"type": "integer", "minimum": 0, "maximum": 4},
                "issue_type": {"type": "string", "enum": TYPES},
                "status": {"type": "string"},
                "assignee": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "string"}},
                "reason": {"type": "string"},
                "depends_on": {"type": "string"},
                "dep_type": {"type": "string", "enum": DEP_TYPES},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    )
    .writes(false, false)
}

pub fn run(ws: &dyn Workspace, args: &Value, clock: Clock) -> Result<Output, ToolError> {
    let command = req_str(args, "command")?;
    let command = if command == "dep add" || command == "dep" { "dep_add" } else { command };
    if !COMMANDS.contains(&command) {
        return Err(ToolError::invalid_args(format!("'command' must be one of {}", COMMANDS.join(", "))));
    }
    let resolver = Resolver::new(ws);
    let root = resolver.workspace_root().to_path_buf();
    let path = root.join(PATH);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => {
            ws.note_read(&path);
            t
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error(PATH, &e)),
    };
    let mut backlog = Backlog::parse(&text);
    let warn = match backlog.unreadable() {
        0 => String::new(),
        n => format!("\n(note: {n} line(s) of {PATH} are not issues; they are kept as they are)"),
    };
    let out = match command {
        "ready" => show::ready(&backlog, limit(args)?),
        "list" => show::list(&backlog, args, limit(args)?)?,
        "show" => show::one(&backlog, req_str(args, "id")?)?,
        _ => {
            let folder = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let said = change(&mut backlog, command, args, clock, &folder)?;
            ws.write(&path, backlog.render().as_bytes())?;
            said
        }
    };
    Ok(Output::text(format!("{out}{warn}")))
}

fn limit(args: &Value) -> Result<usize, ToolError> {
    Ok(corral_plugin_sdk::args::opt_u64(args, "limit")?.map_or(LIST_DEFAULT, |n| n.max(1) as usize))
}

fn not_found(backlog: &Backlog, id: &str) -> ToolError {
    let known: Vec<&str> = backlog.issues().map(|i| i.id()).take(20).collect();
    let list =
        if known.is_empty() { format!("{PATH} has no issues") } else { format!("ids: {}", known.join(", ")) };
    ToolError::new(ErrorKind::NotFound, format!("there is no issue '{id}' ({list})"))
}

fn priority(args: &Value) -> Result<Option<i64>, ToolError> {
    match args.get("priority") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(p @ 0..=4) => Ok(Some(p)),
            _ => Err(ToolError::invalid_args("'priority' is 0 (most urgent) to 4 (backlog)")),
        },
    }
}

fn one_of<'a>(args: &'a Value, key: &str, allowed: &[&str]) -> Result<Option<&'a str>, ToolError> {
    match opt_str(args, key)? {
        Some(v) if !allowed.contains(&v) => {
            Err(ToolError::invalid_args(format!("'{key}' must be one of {}", allowed.join(", "))))
        }
        other => Ok(other),
    }
}

/// Sets the fields every command may change; returns what changed, for the answer.
fn set_fields(f: &mut Map<String, Value>, args: &Value) -> Result<Vec<&'static str>, ToolError> {
    let mut changed = Vec::new();
    for key in ["title", "description", "assignee"] {
        if let Some(v) = opt_str(args, key)? {
            if key == "title" && v.trim().is_empty() {
                return Err(ToolError::invalid_args("'title' is empty"));
            }
            f.insert(key.into(), json!(v));
            changed.push(key);
        }
    }
    if let Some(p) = priority(args)? {
        f.insert("priority".into(), json!(p));
        changed.push("priority");
    }
    if let Some(t) = one_of(args, "issue_type", TYPES)? {
        f.insert("issue_type".into(), json!(t));
        changed.push("issue_type");
    }
    if let Some(l) = args.get("labels").filter(|v| !v.is_null()) {
        let labels: Vec<&str> = l
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .ok_or_else(|| ToolError::invalid_args("'labels' is a list of strings"))?;
        if labels.is_empty() {
            f.remove("labels");
        } else {
            f.insert("labels".into(), json!(labels));
        }
        changed.push("labels");
    }
    Ok(changed)
}

/// Sets the status, keeping beads' rule: `closed_at` is set exactly when the status is closed.
fn set_status(f: &mut Map<String, Value>, status: &str, now: &str, reason: Option<&str>) {
    f.insert("status".into(), json!(status));
    if status == "closed" {
        f.insert("closed_at".into(), json!(now));
        if let Some(r) = reason.filter(|r| !r.trim().is_empty()) {
            f.insert("close_reason".into(), json!(r));
        }
    } else {
        f.remove("closed_at");
        f.remove("close_reason");
    }
}

fn change(
    backlog: &mut Backlog,
    command: &str,
    args: &Value,
    clock: Clock,
    folder: &str,
) -> Result<String, ToolError> {
    let now = clock.rfc3339();
    match command {
        "create" => {
            let title = req_str(args, "title")?.trim();
            if title.is_empty() || title.chars().count() > 500 {
                return Err(ToolError::invalid_args("'title' must be 1 to 500 characters"));
            }
            let description = opt_str(args, "description")?.unwrap_or("");
            let prefix = ids::prefix(backlog, folder);
            let id = ids::new_id(backlog, &prefix, title, description, clock);
            let mut f = Map::new();
            f.insert("id".into(), json!(id));
            f.insert("title".into(), json!(title));
            f.insert("description".into(), json!(description));
            f.insert("status".into(), json!("open"));
            f.insert("priority".into(), json!(2));
            f.insert("issue_type".into(), json!("task"));
            set_fields(&mut f, args)?;
            f.insert("created_at".into(), json!(now));
            f.insert("updated_at".into(), json!(now));
            backlog.push(f);
            Ok(format!("Created {id}: {title}"))
        }
        "update" => {
            let id = req_str(args, "id")?;
            let status = one_of(args, "status", STATUSES)?;
            let Some(f) = backlog.get_mut(id) else { return Err(not_found(backlog, id)) };
            let mut changed = set_fields(f, args)?;
            if let Some(s) = status {
                set_status(f, s, &now, opt_str(args, "reason")?);
                changed.push("status");
            }
            if changed.is_empty() {
                return Err(ToolError::invalid_args(
                    "update needs a field to change: title, description, priority, issue_type, status, assignee or labels",
                ));
            }
            f.insert("updated_at".into(), json!(now));
            Ok(format!("Updated {id}: {}", changed.join(", ")))
        }
        "close" => {
            let id = req_str(args, "id")?;
            let reason = opt_str(args, "reason")?;
            let Some(f) = backlog.get_mut(id) else { return Err(not_found(backlog, id)) };
            set_status(f, "closed", &now, reason);
            f.insert("updated_at".into(), json!(now));
            Ok(format!("Closed {id}{}", reason.map(|r| format!(": {r}")).unwrap_or_default()))
        }
        _ => dep_add(backlog, args, &now),
    }
}

fn dep_add(backlog: &mut Backlog, args: &Value, now: &str) -> Result<String, ToolError> {
    let id = req_str(args, "id")?;
    let on = req_str(args, "depends_on")?;
    let kind = one_of(args, "dep_type", DEP_TYPES)?.unwrap_or("blocks");
    if id == on {
        return Err(ToolError::invalid_args("an issue cannot depend on itself"));
    }
    for x in [id, on] {
        if backlog.get(x).is_none() {
            return Err(not_found(backlog, x));
        }
    }
    if backlog.get(id).is_some_and(|i| i.dependencies().iter().any(|(d, _)| *d == on)) {
        return Ok(format!("{id} already depends on {on}; nothing changed"));
    }
    if kind == "blocks" && reaches(backlog, on, id) {
        return Err(ToolError::new(
            ErrorKind::Conflict,
            format!("{on} already depends (through blockers) on {id}: adding this would make a cycle"),
        ));
    }
    let Some(f) = backlog.get_mut(id) else { return Err(not_found(backlog, id)) };
    let dep =
        json!({"issue_id": id, "depends_on_id": on, "type": kind, "created_at": now, "created_by": "corral"});
    match f.get_mut("dependencies") {
        Some(Value::Array(a)) => a.push(dep),
        _ => {
            f.insert("dependencies".into(), json!([dep]));
        }
    }
    f.insert("updated_at".into(), json!(now));
    Ok(format!("{id} now depends on {on} ({kind})"))
}

/// Whether `from` depends on `to` through `blocks` dependencies.
fn reaches(backlog: &Backlog, from: &str, to: &str) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(cur) = stack.pop() {
        if cur == to {
            return true;
        }
        if !seen.insert(cur.clone()) {
            continue;
        }
        if let Some(i) = backlog.get(&cur) {
            stack.extend(
                i.dependencies().into_iter().filter(|(_, k)| *k == "blocks").map(|(d, _)| d.to_string()),
            );
        }
    }
    false
}
