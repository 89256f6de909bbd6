//! The calls a built-in starts through its `corral:builtin/parallel` import: each runs
//! `invoke` of the same component in a fresh instance (its own store, sandbox and memory cap,
//! the caller's grants and view), on a thread of its own with a single-threaded tokio runtime,
//! and ends before the caller's deadline. Such a call cannot start more (its `parallel` is
//! `None`), so the work fans out one level only.

use super::site::{Site, View};
use super::{CallState, Caller, Limits, ToolError, ToolOutput};
use crate::capabilities::{Ran, Session, SubCalls};
use crate::wit::{ToolPlugin, ToolPluginPre, types as wit};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wasmtime::Store;

/// Most calls of one `run` side by side, whatever the cores.
pub const MAX_WIDTH: usize = 8;

/// The cores this process may use, counted once: std reads the cgroup's files each time it
/// is asked (six system calls).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map(std::num::NonZero::get).unwrap_or(1))
}

/// What one plugin call's `parallel` import runs its calls with.
#[derive(Clone)]
pub(super) struct SubCallsOf {
    caller: Caller,
    pre: ToolPluginPre<CallState>,
    plugin: Arc<str>,
    session: Arc<Session>,
    limits: Limits,
    /// No call it starts runs past this: the caller's deadline less a tenth of its time (at
    /// most a second).
    deadline: Instant,
}

impl std::fmt::Debug for SubCallsOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubCallsOf").field("plugin", &self.plugin).finish_non_exhaustive()
    }
}

impl SubCallsOf {
    /// For a call of `plugin` (made from `pre`) starting now, within `limits`.
    pub fn for_call(
        caller: &Caller,
        pre: &ToolPluginPre<CallState>,
        plugin: &str,
        session: &Arc<Session>,
        limits: &Limits,
    ) -> Arc<dyn SubCalls> {
        Arc::new(SubCallsOf {
            caller: caller.clone(),
            pre: pre.clone(),
            plugin: Arc::from(plugin),
            session: session.clone(),
            limits: *limits,
            // A little before the caller's own deadline, so it has time to use the answers.
            deadline: Instant::now() + limits.timeout - (limits.timeout / 10).min(Duration::from_secs(1)),
        })
    }

    /// Runs one call in a fresh instance, within what is left of the caller's time (the wait
    /// for a free instance included).
    async fn call(&self, name: &str, args: &str) -> Ran {
        let Some(left) = self.deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
            return (
                Err("timeout: the calling call's time ran out before this call started".into()),
                Vec::new(),
            );
        };
        let limits = Limits { timeout: left, ..self.limits };
        let site = Site {
            plugin: &self.plugin,
            session: &self.session,
            limits: &limits,
            view: &View::Roots,
            parallel: None,
        };
        let call = async |inst: ToolPlugin, store: &mut Store<CallState>| {
            inst.corral_plugin_tool().call_invoke(store, name, args).await
        };
        match tokio::time::timeout(left, self.caller.run(&site, &self.pre, call, Ok)).await {
            Err(_) => (
                Err("timeout: no instance became free before the calling call's deadline".into()),
                Vec::new(),
            ),
            Ok(report) => (answer(report.result), report.effects),
        }
    }
}

/// A call's result as the import returns it: the text of its output (its text parts joined
/// as for any tool result, uncapped), or `kind: message`.
fn answer(result: Result<Result<wit::ToolOutput, wit::ToolError>, ToolError>) -> Result<String, String> {
    match result {
        Ok(Ok(out)) => Ok(ToolOutput::from_wit(out, usize::MAX).text),
        Ok(Err(e)) => Err(ToolError::from(e).to_string()),
        Err(e) => Err(e.to_string()),
    }
}

impl SubCalls for SubCallsOf {
    fn width(&self) -> u32 {
        u32::try_from(cores().min(MAX_WIDTH)).unwrap_or(1)
    }

    fn run(&self, calls: Vec<(String, String)>) -> Pin<Box<dyn Future<Output = Vec<Ran>> + Send>> {
        let width = (self.width() as usize).min(calls.len());
        let job = Arc::new(Job {
            this: self.clone(),
            results: Mutex::new(calls.iter().map(|_| None).collect()),
            calls,
            next: AtomicUsize::new(0),
            cancel: Cancel::default(),
        });
        // Every worker holds a sender; the receiver hears `None` once all have ended.
        let (done, mut ended) = tokio::sync::mpsc::channel::<()>(1);
        for i in 0..width {
            let (job, done) = (job.clone(), done.clone());
            let work = move || {
                job.work();
                drop(done);
            };
            if std::thread::Builder::new().name(format!("corral-part-{i}")).spawn(work).is_err() {
                break;
            }
        }
        drop(done);
        // Dropped before the calls end (the caller timed out, the person pressed Ctrl-C): the
        // calls still running are stopped at their next yield, the rest never start.
        let stop = StopOnDrop(job.clone());
        Box::pin(async move {
            while ended.recv().await.is_some() {}
            drop(stop);
            let results = std::mem::take(&mut *job.results.lock().unwrap_or_else(|p| p.into_inner()));
            results
                .into_iter()
                .map(|r| {
                    r.unwrap_or_else(|| {
                        (Err("other: no thread could be started for this call".into()), Vec::new())
                    })
                })
                .collect()
        })
    }
}

/// The calls of one `run`, shared by its worker threads.
struct Job {
    this: SubCallsOf,
    calls: Vec<(String, String)>,
    /// The next call no worker has taken.
    next: AtomicUsize,
    results: Mutex<Vec<Option<Ran>>>,
    cancel: Cancel,
}

impl Job {
    /// Takes the next call not taken yet and runs it, until none is left or the caller is gone.
    fn work(&self) {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            loop {
                let i = self.next.fetch_add(1, Ordering::SeqCst);
                let Some((name, args)) = self.calls.get(i) else { return };
                let Some(ran) = self.cancel.unless_cancelled(self.this.call(name, args)).await else {
                    return;
                };
                if let Some(slot) = self.results.lock().unwrap_or_else(|p| p.into_inner()).get_mut(i) {
                    *slot = Some(ran);
                }
            }
        });
    }
}

/// Stops a run's calls once the caller no longer waits for them.
#[derive(Debug, Default)]
struct Cancel {
    cancelled: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Cancel {
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// `fut`'s output, or `None` as soon as the run is cancelled (`fut` is then dropped, which
    /// stops a plugin call at its next epoch yield).
    async fn unless_cancelled<T>(&self, fut: impl Future<Output = T>) -> Option<T> {
        let notified = self.notify.notified();
        let mut notified = std::pin::pin!(notified);
        // Registered before the flag is read, so a cancel in between is not missed.
        notified.as_mut().enable();
        if self.cancelled.load(Ordering::SeqCst) {
            return None;
        }
        tokio::select! {
            out = fut => Some(out),
            () = notified => None,
        }
    }
}

/// Cancels the job when dropped.
struct StopOnDrop(Arc<Job>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::ErrorKind;

    #[test]
    fn a_cancel_stops_the_call_in_progress_and_every_later_one() {
        let cancel = Arc::new(Cancel::default());
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert_eq!(rt.block_on(cancel.unless_cancelled(async { 7 })), Some(7));
        // A call that would never end is stopped by a cancel from another thread.
        let from = cancel.clone();
        let canceller = std::thread::spawn(move || from.cancel());
        assert_eq!(rt.block_on(cancel.unless_cancelled(std::future::pending::<u8>())), None);
        canceller.join().unwrap();
        // After the cancel nothing starts.
        assert_eq!(rt.block_on(cancel.unless_cancelled(async { 7 })), None);
    }

    #[test]
    fn an_answer_is_the_outputs_text_or_the_error_with_its_kind() {
        let text = |t: &str| wit::ContentPart::Text(t.into());
        let image = wit::ContentPart::Image(wit::Image { mime_type: "image/png".into(), data: vec![1] });
        let out = wit::ToolOutput { content: vec![text("a"), image, text("b")], truncated: false };
        assert_eq!(answer(Ok(Ok(out))), Ok("a\nb".to_string()), "joined as any tool result is");
        let e = wit::ToolError { kind: wit::ErrorKind::InvalidArgs, message: "bad".into(), hint: None };
        assert_eq!(answer(Ok(Err(e))), Err("invalid-args: bad".to_string()));
        let crash = ToolError::new(ErrorKind::Crashed, "the plugin crashed (it panicked or aborted)");
        assert_eq!(
            answer(Err(crash)),
            Err("crashed: the plugin crashed (it panicked or aborted)".to_string())
        );
    }
}
