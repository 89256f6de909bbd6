//! What a run leaves on the terminal once it is over: the final answer on stdout (drawn as
//! Markdown into a terminal, as sent when redirected), how an unfinished task ended, and output.

use super::render::{Style, Terminal};
use crate::agent::{Outcome, TaskResult};
use std::io::{IsTerminal, Write};

/// Writes a command's text output to stdout; a closed pipe is not an error.
pub(super) fn print(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            2
        }
    }
}

/// The final answer as printed on stdout: into a terminal, stripped of control sequences and
/// its Markdown drawn; redirected, the text as the model sent it.
pub fn final_answer(answer: &str, style: Style) -> String {
    let answer = crate::redact::text(answer.trim_end());
    let answer = answer.as_ref();
    if std::io::stdout().is_terminal() {
        super::markdown::render(&crate::termtext::clean(answer), style)
    } else {
        format!("{answer}\n")
    }
}

/// Tells the person on stderr how a task that did not finish ended.
pub fn report(r: &TaskResult, term: &mut Terminal, max_turns: u32) {
    match r.outcome {
        Outcome::Done => {}
        Outcome::Error => term.error(r.error.as_deref().unwrap_or("the session failed")),
        Outcome::MaxTurns => term.error(&format!(
            "stopped after {max_turns} turns without a final answer. Raise --max-turns, or run corral again \
             in this workspace to pick up from the continue-here note saved in corral's state for it"
        )),
        Outcome::Interrupted => eprintln!("interrupted"),
    }
}
