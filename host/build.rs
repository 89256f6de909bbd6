//! Builds the built-in plugins (the `plugins/` workspace) for wasm32-wasip2 and writes
//! `builtins.rs`, which embeds each component with its SHA-256, so `cargo build` alone
//! gives one self-contained binary.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// (package, component file stem) of every built-in plugin, in catalogue order.
const BUILTINS: &[(&str, &str)] = &[
    ("read-file", "read_file"),
    ("read-multiple-files", "read_multiple_files"),
    ("list-files", "list_files"),
    ("grep", "grep"),
    ("write-file", "write_file"),
    ("edit-file", "edit_file"),
    ("delete-file", "delete_file"),
    ("think", "think"),
    ("todo", "todo"),
    ("question", "question"),
    ("snapshot", "snapshot"),
    ("memory-write", "memory_write"),
];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.parent().expect("host/ sits in the repository").to_path_buf();
    let plugins = repo.join("plugins");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", plugins.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", plugins.join("Cargo.lock").display());
    for dir in ["sdk", "fstools", "agenttools"].iter().copied().chain(BUILTINS.iter().map(|(p, _)| *p)) {
        println!("cargo:rerun-if-changed={}", plugins.join(dir).join("src").display());
        println!("cargo:rerun-if-changed={}", plugins.join(dir).join("Cargo.toml").display());
    }
    println!("cargo:rerun-if-changed={}", repo.join("wit").display());
    println!("cargo:rerun-if-env-changed=CORRAL_PLUGINS_TARGET_DIR");

    ensure_wasm_target();
    let target_dir = plugin_target_dir(&repo);
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&plugins)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--target-dir"])
        .arg(&target_dir);
    for (pkg, _) in BUILTINS {
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
    let status =
        cmd.status().unwrap_or_else(|e| panic!("cannot run cargo to build the built-in plugins: {e}"));
    if !status.success() {
        panic!(
            "building the built-in plugins for wasm32-wasip2 failed (see the output above).\n\
             If the target is missing, run: rustup target add wasm32-wasip2"
        );
    }

    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    let mut code = String::from(
        "/// The built-in plugins embedded at build time: (name, component bytes, sha256 hex).\n\
         pub static BUILTINS: &[Builtin] = &[\n",
    );
    for (_, stem) in BUILTINS {
        let path = wasm_dir.join(format!("{stem}.wasm"));
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let copy = out_dir.join(format!("{stem}.wasm"));
        fs::write(&copy, &bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", copy.display()));
        let sha = hex(&Sha256::digest(&bytes));
        code.push_str(&format!(
            "    Builtin {{ name: {stem:?}, bytes: include_bytes!({:?}), sha256: {sha:?} }},\n",
            copy.display().to_string()
        ));
    }
    code.push_str("];\n");
    fs::write(out_dir.join("builtins.rs"), code).expect("cannot write builtins.rs");
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
