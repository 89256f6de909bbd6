//! Shared by the end-to-end suites: a sandbox directory tree (workspace, outside files,
//! private config and cache), the real `corral` binary, and the test plugins.

#![allow(dead_code)]

pub mod guests;
pub mod inproc;
pub mod mcp;
pub mod model_server;
pub mod stops;
pub mod terminal;
pub mod web_server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The repository root.
/// Writes an executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ is in the repo").to_path_buf()
}

/// Where test plugins and the shared compile cache live.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"))
}

/// The path of a test plugin component (see tests/plugins), built on first use.
pub fn test_plugin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let target = target_dir().join("plugins-wasm");
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(repo().join("tests/plugins"))
            .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2", "--target-dir"])
            .arg(&target)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            .status()
            .expect("run cargo to build the test plugins");
        assert!(status.success(), "building tests/plugins failed");
        target.join("wasm32-wasip2/release")
    });
    dir.join(format!("{name}.wasm"))
}

/// A component that host/build.rs built (a built-in plugin or a shipped skill), by file stem:
/// the very file embedded in the corral under test.
pub fn built_component(stem: &str) -> PathBuf {
    let path = PathBuf::from(env!("CORRAL_BUILTINS_WASM_DIR")).join(format!("{stem}.wasm"));
    assert!(path.is_file(), "{} is missing; build corral first", path.display());
    path
}

/// A folder holding the cache key every test shares (made once, private to the user).
pub fn shared_key_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::io::{Read, Write};
        use std::os::unix::fs::OpenOptionsExt;
        let dir = target_dir().join("test-state");
        let key = dir.join("cache.key");
        if !key.is_file() {
            std::fs::create_dir_all(&dir).expect("mkdir");
            let mut bytes = [0u8; 32];
            std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).expect("random");
            let tmp = dir.join(format!("cache.key.tmp{}", std::process::id()));
            let mut f =
                std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).expect("key");
            f.write_all(&bytes).expect("write key");
            // Two suites may make it at once: the first link wins, both use it.
            let _ = std::fs::hard_link(&tmp, &key);
            let _ = std::fs::remove_file(&tmp);
        }
        dir
    })
    .clone()
}

/// The result of one corral run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Panics with both streams unless the run exited 0.
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "corral failed\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    /// Panics unless the run exited with a tool error (1).
    pub fn tool_err(self) -> Run {
        assert_eq!(self.code, 1, "expected a tool error\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// A private tree: `ws/` (the workspace, a git-like root), `outside/` (must never change),
/// `home/` with corral's config dir, and a cache dir shared by all tests of this build.
pub struct Sandbox {
    pub tmp: tempfile::TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub config: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical tempdir");
        let ws = base.join("ws");
        let outside = base.join("outside");
        let config = base.join("home/.config/corral");
        for d in [&ws, &outside, &config, &ws.join(".git")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(outside.join("secret.txt"), "top secret\n").expect("write");
        std::fs::write(ws.join("hello.txt"), "hello\nworld\n").expect("write");
        // Cache entries are tagged with the key in the user's state dir; every sandbox gets
        // the same one, so the shared compile cache serves them all.
        let state = tmp.path().join("home/.local/state/corral");
        std::fs::create_dir_all(&state).expect("mkdir");
        std::fs::copy(shared_key_dir().join("cache.key"), state.join("cache.key"))
            .expect("copy the cache key");
        Sandbox { tmp, ws, outside, config }
    }

    /// A shared compile cache: the first test compiles, the rest load.
    pub fn cache_dir() -> PathBuf {
        target_dir().join("test-cache")
    }

    /// Where corral keeps its state (the cache key among it) for this sandbox's HOME.
    pub fn state_dir(&self) -> PathBuf {
        self.tmp.path().join("home/.local/state/corral")
    }

    /// A `corral` command in the workspace with a clean, private environment.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_corral"));
        c.current_dir(&self.ws)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.tmp.path().join("home"))
            .env("CORRAL_CONFIG_DIR", &self.config)
            .env("CORRAL_CACHE_DIR", Self::cache_dir())
            .stdin(Stdio::null());
        c
    }

    /// Trusts the workspace's own files as they are now (`corral trust`), as the person would
    /// after reviewing them; tests that configure through the project's `corral.toml` call it.
    pub fn trust(&self) {
        self.run(&["trust"]).ok();
    }

    /// Runs corral with `args`.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd().args(args).output().expect("run corral"))
    }

    /// Runs corral with `args` and extra environment variables `envs`.
    pub fn run_with_env(&self, args: &[&str], envs: &[(&str, &str)]) -> Run {
        Run::from(self.cmd().args(args).envs(envs.iter().copied()).output().expect("run corral"))
    }

    /// Calls one tool with JSON arguments, plus extra flags before the command.
    pub fn tool(&self, flags: &[&str], name: &str, args: &serde_json::Value) -> Run {
        let json = args.to_string();
        let mut all: Vec<&str> = flags.to_vec();
        all.extend(["tool", name, &json]);
        self.run(&all)
    }

    /// Runs the interactive session in a pseudo-terminal against the model server at `url`
    /// with `extra` flags, typing `lines` at its prompts (see [`Sandbox::in_terminal`]),
    /// and returns everything the terminal showed.
    pub fn repl(&self, url: &str, extra: &[&str], lines: &[&str]) -> String {
        let mut args = vec!["--base-url", url, "--model", "test-model", "--color", "never"];
        args.extend_from_slice(extra);
        self.in_terminal(&args, &[("CORRAL_RETRY_BASE_MS", "10")], lines)
    }

    /// Every entry under the sandbox except the workspace and corral's own state folder:
    /// path -> (kind, content).
    pub fn outside_state(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(self.tmp.path(), &self.ws, &mut out);
        let state = self.tmp.path().join("home/.local/state/corral");
        // The state folder and the folders made to hold it.
        out.retain(|p, _| !p.starts_with(&state) && !state.starts_with(p));
        out
    }

    /// A file in this workspace's local state (approvals, continue note, history, todo, trash
    /// index), which corral keeps outside the workspace.
    pub fn state_file(&self, name: &str) -> PathBuf {
        let state = self.tmp.path().join("home/.local/state/corral");
        corral::config::workspace_state_dir(&state, &self.ws).join(name)
    }
}

/// `arg` quoted for `sh`.
fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

impl Sandbox {
    /// Runs corral with `args` in a pseudo-terminal (util-linux `script`), as a person at a
    /// terminal would, typing each of `lines` (Enter after each, except Ctrl-C) once corral
    /// shows its next prompt, and returns everything the terminal showed. `env` adds variables.
    pub fn in_terminal(&self, args: &[&str], env: &[(&str, &str)], lines: &[&str]) -> String {
        self.in_terminal_when(args, env, lines, terminal::at_prompt)
    }

    /// [`Sandbox::in_terminal`], typing line `i` once `ready(i, screen so far)` holds.
    pub fn in_terminal_when(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        lines: &[&str],
        ready: impl Fn(usize, &str) -> bool,
    ) -> String {
        let mut cmd = sh_quote(env!("CARGO_BIN_EXE_corral"));
        for a in args {
            cmd.push(' ');
            cmd.push_str(&sh_quote(a));
        }
        let child = Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.tmp.path().join("home"))
            .env("CORRAL_CONFIG_DIR", &self.config)
            .env("CORRAL_CACHE_DIR", Self::cache_dir())
            .env("TERM", "dumb")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run script(1)");
        terminal::drive(child, lines, ready)
    }
}

fn walk(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p == skip {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
        let desc = if meta.file_type().is_symlink() {
            format!("link -> {}", std::fs::read_link(&p).map(|t| t.display().to_string()).unwrap_or_default())
        } else if meta.is_dir() {
            walk(&p, skip, out);
            "dir".to_string()
        } else {
            format!("file {:?}", std::fs::read(&p).unwrap_or_default())
        };
        out.insert(p, desc);
    }
}
