//! Dropping a finished call's store off the call's path. Dropping it hands the instance's slot
//! back to the pooling allocator, which first resets the memory the call dirtied (a
//! PAGEMAP_SCAN of the slot, then zeroing what it found): 0.1 to 0.8 ms measured here that a
//! turn would otherwise spend before its next request. A thread does it instead.
//!
//! Only for calls that ran long enough to have dirtied much ([`worth_it`]): a short call's
//! store is reset in about 5 µs, less than handing it over and waking the thread costs (a
//! trivial call took 16 µs dropping its store itself, 19-23 µs with the thread, measured).
//!
//! The backlog is bounded: past [`BACKLOG`] stores waiting, a store is dropped by its caller,
//! so slots held by finished calls never crowd out new ones in the pool (whose bounds are set
//! for 16 calls at once with room to spare). Without the thread, every store is dropped by
//! its caller: slower, not wrong.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Stores that may wait to be dropped at any one time.
const BACKLOG: usize = 4;

/// Calls shorter than this drop their store themselves.
const SHORT_CALL: Duration = Duration::from_micros(50);

/// Whether a call that took `took` should hand its store to the reaper rather than drop it.
/// The time a call ran bounds how much memory it can have written, and so what resetting its
/// slot costs (zeroing a page again takes about as long as writing it did), beyond the fixed
/// scan for what was written.
pub(super) fn worth_it(took: Duration) -> bool {
    took >= SHORT_CALL
}

/// A thread that drops what it is given, and how many things wait for it.
pub(super) struct Reaper {
    tx: Option<Sender<Box<dyn Any + Send>>>,
    waiting: Arc<AtomicUsize>,
    limit: usize,
}

impl Reaper {
    /// Starts the thread; `limit`: how many values may wait for it.
    fn start(limit: usize) -> Reaper {
        let (tx, rx) = channel::<Box<dyn Any + Send>>();
        let waiting = Arc::new(AtomicUsize::new(0));
        let count = waiting.clone();
        let spawned = std::thread::Builder::new().name("corral-reap".into()).spawn(move || {
            for value in rx {
                drop(value);
                count.fetch_sub(1, Ordering::AcqRel);
            }
        });
        Reaper { tx: spawned.ok().map(|_| tx), waiting, limit }
    }

    /// Drops `value` on the thread, or here when the backlog is full or there is no thread.
    pub(super) fn drop_later<T: Send + 'static>(&self, value: T) {
        let Some(tx) = &self.tx else { return drop(value) };
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.limit {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return drop(value);
        }
        if let Err(returned) = tx.send(Box::new(value)) {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            drop(returned.0);
        }
    }
}

/// The process's reaper, started at its first use.
pub(super) fn reaper() -> &'static Reaper {
    static REAPER: OnceLock<Reaper> = OnceLock::new();
    REAPER.get_or_init(|| Reaper::start(BACKLOG))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, channel};

    /// Says, when dropped, on which thread.
    struct Noted(Sender<Option<String>>);

    impl Drop for Noted {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().name().map(str::to_string));
        }
    }

    fn noted() -> (Noted, Receiver<Option<String>>) {
        let (tx, rx) = channel();
        (Noted(tx), rx)
    }

    #[test]
    fn only_a_call_that_ran_a_while_hands_its_store_over() {
        assert!(!super::worth_it(Duration::from_micros(12)), "a trivial call drops its own");
        assert!(!super::worth_it(Duration::from_micros(49)));
        assert!(super::worth_it(Duration::from_micros(50)));
        assert!(super::worth_it(Duration::from_millis(3)), "a search drops its on the thread");
    }

    #[test]
    fn values_are_dropped_on_the_reaper_thread() {
        let reaper = Reaper::start(4);
        let (value, dropped) = noted();
        reaper.drop_later(value);
        assert_eq!(dropped.recv().unwrap().as_deref(), Some("corral-reap"));
    }

    #[test]
    fn a_full_backlog_drops_here() {
        let reaper = Reaper::start(0);
        let (value, dropped) = noted();
        reaper.drop_later(value);
        // Dropped before drop_later returned, on this thread.
        let here = std::thread::current().name().map(str::to_string);
        assert_eq!(dropped.try_recv().unwrap(), here);
        assert_eq!(reaper.waiting.load(Ordering::Acquire), 0, "the count is given back");
    }
}
