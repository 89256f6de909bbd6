//! Starting a stdio MCP server: in the command sandbox (network only with `network = true`),
//! in its own session and process group, killed with its group when corral lets it go and by
//! the kernel when corral dies (parent-death signal); its stderr kept, short and cleaned.

use crate::capabilities::Session;
use crate::capabilities::process::confine::{Confinement, is_secret_env};
use crate::capabilities::process::tempdir::Scratch;
use crate::capabilities::sandbox::{Sandbox, SandboxError, SandboxSpec, paths};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout};

/// The stderr bytes kept (the last ones), for the reason a server failed.
const STDERR_KEEP: usize = 2048;
/// Variables of corral's environment a server gets besides its own `env` (Codex's set).
const PASSED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TZ"];

/// A running server process. Dropping it kills its whole process group.
pub struct Child {
    pgid: Option<i32>,
    child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The task reading stderr; it ends when the process's stderr closes.
    reader: Option<tokio::task::JoinHandle<()>>,
    _scratch: Scratch,
}

impl Child {
    /// The end of what it wrote on stderr, cleaned for a terminal, one line.
    pub fn stderr_tail(&self) -> String {
        let bytes = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        let text = crate::termtext::clean(&String::from_utf8_lossy(&bytes));
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The stderr reader, to wait for the last of what a dead server wrote.
    pub fn take_reader(&mut self) -> Option<tokio::task::JoinHandle<()>> {
        self.reader.take()
    }

    /// Whether the process has ended (and how), without waiting.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.filter(|p| *p > 1) {
            // SAFETY: kill(2) with a negative pid signals the process group `pgid`, which the
            // server leads (the sandbox or `process_group(0)` made it at spawn).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
        // Reaped here when it is already gone; otherwise tokio reaps it in the background.
        let _ = self.child.try_wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Finds `command` as the person's shell would: a path as given, a bare name on `PATH`.
fn resolve(command: &str) -> Result<PathBuf, String> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return if p.is_file() { Ok(p) } else { Err(format!("{command} is not a file")) };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{command} is not on PATH; give its full path in command"))
}

/// The environment the server gets: a few of corral's variables (never a model key), its own
/// `env`, and a private `TMPDIR`.
fn environment(own: &BTreeMap<String, String>, tmp: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = PASSED_ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .filter(|(k, _)| !is_secret_env(&k.to_string_lossy()))
        .collect();
    env.push(("TMPDIR".into(), tmp.as_os_str().to_owned()));
    env.extend(own.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    env
}

/// What [`spawn`] starts.
pub struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub cwd: Option<&'a Path>,
    pub network: bool,
}

/// What the server may reach: the roots (writable ones writable, protected paths read-only),
/// the system and toolchain folders and the person's `commands.read_paths`/`write_paths`, its
/// program and working directory, its scratch folder; the network only when allowed.
fn sandbox_spec(
    session: &Session,
    c: &Confinement,
    program: &Path,
    cwd: &Path,
    scratch: &Path,
    network: bool,
) -> Result<SandboxSpec, String> {
    let roots = session.roots().all();
    let mut spec = SandboxSpec {
        read: roots.iter().map(|r| r.path.clone()).chain(c.read.iter().cloned()).collect(),
        write: roots.iter().filter(|r| r.writable).map(|r| r.path.clone()).collect(),
        protected: Vec::new(),
        hidden: c.hidden.clone(),
        network,
    };
    spec.write.extend(c.write.iter().cloned());
    spec.read.push(program.to_path_buf());
    spec.read.push(cwd.to_path_buf());
    for root in roots.iter().filter(|r| r.writable) {
        spec.protected.extend(paths::protected_in(&root.path, session.roots().protects_git())?);
    }
    spec.write.push(scratch.to_path_buf());
    Ok(spec)
}

/// Starts the server under `confine` (built from the person's `[commands]` settings whether
/// or not commands are enabled); returns it with the pipes the MCP session runs over.
pub fn spawn(
    session: &Session,
    confine: &Confinement,
    l: &Launch<'_>,
) -> Result<(Child, ChildStdout, ChildStdin), String> {
    let program = resolve(l.command)?;
    let scratch = Scratch::create().map_err(|e| format!("cannot make the server's temp folder: {e}"))?;
    let workspace = session.roots().workspace().path.clone();
    let cwd = l.cwd.map_or(workspace, Path::to_path_buf);
    let spec = sandbox_spec(session, confine, &program, &cwd, scratch.path(), l.network)?;
    let sandbox = match Sandbox::prepare(&spec) {
        Ok(s) => Some(Arc::new(s)),
        Err(SandboxError::Unavailable(why)) if confine.unsandboxed => {
            session.log().push("host", "warn", &format!("MCP server runs WITHOUT the sandbox: {why}"));
            None
        }
        Err(e @ SandboxError::Unavailable(_)) => {
            return Err(format!(
                "refused by the command sandbox rule: MCP servers run in the command sandbox like commands. {e}"
            ));
        }
        Err(e) => return Err(e.to_string()),
    };
    // The working directory is entered through a handle before the sandbox is (as commands do).
    let dir = std::fs::File::open(&cwd).map_err(|e| format!("cannot open its cwd {}: {e}", cwd.display()))?;
    let fd = dir.as_raw_fd();
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(l.args)
        .env_clear()
        .envs(environment(l.env, scratch.path()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: fchdir(2) is async-signal-safe; `fd` belongs to `dir`, open until spawn returns.
    unsafe {
        cmd.pre_exec(
            move || if libc::fchdir(fd) == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) },
        );
    }
    match &sandbox {
        Some(s) => {
            let hook = s.hook();
            // SAFETY: the hook makes only async-signal-safe system calls and allocates nothing;
            // it also starts a new session (own process group).
            unsafe {
                cmd.pre_exec(hook);
            }
        }
        None => {
            cmd.process_group(0);
        }
    }
    // SAFETY: getpid, prctl and getppid are async-signal-safe. The parent-death signal is set
    // last (after the sandbox changed credentials, which would clear it); a parent that died
    // before it was set is caught by the getppid check.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    drop((sandbox, dir));
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut reader = None;
    if let Some(mut err) = child.stderr.take() {
        let keep = stderr.clone();
        reader = Some(tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let Ok(mut k) = keep.lock() else { break };
                k.extend_from_slice(&buf[..n]);
                let over = k.len().saturating_sub(STDERR_KEEP);
                k.drain(..over);
            }
        }));
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the server's pipes were not opened".into());
    };
    Ok((Child { pgid, child, stderr, reader, _scratch: scratch }, stdout, stdin))
}
