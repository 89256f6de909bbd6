//! `corral trust [--show|--revoke]`, and the question a person at a terminal is asked when a
//! workspace's own files would widen what corral may do.

use super::GlobalArgs;
use super::setup::{self, SetupError};
use crate::trust::{self, Asks, Check, Standing};
use std::io::{BufRead, IsTerminal, Write};

/// Text from the project shown to the person: control characters escaped, so a file name or
/// value cannot move the cursor or fake the question.
fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

/// What the project asks for, in full.
fn describe(check: &Check, asks: &Asks) -> String {
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

/// `corral trust`: shows, grants or revokes trust for the workspace.
pub fn run(g: &GlobalArgs, show: bool, revoke: bool) -> Result<i32, SetupError> {
    let user_dir = crate::config::user_dir();
    let r = setup::resolve(g, false, false)?;
    if revoke {
        let was = trust::revoke(&r.trust.workspace, user_dir.as_deref()).map_err(SetupError::Trust)?;
        let ws = clean(&r.trust.workspace.display().to_string());
        eprintln!(
            "{}",
            if was { format!("{ws} is no longer trusted") } else { format!("{ws} was not trusted") }
        );
        return Ok(0);
    }
    // What the project asks for, whatever the current standing: load it as if untrusted.
    let untrusted = crate::config::load(
        &r.workspace,
        user_dir.as_deref(),
        &|k: &str| std::env::var(k).ok(),
        &setup::flag_layer(g, &std::env::current_dir().map_err(SetupError::Cwd)?),
        false,
    )?;
    let asks = Asks::of(&r.trust.workspace, &untrusted.1.ignored);
    let mut out = describe(&r.trust, &asks);
    let standing = match &r.trust.standing {
        Standing::Trusted => "trusted",
        Standing::Untrusted => "not trusted",
        Standing::Changed => "not trusted: its files changed since you trusted it",
        Standing::Locked(_) => "not trusted (a policy file is in force)",
    };
    if show {
        out.push_str(&format!("  Status: {standing}\n"));
        print!("{out}");
        return Ok(0);
    }
    trust::grant(&r.trust, user_dir.as_deref()).map_err(SetupError::Trust)?;
    out.push_str("  Status: trusted (for these exact files; you are asked again if they change)\n");
    print!("{out}");
    Ok(0)
}
