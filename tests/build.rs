//! The build itself: host/build.rs precompiles the built-ins with wasmtime, so wasmtime and
//! Cranelift are also build dependencies. Cargo compiles a crate once for both sides only when
//! its features and profile agree on both; one differing feature anywhere below wasmtime makes
//! it compile the whole stack twice (three minutes of a clean build on two cores). These
//! tests read cargo's unit graph, which lists every compilation a build would run.
//!
//! `make test` runs the tests in the release profile, so that after the README's first
//! command (`cargo run --release`) it compiles only the test harnesses: the last test here
//! checks that every compilation of that command is one the tests reuse.

use crate::support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The units `cargo <args> --unit-graph` would compile (cargo is run offline on this checkout).
fn unit_graph(args: &[&str]) -> Vec<Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // The unit graph is an unstable output of stable cargo; RUSTC_BOOTSTRAP opens it.
    cmd.current_dir(support::repo()).env("RUSTC_BOOTSTRAP", "1").args(args).args([
        "--frozen",
        "--unit-graph",
        "-Z",
        "unstable-options",
    ]);
    let out = cmd.output().expect("run cargo");
    assert!(out.status.success(), "cargo --unit-graph failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let graph: Value = serde_json::from_slice(&out.stdout).expect("the unit graph is JSON");
    let units = graph["units"].as_array().expect("the graph lists units").clone();
    assert!(units.len() > 100, "{} units for {args:?}: not the whole build", units.len());
    units
}

/// The crates a `cargo build --workspace --all-targets` (plus `--release` if asked) would
/// compile more than once, each with what tells its compilations apart.
fn compiled_twice(release: bool) -> Vec<String> {
    let mut args = vec!["build", "--workspace", "--all-targets"];
    if release {
        args.push("--release");
    }
    let units = unit_graph(&args);
    let mut variants: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for u in &units {
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

/// What makes each unit of `units` the same compilation in another graph: its package, target,
/// mode, features, profile and platform, and the same of every unit it depends on (cargo
/// hashes all of it into the artifact's name). The profile's name is left out, as cargo
/// leaves it out of the hash.
fn compilations(units: &[Value]) -> Vec<String> {
    fn identity(i: usize, units: &[Value], memo: &mut Vec<Option<String>>) -> String {
        if let Some(known) = &memo[i] {
            return known.clone();
        }
        let u = &units[i];
        let mut profile = u["profile"].clone();
        if let Some(p) = profile.as_object_mut() {
            p.remove("name");
        }
        let mut deps: Vec<String> = u["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["index"].as_u64())
            .map(|d| identity(d as usize, units, memo))
            .collect();
        deps.sort();
        let own = format!(
            "{} {} ({}) features {} profile {} platform {} [{}]",
            u["pkg_id"],
            u["target"]["name"],
            u["mode"],
            u["features"],
            profile,
            u["platform"],
            deps.join(", ")
        );
        memo[i] = Some(own.clone());
        own
    }
    let mut memo = vec![None; units.len()];
    (0..units.len()).map(|i| identity(i, units, &mut memo)).collect()
}

#[test]
fn the_tests_reuse_everything_the_release_run_compiled() {
    let test_units = unit_graph(&["test", "--workspace", "--release", "--no-run"]);
    let tests: BTreeSet<String> = compilations(&test_units).into_iter().collect();
    let run_units = unit_graph(&["build", "--release", "--bin", "corral"]);
    let mut missing: Vec<String> = compilations(&run_units)
        .into_iter()
        .zip(&run_units)
        .filter(|(c, _)| !tests.contains(c))
        .map(|(_, u)| format!("{} ({}, {})", u["pkg_id"], u["target"]["name"], u["mode"]))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "`make test` (cargo test --workspace --release) would compile these again after \
         `cargo run --release` (they, or crates below them, differ: a dev-dependency turns on \
         a feature the binary's graph lacks, or the profiles differ):\n{}",
        missing.join("\n")
    );
}

/// A unit's package name, from its id (`registry+...#name@version`, `path+file://...#version`).
fn package_name(u: &Value) -> &str {
    let id = u["pkg_id"].as_str().unwrap_or_default();
    let tail = id.rsplit_once('#').map_or(id, |(_, t)| t);
    tail.split_once('@').map_or(tail, |(name, _)| name)
}

/// Crates that run only while building and are still optimised on purpose.
const OPTIMISED_BUILD_TOOLS: [&str; 1] = ["cranelift-isle"];

#[test]
fn code_that_runs_only_while_building_is_not_optimised_in_release() {
    let units = unit_graph(&["build", "--release", "--bin", "corral"]);
    let kind = |u: &Value, k: &str| u["target"]["kind"].as_array().is_some_and(|a| a.iter().any(|v| v == k));
    // The packages linked into the binary: reached from it through libraries only.
    let root = units.iter().position(|u| kind(u, "bin")).expect("the graph has corral's binary");
    let (mut linked, mut todo) = (BTreeSet::new(), vec![root]);
    while let Some(i) = todo.pop() {
        let u = &units[i];
        if u["mode"] != "build" || kind(u, "proc-macro") || kind(u, "custom-build") {
            continue;
        }
        if linked.insert(u["pkg_id"].to_string()) {
            todo.extend(
                u["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d["index"].as_u64())
                    .map(|i| i as usize),
            );
        }
    }
    let mut optimised: Vec<String> = units
        .iter()
        .filter(|u| u["mode"] == "build" && !kind(u, "custom-build"))
        .filter(|u| !linked.contains(&u["pkg_id"].to_string()))
        .filter(|u| !OPTIMISED_BUILD_TOOLS.contains(&package_name(u)))
        .filter(|u| u["profile"]["opt_level"] != "0")
        .map(|u| format!("{} (opt-level {})", u["pkg_id"], u["profile"]["opt_level"]))
        .collect();
    optimised.sort();
    optimised.dedup();
    assert!(
        optimised.is_empty(),
        "these crates run only while building but are compiled optimised in release; add each to \
         [profile.release.package] in Cargo.toml with opt-level 0:\n{}",
        optimised.join("\n")
    );
}

/// Little-endian reads from an ELF64 file, and its section headers' offsets.
struct Elf<'a>(&'a [u8]);

impl Elf<'_> {
    fn u16_at(&self, o: usize) -> usize {
        u16::from_le_bytes([self.0[o], self.0[o + 1]]) as usize
    }
    fn u32_at(&self, o: usize) -> u32 {
        u32::from_le_bytes(self.0[o..o + 4].try_into().unwrap())
    }
    fn u64_at(&self, o: usize) -> u64 {
        u64::from_le_bytes(self.0[o..o + 8].try_into().unwrap())
    }
    /// Where each section header lies in the file.
    fn headers(&self) -> impl Iterator<Item = usize> + '_ {
        assert_eq!(&self.0[..5], b"\x7fELF\x02", "an ELF64 file");
        let (shoff, shentsize, shnum) = (self.u64_at(0x28) as usize, self.u16_at(0x3a), self.u16_at(0x3c));
        (0..shnum).map(move |i| shoff + i * shentsize)
    }
}

/// The section types of an ELF64 little-endian file, with their sizes.
fn elf_sections(bytes: &[u8]) -> Vec<(u32, u64)> {
    let elf = Elf(bytes);
    elf.headers().map(|h| (elf.u32_at(h + 4), elf.u64_at(h + 0x20))).collect()
}

#[test]
fn the_binary_packs_its_relative_relocations_where_the_c_library_loads_them() {
    // glibc 2.36 and later load DT_RELR (host/build.rs finds out by running a trial program).
    let glibc = Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok();
    let version = glibc.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let Some((major, minor)) = version.strip_prefix("glibc ").and_then(|v| v.split_once('.')) else {
        return; // not glibc: the build leaves the relocations as they are
    };
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap_or(0));
    if !cfg!(all(target_os = "linux", target_env = "gnu")) || (major, minor) < (2, 36) {
        return;
    }
    let sections = elf_sections(&std::fs::read(env!("CARGO_BIN_EXE_corral")).unwrap());
    const SHT_RELA: u32 = 4;
    const SHT_RELR: u32 = 19;
    assert!(sections.iter().any(|&(t, _)| t == SHT_RELR), "no .relr.dyn section on {version}");
    let rela: u64 = sections.iter().filter(|&&(t, _)| t == SHT_RELA).map(|&(_, size)| size).sum();
    assert!(rela < 64 << 10, "{rela} bytes of RELA relocations remain: the relative ones were not packed");
}

/// The functions in an ELF64 little-endian file's symbol table: name, address and size.
fn elf_functions(bytes: &[u8]) -> BTreeMap<String, (u64, u64)> {
    let elf = Elf(bytes);
    const SHT_SYMTAB: u32 = 2;
    const STT_FUNC: u8 = 2;
    let symtab =
        elf.headers().find(|&h| elf.u32_at(h + 4) == SHT_SYMTAB).expect("the binary has a symbol table");
    let strtab = elf.headers().nth(elf.u32_at(symtab + 0x28) as usize).expect("the symbol table's strings");
    let strings = elf.u64_at(strtab + 0x18) as usize;
    let (start, size) = (elf.u64_at(symtab + 0x18) as usize, elf.u64_at(symtab + 0x20) as usize);
    let mut out = BTreeMap::new();
    for sym in (start..start + size).step_by(24) {
        if bytes[sym + 4] & 0xf != STT_FUNC || elf.u64_at(sym + 16) == 0 {
            continue;
        }
        let name = strings + elf.u32_at(sym) as usize;
        let end = name + bytes[name..].iter().position(|&b| b == 0).unwrap();
        out.insert(
            String::from_utf8_lossy(&bytes[name..end]).into_owned(),
            (elf.u64_at(sym + 8), elf.u64_at(sym + 16)),
        );
    }
    out
}

#[test]
fn the_functions_a_start_runs_lie_together_in_the_binary() {
    // rust-lld, Rust's linker on x86-64 Linux, takes host/startup-order.txt (host/build.rs).
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let order = std::fs::read_to_string(support::repo().join("host/startup-order.txt")).unwrap();
    let listed: Vec<&str> = order.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let functions = elf_functions(&std::fs::read(env!("CARGO_BIN_EXE_corral")).unwrap());
    let found: Vec<(u64, u64)> = listed.iter().filter_map(|n| functions.get(*n).copied()).collect();
    // Names carry hashes: after a Rust or dependency update most are no longer found, and a
    // start touches scattered code again (megabytes more resident memory). A build through a
    // workspace wrapper (CI's clippy-driver) hashes corral's own names differently (see
    // host/build.rs), so there only the layout of the names it has is checked.
    let wrapped = env!("CORRAL_BUILT_THROUGH_WRAPPER") == "yes";
    assert!(
        wrapped || found.len() * 10 >= listed.len() * 9,
        "only {} of the {} functions host/startup-order.txt names are in the binary: the list is \
         stale; run `sh host/startup-order.sh` (needs perf, valgrind, python3) and commit it",
        found.len(),
        listed.len()
    );
    // And the linker laid them out together: they span little more than their own size.
    let low = found.iter().map(|f| f.0).min().unwrap();
    let high = found.iter().map(|f| f.0 + f.1).max().unwrap();
    let total: u64 = found.iter().map(|f| f.1).sum();
    assert!(
        high - low < total * 2,
        "the {} listed functions ({total} bytes) are spread over {} bytes: the linker did not take \
         the order",
        found.len(),
        high - low
    );
}
