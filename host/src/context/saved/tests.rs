//! The session file writer and reader: round trips (compactions and state included), a torn
//! last line, a newer format, malformed lines, ids by prefix and the retention limits.
#![allow(clippy::disallowed_methods)] // fixtures are read and made with std::fs

use super::record::{Header, Section, State};
use super::*;
use crate::capabilities::local::Local;
use crate::context::transcript::tests::{call, reply, result};
use crate::context::{Recap, Transcript};
use crate::llm::Message;
use std::path::Path;

const MAX: u64 = 1 << 20;

fn local() -> (tempfile::TempDir, Local) {
    let t = tempfile::tempdir().unwrap();
    let l = Local::open(&t.path().join("ws1"), Path::new("/w")).unwrap();
    (t, l)
}

fn header(id: &str) -> Header {
    Header {
        schema_version: SCHEMA_VERSION,
        id: id.into(),
        created: "2026-01-02T10:00:00Z".into(),
        workspace: "/w".into(),
        model: "m1".into(),
        provider: "openai".into(),
        corral_version: "0".into(),
        forked_from: None,
    }
}

fn todo(body: &str) -> State {
    State {
        sections: vec![Section { name: "todo".into(), plugin: "todo".into(), body: body.into() }],
        kv: [("todo".to_string(), [("todo".to_string(), "[1]".to_string())].into())].into(),
        snapshots: vec![("look".into(), "found it".into())],
    }
}

fn file(t: &tempfile::TempDir, id: &str) -> std::path::PathBuf {
    t.path().join("ws1/sessions").join(file_name(id))
}

/// A conversation with a call, its result and an answer.
fn talk() -> Transcript {
    let mut t = Transcript::new(false);
    t.push(Message::user("read the notes\nplease"));
    t.push(reply(vec![call("c1", "read_file", "{\"file_path\":\"n.txt\"}")]));
    t.push_tool(result("c1", "read_file", "NOTES-BODY"), false);
    t.push(reply(vec![]));
    t
}

#[test]
fn a_session_round_trips_with_its_compactions_and_state() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, l) = local();
    let mut j = Journal::create(&l, &header("s1"), MAX).unwrap();
    let mut t = talk();
    j.sync(&t.entries()[..2], State::default()).unwrap();
    j.sync(t.entries(), todo("- [ ] a")).unwrap();
    j.end("done", None, 2).unwrap();
    // Unchanged: nothing written.
    let before = std::fs::read(file(&tmp, "s1")).unwrap();
    j.sync(t.entries(), todo("- [ ] a")).unwrap();
    assert_eq!(std::fs::read(file(&tmp, "s1")).unwrap(), before);
    // The context manager replaces the middle with a recap and shrinks a result.
    let recap = t.entry(
        Message::Assistant { text: "RECAP".into(), reasoning: None, tool_calls: vec![] },
        false,
        Some(Recap::Compaction),
        Some(false),
    );
    t.splice(1..3, vec![recap]);
    t.set_message(0, Message::user("read the notes (short)"));
    t.push(Message::user("next"));
    j.sync(t.entries(), todo("- [x] a")).unwrap();

    let mode = std::fs::metadata(file(&tmp, "s1")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(tmp.path().join("ws1/sessions")).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700);
    let text = std::fs::read_to_string(file(&tmp, "s1")).unwrap();
    let types: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, ["message", "message", "message", "message", "state", "end", "compaction", "state"]);
    let compaction = text.lines().nth(7).unwrap();
    assert!(!compaction.contains("NOTES-BODY"), "only new or changed entries are written: {compaction}");

    let loaded = load::load(&l, "s1", MAX).unwrap();
    assert_eq!(loaded.header, header("s1"));
    let got: Vec<(u64, Message, Option<Recap>)> =
        loaded.entries.iter().map(|e| (e.id, e.message.clone(), e.recap)).collect();
    let want: Vec<(u64, Message, Option<Recap>)> =
        t.entries().iter().map(|e| (e.id, e.msg.clone(), e.recap)).collect();
    assert_eq!(got, want);
    assert_eq!(loaded.state, todo("- [x] a"));
    assert_eq!((loaded.turns, loaded.first_task.as_deref()), (2, Some("read the notes\nplease")));
    assert!(loaded.warnings.is_empty());

    // The transcript restored from it goes on with fresh ids.
    let mut back = Transcript::new(false);
    back.restore(loaded.entries.iter().cloned().map(|e| e.into_parts()).collect());
    assert_eq!(back.messages(), t.messages());
    assert_eq!(back.next_id(), t.next_id());
}

#[test]
fn a_torn_last_line_is_skipped_and_cut_before_appending() {
    let (tmp, l) = local();
    let mut j = Journal::create(&l, &header("s2"), MAX).unwrap();
    let t = talk();
    j.sync(t.entries(), State::default()).unwrap();
    drop(j);
    let path = file(&tmp, "s2");
    let whole = std::fs::read(&path).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(b"{\"type\":\"message\",\"id\":9,\"mess");
    std::fs::write(&path, &torn).unwrap();
    let loaded = load::load(&l, "s2", MAX).unwrap();
    assert_eq!(loaded.entries.len(), 4);
    assert_eq!(loaded.valid_len, whole.len() as u64);
    assert!(loaded.warnings[0].contains("line 6: the last line is incomplete"), "{:?}", loaded.warnings);

    let mut j = Journal::reopen(&l, &loaded, "m2", "anthropic", MAX).unwrap();
    let mut t = t;
    t.push(Message::user("more"));
    j.sync(t.entries(), State::default()).unwrap();
    let again = load::load(&l, "s2", MAX).unwrap();
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(again.entries.len(), 5);
    assert_eq!((again.model.as_str(), again.provider.as_str()), ("m2", "anthropic"));
}

#[test]
fn a_newer_format_and_malformed_lines_are_refused_with_the_line() {
    let newer = b"{\"schema_version\":2,\"id\":\"x\"}\n";
    let e = load::parse(newer, "f.jsonl").unwrap_err().to_string();
    assert!(e.contains("f.jsonl was written by a newer corral (session format 2"), "{e}");

    let head = serde_json::to_string(&header("s3")).unwrap();
    let cases = [
        (format!("{head}\nnot json\n"), "f.jsonl line 2: not a session record"),
        (format!("{head}\n{{\"type\":\"frob\"}}\n"), "f.jsonl line 2: not a session record"),
        (
            format!("{head}\n{{\"type\":\"compaction\",\"order\":[7],\"entries\":[]}}\n"),
            "line 2: the compaction keeps message id 7, which the session does not have",
        ),
        ("{\"id\":\"x\"}\n".to_string(), "line 1: the header has no schema_version"),
        (String::new(), "line 1: the file is empty"),
    ];
    for (text, want) in cases {
        let e = load::parse(text.as_bytes(), "f.jsonl").unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    let bad_id = serde_json::to_string(&header("../x")).unwrap();
    assert!(
        load::parse(format!("{bad_id}\n").as_bytes(), "f")
            .unwrap_err()
            .to_string()
            .contains("not a session id")
    );
    assert!(load::parse(&[0xff, b'\n'], "f").unwrap_err().to_string().contains("not UTF-8"));
}

#[test]
fn a_file_over_the_limit_is_refused_and_writing_stops_at_it() {
    let (_tmp, l) = local();
    let mut j = Journal::create(&l, &header("s4"), 400).unwrap();
    let mut t = Transcript::new(false);
    t.push(Message::user("x".repeat(500)));
    let e = j.sync(t.entries(), State::default()).unwrap_err().to_string();
    assert!(e.contains("reached the 400-byte limit") && e.contains("sessions.max_file_mb"), "{e}");
    assert!(j.sync(t.entries(), State::default()).is_ok(), "after the limit nothing more is written");
    let e = load::load(&l, "s4", 10).unwrap_err().to_string();
    assert!(e.contains("over the 10-byte limit"), "{e}");
}

#[test]
fn ids_resolve_by_prefix_and_retention_deletes_the_oldest() {
    let (tmp, l) = local();
    assert!(matches!(store::resolve(&l, None), Err(SavedError::NoSessions)));
    let ids = ["20260101-000000-aaaaaa", "20260102-000000-bbbbbb", "20260102-000000-cccccc"];
    for (i, id) in ids.iter().enumerate() {
        let mut j = Journal::create(&l, &header(id), MAX).unwrap();
        j.sync(talk().entries(), State::default()).unwrap();
        // Ages one second apart, oldest first.
        let f = std::fs::File::options().write(true).open(file(&tmp, id)).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64)).unwrap();
    }
    assert_eq!(store::resolve(&l, None).unwrap(), ids[2]);
    assert_eq!(store::resolve(&l, Some("20260101")).unwrap(), ids[0]);
    let e = store::resolve(&l, Some("20260102")).unwrap_err().to_string();
    assert!(e.contains("matches several saved sessions") && e.contains(ids[1]), "{e}");
    assert!(store::resolve(&l, Some("2027")).unwrap_err().to_string().contains("no saved session matches"));
    assert!(matches!(store::resolve(&l, Some("../x")), Err(SavedError::BadId(_))));
    let listed: Vec<String> = store::list(&l, MAX).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, [ids[2], ids[1], ids[0]]);

    // Keep 2: the oldest goes, even when the newest is current.
    let r = Retention { keep: 2, max_total: u64::MAX, max_file: MAX };
    assert_eq!(store::prune(&l, &r, ids[2]).unwrap(), [ids[0]]);
    // The current session is never deleted, even when it is the oldest.
    let size = std::fs::metadata(file(&tmp, ids[1])).unwrap().len();
    let r = Retention { keep: 10, max_total: size, max_file: MAX };
    assert_eq!(store::prune(&l, &r, ids[1]).unwrap(), [ids[2]]);
    assert!(file(&tmp, ids[1]).exists() && !file(&tmp, ids[2]).exists());
    store::remove(&l, ids[1]).unwrap();
    assert!(matches!(store::remove(&l, ids[1]), Err(SavedError::NotFound(_))));
}

#[test]
fn the_state_is_captured_and_restored() {
    let ws = tempfile::tempdir().unwrap();
    let session = || {
        let roots = crate::capabilities::roots::Roots::open(ws.path(), &[], &[]).unwrap();
        crate::capabilities::Session::new(
            roots,
            Default::default(),
            crate::capabilities::log::Sink::new(false),
        )
    };
    let s = session();
    s.sections().set("todo", "todo", "- [ ] a").unwrap();
    s.kv().set("todo", "todo", "[1]").unwrap();
    s.kv().set("other", "k", "v").unwrap();
    s.snapshot().restored("look", "found it");
    let state = state::capture(&s);
    assert_eq!(state, todo("- [ ] a"), "only the state of plugins that set a section");
    let fresh = session();
    let mut bad = state.clone();
    bad.sections.push(Section { name: "Bad Name".into(), plugin: "p".into(), body: "x".into() });
    let warnings = state::restore(&fresh, &bad);
    assert_eq!(state::capture(&fresh), state);
    assert!(warnings.len() == 1 && warnings[0].contains("'Bad Name' is left out"), "{warnings:?}");
}

#[test]
fn new_ids_sort_by_time_and_name_files_safely() {
    let id = new_id();
    assert!(valid_id(&id) && id.len() == 22, "{id}");
    assert!(!valid_id("") && !valid_id("a/b") && !valid_id("a.b") && !valid_id(&"a".repeat(65)));
}
