//! Durable context sections (the todo list, thinking notes) that live outside the message
//! history, project memory notes, and the channel through which a plugin may ask the person
//! a question.

use super::local::Local;
use super::log::Sink;
use super::snapshot::Desk;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// What the `context` interface may touch (`Session::context`): the durable sections (the
/// todo list mirrored into the local state), the person, the snapshot desk, and the
/// workspace folder its memory notes live in.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub sections: &'a Sections,
    pub ask: &'a AskChannel,
    pub snapshot: &'a Desk,
    pub workspace: &'a cap_std::fs::Dir,
    pub local: &'a Local,
    pub log: &'a Sink,
}

/// The largest section body a plugin may set, in bytes.
pub const MAX_SECTION_BYTES: usize = 16 * 1024;

/// One section, as set by a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub plugin: String,
    pub body: String,
}

/// All sections of a session, in name order.
#[derive(Debug, Default)]
pub struct Sections {
    inner: Mutex<BTreeMap<String, Section>>,
}

impl Sections {
    /// Sets (or with an empty body, removes) section `name`.
    pub fn set(&self, plugin: &str, name: &str, body: &str) -> Result<(), String> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !valid {
            return Err(format!(
                "invalid section name '{}': use 1 to 64 lowercase letters, digits, '-' or '_'",
                name.chars().take(80).collect::<String>()
            ));
        }
        if body.len() > MAX_SECTION_BYTES {
            return Err(format!(
                "section '{name}' is {} bytes; the limit is {MAX_SECTION_BYTES}",
                body.len()
            ));
        }
        let mut map = self.inner.lock().map_err(|_| "context sections unavailable".to_string())?;
        if body.trim().is_empty() {
            map.remove(name);
        } else {
            map.insert(name.to_string(), Section { plugin: plugin.to_string(), body: body.to_string() });
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<String> {
        self.inner.lock().ok()?.get(name).map(|s| s.body.clone())
    }

    /// Every section, name first, in name order.
    pub fn all(&self) -> Vec<(String, Section)> {
        self.inner.lock().map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default()
    }

    pub fn clear(&self) {
        if let Ok(mut m) = self.inner.lock() {
            m.clear();
        }
    }
}

/// The project memory file under `.corral/`.
pub const MEMORY_FILE: &str = "memory/MEMORY.md";
/// The largest the memory file may grow through `memory-append`.
pub const MEMORY_MAX_BYTES: usize = 64 * 1024;
/// The largest one memory entry may be, in characters.
pub const MEMORY_ENTRY_MAX_CHARS: usize = 4000;

/// Appends `entry` to `.corral/memory/MEMORY.md` (atomically, whole file rewritten);
/// returns the new size. The message says what to do when it refuses.
pub fn memory_append(ws: &cap_std::fs::Dir, entry: &str) -> Result<u64, String> {
    let entry = entry.trim();
    if entry.is_empty() {
        return Err("the memory entry is empty".into());
    }
    let n = entry.chars().count();
    if n > MEMORY_ENTRY_MAX_CHARS {
        return Err(format!("the memory entry is {n} characters; the limit is {MEMORY_ENTRY_MAX_CHARS}"));
    }
    let old =
        super::state::read(ws, MEMORY_FILE).map_err(|e| format!("cannot read .corral/{MEMORY_FILE}: {e}"))?;
    let old = old.unwrap_or_default();
    let sep = match () {
        _ if old.is_empty() || old.ends_with("\n\n") => "",
        _ if old.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    let text = format!("{old}{sep}{entry}\n");
    if text.len() > MEMORY_MAX_BYTES {
        return Err(format!(
            ".corral/{MEMORY_FILE} would grow past {} KiB; ask the person to prune it, or keep only what matters \
             most in a shorter note",
            MEMORY_MAX_BYTES / 1024
        ));
    }
    super::state::write(ws, MEMORY_FILE, text.as_bytes())
        .map_err(|e| format!("cannot write .corral/{MEMORY_FILE}: {e}"))?;
    Ok(text.len() as u64)
}

/// Counts the unchecked `- [ ]` items of a markdown checklist.
pub fn unfinished_items(body: &str) -> usize {
    body.lines().filter(|l| l.trim_start().starts_with("- [ ]")).count()
}

/// Someone who can answer a plugin's question (the interactive terminal).
pub trait Asker: Send + Sync {
    /// Shows `question` (and `choices`, when there are any) and returns the answer,
    /// or a message for the model when the person declined or is not there.
    fn ask(&self, question: &str, choices: &[String]) -> Result<String, String>;
}

/// The answer given when nobody can be asked.
pub const NOBODY_TO_ASK: &str = "no one can answer questions in this run (one-shot or non-interactive mode); \
     decide using your best judgement, state the assumption you made, and carry on";

/// Where questions go: a person, or nobody. Set once the front end knows whether a person
/// is there. Questions from calls running side by side are put one at a time.
#[derive(Default)]
pub struct AskChannel(RwLock<Option<Arc<dyn Asker>>>, Mutex<()>);

impl AskChannel {
    /// Sends questions to `asker` (or to nobody, with `None`).
    pub fn set(&self, asker: Option<Arc<dyn Asker>>) {
        if let Ok(mut a) = self.0.write() {
            *a = asker;
        }
    }

    pub fn ask(&self, question: &str, choices: &[String]) -> Result<String, String> {
        let asker = self.0.read().ok().and_then(|a| a.clone());
        match asker {
            Some(a) => {
                let _turn = self.1.lock().unwrap_or_else(|p| p.into_inner());
                a.ask(question, choices)
            }
            None => Err(NOBODY_TO_ASK.to_string()),
        }
    }
}

impl std::fmt::Debug for AskChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let someone = self.0.read().map(|a| a.is_some()).unwrap_or(false);
        f.write_str(if someone { "AskChannel(person)" } else { "AskChannel(nobody)" })
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_empty_bodies_remove() {
        let s = Sections::default();
        assert!(s.set("p", "Bad Name", "x").unwrap_err().contains("invalid section name"));
        s.set("p", "todo", "- [ ] a").unwrap();
        assert_eq!(s.get("todo").as_deref(), Some("- [ ] a"));
        s.set("p", "todo", "  ").unwrap();
        assert_eq!(s.get("todo"), None);
        let big = "x".repeat(MAX_SECTION_BYTES + 1);
        assert!(s.set("p", "todo", &big).unwrap_err().contains("limit"));
    }

    #[test]
    fn memory_entries_append_with_limits() {
        let t = tempfile::tempdir().unwrap();
        let d = cap_std::fs::Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        assert!(memory_append(&d, "  ").unwrap_err().contains("empty"));
        memory_append(&d, "## Build\nRun make test.").unwrap();
        let size = memory_append(&d, "<!-- bootstrap -->\n## Style\nTabs.").unwrap();
        let text = std::fs::read_to_string(t.path().join(".corral/memory/MEMORY.md")).unwrap();
        assert_eq!(text, "## Build\nRun make test.\n\n<!-- bootstrap -->\n## Style\nTabs.\n");
        assert_eq!(size, text.len() as u64);
        assert!(memory_append(&d, &"x".repeat(4001)).unwrap_err().contains("limit is 4000"));
        for _ in 0..16 {
            let _ = memory_append(&d, &"y".repeat(3900));
        }
        let e = memory_append(&d, &"z".repeat(3900)).unwrap_err();
        assert!(e.contains("would grow past 64 KiB"), "{e}");
        assert!(std::fs::metadata(t.path().join(".corral/memory/MEMORY.md")).unwrap().len() <= 64 * 1024);
    }

    #[test]
    fn counts_unchecked_items() {
        assert_eq!(unfinished_items("- [ ] a\n- [x] b\n  - [ ] c\ntext"), 2);
    }

    #[test]
    fn nobody_answers_with_guidance() {
        let ch = AskChannel::default();
        let e = ch.ask("which?", &[]).unwrap_err();
        assert!(e.contains("no one can answer"), "{e}");
        struct Yes;
        impl Asker for Yes {
            fn ask(&self, q: &str, c: &[String]) -> Result<String, String> {
                Ok(format!("{q}:{}", c.join("|")))
            }
        }
        ch.set(Some(Arc::new(Yes)));
        assert_eq!(ch.ask("which", &["a".into(), "b".into()]).unwrap(), "which:a|b");
    }
}
