//! The built-ins' descriptions made at build time (`build/describe.rs`) are exactly what their
//! components describe at run time, and a start uses them instead of loading any code.

use super::discover::{self, Candidate};
use super::grants::LoadRules;
use super::{Registry, manifest};
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
        loaded.to_warm(Some(likely)).map(|p| p.info.name.clone()).collect()
    };
    assert_eq!(warm(&["read_file", "grep"]), ["read_file", "grep"]);
    assert_eq!(warm(&["grep", "edit_file", "read_file"]), ["grep", "edit_file", "read_file"]);
    assert_eq!(loaded.to_warm(None).count(), loaded.plugins().len());
    // The code loads on first use, and its imports match the description.
    let (_, outline) = loaded.tool("outline").unwrap();
    assert!(outline.code.get().is_ok());
    assert!(!outline.code.is_pending());
}
