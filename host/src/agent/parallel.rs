//! Which calls of one reply may run together (a run of read-only calls, or of `branch` calls;
//! anything else runs alone, in order), and running read-only calls side by side on threads.

use super::{CallOutcome, Interrupt, Toolbox};
use crate::llm::ToolCall;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a call of a reply may be run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Its tool declares itself read-only: it may run beside other read-only calls.
    ReadOnly,
    /// A `branch`: it may run beside other branches.
    Branch,
    /// Anything else (a write, a command, an unknown tool): it runs alone, and the calls on
    /// either side of it wait (it is a barrier).
    Alone,
}

/// The reply's calls cut into consecutive groups, run one after the other: a run of calls of
/// the same kind that may run together is one group; an `Alone` call is a group of its own.
pub fn groups(kinds: &[Kind]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=kinds.len() {
        if i == kinds.len() || kinds[i] != kinds[start] || kinds[start] == Kind::Alone {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// How many calls may run at once: the setting (`agent.parallel_calls`), at most the cores
/// (counted once per process, see [`crate::runtime::cores`]).
pub fn width(setting: u32) -> usize {
    crate::runtime::cores().min(usize::try_from(setting).unwrap_or(usize::MAX)).max(1)
}

/// Runs `calls` (all read-only) on up to `width` threads, each with its own single-threaded
/// tokio runtime (the plugin's store is made and used there), and returns their outcomes in
/// the calls' order. A call no thread ran is `None`: the person interrupted, or no thread
/// could be started (the caller runs those itself).
///
/// This thread waits for the group, so the front end's signal listener cannot run meanwhile:
/// the workers listen for the same signals themselves (Ctrl-C, and SIGTERM where the run
/// takes it as one) and set `interrupt`.
pub fn on_threads(
    tools: &Toolbox<'_>,
    calls: &[ToolCall],
    width: usize,
    interrupt: &Interrupt,
) -> Vec<Option<CallOutcome>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<CallOutcome>>> = calls.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for i in 0..width.min(calls.len()) {
            let work = || worker(tools, calls, &next, &slots, interrupt);
            if std::thread::Builder::new().name(format!("corral-call-{i}")).spawn_scoped(s, work).is_err() {
                break;
            }
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
}

/// Takes the next call not taken yet and runs it, until none is left or the person interrupts.
fn worker(
    tools: &Toolbox<'_>,
    calls: &[ToolCall],
    next: &AtomicUsize,
    slots: &[Mutex<Option<CallOutcome>>],
    interrupt: &Interrupt,
) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    rt.block_on(async {
        let mut stops = interrupt.signals();
        loop {
            if interrupt.is_set() {
                return;
            }
            let i = next.fetch_add(1, Ordering::SeqCst);
            let (Some(call), Some(slot)) = (calls.get(i), slots.get(i)) else { return };
            let outcome = tokio::select! {
                o = tools.call(call) => o,
                _ = interrupt.wait() => return,
                () = stops.next() => {
                    interrupt.trigger();
                    return;
                }
            };
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::Kind::{Alone, Branch, ReadOnly};
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one group of several calls
    fn runs_of_read_only_calls_group_and_anything_else_is_a_barrier() {
        assert!(groups(&[]).is_empty());
        assert_eq!(groups(&[ReadOnly]), [0..1]);
        assert_eq!(groups(&[ReadOnly, ReadOnly, ReadOnly]), [0..3]);
        assert_eq!(groups(&[ReadOnly, ReadOnly, Alone, ReadOnly, ReadOnly]), [0..2, 2..3, 3..5]);
        assert_eq!(groups(&[Alone, Alone]), [0..1, 1..2], "writes never run together");
        assert_eq!(groups(&[Alone, ReadOnly, Alone]), [0..1, 1..2, 2..3]);
    }

    #[test]
    fn branches_group_with_branches_only() {
        assert_eq!(groups(&[Branch, Branch, ReadOnly, ReadOnly, Branch]), [0..2, 2..4, 4..5]);
        assert_eq!(groups(&[ReadOnly, Branch, Alone, Branch]), [0..1, 1..2, 2..3, 3..4]);
    }

    #[test]
    fn the_width_is_the_setting_bounded_by_the_cores() {
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(width(1), 1);
        assert_eq!(width(0), 1, "never zero");
        assert_eq!(width(u32::MAX), cores);
        assert_eq!(width(2), cores.min(2));
    }
}
