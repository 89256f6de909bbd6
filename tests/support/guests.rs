//! Guest-language plugins for the authoring and example suites: the example plugins built
//! with their own toolchains (plugins/examples/build.sh, which installs what it needs and
//! caches it under ~/.cache/corral/toolchains), and the shared environment for generated projects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Where the example components are built.
pub fn examples_dir() -> PathBuf {
    super::target_dir().join("examples")
}

/// Builds the example for `lang` (rust, python, js or c) once per test process and compiles it
/// into the shared cache; returns the component's path. Builds run one at a time: they share
/// two cores with the tests.
pub fn example(lang: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(lang) {
        return p.clone();
    }
    let file = match lang {
        "rust" => "validate_config.wasm",
        "python" => "code_stats.wasm",
        "js" => "json_query.wasm",
        "c" => "checksum.wasm",
        other => panic!("no example for {other}"),
    };
    let out = Command::new("bash")
        .arg(super::repo().join("plugins/examples/build.sh"))
        .arg(lang)
        .env("CORRAL", env!("CARGO_BIN_EXE_corral"))
        .env("CORRAL_EXAMPLES_OUT", examples_dir())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run plugins/examples/build.sh");
    assert!(
        out.status.success(),
        "building the {lang} example failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let path = examples_dir().join(file);
    assert!(path.is_file(), "{} was not built", path.display());
    // Compiled into the tests' shared cache here, under the lock: tests that load it side by
    // side would otherwise each compile it (the Python and JS ones take 17-20 s of CPU).
    super::Sandbox::new().run(&["--plugin", path.to_str().expect("a UTF-8 path"), "plugins"]).ok();
    built.insert(lang.to_string(), path.clone());
    path
}

/// Installs a toolchain (python, js or c) with plugins/examples/toolchains.sh.
pub fn toolchain(name: &str) {
    let out = Command::new("bash")
        .arg(super::repo().join("plugins/examples/toolchains.sh"))
        .arg(name)
        .output()
        .expect("run plugins/examples/toolchains.sh");
    assert!(
        out.status.success(),
        "installing the {name} toolchain failed\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `sh` blocks under a `## heading` of a markdown file, joined.
pub fn readme_commands(readme: &str, heading: &str) -> String {
    let mut out = String::new();
    let mut in_section = false;
    let mut in_block = false;
    for line in readme.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            in_section = h.trim() == heading;
            continue;
        }
        if line.starts_with("```") {
            in_block = in_section && !in_block && line.trim() == "```sh";
            continue;
        }
        if in_block {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// PATH with the directory of the `corral` under test first.
pub fn path_with_corral() -> std::ffi::OsString {
    let bin =
        Path::new(env!("CARGO_BIN_EXE_corral")).parent().expect("the binary has a folder").to_path_buf();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).expect("PATH")
}
