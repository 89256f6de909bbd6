//! The generated WIT host traits, implemented for one plugin's view of the session. Each
//! function that needs a capability checks the plugin's grant first (the registry already
//! refused components importing what they were not granted; this is the second line).

use super::effects::{self, Effect};
use super::grant::Capability;
use super::{ErrorCode, Session, WsError, http as net, process as proc, trash, workspace};
use crate::wit::{context as wit_ctx, host_info, http, kv, log, process, types, workspace as wit_ws};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a plugin's imports act on: the session, seen as `plugin`.
#[derive(Debug, Clone)]
pub struct PluginCtx {
    /// The plugin's name (its kv namespace and log prefix).
    pub plugin: Arc<str>,
    pub session: Arc<Session>,
    /// Time this call spent waiting for the person or for a fetch, which its timeout does
    /// not count.
    pub paused: PauseClock,
    /// What this call did that the agent loop acts on (a todo change, a snapshot restore).
    pub effects: effects::Sink,
    /// Runs the calls of the `parallel` import; `None` in a call that import started.
    pub parallel: Option<Arc<dyn super::SubCalls>>,
}

/// Accumulates paused time for one call; the call's timeout takes it as credit, including
/// the part of a pause still going on (a fetch in flight when the deadline comes).
#[derive(Debug, Clone, Default)]
pub struct PauseClock(Arc<Mutex<Paused>>);

#[derive(Debug, Default)]
struct Paused {
    /// Paused time not yet taken.
    done: Duration,
    /// When the pause in progress started, or was last taken from.
    open: Option<Instant>,
}

/// A pause in progress; it ends when dropped.
pub struct Pause(PauseClock);

impl Drop for Pause {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.0.lock()
            && let Some(start) = p.open.take()
        {
            p.done += start.elapsed();
        }
    }
}

impl PauseClock {
    pub fn add(&self, d: Duration) {
        if let Ok(mut p) = self.0.lock() {
            p.done += d;
        }
    }

    /// Starts a pause that lasts until the returned guard is dropped.
    pub fn begin(&self) -> Pause {
        if let Ok(mut p) = self.0.lock() {
            p.open = Some(Instant::now());
        }
        Pause(self.clone())
    }

    /// The paused time recorded since the last call, reset to zero; a pause in progress
    /// counts up to now.
    pub fn take(&self) -> Duration {
        let Ok(mut p) = self.0.lock() else { return Duration::ZERO };
        let mut total = std::mem::take(&mut p.done);
        if let Some(start) = p.open {
            let now = Instant::now();
            total += now - start;
            p.open = Some(now);
        }
        total
    }
}

impl PluginCtx {
    /// Passes on a change's note that it cannot be undone, for the call's result.
    fn noted(&self, mut i: workspace::WriteInfo) -> workspace::WriteInfo {
        if let Some(note) = i.undo_note.take() {
            self.effects.push(Effect::NotUndoable(note));
        }
        i
    }

    /// `Err` with a message for the model when this plugin was not granted `cap`.
    fn check(&self, cap: Capability) -> Result<(), String> {
        self.session.granted().check(&self.plugin, cap)
    }

    /// A workspace change's error for the plugin; a read guard refusal is also recorded, so the
    /// front end can tell it by its kind rather than its wording.
    fn ws_error(&self, e: WsError) -> wit_ws::Error {
        if e.code == ErrorCode::NotRead {
            self.effects.push(Effect::Unread);
        }
        to_wit(e)
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
        self.session.log().push(&self.plugin, level, &message);
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
            .roots()
            .all()
            .iter()
            .map(|r| wit_ws::Root { path: r.path.to_string_lossy().into_owned(), writable: r.writable })
            .collect()
    }

    async fn note_read(&mut self, path: String) {
        // A plugin importing note-read without workspace-write is refused at load (built-ins
        // excepted); this keeps a call that got through anyway from marking anything.
        if let Err(why) = self.session.granted().check_note_read(&self.plugin) {
            self.session.log().push(&self.plugin, "warn", &format!("note-read of '{path}' ignored: {why}"));
            return;
        }
        workspace::note_read(&self.session.workspace(), &path);
    }

    async fn write(&mut self, path: String, contents: Vec<u8>) -> Result<wit_ws::WriteInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        let written =
            workspace::write(&self.session.workspace(), &path, &contents).map_err(|e| self.ws_error(e))?;
        Ok(info(self.noted(written)))
    }

    async fn move_(
        &mut self,
        source: String,
        destination: String,
    ) -> Result<wit_ws::WriteInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        let moved = workspace::rename(&self.session.workspace(), &source, &destination)
            .map_err(|e| self.ws_error(e))?;
        Ok(info(self.noted(moved)))
    }

    async fn trash(&mut self, path: String) -> Result<wit_ws::TrashInfo, wit_ws::Error> {
        self.refused_ws(Capability::WorkspaceWrite)?;
        let t = trash::trash(&self.session.trash(), &path).map_err(|e| self.ws_error(e))?;
        if let Some(note) = t.undo_note {
            self.effects.push(Effect::NotUndoable(note));
        }
        Ok(wit_ws::TrashInfo { id: t.id, location: t.location })
    }

    async fn undecodable_names(&mut self, path: String) -> Result<Vec<String>, wit_ws::Error> {
        // Reading a listing needs no grant, as the plugin's own WASI listing does not.
        workspace::undecodable_names(&self.session.workspace(), &path).map_err(to_wit)
    }
}

impl kv::Host for PluginCtx {
    async fn get(&mut self, key: String) -> Option<String> {
        self.check(Capability::Kv).ok()?;
        self.session.kv().get(&self.plugin, &key)
    }

    async fn set(&mut self, key: String, value: String) -> Result<(), String> {
        self.check(Capability::Kv)?;
        self.session.kv().set(&self.plugin, &key, &value)
    }

    async fn delete(&mut self, key: String) {
        if self.check(Capability::Kv).is_err() {
            return;
        }
        self.session.kv().delete(&self.plugin, &key)
    }

    async fn keys(&mut self, prefix: String) -> Vec<String> {
        if self.check(Capability::Kv).is_err() {
            return Vec::new();
        }
        self.session.kv().keys(&self.plugin, &prefix)
    }
}

impl wit_ctx::Host for PluginCtx {
    async fn set_section(&mut self, name: String, body: String) -> Result<(), String> {
        self.check(Capability::Context)?;
        let cx = self.session.context();
        cx.sections.set(&self.plugin, &name, &body)?;
        if name == "todo" {
            super::state::mirror_todo(cx.local, cx.log, &body);
            self.effects.push(Effect::TodoChanged);
        }
        Ok(())
    }

    async fn section(&mut self, name: String) -> Option<String> {
        self.check(Capability::Context).ok()?;
        self.session.context().sections.get(&name)
    }

    async fn ask(&mut self, question: String, choices: Vec<String>) -> Result<String, String> {
        self.check(Capability::Context)?;
        // The person may take their time: the wait is not counted against the call's timeout.
        let started = Instant::now();
        let answer = self.session.context().ask.ask(&question, &choices);
        self.paused.add(started.elapsed());
        answer
    }

    async fn snapshot_save(&mut self, label: String) -> Result<(), String> {
        self.check(Capability::Context)?;
        self.session.context().snapshot.save(&label)
    }

    async fn snapshot_restore(
        &mut self,
        label: Option<String>,
        summary: String,
        force: bool,
    ) -> Result<(), String> {
        self.check(Capability::Context)?;
        if self.effects.has_restore() {
            return Err("a restore is already pending in this reply; call restore once per reply".into());
        }
        let restore = self.session.context().snapshot.restore(label.as_deref(), &summary, force)?;
        self.effects.push(Effect::SnapshotRestore(restore));
        Ok(())
    }

    async fn snapshot_cancel(&mut self) -> Result<String, String> {
        self.check(Capability::Context)?;
        self.session.context().snapshot.cancel()
    }

    async fn snapshot_status(&mut self) -> wit_ctx::SnapshotState {
        if self.check(Capability::Context).is_err() {
            // Nothing to show a plugin that may not see the session's snapshots.
            return wit_ctx::SnapshotState {
                checkpoint: None,
                dirty: Vec::new(),
                restores: 0,
                completed: Vec::new(),
            };
        }
        let s = self.session.context().snapshot.status();
        wit_ctx::SnapshotState {
            checkpoint: s.checkpoint,
            dirty: s.dirty,
            restores: s.restores,
            completed: s.completed,
        }
    }

    async fn memory_append(&mut self, entry: String) -> Result<u64, String> {
        self.check(Capability::Context)?;
        super::context::memory_append(self.session.context().workspace, &entry)
    }
}

impl host_info::Host for PluginCtx {
    async fn setting(&mut self, key: String) -> Option<String> {
        self.session.plugin_setting(&self.plugin, &key)
    }

    async fn save_output(&mut self, kind: String, contents: String) -> Result<String, String> {
        super::scratch::save(&self.session.roots().workspace().dir, &kind, &contents)
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
        // The fetch has its own time limit; waiting for it is not the plugin's time.
        let pause = self.paused.begin();
        let result = net::fetch(self.session.http(&self.plugin), self.plugin.clone(), req).await;
        drop(pause);
        match result {
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
        let _paused = self.paused.begin();
        proc::run(&self.session.process(), program, req).await.map(proc_output).map_err(proc_error)
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
        let program = proc::authorize(&self.session.process(), &self.plugin, &req);
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
        let allowed = proc::authorize_shell(&self.session.process(), &self.plugin, &line, cwd.as_deref());
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use crate::capabilities::grant::CapSet;
    use crate::capabilities::{Policy, Roots, log};

    fn block<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn a_read_guard_refusal_is_recorded_by_its_kind_for_the_front_end() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("old.txt"), "old").unwrap();
        let roots = Roots::open(t.path(), &[], &[]).unwrap();
        let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
        session.granted().set("p", CapSet::parse(&["workspace-write"]).unwrap());
        let mut ctx = PluginCtx {
            plugin: "p".into(),
            session,
            paused: PauseClock::default(),
            effects: effects::Sink::default(),
            parallel: None,
        };
        block(wit_ws::Host::write(&mut ctx, "new.txt".into(), b"n".to_vec())).unwrap();
        assert!(ctx.effects.take().is_empty(), "a new file passes the guard");
        let e = block(wit_ws::Host::write(&mut ctx, "old.txt".into(), b"x".to_vec())).unwrap_err();
        assert_eq!(e.code, wit_ws::ErrorCode::NotRead);
        assert_eq!(ctx.effects.take(), vec![Effect::Unread]);
        let e = block(wit_ws::Host::trash(&mut ctx, "old.txt".into())).unwrap_err();
        assert_eq!(e.code, wit_ws::ErrorCode::NotRead);
        assert_eq!(ctx.effects.take(), vec![Effect::Unread]);
        assert_eq!(std::fs::read_to_string(t.path().join("old.txt")).unwrap(), "old");
    }

    #[test]
    fn the_pause_clock_credits_finished_and_running_pauses_once() {
        let clock = PauseClock::default();
        clock.add(Duration::from_millis(40));
        assert_eq!(clock.take(), Duration::from_millis(40));
        assert_eq!(clock.take(), Duration::ZERO, "taken time is gone");
        let pause = clock.begin();
        std::thread::sleep(Duration::from_millis(30));
        let running = clock.take();
        assert!(running >= Duration::from_millis(30), "a running pause counts: {running:?}");
        std::thread::sleep(Duration::from_millis(20));
        drop(pause);
        let rest = clock.take();
        assert!(rest >= Duration::from_millis(20) && rest < Duration::from_millis(30 + 20), "{rest:?}");
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(clock.take(), Duration::ZERO, "nothing counts after the pause ended");
    }
}
