//! One plugin call: a fresh store (WASI context with read-only preopens of what the call may
//! see, captured stdio, memory limiter), instantiate from the cached `InstancePre`, call with
//! a wall-clock timeout, and turn every way a plugin can fail into a typed [`ToolError`].

use super::limits::{Limits, MemoryLimiter};
use super::output::{ErrorKind, ToolError, ToolOutput};
use super::pipes::{CapturePipe, Captured};
use super::site::{SKILL_DIR_VAR, Site, View, WORKSPACE_VAR};
use super::{CallState, Caller, Plugin, Runtime, watchdog};
use crate::capabilities::effects::{Effect, Sink};
use crate::capabilities::{PauseClock, PluginCtx, Session};
use crate::wit::skill_world::{SkillPlugin, SkillPluginPre};
use crate::wit::{ToolPlugin, ToolPluginPre, types as wit};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;
use wasmtime::Store;
use wasmtime::component::{Component, ResourceTable};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// Everything one call produced besides its result.
#[derive(Debug, Clone)]
pub struct CallReport<T> {
    pub result: Result<T, ToolError>,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
    /// What the call did that the agent acts on, in the order it happened; kept even when
    /// the call failed afterwards.
    pub effects: Vec<Effect>,
}

impl<T> CallReport<T> {
    /// A call that could not start: no output, no effects.
    pub fn failed(err: ToolError) -> Self {
        let (stdout, stderr) = (Captured::default(), Captured::default());
        CallReport { result: Err(err), stdout, stderr, duration: Duration::ZERO, effects: Vec::new() }
    }
}

/// A component ready to be instantiated in a call's store: the `*Pre` that bindgen made for
/// its world.
pub(crate) trait Instantiate {
    type Instance;
    fn component(&self) -> &Component;
    fn instantiate(
        &self,
        store: &mut Store<CallState>,
    ) -> impl Future<Output = wasmtime::Result<Self::Instance>> + Send;
}

impl Instantiate for ToolPluginPre<CallState> {
    type Instance = ToolPlugin;
    fn component(&self) -> &Component {
        self.instance_pre().component()
    }
    fn instantiate(
        &self,
        store: &mut Store<CallState>,
    ) -> impl Future<Output = wasmtime::Result<ToolPlugin>> + Send {
        self.instantiate_async(store)
    }
}

impl Instantiate for SkillPluginPre<CallState> {
    type Instance = SkillPlugin;
    fn component(&self) -> &Component {
        self.instance_pre().component()
    }
    fn instantiate(
        &self,
        store: &mut Store<CallState>,
    ) -> impl Future<Output = wasmtime::Result<SkillPlugin>> + Send {
        self.instantiate_async(store)
    }
}

/// Where a call failed: making the instance (the host's part) or running it (the plugin's).
enum Failure {
    Start(wasmtime::Error),
    Call(wasmtime::Error),
}

struct Prepared {
    store: Store<CallState>,
    stdout: CapturePipe,
    stderr: CapturePipe,
    paused: PauseClock,
    effects: Sink,
}

/// Runs `fut` for at most `limit` of wall-clock time, not counting the time recorded on
/// `paused` (a plugin waiting for the person to answer, or for a fetch). `None` on timeout.
async fn with_pausable_timeout<F: Future>(
    limit: Duration,
    paused: &PauseClock,
    watch: &watchdog::Watch,
    fut: F,
) -> Option<F::Output> {
    let fut = std::pin::pin!(fut);
    let mut fut = fut;
    let mut deadline = tokio::time::Instant::now() + limit;
    loop {
        tokio::select! {
            biased;
            out = &mut fut => return Some(out),
            _ = tokio::time::sleep_until(deadline) => {
                let credit = paused.take();
                if credit.is_zero() {
                    return None;
                }
                deadline += credit;
                watch.extend(deadline.into_std());
            }
        }
    }
}

/// Adds `dir` to `b` as a read-only preopen at its own absolute path. (Its file calls run
/// inline when `b` allows it, which must be said before.)
fn preopen(b: &mut WasiCtxBuilder, dir: &std::path::Path) -> Result<(), ToolError> {
    let guest = dir.to_string_lossy();
    b.preopened_dir(dir, guest.as_ref(), FsPerms::ReadOnly).map(|_| ()).map_err(|e| {
        ToolError::new(ErrorKind::Io, format!("cannot open {} for the plugin: {e}", dir.display()))
    })
}

impl Caller {
    fn prepare(&self, site: &Site<'_>, slot: OwnedSemaphorePermit) -> Result<Prepared, ToolError> {
        let Site { plugin, session, limits, view, .. } = *site;
        let paused = PauseClock::default();
        let effects = Sink::default();
        let stdout = CapturePipe::new(limits.stdio_bytes);
        let stderr = CapturePipe::new(limits.stdio_bytes);
        let mut b = WasiCtxBuilder::new();
        // File calls run inline on the call's thread (a hand-off to tokio's blocking pool per
        // file call cost ~30 µs: seconds for a grep of a large tree); one stuck in the kernel
        // past the call's deadline (opening a FIFO with no writer) is interrupted by the
        // watchdog, so the call's timeout still fires.
        b.stdout(stdout.clone()).stderr(stderr.clone()).allow_blocking_current_thread(true);
        let shared = match view {
            View::Roots | View::SkillRoots => {
                if *view == View::SkillRoots {
                    b.env(WORKSPACE_VAR, session.roots().workspace().path.to_string_lossy());
                }
                Some(session.preopens().get_or_open(|| {
                    let mut roots = WasiCtxBuilder::new();
                    roots.allow_blocking_current_thread(true);
                    for root in session.roots().all() {
                        preopen(&mut roots, &root.path)?;
                    }
                    Ok::<_, ToolError>(std::mem::take(roots.build().filesystem()))
                })?)
            }
            View::Folder(dir) => {
                preopen(&mut b, dir)?;
                b.env(SKILL_DIR_VAR, dir.to_string_lossy());
                None
            }
        };
        let mut wasi = b.build();
        if let Some(roots) = shared {
            *wasi.filesystem() = roots;
        }
        let state = CallState {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(limits.memory_bytes),
            host: PluginCtx {
                plugin: Arc::from(plugin),
                session: session.clone(),
                paused: paused.clone(),
                effects: effects.clone(),
                parallel: site.parallel.clone(),
            },
            _slot: slot,
        };
        Ok(Prepared { store: self.new_store(state), stdout, stderr, paused, effects })
    }

    /// Instantiates `pre` in a fresh store and runs `call` on the instance, within the call's
    /// timeout; every failure becomes a [`ToolError`]. A call waits for a slot in the pool
    /// first (not counted against its timeout) when [`super::engine_config::CALL_SLOTS`]
    /// calls already hold one.
    pub(super) async fn run<P: Instantiate, R, T>(
        &self,
        site: &Site<'_>,
        pre: &P,
        call: impl AsyncFnOnce(P::Instance, &mut Store<CallState>) -> wasmtime::Result<R>,
        convert: impl FnOnce(R) -> Result<T, ToolError>,
    ) -> CallReport<T> {
        let started = Instant::now();
        if let Err(e) = retry_transient(|| pre.component().initialize_copy_on_write_image()) {
            return CallReport::failed(ToolError {
                hint: Some(
                    "the machine refused the memory this call needs (see the message); the plugin \
                     is not at fault, and the next call tries again"
                        .into(),
                ),
                ..ToolError::new(ErrorKind::Internal, format!("cannot set up the plugin's memory: {e:#}"))
            });
        }
        // Nothing closes the semaphore; were it closed, the call would fail here, not run unslotted.
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return CallReport::failed(ToolError::new(ErrorKind::Internal, "the runtime is shutting down"));
        };
        let mut p = match self.prepare(site, slot) {
            Ok(p) => p,
            Err(e) => {
                let (stdout, stderr) = (Captured::default(), Captured::default());
                let duration = started.elapsed();
                return CallReport { result: Err(e), stdout, stderr, duration, effects: Vec::new() };
            }
        };
        let limits = site.limits;
        let watch = watchdog::watch(Instant::now() + limits.timeout);
        let store = &mut p.store;
        let attempt = async move {
            let instance = pre.instantiate(store).await.map_err(Failure::Start)?;
            call(instance, store).await.map_err(Failure::Call)
        };
        let outcome = with_pausable_timeout(limits.timeout, &p.paused, &watch, attempt).await;
        // A call interrupted in a system call past its deadline timed out, whatever it returned.
        let outcome = outcome.filter(|_| !watch.interrupted());
        drop(watch);
        let stderr = p.stderr.captured();
        let result = match outcome {
            None => Err(ToolError::new(
                ErrorKind::Timeout,
                format!(
                    "the plugin did not finish within {} s and was stopped",
                    limits.timeout.as_secs_f64()
                ),
            )),
            Some(Err(f)) => Err(classify(&f, p.store.data().limiter.exceeded, limits, &stderr)),
            Some(Ok(r)) => convert(r),
        };
        let (stdout, effects) = (p.stdout.captured(), p.effects.take());
        let duration = started.elapsed();
        if super::reaper::worth_it(duration) {
            super::reaper::reaper().drop_later(p.store);
        } else {
            drop(p.store);
        }
        CallReport { result, stdout, stderr, duration, effects }
    }
}

/// A built-in's first call rehearsed ahead of time, on the loading thread: an instance made
/// in a store that sees nothing (no folder, no variable, no stdio), then dropped. The first
/// real call then finds what an instantiation touches for the first time already in place:
/// the component's memory image mapped in the pool's slot that its next instance reuses,
/// and the pages of the code that makes and starts an instance (corral's and the
/// component's) mapped in the process. Measured in the bench's scripted session: 0.1 ms off
/// the first read_file and grep turns (~10%).
///
/// Only for built-ins: making an instance runs the component's start code, and a
/// third-party plugin's runs only in a call, under that call's timeout.
#[derive(Clone)]
pub struct Rehearsal {
    caller: Caller,
    session: Arc<Session>,
}

impl Rehearsal {
    /// Makes an instance of `pre` (plugin `plugin`) and drops it, driving it on `exec`.
    pub(crate) fn instantiate(
        &self,
        pre: &ToolPluginPre<CallState>,
        plugin: &str,
        exec: &tokio::runtime::Runtime,
    ) -> wasmtime::Result<()> {
        // Never waits for a slot: with every slot taken, calls are under way and need them.
        let Ok(slot) = self.caller.slots.clone().try_acquire_owned() else {
            wasmtime::bail!("every slot of the pool is taken");
        };
        let state = CallState {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(Limits::default().memory_bytes),
            host: PluginCtx {
                plugin: Arc::from(plugin),
                session: self.session.clone(),
                paused: PauseClock::default(),
                effects: Sink::default(),
                parallel: None,
            },
            _slot: slot,
        };
        let mut store = self.caller.new_store(state);
        exec.block_on(pre.instantiate_async(&mut store)).map(drop)
    }
}

impl Runtime {
    /// What the loading thread needs to rehearse first calls of `session`.
    pub fn rehearsal(&self, session: &Arc<Session>) -> Rehearsal {
        Rehearsal { caller: self.caller.clone(), session: session.clone() }
    }

    /// Calls `describe` on a fresh instance.
    pub async fn describe(
        &self,
        pre: &ToolPluginPre<CallState>,
        plugin: &str,
        session: &Arc<Session>,
        limits: &Limits,
    ) -> CallReport<Vec<wit::ToolSpec>> {
        let site = Site { plugin, session, limits, view: &View::Roots, parallel: None };
        let call = async |inst: ToolPlugin, store: &mut Store<CallState>| {
            inst.corral_plugin_tool().call_describe(store).await
        };
        self.caller.run(&site, pre, call, Ok).await
    }

    /// Calls `invoke(tool, args_json)` on a fresh instance; the output is capped.
    pub async fn invoke(
        &self,
        plugin: &Plugin,
        session: &Arc<Session>,
        tool: &str,
        args_json: &str,
        limits: &Limits,
    ) -> CallReport<ToolOutput> {
        let pre = match plugin.pre() {
            Ok(pre) => pre,
            Err(why) => return CallReport::failed(ToolError::new(ErrorKind::Internal, why.to_string())),
        };
        // Only a built-in may import `corral:builtin/parallel` (the registry checked); any other
        // plugin gets no handle either, so a hole in that check would still start nothing.
        let parallel = (plugin.info.origin == super::Origin::Builtin).then(|| {
            super::parallel::SubCallsOf::for_call(&self.caller, pre, &plugin.info.name, session, limits)
        });
        let site = Site { plugin: &plugin.info.name, session, limits, view: &View::Roots, parallel };
        let call = async |inst: ToolPlugin, store: &mut Store<CallState>| {
            inst.corral_plugin_tool().call_invoke(store, tool, args_json).await
        };
        let limit = limits.output_bytes;
        let convert = |r: Result<wit::ToolOutput, wit::ToolError>| match r {
            Ok(out) => Ok(ToolOutput::from_wit(out, limit)),
            Err(e) => Err(ToolError::from(e)),
        };
        self.caller.run(&site, pre, call, convert).await
    }
}

/// Runs `attempt` up to three times while it fails. For the copy-on-write memory images of a
/// component, which wasmtime makes once, at the component's first instantiation: Linux can
/// refuse for a moment to seal the new memfd (EBUSY while another CPU still holds a page just
/// written), which would otherwise fail that call, as a fault of the plugin, though nothing
/// is wrong with it. A failed attempt keeps nothing, so the next one starts afresh.
fn retry_transient<E>(mut attempt: impl FnMut() -> Result<(), E>) -> Result<(), E> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(_) if tries < 3 => {
                tries += 1;
                std::thread::yield_now();
            }
            done => return done,
        }
    }
}

/// Turns a wasmtime error from instantiating or calling a plugin into a tool error. A trap
/// or the memory cap is the plugin's doing wherever it happened; any other failure to make
/// the instance is the host's (its pool, the machine's memory), and is worded so.
fn classify(f: &Failure, memory_exceeded: bool, limits: &Limits, stderr: &Captured) -> ToolError {
    let (e, started) = match f {
        Failure::Start(e) => (e, false),
        Failure::Call(e) => (e, true),
    };
    let plugins_fault = "this is a fault in the plugin, not in the arguments; the next call starts afresh";
    let (mut err, hint) = if memory_exceeded {
        let what = format!(
            "the plugin exceeded its memory limit of {} MiB and was stopped",
            limits.memory_bytes >> 20
        );
        (ToolError::new(ErrorKind::OutOfMemory, what), plugins_fault)
    } else if let Some(trap) = e.downcast_ref::<wasmtime::Trap>() {
        let what = match trap {
            wasmtime::Trap::UnreachableCodeReached => {
                "the plugin crashed (it panicked or aborted)".to_string()
            }
            wasmtime::Trap::StackOverflow => "the plugin overflowed its stack".to_string(),
            other => format!("the plugin crashed: {other}"),
        };
        (ToolError::new(ErrorKind::Crashed, what), plugins_fault)
    } else if !started {
        let what = format!("corral could not make an instance of the plugin for this call: {e:#}");
        let hint = "the host could not set the call up (see the message), before any of the \
                    plugin's code ran; this is not a fault in the arguments";
        (ToolError::new(ErrorKind::Internal, what), hint)
    } else {
        let what = format!("the plugin's result could not be read: {e}");
        (ToolError::new(ErrorKind::Malformed, what), plugins_fault)
    };
    if let Some(tail) = stderr_tail(stderr) {
        err.message.push_str(&format!("\nplugin stderr (last lines):\n{tail}"));
    }
    err.hint = Some(hint.into());
    err
}

/// The last ~1 KB of a plugin's stderr, if it wrote any.
fn stderr_tail(c: &Captured) -> Option<String> {
    if c.bytes.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(&c.bytes);
    let text = text.trim_end();
    let start = corral_contract::text::ceil_boundary(text, text.len().saturating_sub(1024));
    Some(text[start..].to_string())
}

#[cfg(test)]
mod tests {
    use super::{Captured, ErrorKind, Failure, Limits, classify, retry_transient};

    fn classified(f: Failure, memory_exceeded: bool) -> (ErrorKind, String, String) {
        let e = classify(&f, memory_exceeded, &Limits::default(), &Captured::default());
        (e.kind, e.message, e.hint.unwrap_or_default())
    }

    #[test]
    fn a_failure_to_make_the_instance_is_the_hosts_not_the_plugins() {
        let pool = || wasmtime::Error::msg("maximum concurrent memory limit of 64 reached");
        let (kind, msg, hint) = classified(Failure::Start(pool()), false);
        assert_eq!(kind, ErrorKind::Internal);
        assert!(
            msg.starts_with("corral could not make an instance of the plugin") && msg.contains("limit of 64"),
            "{msg}"
        );
        assert!(
            hint.contains("before any of the plugin's code ran") && !hint.contains("fault in the plugin"),
            "{hint}"
        );
        // The same error from the running call is the plugin's: what it returned was unreadable.
        let (kind, msg, hint) = classified(Failure::Call(pool()), false);
        assert_eq!(kind, ErrorKind::Malformed);
        assert!(msg.starts_with("the plugin's result could not be read"), "{msg}");
        assert!(hint.contains("fault in the plugin"), "{hint}");
    }

    #[test]
    fn a_trap_or_the_memory_cap_is_the_plugins_even_while_it_starts() {
        let trap = || wasmtime::Error::new(wasmtime::Trap::UnreachableCodeReached);
        for f in [Failure::Start(trap()), Failure::Call(trap())] {
            let (kind, msg, hint) = classified(f, false);
            assert_eq!(
                (kind, msg.as_str()),
                (ErrorKind::Crashed, "the plugin crashed (it panicked or aborted)")
            );
            assert!(hint.contains("fault in the plugin"), "{hint}");
        }
        let (kind, msg, _) =
            classified(Failure::Start(wasmtime::Error::msg("memory minimum too large")), true);
        assert_eq!(kind, ErrorKind::OutOfMemory);
        assert!(msg.contains("memory limit of"), "{msg}");
    }

    #[test]
    fn a_transient_failure_is_tried_again_up_to_three_times() {
        let mut calls = 0;
        let r = retry_transient(|| {
            calls += 1;
            if calls < 3 { Err(calls) } else { Ok(()) }
        });
        assert_eq!((r, calls), (Ok(()), 3));
        let mut calls = 0;
        let r = retry_transient(|| {
            calls += 1;
            Err::<(), _>(calls)
        });
        assert_eq!((r, calls), (Err(3), 3), "the last failure is returned after three attempts");
        let mut calls = 0;
        let r = retry_transient(|| {
            calls += 1;
            Ok::<(), ()>(())
        });
        assert_eq!(r, Ok(()));
        assert_eq!(calls, 1, "a success is not repeated");
    }
}
