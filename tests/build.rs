//! The build itself: host/build.rs precompiles the built-ins with wasmtime, so wasmtime and
//! Cranelift are also build dependencies. Cargo compiles a crate once for both sides only when
//! its features and profile agree on both; one differing feature anywhere below wasmtime makes
//! it compile the whole stack twice (three minutes of a clean build on two cores). These
//! tests read cargo's unit graph, which lists every compilation a build would run.

use crate::support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The crates a `cargo build --workspace --all-targets` (plus `--release` if asked) would
/// compile more than once, each with what tells its compilations apart.
fn compiled_twice(release: bool) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // The unit graph is an unstable output of stable cargo; RUSTC_BOOTSTRAP opens it.
    cmd.current_dir(support::repo()).env("RUSTC_BOOTSTRAP", "1").args([
        "build",
        "--workspace",
        "--all-targets",
        "--frozen",
        "--unit-graph",
        "-Z",
        "unstable-options",
    ]);
    if release {
        cmd.arg("--release");
    }
    let out = cmd.output().expect("run cargo");
    assert!(out.status.success(), "cargo --unit-graph failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let graph: Value = serde_json::from_slice(&out.stdout).expect("the unit graph is JSON");
    let units = graph["units"].as_array().expect("the graph lists units");
    assert!(units.len() > 100, "{} units: not the whole build", units.len());
    let mut variants: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for u in units {
        let key = (u["pkg_id"].to_string(), u["target"]["name"].to_string(), u["mode"].to_string());
        let variant =
            format!("features {} profile {} platform {}", u["features"], u["profile"], u["platform"]);
        variants.entry(key).or_default().insert(variant);
    }
    variants
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|((pkg, target, mode), v)| {
            format!("{pkg} ({target}, {mode}):\n  {}", v.into_iter().collect::<Vec<_>>().join("\n  "))
        })
        .collect()
}

/// Fails, naming each crate and what differs, if a build compiles any crate twice.
fn assert_compiled_once(release: bool) {
    let twice = compiled_twice(release);
    assert!(
        twice.is_empty(),
        "compiled twice (give host/Cargo.toml's build-dependencies the features the binary's graph \
         turns on; for a release build, keep [profile.release.package.\"*\"] overriding build-override):\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_test_build_compiles_each_crate_once() {
    assert_compiled_once(false);
}

#[test]
fn the_release_build_compiles_each_crate_once() {
    assert_compiled_once(true);
}
