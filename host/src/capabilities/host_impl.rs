//! The generated WIT host traits, implemented for one plugin's view of the session. Each
//! function that needs a capability checks the plugin's grant first (the registry already
//! refused components importing what they were not granted; this is the second line).

use super::grant::Capability;
use super::{ErrorCode, Session, WsError, http as net, process as proc, trash, workspace};
use crate::wit::{context as wit_ctx, host_info, http, kv, log, process, types, workspace as wit_ws};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a plugin's imports act on: the session, seen as `plugin`.
#[derive(Debug, Clone)]
pub struct PluginCtx {
    /// The plugin's name (its kv namespace and log prefix).
    pub plugin: Arc<str>,
    pub session: Arc<Session>,
    /// Time this call spent waiting for the person, which its timeout does not count.
    pub paused: PauseClock,
}

/// Accumulates paused time for one call; the call's timeout takes it as credit. Time spent
/// waiting for the person, or for a command that has its own timeout, is paused time.
#[derive(Debug, Clone, Default)]
pub struct PauseClock(Arc<PauseInner>);

#[derive(Debug, Default)]
pub struct PauseInner {
    credit_ms: AtomicU64,
    /// When the pause in progress (if any) started, or was last credited.
    since: Mutex<Option<Instant>>,
}

/// Ends a pause when dropped.
pub struct Paused(PauseClock);

impl Drop for Paused {
    fn drop(&mut self) {
        if let Ok(mut since) = self.0.0.since.lock()
            && let Some(t) = since.take()
        {
            self.0.add(t.elapsed());
        }
    }
}

impl PauseClock {
    pub fn add(&self, d: Duration) {
        self.0.credit_ms.fetch_add(d.as_millis().min(u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    /// Starts a pause that lasts until the guard is dropped.
    pub fn pause(&self) -> Paused {
        if let Ok(mut since) = self.0.since.lock() {
            *since = Some(Instant::now());
        }
        Paused(self.clone())
    }

    /// The paused time recorded since the last call, reset to zero; a pause in progress
    /// counts up to now.
    pub fn take(&self) -> Duration {
        let mut ms = self.0.credit_ms.swap(0, Ordering::Relaxed);
        if let Ok(mut since) = self.0.since.lock()
            && let Some(t) = since.as_mut()
        {
            ms = ms.saturating_add(t.elapsed().as_millis().min(u64::MAX as u128) as u64);
            *t = Instant::now();
        }
        Duration::from_millis(ms)
    }
}

impl PluginCtx {
    /// `Err` with a message for the model when this plugin was not granted `cap`.
    fn check(&self, cap: Capability) -> Result<(), String> {
        self.session.granted.check(&self.plugin, cap)
    }

    fn refused_ws(&self, cap: Capability) -> Result<(), wit_ws::Error> {
        self.check(cap).map_err(|message| wit_ws::Error { code: wit_ws::ErrorCode::Protected, message })
    }
}

impl types::Host for PluginCtx {}

impl log::Host for PluginCtx {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Trace => "trace",
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        self.session.log.push(&self.plugin, level, &message);
    }
}

fn to_wit(e: WsError) -> wit_ws::Error {
    let code = match e.code {
        ErrorCode::OutsideRoots => wit_ws::ErrorCode::OutsideRoots,
        ErrorCode::Protected => wit_ws::ErrorCode::Protected,
        ErrorCode::NotRead => wit_ws::ErrorCode::NotRead,
        ErrorCode::NotFound => wit_ws::ErrorCode::NotFound,
        ErrorCode::IsDirectory => wit_ws::ErrorCode::IsDirectory,
        ErrorCode::InvalidPath => wit_ws::ErrorCode::InvalidPath,
        ErrorCode::Io => wit_ws::ErrorCode::Io,
    };
    wit_ws::Error { code, message: e.message }
}

fn info(i: workspace::WriteInfo) -> wit_ws::WriteInfo {
    wit_ws::WriteInfo { path: i.path, bytes: i.bytes, existed: i.existed }
}

impl wit_ws::Host for PluginCtx {
    async fn roots(&mut self) -> Vec<wit_ws::Root> {
        self.session
            .roots
            .all()
            .iter()
            .map(|r| wit_ws::Root { path: r.path.to_string_lossy().into_owned(), writable: r.writable })
            .collect()
    }

    async fn note_read(&mut self, path: String) {
        workspace::note_read(&self.session, &path);
    }

    async fn write(&mut self, path: String, contents: Vec<u8>) -> Result<wit_ws::WriteInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        workspace::write(&self.session, &path, &contents).map(info).map_err(to_wit)
    }

    async fn move_(
        &mut self,
        source: String,
        destination: String,
    ) -> Result<wit_ws::WriteInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        workspace::rename(&self.session, &source, &destination).map(info).map_err(to_wit)
    }

    async fn trash(&mut self, path: String) -> Result<wit_ws::TrashInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        trash::trash(&self.session, &path)
            .map(|t| wit_ws::TrashInfo { id: t.id, location: t.location })
            .map_err(to_wit)
    }
}

impl kv::Host for PluginCtx {
    async fn get(&mut self, key: String) -> Option<String> {
        self.check(Capability::Kv).ok()?;
        self.session.kv.get(&self.plugin, &key)
    }

    async fn set(&mut self, key: String, value: String) -> Result<(), String> {
        self.check(Capability::Kv)?;
        self.session.kv.set(&self.plugin, &key, &value)
    }

    async fn delete(&mut self, key: String) {
        if self.check(Capability::Kv).is_err() {
            return;
        }
        self.session.kv.delete(&self.plugin, &key)
    }

    async fn keys(&mut self, prefix: String) -> Vec<String> {
        if self.check(Capability::Kv).is_err() {
            return Vec::new();
        }
        self.session.kv.keys(&self.plugin, &prefix)
    }
}

impl wit_ctx::Host for PluginCtx {
    async fn set_section(&mut self, name: String, body: String) -> Result<(), String> {
        self.check(Capability::Context)?;
        self.session.sections.set(&self.plugin, &name, &body)?;
        if name == "todo" {
            super::state::mirror_todo(&self.session, &body);
        }
        Ok(())
    }

    async fn section(&mut self, name: String) -> Option<String> {
        self.check(Capability::Context).ok()?;
        self.session.sections.get(&name)
    }

    async fn ask(&mut self, question: String, choices: Vec<String>) -> Result<String, String> {
        self.check(Capability::Context)?;
        // The person may take their time: the wait is not counted against the call's timeout.
        let started = Instant::now();
        let answer = self.session.ask.ask(&question, &choices);
        self.paused.add(started.elapsed());
        answer
    }
}

impl host_info::Host for PluginCtx {
    async fn setting(&mut self, key: String) -> Option<String> {
        self.session.plugin_settings.get(&*self.plugin)?.get(&key).cloned()
    }

    async fn save_output(&mut self, kind: String, contents: String) -> Result<String, String> {
        super::scratch::save(&self.session.roots.workspace().dir, &kind, &contents)
    }
}

impl http::Host for PluginCtx {
    async fn fetch(&mut self, req: http::Request) -> Result<http::Response, http::Error> {
        self.check(Capability::Http)
            .map_err(|message| http::Error { code: http::ErrorCode::Denied, message })?;
        let req = net::Request {
            method: req.method,
            url: req.url,
            headers: req.headers,
            body: req.body,
            max_bytes: req.max_bytes,
            timeout: req.timeout_ms.map(|ms| Duration::from_millis(ms.into())),
        };
        match net::fetch(self.session.clone(), self.plugin.clone(), req).await {
            Ok(r) => Ok(http::Response {
                status: r.status,
                url: r.url,
                headers: r.headers,
                body: r.body,
                truncated: r.truncated,
            }),
            Err(e) => {
                let code = match e.code {
                    net::Code::Denied => http::ErrorCode::Denied,
                    net::Code::InvalidUrl => http::ErrorCode::InvalidUrl,
                    net::Code::Unreachable => http::ErrorCode::Unreachable,
                    net::Code::Timeout => http::ErrorCode::Timeout,
                    net::Code::TooManyRedirects => http::ErrorCode::TooManyRedirects,
                    net::Code::Other => http::ErrorCode::Other,
                };
                Err(http::Error { code, message: e.message })
            }
        }
    }
}

fn proc_error(e: proc::ProcError) -> process::Error {
    let code = match e.code {
        proc::Code::Denied => process::ErrorCode::Denied,
        proc::Code::NotFound => process::ErrorCode::NotFound,
        proc::Code::Invalid => process::ErrorCode::Invalid,
        proc::Code::Io => process::ErrorCode::Io,
    };
    process::Error { code, message: e.message }
}

fn proc_output(o: proc::Output) -> process::Output {
    process::Output {
        exit_code: o.exit_code,
        stdout: o.stdout,
        stderr: o.stderr,
        timed_out: o.timed_out,
        spilled: o.spilled,
    }
}

impl PluginCtx {
    /// Runs an authorized command; its run time (bounded by its own timeout) is paused time.
    async fn run_command(
        &self,
        program: std::path::PathBuf,
        req: proc::Request,
    ) -> Result<process::Output, process::Error> {
        let _paused = self.paused.pause();
        proc::run(self.session.clone(), program, req).await.map(proc_output).map_err(proc_error)
    }
}

impl process::Host for PluginCtx {
    async fn run(&mut self, cmd: process::Command) -> Result<process::Output, process::Error> {
        let req = proc::Request {
            program: cmd.program,
            args: cmd.args,
            cwd: cmd.cwd,
            timeout: cmd.timeout_ms.map(|ms| Duration::from_millis(ms.into())),
            stdin: cmd.stdin,
        };
        // Approval may wait for the person: not counted against the call's timeout.
        let started = Instant::now();
        let program = proc::authorize(&self.session, &self.plugin, &req);
        self.paused.add(started.elapsed());
        self.run_command(program.map_err(proc_error)?, req).await
    }

    async fn run_shell(
        &mut self,
        line: String,
        cwd: Option<String>,
        timeout_ms: Option<u32>,
    ) -> Result<process::Output, process::Error> {
        let started = Instant::now();
        let allowed = proc::authorize_shell(&self.session, &self.plugin, &line, cwd.as_deref());
        self.paused.add(started.elapsed());
        allowed.map_err(proc_error)?;
        let req = proc::Request {
            program: "sh".into(),
            args: vec!["-c".into(), line],
            cwd,
            timeout: timeout_ms.map(|ms| Duration::from_millis(ms.into())),
            stdin: None,
        };
        self.run_command("/bin/sh".into(), req).await
    }
}
