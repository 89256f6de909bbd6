use super::*;
use corral_plugin_sdk::host::fake::FakeWorkspace;

/// A backlog written by hand from beads' documented format: ids with the `bd` prefix, the
/// documented fields, a blocks dependency, a closed issue, and fields corral does not know.
const BEADS: &str = r#"{"id":"bd-a1f3","title":"Set up CI","description":"GitHub Actions","status":"closed","priority":1,"issue_type":"task","created_at":"2025-01-10T09:00:00Z","updated_at":"2025-01-11T09:00:00Z","closed_at":"2025-01-11T09:00:00Z","close_reason":"done"}
{"id":"bd-b2c4","title":"Fix login crash","description":"Null session","status":"open","priority":0,"issue_type":"bug","created_at":"2025-01-12T09:00:00Z","updated_at":"2025-01-12T09:00:00Z","labels":["auth"],"external_ref":"gh-9","compaction_level":0}
{"id":"bd-c3d5","title":"Release 1.0","description":"","status":"open","priority":1,"issue_type":"epic","created_at":"2025-01-09T09:00:00Z","updated_at":"2025-01-09T09:00:00Z","dependencies":[{"issue_id":"bd-c3d5","depends_on_id":"bd-b2c4","type":"blocks","created_at":"2025-01-12T10:00:00Z","created_by":"alice"}]}
{"id":"bd-d4e6","title":"Write docs","description":"","status":"open","priority":1,"issue_type":"task","created_at":"2025-01-08T09:00:00Z","updated_at":"2025-01-08T09:00:00Z","dependencies":[{"issue_id":"bd-d4e6","depends_on_id":"bd-a1f3","type":"blocks","created_at":"2025-01-10T10:00:00Z","created_by":"alice"}],"design":"mdbook","future_field":{"x":1}}
{"id":"bd-e5f7","title":"Polish UI","description":"","status":"in_progress","priority":0,"issue_type":"feature","created_at":"2025-01-07T09:00:00Z","updated_at":"2025-01-07T09:00:00Z"}
"#;

const CLOCK: Clock = Clock { secs: 1_767_258_000, nanos: 0 };

fn setup(text: &str) -> (tempdir::Dir, FakeWorkspace) {
    let d = tempdir::Dir::new();
    std::fs::create_dir_all(d.0.join(".beads")).unwrap();
    std::fs::write(d.0.join(PATH), text).unwrap();
    let ws = FakeWorkspace::new(&d.0);
    (d, ws)
}

fn call(ws: &FakeWorkspace, args: Value) -> Result<String, ToolError> {
    run(ws, &args, CLOCK).map(|o| o.text)
}

fn file(d: &tempdir::Dir) -> Vec<Value> {
    std::fs::read_to_string(d.0.join(PATH))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn ready_is_open_and_unblocked_by_priority_then_age() {
    let (_d, ws) = setup(BEADS);
    let out = call(&ws, json!({"command": "ready"})).unwrap();
    let ids: Vec<&str> = out.lines().skip(1).map(|l| l.split(' ').next().unwrap()).collect();
    // bd-b2c4 (P0) first; bd-d4e6 (P1, its blocker closed); bd-c3d5 is blocked by the open
    // bd-b2c4; bd-e5f7 is in progress; bd-a1f3 is closed.
    assert_eq!(ids, vec!["bd-b2c4", "bd-d4e6"], "{out}");
    let shown = call(&ws, json!({"command": "show", "id": "bd-c3d5"})).unwrap();
    assert!(shown.contains("ready: no, blocked by bd-b2c4"), "{shown}");
    assert!(shown.contains("depends on bd-b2c4 (blocks; open: Fix login crash)"), "{shown}");
}

#[test]
fn changes_follow_beads_rules_and_keep_what_corral_does_not_know() {
    let (d, ws) = setup(BEADS);
    let before: Vec<String> = BEADS.lines().map(str::to_string).collect();
    let out = call(&ws, json!({"command": "create", "title": "Add rate limit", "priority": 0, "issue_type": "feature", "labels": ["api"]})).unwrap();
    let id = out.strip_prefix("Created ").unwrap().split(':').next().unwrap().to_string();
    assert!(id.starts_with("bd-") && id.len() == 7, "{id}");
    call(&ws, json!({"command": "dep_add", "id": "bd-b2c4", "depends_on": id})).unwrap();
    // The new issue (P0, created now) comes after the older P0 in ready order only if that
    // one is unblocked: bd-b2c4 now waits for it.
    let ready = call(&ws, json!({"command": "ready"})).unwrap();
    assert!(ready.lines().nth(1).unwrap().starts_with(&id), "{ready}");
    assert!(!ready.contains("bd-b2c4"), "{ready}");
    let e = call(&ws, json!({"command": "dep_add", "id": id, "depends_on": "bd-c3d5"})).unwrap_err();
    assert!(e.message.contains("cycle"), "{e:?}");
    call(&ws, json!({"command": "close", "id": id, "reason": "shipped"})).unwrap();
    call(&ws, json!({"command": "update", "id": "bd-d4e6", "status": "in_progress", "assignee": "corral"}))
        .unwrap();
    let issues = file(&d);
    assert_eq!(issues.len(), 6);
    let new = issues.iter().find(|i| i["id"] == id.as_str()).unwrap();
    assert_eq!(new["status"], "closed");
    assert_eq!(new["closed_at"], "2026-01-01T09:00:00.000000000Z");
    assert_eq!(new["close_reason"], "shipped");
    assert_eq!((new["priority"].as_i64(), new["issue_type"].as_str()), (Some(0), Some("feature")));
    let b2 = issues.iter().find(|i| i["id"] == "bd-b2c4").unwrap();
    assert_eq!(b2["dependencies"][0]["depends_on_id"], id.as_str());
    assert_eq!(b2["dependencies"][0]["issue_id"], "bd-b2c4");
    assert_eq!(b2["dependencies"][0]["type"], "blocks");
    assert_eq!(b2["external_ref"], "gh-9", "unknown fields survive a change");
    let d4 = issues.iter().find(|i| i["id"] == "bd-d4e6").unwrap();
    assert_eq!(d4["future_field"], json!({"x": 1}));
    assert_eq!(d4["design"], "mdbook");
    assert_eq!(d4["status"], "in_progress");
    assert!(d4.get("closed_at").is_none());
    // Issues nothing touched are the very lines that were read.
    let text = std::fs::read_to_string(d.0.join(PATH)).unwrap();
    for untouched in [&before[0], &before[2], &before[4]] {
        assert!(text.lines().any(|l| l == untouched), "{untouched}");
    }
    // Reopening clears the close, as beads requires.
    call(&ws, json!({"command": "update", "id": id, "status": "open"})).unwrap();
    let new = file(&d).into_iter().find(|i| i["id"] == id.as_str()).unwrap();
    assert!(new.get("closed_at").is_none() && new.get("close_reason").is_none(), "{new}");
}

#[test]
fn lists_filter_and_mistakes_are_explained() {
    let (_d, ws) = setup(BEADS);
    let out = call(&ws, json!({"command": "list"})).unwrap();
    assert!(out.starts_with("4 issue(s)") && !out.contains("bd-a1f3"), "{out}");
    let out = call(&ws, json!({"command": "list", "status": "all", "issue_type": "task"})).unwrap();
    assert!(out.contains("bd-a1f3") && out.contains("bd-d4e6") && !out.contains("bd-b2c4"), "{out}");
    let out = call(&ws, json!({"command": "list", "priority": 0})).unwrap();
    assert!(out.starts_with("2 issue(s)"), "{out}");
    let e = call(&ws, json!({"command": "show", "id": "bd-zzzz"})).unwrap_err();
    assert!(e.message.contains("no issue 'bd-zzzz'") && e.message.contains("bd-a1f3"), "{e:?}");
    let e = call(&ws, json!({"command": "update", "id": "bd-a1f3"})).unwrap_err();
    assert!(e.message.contains("needs a field to change"), "{e:?}");
    let e = call(&ws, json!({"command": "create", "title": "x", "priority": 7})).unwrap_err();
    assert!(e.message.contains("0 (most urgent) to 4"), "{e:?}");
}

#[test]
fn a_new_backlog_takes_the_folder_name_and_keeps_odd_lines() {
    let d = tempdir::Dir::new();
    let ws = FakeWorkspace::new(&d.0);
    let out = call(&ws, json!({"command": "create", "title": "First"})).unwrap();
    let prefix = d.0.file_name().unwrap().to_string_lossy().to_lowercase();
    assert!(out.starts_with(&format!("Created {prefix}-")), "{out} / {prefix}");
    let (d2, ws2) = setup("not json\n{\"id\":\"app-1\",\"title\":\"x\"}\n");
    let out = call(&ws2, json!({"command": "close", "id": "app-1"})).unwrap();
    assert!(out.contains("1 line(s)") && out.contains("kept"), "{out}");
    let text = std::fs::read_to_string(d2.0.join(PATH)).unwrap();
    assert!(text.starts_with("not json\n"), "{text}");
}

mod tempdir {
    /// A private folder removed when dropped (its name is a valid id prefix).
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "proj{}x{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
