//! Running one program: its own process group, only the given environment, the working
//! directory entered through an already-checked directory handle, stdin closed unless given,
//! output kept up to a bound, and the whole group killed on timeout, at the end, or when the
//! call is abandoned, so nothing it started outlives it.

use cap_std::fs::Dir;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Output bytes kept per stream; the rest is counted and dropped.
pub const RETAIN_BYTES: usize = 1 << 20;
/// How long to wait for the output pipes to close once the group is dead.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What to run.
#[derive(Debug)]
pub struct Spec {
    pub program: PathBuf,
    /// The name the program sees as its own (`argv[0]`): the name it was asked for by.
    pub arg0: String,
    pub args: Vec<String>,
    /// The working directory, opened through the roots' checks.
    pub cwd: Dir,
    pub env: Vec<(OsString, OsString)>,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// The operating-system sandbox to enter, if any (it also makes the new session).
    pub sandbox: Option<Arc<crate::capabilities::sandbox::Sandbox>>,
}

/// One output stream as kept.
#[derive(Debug, Default, Clone)]
pub struct Capture {
    pub bytes: Vec<u8>,
    /// Everything the program wrote, kept or not.
    pub total: u64,
}

/// How the run ended.
#[derive(Debug, Default)]
pub struct Finished {
    pub exit_code: Option<i32>,
    /// The signal that ended the program, if one did.
    pub signal: Option<i32>,
    pub stdout: Capture,
    pub stderr: Capture,
    pub timed_out: bool,
}

/// Kills a process group when asked or when dropped.
struct Group(Option<i32>);

impl Group {
    fn kill(&self) {
        if let Some(pgid) = self.0.filter(|p| *p > 1) {
            // SAFETY: kill(2) with a negative pid signals the process group `pgid`, which
            // was created for this run (`process_group(0)` makes the child its leader).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Aborts a task when dropped.
struct Task<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn keep(mut r: impl AsyncRead + Unpin, into: Arc<Mutex<Capture>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let Ok(mut c) = into.lock() else { break };
                c.total += n as u64;
                let room = RETAIN_BYTES.saturating_sub(c.bytes.len());
                c.bytes.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

fn taken(c: &Arc<Mutex<Capture>>) -> Capture {
    c.lock().map(|mut c| std::mem::take(&mut *c)).unwrap_or_default()
}

/// Runs `spec` to completion or timeout.
pub async fn run(spec: Spec) -> io::Result<Finished> {
    let fd = spec.cwd.as_fd().as_raw_fd();
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.arg0(&spec.arg0)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and only calls fchdir(2),
    // which is async-signal-safe; `fd` belongs to `spec.cwd`, open until spawn returns.
    unsafe {
        cmd.pre_exec(move || if libc::fchdir(fd) == 0 { Ok(()) } else { Err(io::Error::last_os_error()) });
    }
    match &spec.sandbox {
        // The sandbox starts a new session: its own process group, no controlling terminal.
        Some(sandbox) => {
            let hook = sandbox.hook();
            // SAFETY: the hook makes only async-signal-safe system calls and allocates nothing.
            unsafe {
                cmd.pre_exec(hook);
            }
        }
        None => {
            cmd.process_group(0);
        }
    }
    let mut child = cmd.spawn()?;
    drop(spec.cwd);
    let group = Group(child.id().and_then(|id| i32::try_from(id).ok()));
    let (out, err) = (Arc::new(Mutex::new(Capture::default())), Arc::new(Mutex::new(Capture::default())));
    let mut readers = Vec::new();
    if let Some(s) = child.stdout.take() {
        readers.push(Task(tokio::spawn(keep(s, out.clone()))));
    }
    if let Some(s) = child.stderr.take() {
        readers.push(Task(tokio::spawn(keep(s, err.clone()))));
    }
    let _writer = match (child.stdin.take(), spec.stdin) {
        (Some(mut w), Some(data)) => Some(Task(tokio::spawn(async move {
            let _ = w.write_all(&data).await;
            let _ = w.shutdown().await;
        }))),
        _ => None,
    };
    let (status, timed_out) = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            group.kill();
            (child.wait().await.ok(), true)
        }
    };
    // Whatever the program left running goes too; then its pipes close.
    group.kill();
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        for r in &mut readers {
            let _ = (&mut r.0).await;
        }
    })
    .await;
    drop(readers);
    Ok(Finished {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stdout: taken(&out),
        stderr: taken(&err),
        timed_out,
    })
}
