//! `continue.md` in the workspace's local state (outside it): when a session ends before the task is done, a short note of the
//! task, the plan and the recent activity, loaded into the next session's prompt once.

use crate::capabilities::local::Local;
use std::io;

/// The note's cap in characters.
pub const CONTINUE_MAX_CHARS: usize = 4000;
/// Notes older than this are still loaded, with a warning.
pub const STALE_SECS: u64 = 24 * 3600;

const FILE: &str = "continue.md";

/// What the note is made from.
pub struct Note<'a> {
    pub when: &'a str,
    pub reason: &'a str,
    pub task: &'a str,
    pub todo: Option<&'a str>,
    /// One line per recent tool call, oldest first.
    pub activity: &'a [String],
    pub last_reply: Option<&'a str>,
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// Renders the note, capped at [`CONTINUE_MAX_CHARS`].
pub fn render(n: &Note<'_>) -> String {
    let mut s = format!(
        "# Continue here\n\nWritten {} because {}.\n\n## Task\n{}\n",
        n.when,
        n.reason,
        clip(n.task.trim(), 1200)
    );
    if let Some(todo) = n.todo.filter(|t| !t.trim().is_empty()) {
        s.push_str(&format!("\n## Todo\n{}\n", clip(todo.trim_end(), 1200)));
    }
    if !n.activity.is_empty() {
        s.push_str("\n## Recent activity\n");
        let start = n.activity.len().saturating_sub(12);
        for line in &n.activity[start..] {
            s.push_str(&format!("- {}\n", clip(line, 160)));
        }
    }
    if let Some(r) = n.last_reply.filter(|r| !r.trim().is_empty()) {
        s.push_str(&format!("\n## Last reply\n{}\n", clip(r.trim(), 600)));
    }
    clip(&s, CONTINUE_MAX_CHARS)
}

/// Writes the note for the next session.
pub fn write(local: &Local, n: &Note<'_>) -> io::Result<()> {
    local.write(FILE, crate::redact::text(&render(n)).as_bytes())
}

/// A waiting note and its age in seconds.
pub fn load(local: &Local) -> io::Result<Option<(String, u64)>> {
    Ok(local.read(FILE)?.map(|text| (text, local.age_secs(FILE).unwrap_or(0))))
}

/// Removes the note once it has been handed to the model.
pub fn consume(local: &Local) -> io::Result<()> {
    local.remove(FILE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn note_round_trip_and_cap() {
        let t = tempfile::tempdir().unwrap();
        let d = Local::open(t.path(), Path::new("/w")).unwrap();
        assert!(load(&d).unwrap().is_none());
        let activity: Vec<String> = (0..20).map(|i| format!("read_file a{i}.txt: ok")).collect();
        let n = Note {
            when: "2026-01-01 10:00",
            reason: "the turn limit (3) was reached",
            task: "fix the bug",
            todo: Some("- [ ] step two"),
            activity: &activity,
            last_reply: Some("working on it"),
        };
        write(&d, &n).unwrap();
        let (text, age) = load(&d).unwrap().unwrap();
        assert!(age < 60);
        assert!(text.contains("the turn limit (3) was reached"));
        assert!(text.contains("## Task\nfix the bug"));
        assert!(text.contains("- [ ] step two"));
        assert!(text.contains("a19.txt") && !text.contains("a7.txt"), "only the last 12 calls");
        consume(&d).unwrap();
        assert!(load(&d).unwrap().is_none());
        let long = "z".repeat(10_000);
        let n = Note { task: &long, last_reply: Some(&long), ..n };
        assert!(render(&n).chars().count() <= CONTINUE_MAX_CHARS + 3);
    }
}
