//! `.beads/issues.jsonl` as beads (`bd`) keeps it: one JSON object per line. Lines corral does
//! not change are written back byte for byte; changed issues keep every field they had.

use serde_json::{Map, Value};

/// One line of the file.
#[derive(Debug, Clone)]
enum Line {
    /// An issue: its fields, and the line as read while it is unchanged.
    Issue { fields: Map<String, Value>, raw: Option<String> },
    /// A line that is not an issue object (blank, or not JSON): kept as it was.
    Other(String),
}

/// The backlog, in file order.
#[derive(Debug, Clone, Default)]
pub struct Backlog {
    lines: Vec<Line>,
}

/// Beads' statuses, dependency types and issue types.
pub const STATUSES: &[&str] = &["open", "in_progress", "blocked", "closed"];
pub const TYPES: &[&str] = &["bug", "feature", "task", "epic", "chore"];
pub const DEP_TYPES: &[&str] = &["blocks", "related", "parent-child", "discovered-from"];

impl Backlog {
    pub fn parse(text: &str) -> Backlog {
        let lines = text
            .lines()
            .map(|l| match serde_json::from_str::<Value>(l) {
                Ok(Value::Object(fields)) if fields.get("id").and_then(Value::as_str).is_some() => {
                    Line::Issue { fields, raw: Some(l.to_string()) }
                }
                _ => Line::Other(l.to_string()),
            })
            .collect();
        Backlog { lines }
    }

    /// The file's text: unchanged lines as read, changed ones as compact JSON.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            match l {
                Line::Issue { raw: Some(r), .. } | Line::Other(r) => out.push_str(r),
                Line::Issue { fields, raw: None } => out.push_str(&Value::Object(fields.clone()).to_string()),
            }
            out.push('\n');
        }
        out
    }

    /// Lines that are not issues (reported, never dropped).
    pub fn unreadable(&self) -> usize {
        self.lines.iter().filter(|l| matches!(l, Line::Other(t) if !t.trim().is_empty())).count()
    }

    pub fn issues(&self) -> impl Iterator<Item = Issue<'_>> {
        self.lines.iter().filter_map(|l| match l {
            Line::Issue { fields, .. } => Some(Issue(fields)),
            Line::Other(_) => None,
        })
    }

    pub fn get(&self, id: &str) -> Option<Issue<'_>> {
        self.issues().find(|i| i.id() == id)
    }

    /// The fields of issue `id`, to change (the line is then written anew).
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Map<String, Value>> {
        self.lines.iter_mut().find_map(|l| match l {
            Line::Issue { fields, raw } if fields.get("id").and_then(Value::as_str) == Some(id) => {
                *raw = None;
                Some(fields)
            }
            _ => None,
        })
    }

    pub fn push(&mut self, fields: Map<String, Value>) {
        self.lines.push(Line::Issue { fields, raw: None });
    }
}

/// A read-only view of one issue.
#[derive(Debug, Clone, Copy)]
pub struct Issue<'a>(pub &'a Map<String, Value>);

impl<'a> Issue<'a> {
    pub fn str(&self, key: &str) -> &'a str {
        self.0.get(key).and_then(Value::as_str).unwrap_or("")
    }
    pub fn id(&self) -> &'a str {
        self.str("id")
    }
    pub fn title(&self) -> &'a str {
        self.str("title")
    }
    /// `open` when absent, as beads reads it.
    pub fn status(&self) -> &'a str {
        match self.str("status") {
            "" => "open",
            s => s,
        }
    }
    /// 2 when absent, as beads reads it.
    pub fn priority(&self) -> i64 {
        self.0.get("priority").and_then(Value::as_i64).unwrap_or(2)
    }
    /// `task` when absent.
    pub fn issue_type(&self) -> &'a str {
        match self.str("issue_type") {
            "" => "task",
            s => s,
        }
    }
    pub fn created_at(&self) -> &'a str {
        self.str("created_at")
    }
    /// (depends_on_id, type) of each dependency; a missing type is `blocks`.
    pub fn dependencies(&self) -> Vec<(&'a str, &'a str)> {
        let Some(Value::Array(deps)) = self.0.get("dependencies") else { return Vec::new() };
        deps.iter()
            .filter_map(|d| {
                let on = d.get("depends_on_id")?.as_str()?;
                let kind = d.get("type").and_then(Value::as_str).unwrap_or("blocks");
                Some((on, kind))
            })
            .collect()
    }
    pub fn labels(&self) -> Vec<&'a str> {
        match self.0.get("labels") {
            Some(Value::Array(l)) => l.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }
}
