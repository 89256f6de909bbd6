//! Builds the built-in plugins (the `plugins/` workspace) for wasm32-wasip2 and writes
//! `builtins.rs`, which embeds each component with its SHA-256, so `cargo build` alone
//! gives one self-contained binary. The skills shipped in `skills/` are embedded the same
//! way: component skills built with the plugins, `SKILL.md` folders file by file.
//! Every embedded component is also precompiled here, under the runtime's own engine Config
//! for the target's baseline ISA (x86-64-v2 on x86-64, see `engine_config`), so a start (even
//! with no compile cache) compiles nothing, and every built-in tool is described here
//! (build/describe.rs), so a start loads none of their code until a tool is called.

// A build script reports failure by panicking with a message, and reads and writes its own
// files with std::fs: the host's rules do not apply here.
#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr
)]

/// Describing each built-in here, so a start needs none of their code.
#[path = "build/describe.rs"]
mod describe;

#[path = "src/runtime/engine_config.rs"]
#[allow(dead_code)]
mod engine_config;

/// The contract version, whose folder under wit/ is embedded for `corral plugin wit`.
#[path = "src/wit/version.rs"]
#[allow(dead_code)]
mod version;

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::{env, fs};

/// (package, component file stem) of every built-in plugin, in catalogue order.
const BUILTINS: &[(&str, &str)] = &[
    ("read-file", "read_file"),
    ("read-multiple-files", "read_multiple_files"),
    ("list-files", "list_files"),
    ("grep", "grep"),
    ("outline", "outline"),
    ("write-file", "write_file"),
    ("edit-file", "edit_file"),
    ("delete-file", "delete_file"),
    ("think", "think"),
    ("todo", "todo"),
    ("question", "question"),
    ("run-command", "run_command"),
    ("fetch-url", "fetch_url"),
    ("web-search", "web_search"),
    ("snapshot", "snapshot"),
    ("memory-write", "memory_write"),
    ("backlog", "backlog"),
];

/// Built-ins not compiled here but committed, as (component file stem, path in the repository):
/// `outline` carries C grammars that need a wasm C toolchain, so `make outline` builds it (see
/// plugins/outline/build.sh; a test checks it matches its sources).
const PREBUILT: &[(&str, &str)] = &[("outline", "plugins/outline/prebuilt/outline.wasm")];

fn prebuilt(stem: &str) -> Option<&'static str> {
    PREBUILT.iter().find(|(s, _)| *s == stem).map(|(_, path)| *path)
}

/// (package, component file stem) of the server that makes a `SKILL.md` folder a skill.
const SKILL_SERVER: (&str, &str) = ("skill-folder", "skill_folder");

/// (package, component file stem) of every component skill shipped in `skills/`.
const SHIPPED_SKILLS: &[(&str, &str)] = &[("markdown-docs", "markdown_docs")];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.parent().expect("host/ sits in the repository").to_path_buf();
    let plugins = repo.join("plugins");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", plugins.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", plugins.join("Cargo.lock").display());
    let plugin_dirs = ["sdk", "fstools", "agenttools", "webtools", "cmdtools", SKILL_SERVER.0];
    let compiled = BUILTINS.iter().filter(|(_, stem)| prebuilt(stem).is_none());
    for dir in plugin_dirs.iter().copied().chain(compiled.clone().map(|(p, _)| *p)) {
        println!("cargo:rerun-if-changed={}", plugins.join(dir).join("src").display());
        println!("cargo:rerun-if-changed={}", plugins.join(dir).join("Cargo.toml").display());
    }
    for (_, path) in PREBUILT {
        println!("cargo:rerun-if-changed={}", repo.join(path).display());
    }
    println!("cargo:rerun-if-changed={}", repo.join("wit").display());
    println!("cargo:rerun-if-changed={}", repo.join("contract").display());
    println!("cargo:rerun-if-changed={}", manifest_dir.join("src/runtime/engine_config.rs").display());
    println!("cargo:rerun-if-changed={}", manifest_dir.join("build").display());
    println!("cargo:rerun-if-changed={}", manifest_dir.join("src/wit/version.rs").display());
    println!("cargo:rerun-if-changed={}", repo.join("skills").display());
    println!("cargo:rerun-if-env-changed=CORRAL_PLUGINS_TARGET_DIR");

    order_startup_functions(&manifest_dir, &out_dir);
    pack_relative_relocations(&out_dir);
    ensure_wasm_target();
    let target_dir = plugin_target_dir(&repo);
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&plugins)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--target-dir"])
        .arg(&target_dir);
    for (pkg, _) in compiled.chain([&SKILL_SERVER]).chain(SHIPPED_SKILLS) {
        cmd.args(["-p", pkg]);
    }
    // The outer build's settings are for the host, not for wasm.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    // WebAssembly SIMD: memchr and the regex engine's literal search use it (grep reads
    // whole trees); wasmtime supports it on every target it compiles for.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    let status =
        cmd.status().unwrap_or_else(|e| panic!("cannot run cargo to build the built-in plugins: {e}"));
    if !status.success() {
        panic!(
            "building the built-in plugins for wasm32-wasip2 failed (see the output above).\n\
             If the target is missing, run: rustup target add wasm32-wasip2"
        );
    }

    // Always the release profile, debug build or not: link-time optimisation drops the
    // imports a plugin never calls, and a plugin's grants are read from its imports.
    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    // The suites in tests/ read the very components embedded here.
    println!("cargo:rustc-env=CORRAL_BUILTINS_WASM_DIR={}", wasm_dir.display());
    let engine = precompile_engine();
    // Describing runs the component, so only when this machine can run what is built.
    let runnable = env::var("HOST").ok() == env::var("TARGET").ok();
    let tool_interface = format!("{}/tool@{}", version::PACKAGE, version::VERSION);
    let skill_interface = format!("{}/skill@{}", version::PACKAGE, version::VERSION);
    let in_place = code_runs_in_place();
    let elf = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let embed = |stem: &str, kind: Describe| -> String {
        let path = match prebuilt(stem) {
            Some(p) => repo.join(p),
            None => wasm_dir.join(format!("{stem}.wasm")),
        };
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let copy = out_dir.join(format!("{stem}.wasm"));
        fs::write(&copy, &bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", copy.display()));
        let sha = hex(&Sha256::digest(&bytes));
        let cwasm = engine
            .precompile_component(&bytes)
            .unwrap_or_else(|e| panic!("cannot precompile {}: {e:#}", path.display()));
        let compiled = out_dir.join(format!("{stem}.cwasm"));
        fs::write(&compiled, &cwasm).unwrap_or_else(|e| panic!("cannot write {}: {e}", compiled.display()));
        // Without a description (or a skill's answer) the runtime asks the component at start.
        let described =
            |interface: &str, describe: fn(&wasmtime::Engine, &[u8], &str) -> Result<String, String>| {
                describe(&engine, &cwasm, interface).unwrap_or_else(|why| {
                    println!("cargo:warning=the built-in {stem} could not be described at build time: {why}");
                    "None".to_string()
                })
            };
        let (description, skill) = match kind {
            Describe::Tool if runnable => {
                (described(&tool_interface, describe::describe), "None".to_string())
            }
            Describe::Skill if runnable => {
                ("None".to_string(), described(&skill_interface, describe::describe_skill))
            }
            _ => ("None".to_string(), "None".to_string()),
        };
        // The artifact sits in a page-aligned static; on targets where wasmtime can run it
        // where it lies (see runtime/in_place.rs) that static is placed among the binary's
        // code, so loading a built-in copies nothing and only the pages it runs are read in.
        let section = if in_place { "#[unsafe(link_section = \".text.corral_builtin\")] " } else { "" };
        // The component's own bytes are read only when its compiled code must be made again
        // (an artifact this CPU cannot run): on ELF targets they lie in a section of their
        // own, away from the small constants a start reads (names, digests, descriptions).
        // Among those, every page a start touched mapped its neighbours with it (the kernel
        // maps up to 64 KB around a fault): about 1.5 MB of these bytes, never used, in the
        // resident set of every session.
        let wasm_section = if elf { "#[unsafe(link_section = \"corral_wasm\")] " } else { "" };
        format!(
            "Builtin {{ name: {stem:?}, \
             bytes: {{ {wasm_section}static BYTES: [u8; {}] = *include_bytes!({:?}); &BYTES }}, \
             sha256: {sha:?}, \
             precompiled: {{ {section}static CODE: Code<{}> = Code(*include_bytes!({:?})); &CODE.0 }}, \
             description: {description}, skill: {skill} }}",
            bytes.len(),
            copy.display().to_string(),
            cwasm.len(),
            compiled.display().to_string()
        )
    };
    let mut code = format!(
        "/// Whether the precompiled artifacts lie among the binary's code, to be run in place.\n\
         pub const CODE_IN_PLACE: bool = {in_place};\n\
         /// The built-in plugins embedded at build time: (name, component bytes, sha256 hex).\n\
         pub static BUILTINS: &[Builtin] = &[\n",
    );
    for (_, stem) in BUILTINS {
        code.push_str(&format!("    {},\n", embed(stem, Describe::Tool)));
    }
    code.push_str("];\n");
    code.push_str(&format!(
        "/// The component that serves `SKILL.md` folders as skills.\npub static SKILL_SERVER: Builtin = {};\n",
        embed(SKILL_SERVER.1, Describe::Nothing)
    ));
    code.push_str(
        "/// The component skills shipped with corral.\npub static SHIPPED_SKILLS: &[Builtin] = &[\n",
    );
    for (_, stem) in SHIPPED_SKILLS {
        code.push_str(&format!("    {},\n", embed(stem, Describe::Skill)));
    }
    code.push_str("];\n");
    code.push_str(&shipped_folders(&repo.join("skills")));
    fs::write(out_dir.join("builtins.rs"), code).expect("cannot write builtins.rs");
    write_wit_files(&repo.join("wit").join(version::VERSION.folder()), &out_dir);
}

/// What an embedded component is asked at build time.
#[derive(Clone, Copy)]
enum Describe {
    /// A built-in tool plugin: its imports and tools.
    Tool,
    /// A shipped component skill: its name and description.
    Skill,
    /// The folder server: nothing (it answers for each folder, see `shipped_folders`).
    Nothing,
}

/// Whether the target is one where the artifacts are placed in the code section and run in
/// place: ELF on Linux x86-64, where a `.text.*` section is mapped read-execute and code needs
/// no cache maintenance once written. Elsewhere the runtime copies them, as wasmtime does.
fn code_runs_in_place() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ARCH") == "x86_64"
}

/// The engine that precompiles the built-ins: the runtime's Config (pooling first, as the
/// runtime tries it; the choice does not change the artifacts) for the target being built,
/// with that target's baseline ISA (x86-64-v2 on x86-64), so the artifacts load on every
/// machine of that target (or, on a CPU without those features, are refused by wasmtime).
fn precompile_engine() -> wasmtime::Engine {
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let engine =
        |pooling| engine_config::config(pooling, Some(&target)).and_then(|cfg| wasmtime::Engine::new(&cfg));
    engine(true).or_else(|_| engine(false)).unwrap_or_else(|e| {
        panic!("cannot create the engine that precompiles the built-ins for {target}: {e:#}")
    })
}

/// The `SKILL.md` folders directly under `skills/`, every file embedded (dot entries
/// skipped), each folder with a SHA-256 over its paths and contents and the folder server's
/// answer for it, read from its `SKILL.md` by the server's own reader. A shipped folder whose
/// `SKILL.md` the server would refuse fails the build.
fn shipped_folders(skills: &Path) -> String {
    let mut dirs: Vec<PathBuf> = fs::read_dir(skills)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.retain(|d| d.join("SKILL.md").is_file());
    dirs.sort();
    let mut code = String::from(
        "/// The `SKILL.md` folders shipped with corral, file by file.\npub static SHIPPED_FOLDERS: &[ShippedFolder] = &[\n",
    );
    for dir in dirs {
        let name = dir.file_name().expect("a folder has a name").to_string_lossy().into_owned();
        let mut files = Vec::new();
        collect_files(&dir, "", &mut files);
        files.sort();
        let mut digest = Sha256::new();
        let mut entries = String::new();
        for (rel, abs) in &files {
            let bytes = fs::read(abs).unwrap_or_else(|e| panic!("cannot read {}: {e}", abs.display()));
            digest.update(rel.as_bytes());
            digest.update([0]);
            digest.update((bytes.len() as u64).to_le_bytes());
            digest.update(&bytes);
            entries.push_str(&format!(
                "        ShippedFile {{ path: {rel:?}, bytes: include_bytes!({:?}) }},\n",
                abs.display().to_string()
            ));
        }
        let doc = fs::read_to_string(dir.join("SKILL.md"))
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join("SKILL.md").display()));
        let doc = corral_contract::frontmatter::parse(&doc, &name)
            .unwrap_or_else(|e| panic!("the shipped skill {}: {e}", dir.display()));
        code.push_str(&format!(
            "    ShippedFolder {{ name: {name:?}, sha256: {:?}, files: &[\n{entries}    ],\n        \
             skill: BuiltSkill {{ name: {:?}, description: {:?} }} }},\n",
            hex(&digest.finalize()),
            doc.name,
            doc.description
        ));
    }
    code.push_str("];\n");
    code
}

fn collect_files(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let path = e.path();
        if path.is_dir() {
            collect_files(&path, &rel, out);
        } else if path.is_file() {
            out.push((rel, path));
        }
    }
}

/// Writes `wit_files.rs`: every `*.wit` file of the contract's folder (`wit/0.1/`), by file
/// name, so that `corral plugin wit` hands authors exactly the WIT this binary was built against.
fn write_wit_files(wit_dir: &Path, out_dir: &Path) {
    let mut files: Vec<PathBuf> = fs::read_dir(wit_dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", wit_dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wit") && p.is_file())
        .collect();
    files.sort();
    let mut code = String::from(
        "/// The contract's WIT files: (file name, text).\npub static WIT_FILES: &[(&str, &str)] = &[\n",
    );
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        code.push_str(&format!("    ({name:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    code.push_str("];\n");
    fs::write(out_dir.join("wit_files.rs"), code).expect("cannot write wit_files.rs");
}

/// Has the linker lay out the functions a start runs side by side (`startup-order.txt`, made
/// by `startup-order.sh`), so a start touches fewer pages of the binary: fewer page faults,
/// a smaller resident set. Only where the linker takes `--symbol-ordering-file` (rust-lld,
/// Rust's default on x86-64 Linux, and mold do; GNU ld does not), which a trial link of an
/// empty program, with this build's flags and linker, tells.
fn order_startup_functions(manifest_dir: &Path, out_dir: &Path) {
    let order = manifest_dir.join("startup-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    if !order.is_file() {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        // Names the order lists that this build lacks (other features, another Rust) are skipped.
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if links_with(out_dir, "order", &args, false) {
        for arg in &args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
    // The names carry their crate's metadata hash, into which cargo mixes a workspace wrapper
    // (CI builds through clippy-driver): in such a build corral's own functions, and the
    // generic ones it instantiates, have other names than the list's, which is made from a
    // plain build, the one people run. tests/build.rs checks the list only in a plain build.
    let wrapped = env::var("RUSTC_WORKSPACE_WRAPPER").is_ok_and(|w| !w.is_empty());
    println!("cargo:rustc-env=CORRAL_BUILT_THROUGH_WRAPPER={}", if wrapped { "yes" } else { "" });
}

/// Packs the binary's relative relocations (`-z pack-relative-relocs`, DT_RELR): the loader
/// fixes up some 78,000 pointers at every start, and their table, which it reads whole, falls
/// from 1.9 MB to about 20 KB (2.2 MB less resident memory in the bench's scripted session).
/// The C library must know the format (glibc 2.36 and later; an older one refuses to load the
/// binary), so only when building for this machine and a trial program linked so runs here.
fn pack_relative_relocations(out_dir: &Path) {
    let target = env::var("TARGET").unwrap_or_default();
    if env::var("HOST").ok().as_deref() != Some(target.as_str()) || !target.ends_with("-linux-gnu") {
        return;
    }
    let args = ["-Wl,-z,pack-relative-relocs".to_string()];
    if links_with(out_dir, "relr", &args, true) {
        println!("cargo:rustc-link-arg-bins={}", args[0]);
    }
}

/// Whether an empty program links with `args` given to the linker, under this build's flags
/// and linker, and, with `run`, then runs on this machine.
fn links_with(out_dir: &Path, name: &str, args: &[String], run: bool) -> bool {
    let probe = out_dir.join("link_probe.rs");
    fs::write(&probe, "fn main() {}\n").expect("cannot write the link probe");
    let exe = out_dir.join(format!("link_probe_{name}"));
    let mut cmd = Command::new(env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
    cmd.args(["--crate-name", "link_probe", "--crate-type", "bin", "--target"])
        .arg(env::var("TARGET").expect("cargo sets TARGET"))
        .arg("-o")
        .arg(&exe)
        .arg(&probe);
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        cmd.arg(format!("-Clinker={linker}"));
    }
    cmd.args(args.iter().map(|a| format!("-Clink-arg={a}")));
    let quiet =
        |c: &mut Command| c.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    quiet(&mut cmd) && (!run || quiet(&mut Command::new(&exe)))
}

/// Installs the wasm32-wasip2 standard library through rustup when the toolchain lacks it,
/// so a fresh machine needs nothing but `cargo build`. Without rustup, says what is missing.
fn ensure_wasm_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot =
        Command::new(&rustc).args(["--print", "sysroot"]).output().ok().filter(|o| o.status.success());
    let Some(sysroot) = sysroot.map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())) else {
        return;
    };
    if sysroot.join("lib/rustlib/wasm32-wasip2").is_dir() {
        return;
    }
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "add", "wasm32-wasip2"]);
    if let Ok(toolchain) = env::var("RUSTUP_TOOLCHAIN") {
        cmd.args(["--toolchain", &toolchain]);
    }
    println!(
        "cargo:warning=installing the wasm32-wasip2 target with rustup (needed for the built-in plugins)"
    );
    match cmd.status() {
        Ok(s) if s.success() => {}
        _ => panic!(
            "the wasm32-wasip2 target is not installed and rustup could not add it.\n\
             Install it with: rustup target add wasm32-wasip2"
        ),
    }
}

/// Where the plugins are compiled: beside the host's own target directory, so repeated
/// builds (debug, release, tests) share one wasm build.
fn plugin_target_dir(repo: &Path) -> PathBuf {
    if let Ok(dir) = env::var("CORRAL_PLUGINS_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    if let Ok(dir) = env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("plugins-wasm");
    }
    repo.join("target").join("plugins-wasm")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
