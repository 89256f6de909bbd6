//! The system prompt: corral's role and working rules, the tool and skill catalogues, the
//! workspace and date, the project's instruction files, the durable sections, and any
//! continue-here note.

use crate::capabilities::Session;
use crate::llm::ToolDef;
use std::path::Path;

/// The most of one instruction file that is included, in characters.
pub const INSTRUCTIONS_MAX_CHARS: usize = 10_000;

const ROLE: &str = "You are corral, a coding agent. You work on the project in the workspace below \
using the tools you are given, which run in a sandbox: they can reach the workspace roots and nothing \
else. Do the task completely, then answer with a short account of what you did.";

const RULES: &str = "\
## How to work
- Look before you change: read a file (read_file) before editing or replacing it; the host refuses \
changes to existing files you have not read in this session.
- Prefer edit_file for changes to existing files; use write_file for new files or full rewrites.
- Use grep and list_files to find things instead of guessing paths.
- For work with several steps, keep a plan with the todo tool and mark items done as you go.
- Use think to reason through a hard problem before acting; your thinking notes are kept for you.
- Context is limited: after reading through many files, call snapshot restore with a summary of what \
you learned; the reads are replaced by your summary. Save lasting project facts with memory_write.
- Paths are relative to the workspace root unless absolute.
- When a tool returns an error, read it: it says what to fix. Do not repeat a failing call unchanged.
- Your final answer (a reply with no tool calls) ends the task: make it a brief summary of the result.";

/// The role and rules for small windows (terse mode and the emergency floor): the tool
/// schemas describe the tools, so no catalogue is listed.
const TERSE: &str = "You are corral, a coding agent working on the project in the workspace with sandboxed \
tools. Read a file before you edit it; prefer edit_file for changes; use grep to find things; paths are relative \
to the workspace. Context is small: read large files in parts (offset, limit). Do the whole task with tools, then \
answer with a short account of what you did.";

const SKILLS: &str = "Skills are know-how for particular kinds of task, with files and scripts. \
When the task matches a skill below, activate it with use_skill before you start: its instructions \
are not shown until then.";

const INTERACTIVE: &str = "A person is following this session. When the task is truly ambiguous and \
a wrong guess would be costly, ask with the question tool; otherwise decide and proceed.";

const AUTONOMOUS: &str = "No one is watching this run and no one can answer questions: when something \
is ambiguous, choose the most reasonable reading, say which one you chose, and carry on.";

/// The parts of the prompt that do not change during a session.
#[derive(Debug, Clone, Default)]
pub struct StaticParts {
    /// The role text (corral's own, or the user's replacement).
    pub role: String,
    /// The tool catalogue, one line per tool.
    pub catalogue: String,
    /// The skill catalogue, one line per skill (empty when there are none).
    pub skills: String,
    /// Workspace roots, as lines.
    pub roots: String,
    /// Instruction files, already wrapped and capped.
    pub instructions: String,
    pub interactive: bool,
    /// Small window: the short role and rules, no catalogue (the tool schemas say it all).
    pub terse: bool,
}

impl StaticParts {
    pub fn new(
        role: Option<&str>,
        tools: &[ToolDef],
        session: &Session,
        load_instructions: bool,
        interactive: bool,
        warn: &mut dyn FnMut(String),
    ) -> Self {
        let catalogue = tools
            .iter()
            .map(|t| format!("- {}: {}", t.name, first_sentence(&t.description)))
            .collect::<Vec<_>>()
            .join("\n");
        let roots = session
            .roots()
            .all()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let what = match (i, r.writable) {
                    (0, _) => "workspace root",
                    (_, true) => "extra root, read-write",
                    (_, false) => "extra root, read-only",
                };
                format!("- {} ({what})", r.path.display())
            })
            .collect::<Vec<_>>()
            .join("\n");
        let ws = &session.roots().workspace().path;
        let instructions = if load_instructions { instruction_files(ws, warn) } else { String::new() };
        StaticParts {
            role: role.unwrap_or(ROLE).to_string(),
            catalogue,
            skills: String::new(),
            roots,
            instructions,
            interactive,
            terse: false,
        }
    }

    /// Adds the skill catalogue: each skill's name and description, on one line.
    pub fn with_skills<'s>(mut self, skills: impl IntoIterator<Item = (&'s str, &'s str)>) -> Self {
        self.skills = skills
            .into_iter()
            .map(|(name, description)| {
                format!("- {name}: {}", description.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .collect::<Vec<_>>()
            .join("\n");
        self
    }

    /// The compressed prompt the emergency floor keeps: the short role and rules, the roots,
    /// and the start of the durable sections (todo, notes, snapshot summaries).
    pub fn render_floor(&self, sections: &[(String, String)], max_chars: usize) -> String {
        let mut p = format!("{TERSE}\n");
        for (name, body) in sections {
            p.push_str(&format!("\n<{name}>\n{}\n</{name}>\n", body.trim_end()));
        }
        p.push_str(&format!("\n## Environment\n{}\n", self.roots));
        match p.char_indices().nth(max_chars.max(TERSE.len())) {
            Some((at, _)) => p[..at].to_string(),
            None => p,
        }
    }

    /// The whole system prompt for the next request.
    pub fn render(&self, today: &str, sections: &[(String, String)], continue_note: Option<&str>) -> String {
        let mut p = String::with_capacity(4096 + self.instructions.len());
        if self.terse && self.role == ROLE {
            p.push_str(TERSE);
        } else {
            p.push_str(&self.role);
            p.push_str("\n\n");
            p.push_str(RULES);
        }
        p.push_str("\n\n");
        if !self.terse {
            p.push_str(if self.interactive { INTERACTIVE } else { AUTONOMOUS });
            p.push_str("\n\n## Tools\n");
            p.push_str(&self.catalogue);
        }
        if !self.skills.is_empty() {
            p.push_str("\n\n## Skills\n");
            p.push_str(SKILLS);
            p.push('\n');
            p.push_str(&self.skills);
        }
        p.push_str("\n\n## Environment\n");
        p.push_str(&self.roots);
        p.push_str(&format!("\n- Today is {today}.\n"));
        if !self.instructions.is_empty() {
            p.push('\n');
            p.push_str(&self.instructions);
        }
        for (name, body) in sections {
            p.push_str(&format!("\n<{name}>\n{}\n</{name}>\n", body.trim_end()));
        }
        if let Some(note) = continue_note {
            p.push_str(
                "\n<continue-here>\nThe previous session in this workspace ended before it finished. \
                 Its notes follow; use them if the task continues that work.\n",
            );
            p.push_str(note.trim_end());
            p.push_str("\n</continue-here>\n");
        }
        p
    }
}

/// The first sentence (or line) of a description, for the catalogue.
pub fn first_sentence(description: &str) -> &str {
    let line = description.lines().next().unwrap_or("");
    let mut from = 0;
    while let Some(i) = line[from..].find(". ").map(|i| i + from) {
        let word =
            line[..i].rsplit(' ').next().unwrap_or("").trim_start_matches(|c: char| !c.is_alphanumeric());
        if !matches!(word, "e.g" | "i.e" | "etc" | "vs") {
            return &line[..=i];
        }
        from = i + 2;
    }
    line
}

/// The most of an instruction file read (its characters are capped again after).
const INSTRUCTIONS_MAX_BYTES: u64 = 256 * 1024;

/// `CLAUDE.md` and `AGENTS.md` from the workspace root, each capped, wrapped in tags.
fn instruction_files(ws: &Path, warn: &mut dyn FnMut(String)) -> String {
    let mut out = String::new();
    let dir = match cap_std::fs::Dir::open_ambient_dir(ws, cap_std::ambient_authority()) {
        Ok(d) => d,
        Err(e) => {
            warn(format!("cannot open {} to read its instruction files: {e}", ws.display()));
            return out;
        }
    };
    for (file, tag) in [("CLAUDE.md", "project-instructions"), ("AGENTS.md", "agent-instructions")] {
        let path = ws.join(file);
        // Through the workspace's handle: a link, FIFO or device under the name is refused.
        let text = match crate::capabilities::hostread::read_regular(
            &dir,
            Path::new(file),
            INSTRUCTIONS_MAX_BYTES,
        ) {
            Ok(Some(c)) => String::from_utf8_lossy(&c.bytes).into_owned(),
            Ok(None) => continue,
            Err(e) => {
                warn(format!("skipping {}: {e}", path.display()));
                continue;
            }
        };
        let total = text.chars().count();
        let mut body: String = text.chars().take(INSTRUCTIONS_MAX_CHARS).collect();
        if total > INSTRUCTIONS_MAX_CHARS {
            warn(format!(
                "{file} has {total} characters; only the first {INSTRUCTIONS_MAX_CHARS} are given to the model"
            ));
            body.push_str(&format!(
                "\n[{file} continues for {} more characters; read it with read_file if needed]",
                total - INSTRUCTIONS_MAX_CHARS
            ));
        }
        out.push_str(&format!("<{tag} file=\"{file}\">\n{}\n</{tag}>\n", body.trim_end()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_files_are_wrapped_and_capped() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("AGENTS.md"), "Use tabs.\n").unwrap();
        std::fs::write(t.path().join("CLAUDE.md"), "x".repeat(INSTRUCTIONS_MAX_CHARS + 5)).unwrap();
        let mut warnings = Vec::new();
        let s = instruction_files(t.path(), &mut |w| warnings.push(w));
        assert!(s.contains("<agent-instructions file=\"AGENTS.md\">\nUse tabs.\n</agent-instructions>"));
        assert!(s.contains("[CLAUDE.md continues for 5 more characters"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(s.find("project-instructions").unwrap() < s.find("agent-instructions").unwrap());
    }

    #[test]
    fn an_instruction_file_that_is_a_link_or_fifo_is_not_read() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(t.path().join("secret"), "TOP-SECRET").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), ws.join("AGENTS.md")).unwrap();
        let fifo = std::ffi::CString::new(ws.join("CLAUDE.md").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let mut warnings = Vec::new();
        let s = instruction_files(&ws, &mut |w| warnings.push(w));
        assert!(!s.contains("TOP-SECRET") && s.is_empty(), "{s}");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().all(|w| w.starts_with("skipping ")), "{warnings:?}");
    }

    #[test]
    fn render_includes_sections_and_continue_note() {
        let parts = StaticParts {
            role: "ROLE".into(),
            catalogue: "- read_file: Reads.".into(),
            skills: String::new(),
            roots: "- /w (workspace root)".into(),
            instructions: String::new(),
            interactive: false,
            terse: false,
        };
        let p = parts.render("2026-01-02", &[("todo".into(), "- [ ] a".into())], Some("task was X"));
        assert!(p.starts_with("ROLE"));
        assert!(p.contains("- read_file: Reads."));
        assert!(p.contains("Today is 2026-01-02."));
        assert!(p.contains("<todo>\n- [ ] a\n</todo>"));
        assert!(p.contains("<continue-here>") && p.contains("task was X"));
        assert!(p.contains("no one can answer questions"));
    }

    #[test]
    fn terse_and_floor_prompts_are_short_and_keep_the_durable_sections() {
        let full =
            StaticParts { role: ROLE.into(), catalogue: "- read_file: Reads.".into(), ..Default::default() };
        let terse = StaticParts { terse: true, ..full.clone() };
        let sections = [("todo".to_string(), "- [ ] fix parser".to_string())];
        let (f, t) = (full.render("d", &sections, None), terse.render("d", &sections, None));
        assert!(t.len() * 2 < f.len(), "{} vs {}", t.len(), f.len());
        assert!(!t.contains("## Tools") && t.contains("fix parser") && t.starts_with("You are corral"));
        let floor = full.render_floor(&sections, 10_000);
        assert!(floor.starts_with(TERSE) && floor.contains("<todo>\n- [ ] fix parser"), "{floor}");
        assert_eq!(
            full.render_floor(&sections, 5).chars().count(),
            TERSE.len(),
            "never below the short rules"
        );
    }

    #[test]
    fn the_skill_catalogue_has_one_line_per_skill_and_only_when_there_are_skills() {
        let parts = StaticParts { role: "R".into(), catalogue: "- t: T.".into(), ..Default::default() };
        assert!(!parts.render("d", &[], None).contains("## Skills"));
        let parts =
            parts.with_skills([("code-review", "Review a change.\n  Use before merging."), ("md", "Docs.")]);
        let p = parts.render("d", &[], None);
        let at = p.find("## Skills\n").expect("a Skills section");
        assert!(at > p.find("## Tools").unwrap() && at < p.find("## Environment").unwrap());
        assert!(p.contains("activate it with use_skill before you start"));
        assert!(p.contains("\n- code-review: Review a change. Use before merging.\n- md: Docs.\n"), "{p}");
    }

    #[test]
    fn first_sentence_stops_at_a_period() {
        assert_eq!(first_sentence("Reads a file. More."), "Reads a file.");
        assert_eq!(first_sentence("Line one\nline two"), "Line one");
        assert_eq!(first_sentence("Search (e.g. a|b). Then."), "Search (e.g. a|b).");
    }
}
