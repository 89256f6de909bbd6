//! Where plugin log lines go: kept for the caller (bounded) and echoed to stderr when
//! the user asked for verbose output.

use std::sync::Mutex;

/// Longest log line kept, in bytes.
pub const MAX_LINE: usize = 2000;
/// Most lines kept per session.
pub const MAX_LINES: usize = 1000;

/// A bounded log of plugin messages.
#[derive(Debug, Default)]
pub struct Sink {
    echo: bool,
    lines: Mutex<Vec<String>>,
}

impl Sink {
    /// A sink that also writes each line to stderr when `echo` is set.
    pub fn new(echo: bool) -> Self {
        Sink { echo, lines: Mutex::new(Vec::new()) }
    }

    /// Records one message from `plugin`.
    pub fn push(&self, plugin: &str, level: &str, message: &str) {
        let line = format!("[{plugin}] {level}: {}", corral_contract::text::cut(message, MAX_LINE));
        if self.echo {
            #[allow(clippy::print_stderr)] // --verbose: the person asked to see plugin logs
            {
                eprintln!("{line}");
            }
        }
        if let Ok(mut lines) = self.lines.lock()
            && lines.len() < MAX_LINES
        {
            lines.push(line);
        }
    }

    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
