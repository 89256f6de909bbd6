//! The question a person at a terminal is asked when a workspace's own files would widen what
//! corral may do: what they ask for, drawn with the project's text escaped, and a yes/no.

use crate::trust::{Asks, Check, Standing};
use std::io::{BufRead, IsTerminal, Write};

/// Text from the project shown to the person: control characters escaped, so a file name or
/// value cannot move the cursor or fake the question.
pub(super) fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

/// What the project asks for, in full.
pub(super) fn describe(check: &Check, asks: &Asks) -> String {
    let mut out = format!("Workspace {}\n", clean(&check.workspace.display().to_string()));
    if asks.is_empty() {
        out.push_str("  Its own files ask for nothing beyond your settings.\n");
    } else {
        out.push_str("  Its own files ask for:\n");
        for line in asks.details().lines() {
            out.push_str(&format!("  {}\n", clean(line)));
        }
    }
    out
}

/// Asks the person at the terminal whether to trust the workspace; false without a terminal
/// or on any answer but yes.
pub fn ask(check: &Check, asks: &Asks) -> bool {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    let mut err = std::io::stderr().lock();
    let changed = if check.standing == Standing::Changed {
        "Its corral.toml or .corral/ changed since you trusted it.\n"
    } else {
        ""
    };
    let _ = write!(
        err,
        "\n{}{changed}Trusting it lets these files widen what corral may do here (run commands, reach the \
         network, load plugins). Only say yes if you trust whoever wrote them.\nTrust this workspace? [y/N] ",
        describe(check, asks)
    );
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
