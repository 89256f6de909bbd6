//! Interrupting a plugin call that is stuck in a system call past its deadline.
//!
//! A plugin's file calls run inline on the thread that runs the call (one hand-off to a pool
//! thread per file call costs about 30 µs, which made a grep over 20,000 files take seconds).
//! A call's timeout fires when the call yields to the executor, which a running plugin does on
//! every epoch tick; a thread blocked inside the kernel (opening a FIFO no one writes to) never
//! yields. So every call is registered here with its deadline, and the epoch ticker asks
//! [`check`] on each tick: a call still registered a grace period past its deadline gets a
//! `SIGURG` on its thread, whose handler does nothing and is installed without `SA_RESTART`,
//! so the blocked system call returns `EINTR`, the plugin sees an error, runs on to its next
//! epoch check and the timeout stops it. The call is then reported as timed out.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long past its deadline a call may stay in a system call before it is interrupted
/// (its own timeout fires first whenever the plugin is running).
pub const GRACE: Duration = Duration::from_millis(50);

struct Entry {
    id: u64,
    thread: libc::pthread_t,
    deadline: Instant,
    interrupted: bool,
}

static CALLS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

fn calls() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    CALLS.lock().unwrap_or_else(|p| p.into_inner())
}

extern "C" fn interrupt(_: libc::c_int) {}

/// Installs the do-nothing `SIGURG` handler (once; without `SA_RESTART`, so a blocked system
/// call returns `EINTR`). Whether it is installed.
fn install() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; the handler is an async-signal-safe function
        // that does nothing, so installing it changes only that SIGURG interrupts system calls
        // (its default is to be ignored; corral uses no socket's out-of-band data).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = interrupt as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGURG, &action, std::ptr::null_mut()) == 0
        }
    })
}

/// A call being watched, from [`watch`] until dropped.
#[derive(Debug)]
pub struct Watch {
    id: u64,
}

/// Watches the call running on this thread until `deadline` (then plus [`GRACE`]).
pub fn watch(deadline: Instant) -> Watch {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if install() {
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        calls().push(Entry { id, thread, deadline, interrupted: false });
    }
    Watch { id }
}

impl Watch {
    /// Moves the deadline (the call's clock was paused while a person was asked).
    pub fn extend(&self, deadline: Instant) {
        if let Some(e) = calls().iter_mut().find(|e| e.id == self.id) {
            e.deadline = deadline;
        }
    }

    /// Whether the call had to be interrupted.
    pub fn interrupted(&self) -> bool {
        calls().iter().any(|e| e.id == self.id && e.interrupted)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        calls().retain(|e| e.id != self.id);
    }
}

/// Interrupts every watched call more than [`GRACE`] past its deadline (again on each tick
/// while it stays stuck). Its thread is alive: an entry is removed, under the same lock, by
/// the thread itself before the call returns.
pub fn check(now: Instant) {
    for e in calls().iter_mut().filter(|e| now > e.deadline + GRACE) {
        e.interrupted = true;
        // SAFETY: the thread registered this entry and removes it before it can exit; the
        // handler installed for SIGURG does nothing.
        unsafe { libc::pthread_kill(e.thread, libc::SIGURG) };
    }
}

#[cfg(test)]
#[path = "watchdog_tests.rs"]
mod tests;
