//! The signals that stop corral from outside: SIGINT (Ctrl-C, `kill -INT`) and SIGTERM (what
//! a CI runner cancelling a job, `kill` or a service manager sends). Left at their default,
//! they end the process on the spot: a command it started runs on (it leads a process group
//! of its own, so the terminal's Ctrl-C does not reach it) and its temp folder stays behind.
//! Caught here, what was running is dropped in order instead: the command's process group is
//! killed and its temp folder removed, an agent run writes its continue-here note.
//!
//! A handler replaces the default for the whole process, so it is installed only where
//! nothing blocks the runtime: at a terminal prompt (a command approval, a question) the
//! runtime waits on the person, and a caught SIGTERM would go unanswered until they reply.
//! The front end (cli) makes that choice; an agent run carries it in its `Interrupt`, so the
//! threads of a parallel batch, which listen for themselves, stop on the same signals.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The exit code of a run a signal stopped (Ctrl-C's conventional 128 + SIGINT, for both).
pub const STOPPED: i32 = 130;

/// SIGINT, and SIGTERM if asked, as they arrive. A signal whose handler cannot be installed
/// keeps its default.
pub struct Stops {
    int: Option<Signal>,
    term: Option<Signal>,
}

impl Stops {
    pub fn new(term: bool) -> Stops {
        Stops {
            int: signal(SignalKind::interrupt()).ok(),
            term: if term { signal(SignalKind::terminate()).ok() } else { None },
        }
    }

    /// Waits for the next signal.
    pub async fn next(&mut self) {
        async fn recv(s: &mut Option<Signal>) {
            match s.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = recv(&mut self.int) => {},
            _ = recv(&mut self.term) => {},
        }
    }
}

/// Waits for SIGINT or SIGTERM.
pub async fn stop() {
    Stops::new(true).next().await
}
