use super::*;
use crate::capabilities::{Policy, Roots, Session, log};
use crate::runtime::engine::new_engine;
use crate::runtime::registry::{LoadRules, Registry};
use crate::runtime::{CacheStatus, Limits, Runtime};
use std::sync::Arc;

/// The build places the artifacts among the code on Linux x86-64, and only there.
#[test]
fn the_artifacts_are_in_place_on_linux_x86_64() {
    let expected = cfg!(all(target_os = "linux", target_arch = "x86_64"));
    assert_eq!(crate::builtins::CODE_IN_PLACE, expected);
    assert_eq!(InPlace::for_this_binary().is_some(), expected);
}

/// Each artifact starts on a page, in a read-execute mapping of the binary.
#[test]
fn each_artifact_is_page_aligned_in_an_executable_mapping() {
    let Some(in_place) = InPlace::for_this_binary() else { return };
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mappings: Vec<(usize, usize, &str)> = maps
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next().unwrap(), f.next().unwrap());
            let (a, b) = range.split_once('-').unwrap();
            (usize::from_str_radix(a, 16).unwrap(), usize::from_str_radix(b, 16).unwrap(), perms)
        })
        .collect();
    assert!(!in_place.embedded.is_empty());
    for r in &in_place.embedded {
        assert_eq!(r.start % in_place.page, 0, "artifact at {:#x} is not page-aligned", r.start);
        let covering = mappings.iter().filter(|(a, b, _)| *a < r.end && r.start < *b).collect::<Vec<_>>();
        assert!(!covering.is_empty(), "artifact at {:#x} is in no mapping", r.start);
        for (a, b, perms) in covering {
            assert_eq!(&perms[..3], "r-x", "artifact at {:#x} lies in {a:#x}-{b:#x} {perms}", r.start);
        }
    }
}

/// A built-in loaded in place runs from the binary's own pages: its code image is the
/// embedded artifact, not a copy. The engine that first loads it keeps it: its later loads
/// share that component, another engine's load is refused (and copies, see below).
#[test]
fn a_built_in_is_loaded_in_place_once_per_process() {
    if InPlace::for_this_binary().is_none() {
        return;
    }
    let builtin = crate::builtins::BUILTINS.iter().find(|b| b.name == "read_file").unwrap();
    let (code, embedded) = (builtin.precompiled, builtin.precompiled.as_ptr_range());
    let engine = new_engine(Default::default()).unwrap();
    match load(&engine, code) {
        Some(component) => {
            let image = component.image_range();
            assert!(embedded.start <= image.start && image.end <= embedded.end, "{image:?} {embedded:?}");
            assert_eq!(load(&engine, code).unwrap().image_range(), image);
            assert!(load(&new_engine(Default::default()).unwrap(), code).is_none());
        }
        // Another test's engine loaded it first: it is held for that engine.
        None => {
            let loaded = LOADED.lock().unwrap();
            let (_, owner, _) = loaded.iter().find(|(a, ..)| *a == embedded.start.addr()).unwrap();
            assert!(!Engine::same(owner, &engine));
        }
    }
}

/// Through the runtime (in place or, for a second engine, copied) a built-in runs: a read
/// through the registry.
#[tokio::test]
async fn a_built_in_loaded_by_the_runtime_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = Runtime::with_key_dir(None, None).unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "in place\n").unwrap();
    let session =
        Arc::new(Session::new(Roots::open(&ws, &[], &[]).unwrap(), Policy::default(), log::Sink::new(false)));
    let candidates = crate::runtime::registry::discover(None, None, &[])
        .unwrap()
        .into_iter()
        .filter(|c| c.name == "read_file");
    let loaded =
        Registry::load(&rt, &session, candidates.collect(), &LoadRules::default(), &Limits::default())
            .await
            .unwrap();
    let (_, plugin) = loaded.tool("read_file").unwrap();
    for _ in 0..2 {
        let report =
            rt.invoke(plugin, &session, "read_file", r#"{"file_path": "a.txt"}"#, &Limits::default()).await;
        assert!(report.result.unwrap().text.contains("1: in place"));
    }
    assert!(matches!(plugin.cache_status(), CacheStatus::Precompiled), "{:?}", plugin.cache_status());
}

/// Code outside the embedded artifacts (compiled at run time, or mapped from the cache) is
/// made executable on publish and writable again on unpublish, as wasmtime itself would.
#[test]
fn other_code_is_protected_with_mprotect() {
    let Some(in_place) = InPlace::for_this_binary() else { return };
    let page = in_place.page;
    // SAFETY: a fresh private anonymous mapping of one page, unmapped at the end.
    let mem = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(mem, libc::MAP_FAILED);
    let ptr = mem.cast::<u8>();
    assert!(!in_place.is_embedded(ptr, page));
    // x86-64: `mov eax, 42; ret`.
    let code = [0xb8, 42, 0, 0, 0, 0xc3];
    // SAFETY: the page is ours and writable.
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr, code.len()) };
    in_place.publish_executable(ptr, page).unwrap();
    // SAFETY: the page now holds a complete function with the C ABI and is executable.
    let f: extern "C" fn() -> u32 = unsafe { std::mem::transmute(ptr) };
    assert_eq!(f(), 42);
    in_place.unpublish_executable(ptr, page).unwrap();
    // SAFETY: unpublished, the page is writable again.
    unsafe { ptr.write(0x90) };
    // SAFETY: the mapping made above.
    assert_eq!(unsafe { libc::munmap(mem, page) }, 0);
}

/// An embedded range is left as it is (already executable, and never writable), and a range
/// that only starts inside an artifact is not taken for one.
#[test]
fn embedded_ranges_are_left_alone() {
    let Some(in_place) = InPlace::for_this_binary() else { return };
    let r = in_place.embedded[0].clone();
    let start = std::ptr::without_provenance::<u8>(r.start);
    assert!(in_place.is_embedded(start, r.end - r.start));
    assert!(!in_place.is_embedded(start, r.end - r.start + 1));
    assert!(in_place.publish_executable(start, r.end - r.start).is_ok());
    assert!(in_place.unpublish_executable(start, r.end - r.start).is_ok());
}
