#![allow(clippy::disallowed_methods)] // test fixtures are made with std::fs

use super::*;
use crate::capabilities::local::Local;
use crate::capabilities::{Policy, Roots, Session, log, trash, workspace};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

struct Fx {
    _t: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    s: Session,
}

fn fx(bounds: Bounds) -> Fx {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let outside = t.path().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap();
    let policy = Policy { read_guard: false, undo: bounds, ..Policy::default() };
    let s = session(&ws, &t.path().join("state"), policy);
    let ws = std::fs::canonicalize(&ws).unwrap();
    Fx { _t: t, ws, outside, s }
}

/// A session over `ws` that keeps its local state in `state`.
fn session(ws: &Path, state: &Path, policy: Policy) -> Session {
    let roots = Roots::open(ws, &[], &[]).unwrap();
    let mut s = Session::new(roots, policy, log::Sink::new(false));
    s.set_local(Local::open(state, ws).unwrap());
    s
}

impl Fx {
    /// Another session in the same workspace, over the same local state.
    fn another_session(&self, policy: Policy) -> Session {
        session(&self.ws, self.s.local().path().unwrap(), policy)
    }

    fn put(&self, name: &str, text: &str) {
        let p = self.ws.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, text).unwrap();
    }

    fn get(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(name)).ok()
    }

    fn turn(&self, turn: u64, f: impl FnOnce(&Session)) {
        self.s.journal().begin(Label { turn, reply: turn * 10 });
        f(&self.s);
        self.s.journal().end();
    }
}

#[test]
fn a_call_running_alone_is_named_with_its_first_change_and_the_index_written_once() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old");
    let replaces = crate::capabilities::atomic::replaces_on_this_thread;
    let mut written = 0;
    f.turn(1, |s| {
        s.journal().calling("edit_file");
        let before = replaces();
        workspace::write(&s.workspace(), "a.txt", b"new").unwrap();
        s.journal().attribute("edit_file");
        written = replaces() - before;
        // A later call that changes nothing names nothing; one that changes is added.
        s.journal().calling("read_file");
        s.journal().attribute("read_file");
        s.journal().calling("write_file");
        workspace::write(&s.workspace(), "b.txt", b"made").unwrap();
        s.journal().attribute("write_file");
    });
    assert_eq!(written, 3, "the file, its saved contents and the index once (not again to name the tool)");
    let cps = list(&f.s.undo()).unwrap();
    assert_eq!(cps[0].tools, vec!["edit_file".to_string(), "write_file".to_string()]);
    assert_eq!(paths(&cps[0]), vec!["a.txt", "b.txt"]);
}

#[test]
fn an_edit_flushes_the_file_and_leaves_its_checkpoint_to_write_back() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old");
    let before = crate::capabilities::atomic::syncs_on_this_thread();
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"new").unwrap();
        s.journal().attribute("edit_file");
    });
    assert_eq!(
        crate::capabilities::atomic::syncs_on_this_thread(),
        before + 1,
        "one flush, the person's file; the saved contents and the index (twice) are not flushed"
    );
    let cps = list(&f.s.undo()).unwrap();
    assert_eq!((paths(&cps[0]), cps[0].tools.clone()), (vec!["a.txt"], vec!["edit_file".to_string()]));
    restore(&f.s.undo(), Target::Latest, false).unwrap();
    assert_eq!(f.get("a.txt").as_deref(), Some("old"));
}

#[test]
fn saved_contents_cut_short_are_refused_not_restored() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old contents");
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"new").unwrap();
    });
    // What a power cut can leave of an unflushed blob: the name, with fewer bytes.
    let cp = &list(&f.s.undo()).unwrap()[0];
    let State::File { hash, .. } = &cp.entries[0].before else { panic!("a file was saved") };
    let state = f.s.local().path().unwrap().join(store::DIR).join(cp.n.to_string());
    std::fs::write(state.join(hash), "old").unwrap();
    let e = restore(&f.s.undo(), Target::Latest, false).unwrap_err().to_string();
    assert!(e.contains("do not match their hash") && e.contains("cut short by a crash"), "{e}");
    assert_eq!(f.get("a.txt").as_deref(), Some("new"), "nothing is put back from a bad copy");
}

#[test]
fn keeping_the_bound_reads_each_index_once_per_session_not_at_every_change() {
    let f = fx(Bounds { max_bytes: 100 << 20, keep: 5 });
    for t in 1..=8 {
        f.turn(t, |s| {
            workspace::write(&s.workspace(), "a.txt", format!("v{t}").as_bytes()).unwrap();
        });
    }
    let kept: Vec<u64> = list(&f.s.undo()).unwrap().iter().map(|c| c.n).collect();
    assert_eq!(kept, [4, 5, 6, 7, 8], "the oldest go past `keep`");
    // This session wrote every index itself: a turn of many changes reads none of them.
    let before = store::tests::loads();
    f.turn(9, |s| {
        for i in 0..6 {
            workspace::write(&s.workspace(), &format!("f{i}.txt"), b"x").unwrap();
        }
    });
    assert_eq!(store::tests::loads() - before, 0);
    // Another session in the same workspace reads each index it did not write once.
    let other = f.another_session(Policy {
        read_guard: false,
        undo: Bounds { max_bytes: 100 << 20, keep: 5 },
        ..Policy::default()
    });
    let before = store::tests::loads();
    other.journal().begin(Label { turn: 1, reply: 1 });
    for i in 0..4 {
        workspace::write(&other.workspace(), &format!("g{i}.txt"), b"y").unwrap();
    }
    other.journal().end();
    assert_eq!(store::tests::loads() - before, 5, "the five checkpoints it found, once each");
    let kept: Vec<u64> = list(&f.s.undo()).unwrap().iter().map(|c| c.n).collect();
    assert_eq!(kept, [6, 7, 8, 9, 10]);
}

fn paths(cp: &Checkpoint) -> Vec<&str> {
    cp.entries.iter().map(|e| e.path.as_str()).collect()
}

#[test]
fn a_turn_makes_one_checkpoint_and_undo_puts_edits_and_creations_back() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old");
    std::fs::set_permissions(f.ws.join("a.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"new").unwrap();
        workspace::write(&s.workspace(), "a.txt", b"newer").unwrap();
        workspace::write(&s.workspace(), "dir/b.txt", b"created").unwrap();
        s.journal().attribute("write_file");
    });
    f.turn(2, |_| {});
    let cps = list(&f.s.undo()).unwrap();
    assert_eq!(cps.len(), 1, "a turn that changed nothing makes no checkpoint");
    assert_eq!(paths(&cps[0]), ["a.txt", "dir/b.txt"]);
    assert_eq!(
        (cps[0].turn, cps[0].reply, cps[0].tools.clone()),
        (Some(1), Some(10), vec!["write_file".into()])
    );
    assert_eq!(cps[0].session, f.s.journal().session_id());

    let r = restore(&f.s.undo(), Target::Latest, false).unwrap();
    assert_eq!(
        f.get("a.txt").as_deref(),
        Some("old"),
        "the state before the turn, not before the last write"
    );
    assert_eq!(std::fs::metadata(f.ws.join("a.txt")).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(f.get("dir/b.txt"), None);
    assert_eq!(
        r.files,
        [
            "restored a.txt",
            "deleted dir/b.txt (it did not exist before)",
            "removed the folders made for them: dir"
        ]
    );
    assert!(!f.ws.join("dir").exists(), "the folder the write made is gone too");
    assert!(list(&f.s.undo()).unwrap()[0].undone);
    assert_eq!(restore(&f.s.undo(), Target::Latest, false).unwrap_err(), UndoError::Nothing);
}

#[test]
fn moves_and_deletes_are_reversed_and_survive_a_new_session() {
    let f = fx(Bounds::default());
    f.put("from.txt", "moved");
    f.put("gone.txt", "deleted");
    f.put("over.txt", "replaced by the move");
    f.turn(1, |s| {
        workspace::rename(&s.workspace(), "from.txt", "to.txt").unwrap();
        workspace::rename(&s.workspace(), "to.txt", "over.txt").unwrap();
        trash::trash(&s.trash(), "gone.txt").unwrap();
    });
    assert_eq!((f.get("from.txt"), f.get("gone.txt")), (None, None));
    // Another session over the same state folder: the checkpoint was kept on disk.
    let s2 = f.another_session(Policy::default());
    restore(&s2.undo(), Target::Latest, false).unwrap();
    assert_eq!(f.get("from.txt").as_deref(), Some("moved"));
    assert_eq!(f.get("to.txt"), None);
    assert_eq!(f.get("over.txt").as_deref(), Some("replaced by the move"));
    assert_eq!(f.get("gone.txt").as_deref(), Some("deleted"));
}

#[test]
fn an_outside_change_is_refused_naming_the_file_and_nothing_is_written_unless_forced() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old");
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"by corral").unwrap();
        workspace::write(&s.workspace(), "b.txt", b"created").unwrap();
    });
    f.put("a.txt", "by the person");
    let e = restore(&f.s.undo(), Target::Latest, false).unwrap_err();
    assert!(matches!(&e, UndoError::Changed { files, .. } if files == &["'a.txt' (edited since)"]), "{e:?}");
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(f.get("b.txt").as_deref(), Some("created"), "all or nothing: b.txt was not touched");
    assert!(!list(&f.s.undo()).unwrap()[0].undone);
    restore(&f.s.undo(), Target::Latest, true).unwrap();
    assert_eq!((f.get("a.txt").as_deref(), f.get("b.txt")), (Some("old"), None));
}

#[test]
fn a_link_planted_in_place_of_a_file_is_replaced_never_followed() {
    let f = fx(Bounds::default());
    f.put("a.txt", "old");
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"new").unwrap();
    });
    std::fs::remove_file(f.ws.join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("a.txt")).unwrap();
    let e = restore(&f.s.undo(), Target::Latest, false).unwrap_err();
    assert!(e.to_string().contains("'a.txt' (replaced by a link since)"), "{e}");
    restore(&f.s.undo(), Target::Latest, true).unwrap();
    assert_eq!(std::fs::read_to_string(&f.outside).unwrap(), "secret", "the link's target is untouched");
    assert!(std::fs::symlink_metadata(f.ws.join("a.txt")).unwrap().is_file());
    assert_eq!(f.get("a.txt").as_deref(), Some("old"));
}

#[test]
fn a_parent_folder_swapped_for_a_link_out_is_refused() {
    let f = fx(Bounds::default());
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "sub/a.txt", b"new").unwrap();
    });
    std::fs::remove_dir_all(f.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(f.outside.parent().unwrap(), f.ws.join("sub")).unwrap();
    let e = restore(&f.s.undo(), Target::Latest, true).unwrap_err();
    assert!(matches!(e, UndoError::Refused(_)), "{e:?}");
    assert!(e.to_string().contains("sub/a.txt"), "{e}");
}

#[test]
fn rewind_undoes_every_checkpoint_from_n_and_an_edited_index_cannot_reach_protected_paths() {
    let f = fx(Bounds::default());
    f.put("a.txt", "v0");
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "a.txt", b"v1").unwrap();
    });
    f.turn(2, |s| {
        workspace::write(&s.workspace(), "a.txt", b"v2").unwrap();
        workspace::write(&s.workspace(), "c.txt", b"made in 2").unwrap();
    });
    f.turn(3, |s| {
        workspace::write(&s.workspace(), "a.txt", b"v3").unwrap();
    });
    assert_eq!(restore(&f.s.undo(), Target::To(9), false).unwrap_err(), UndoError::NoSuch(9));
    let r = restore(&f.s.undo(), Target::To(2), false).unwrap();
    assert_eq!(r.checkpoints.iter().map(|c| c.n).collect::<Vec<_>>(), [2, 3]);
    assert_eq!((f.get("a.txt").as_deref(), f.get("c.txt")), (Some("v1"), None));
    restore(&f.s.undo(), Target::Latest, false).unwrap();
    assert_eq!(f.get("a.txt").as_deref(), Some("v0"));

    // An index edited to name corral's own files is refused by the same rules as the tools.
    let index = f.s.local().path().unwrap().join("checkpoints/1/index.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    v["entries"][0]["path"] = ".corral/x".into();
    v["undone"] = false.into();
    std::fs::write(&index, v.to_string()).unwrap();
    let e = restore(&f.s.undo(), Target::To(1), true).unwrap_err();
    assert!(e.to_string().contains(".corral/x"), "{e}");
    assert!(!f.ws.join(".corral/x").exists());
}

#[test]
fn the_size_bound_skips_a_file_too_big_and_drops_the_oldest_checkpoints() {
    let f = fx(Bounds { max_bytes: 10, keep: 2 });
    f.put("big.txt", "0123456789abcdef");
    f.put("small.txt", "s0");
    let mut note = None;
    f.turn(1, |s| {
        note = workspace::write(&s.workspace(), "big.txt", b"x").unwrap().undo_note;
        workspace::write(&s.workspace(), "small.txt", b"s1").unwrap();
    });
    let note = note.unwrap();
    assert!(note.contains("'big.txt' cannot be undone") && note.contains("undo.max_bytes"), "{note}");
    let r = restore(&f.s.undo(), Target::Latest, false).unwrap();
    assert_eq!(f.get("small.txt").as_deref(), Some("s0"));
    assert_eq!(f.get("big.txt").as_deref(), Some("x"), "never claimed, never restored");
    assert_eq!(r.not_restored.len(), 1);
    assert!(r.not_restored[0].starts_with("big.txt: it is 16 bytes"), "{:?}", r.not_restored);

    for turn in 2..=4 {
        f.turn(turn, |s| {
            workspace::write(&s.workspace(), "small.txt", format!("t{turn}").as_bytes()).unwrap();
        });
    }
    let left: Vec<u64> = list(&f.s.undo()).unwrap().iter().map(|c| c.n).collect();
    assert_eq!(left, [3, 4], "undo.keep = 2 keeps the newest two");
}

#[test]
fn a_change_outside_a_turn_is_a_checkpoint_of_its_own() {
    let f = fx(Bounds::default());
    workspace::write(&f.s.workspace(), "a.txt", b"1").unwrap();
    workspace::write(&f.s.workspace(), "b.txt", b"2").unwrap();
    let cps = list(&f.s.undo()).unwrap();
    assert_eq!(
        cps.iter().map(|c| (c.turn, paths(c).join(","))).collect::<Vec<_>>(),
        [(None, "a.txt".to_string()), (None, "b.txt".to_string())]
    );
    assert!(describe(&cps[0]).starts_with("outside a turn: a.txt"));
}

#[test]
fn folders_a_write_made_are_removed_with_the_file_but_not_when_something_else_is_in_them() {
    let f = fx(Bounds::default());
    std::fs::create_dir(f.ws.join("kept")).unwrap();
    f.turn(1, |s| {
        workspace::write(&s.workspace(), "deep/er/x.txt", b"x").unwrap();
        workspace::write(&s.workspace(), "deep/er/y.txt", b"y").unwrap();
        workspace::write(&s.workspace(), "kept/z.txt", b"z").unwrap();
        workspace::write(&s.workspace(), "busy/w.txt", b"w").unwrap();
    });
    let made: Vec<(String, Vec<String>)> =
        list(&f.s.undo()).unwrap()[0].entries.iter().map(|e| (e.path.clone(), e.made.clone())).collect();
    assert_eq!(
        made[0],
        ("deep/er/x.txt".to_string(), vec!["deep/er".to_string(), "deep".to_string()]),
        "{made:?}"
    );
    // Something the person put there since: that folder stays, with its file.
    f.put("busy/mine.txt", "mine");
    let done = restore(&f.s.undo(), Target::Latest, false).unwrap();
    let lines = done.files.join("\n");
    assert!(!f.ws.join("deep").exists(), "{lines}");
    assert_eq!(
        done.files.last().map(String::as_str),
        Some("removed the folders made for them: deep/er, deep")
    );
    assert!(f.ws.join("kept").is_dir(), "a folder that existed before stays");
    assert_eq!(f.get("busy/mine.txt").as_deref(), Some("mine"));
    assert_eq!(f.get("busy/w.txt"), None);
}
