//! `memory_write`: appends a note to the project memory, `.corral/memory/MEMORY.md`, which
//! later sessions show the model: notes marked `bootstrap` always, the others when they are
//! relevant to the task. The host writes the file; plugins cannot write `.corral/` themselves.

use crate::text::{clip_chars, one_line};
use corral_plugin_sdk::args::{opt_bool, opt_str, req_str};
use corral_plugin_sdk::host::Memory;
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};

/// Longest note, in characters.
pub const MAX_CONTENT_CHARS: usize = 3800;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 100;
/// The marker that makes a note always shown.
pub const BOOTSTRAP: &str = "<!-- bootstrap -->";

pub fn spec() -> Spec {
    let mut s = Spec::new(
        "memory_write",
        "Save a lasting fact about this project for future sessions (build and test commands, \
         conventions, where things live, pitfalls you found). Notes go to .corral/memory/MEMORY.md; \
         later sessions see the notes relevant to their task, and every note marked `bootstrap` \
         (keep those few and short: they are always shown). Write facts, not a log of this session. \
         At most 3800 characters per note.",
        json!({
            "type": "object",
            "properties": {
                "content": {
                    "type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS,
                    "description": "The note, in markdown"
                },
                "title": {
                    "type": "string", "maxLength": MAX_TITLE_CHARS,
                    "description": "A heading for the note (default: its first line)"
                },
                "bootstrap": {
                    "type": "boolean",
                    "description": "Show this note in every future session, whatever the task"
                }
            },
            "required": ["content"],
            "additionalProperties": false
        }),
    )
    .needs(Capability::Context)
    .idempotent(false);
    // It writes a file (corral's own, not the workspace's): not read-only.
    s.read_only = false;
    s
}

/// The markdown entry for a note.
pub fn entry(content: &str, title: Option<&str>, bootstrap: bool) -> String {
    let content = content.trim();
    let title = match title.map(one_line).filter(|t| !t.is_empty()) {
        Some(t) => t,
        None => clip_chars(&one_line(content.lines().next().unwrap_or("note").trim_start_matches('#')), 60),
    };
    let marker = if bootstrap { format!("{BOOTSTRAP}\n") } else { String::new() };
    format!("{marker}## {title}\n{content}")
}

pub fn run(host: &dyn Memory, args: &Value) -> Result<Output, ToolError> {
    let content = req_str(args, "content")?.trim();
    if content.is_empty() {
        return Err(ToolError::invalid_args("'content' is empty: write the fact to remember"));
    }
    let n = content.chars().count();
    if n > MAX_CONTENT_CHARS {
        return Err(ToolError::invalid_args(format!(
            "'content' is {n} characters; the limit is {MAX_CONTENT_CHARS}"
        )));
    }
    let title = opt_str(args, "title")?;
    if let Some(t) = title
        && t.chars().count() > MAX_TITLE_CHARS
    {
        return Err(ToolError::invalid_args(format!("'title' is longer than {MAX_TITLE_CHARS} characters")));
    }
    let bootstrap = opt_bool(args, "bootstrap")?.unwrap_or(false);
    let e = entry(content, title, bootstrap);
    let size = host.append(&e).map_err(|m| ToolError::new(ErrorKind::Io, m))?;
    let when = if bootstrap { "in every future session" } else { "in future sessions when relevant" };
    Ok(Output::text(format!(
        "Saved to .corral/memory/MEMORY.md ({size} bytes now); it will be shown {when}."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::host::FakeMemory;

    #[test]
    fn notes_become_markdown_entries() {
        let m = FakeMemory::default();
        let out =
            run(&m, &json!({"content": "Run `make test` before committing.", "title": "Tests"})).unwrap();
        assert!(out.text.contains("shown in future sessions when relevant"), "{}", out.text);
        run(&m, &json!({"content": "# Layout\nsrc/ holds the parser", "bootstrap": true})).unwrap();
        assert_eq!(
            *m.text.borrow(),
            "## Tests\nRun `make test` before committing.\n\n<!-- bootstrap -->\n## Layout\n# Layout\nsrc/ holds the parser\n"
        );
    }

    #[test]
    fn bad_notes_are_refused_with_reasons() {
        let m = FakeMemory::default();
        assert!(run(&m, &json!({"content": "  "})).unwrap_err().message.contains("empty"));
        assert!(
            run(&m, &json!({"content": "x".repeat(3801)})).unwrap_err().message.contains("limit is 3800")
        );
        assert!(
            run(&m, &json!({"content": "x", "title": "t".repeat(101)}))
                .unwrap_err()
                .message
                .contains("title")
        );
        *m.fail.borrow_mut() = Some("would grow past 64 KiB".into());
        let e = run(&m, &json!({"content": "x"})).unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Io, "would grow past 64 KiB"));
    }
}
