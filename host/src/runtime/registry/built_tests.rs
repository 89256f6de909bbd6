//! The built-ins' descriptions made at build time (`build/describe.rs`) are exactly what their
//! components describe at run time, and a start uses them instead of loading any code.

use super::discover::{self, Candidate};
use super::grants::LoadRules;
use super::{Ahead, Registry, manifest};
use crate::builtins::BUILTINS;
use crate::capabilities::{Policy, Roots, Session, log};
use crate::runtime::{Limits, Runtime};
use std::sync::Arc;

fn session(dir: &std::path::Path) -> Arc<Session> {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    Arc::new(Session::new(Roots::open(&ws, &[], &[]).unwrap(), Policy::default(), log::Sink::new(false)))
}

fn candidate(name: &str, built: bool) -> Candidate {
    let mut c = discover::discover(None, None, &[]).unwrap().into_iter().find(|c| c.name == name).unwrap();
    if !built {
        c.built = None;
    }
    c
}

#[tokio::test]
async fn every_built_in_is_described_at_build_time_as_it_describes_itself() {
    for b in BUILTINS {
        let built = manifest::built(b.description.as_ref().unwrap()).unwrap();
        // Described the run-time way: compiled code loaded, `describe` called, kept in a cache.
        let tmp = tempfile::tempdir().unwrap();
        let rt =
            Runtime::with_key_dir(Some(tmp.path().join("cache")), Some(&tmp.path().join("key"))).unwrap();
        let (rules, limits) = (LoadRules::default().trusting(b.name), Limits::default());
        let loaded =
            Registry::load(&rt, &session(tmp.path()), vec![candidate(b.name, false)], &rules, &limits)
                .await
                .unwrap();
        assert!(!loaded.plugins()[0].code.is_pending(), "{} was described by loading its code", b.name);
        let run = manifest::read(rt.cache(), b.sha256).unwrap();
        assert_eq!(built.imports, run.imports, "{}", b.name);
        assert_eq!(built.needs, run.needs, "{}", b.name);
        assert_eq!(format!("{:?}", built.tools), format!("{:?}", run.tools), "{}", b.name);
    }
}

#[tokio::test]
async fn a_start_without_cache_loads_no_built_in_code_until_a_call() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = Runtime::with_key_dir(None, None).unwrap();
    let session = session(tmp.path());
    let mut rules = LoadRules::default();
    (rules.network, rules.commands) = (true, true);
    let all = discover::discover(None, None, &[]).unwrap();
    let loaded = Registry::load(&rt, &session, all, &rules, &Limits::default()).await.unwrap();
    assert!(loaded.plugins().len() >= 15);
    for p in loaded.plugins() {
        assert!(p.code.is_pending(), "{}'s code was loaded at start", p.info.name);
    }
    // Ahead of first calls only the likely built-ins are loaded, the likeliest first;
    // outline waits for its call.
    let warm = |likely: &[&str]| -> Vec<String> {
        loaded.to_warm(Ahead::Likely(likely)).map(|p| p.info.name.clone()).collect()
    };
    assert_eq!(warm(&["read_file", "grep"]), ["read_file", "grep"]);
    assert_eq!(warm(&["grep", "edit_file", "read_file"]), ["grep", "edit_file", "read_file"]);
    assert_eq!(loaded.to_warm(Ahead::All).count(), loaded.plugins().len());
    // A command that lists, or runs one tool, loads nothing ahead.
    assert_eq!(loaded.to_warm(Ahead::Nothing).count(), 0);
    // The code loads on first use, and its imports match the description.
    let (_, outline) = loaded.tool("outline").unwrap();
    assert!(outline.code.get().is_ok());
    assert!(!outline.code.is_pending());
}

#[test]
fn a_rehearsal_makes_an_instance_gives_its_slot_back_and_never_waits_for_one() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = Runtime::with_key_dir(None, None).unwrap();
    let session = session(tmp.path());
    std::fs::write(tmp.path().join("ws/notes.txt"), "kept as it was\n").unwrap();
    // The loading thread's own executor: a rehearsal is not run inside the session's.
    let exec = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rules = LoadRules::default();
    let registry = exec
        .block_on(Registry::load(
            &rt,
            &session,
            vec![candidate("read_file", true)],
            &rules,
            &Limits::default(),
        ))
        .unwrap();
    let (_, plugin) = registry.tool("read_file").unwrap();
    let pre = plugin.code.get().unwrap();
    let slots = || rt.caller.slots.available_permits();
    let all = slots();
    rt.rehearsal(&session).instantiate(pre, "read_file", &exec).unwrap();
    assert_eq!(slots(), all, "the rehearsal's slot is given back when its store is dropped");
    // A real call after it works as ever.
    let report = exec.block_on(rt.invoke(
        plugin,
        &session,
        "read_file",
        r#"{"file_path": "notes.txt"}"#,
        &Limits::default(),
    ));
    let out = report.result.unwrap();
    assert!(out.text.contains("kept as it was"), "{}", out.text);
    // With every slot taken (calls under way need them), a rehearsal gives up at once. (The
    // real call's store may be dropped by the reaper thread: taking every slot waits for it.)
    let taken = exec.block_on(rt.caller.slots.clone().acquire_many_owned(all as u32)).unwrap();
    let e = rt.rehearsal(&session).instantiate(pre, "read_file", &exec).unwrap_err();
    assert!(e.to_string().contains("every slot of the pool is taken"), "{e}");
    drop(taken);
    assert_eq!(slots(), all);
}
