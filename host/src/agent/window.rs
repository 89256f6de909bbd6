//! The session's fit to its context window: terse mode (the short prompt and the compact
//! catalogue) when the window is small, and the start check when it is too small for any work.

use super::Agent;
use crate::context::{schemas, small, tokens};

impl Agent<'_> {
    /// The start check: Err with what to do when the window cannot hold the system prompt, the
    /// smallest tool set, a task and a useful reply, rather than a session without tools.
    pub fn window_check(&self) -> Result<(), String> {
        let (Some(w), Some(b)) = (self.budget.window(), self.budget.budget_estimate()) else { return Ok(()) };
        let system = u64::from(tokens::approx(&self.system_prompt())) + u64::from(tokens::PER_MESSAGE);
        small::check_fits(w, b, system, small::cost(&self.small_defs))
    }

    /// Terse mode, when the window is small for corral's own prompt and tools: the short
    /// system prompt and the compact catalogue from now on. Returns the note for the person
    /// when it switched (at start, or when an overflow error revealed a smaller window).
    pub(super) fn go_terse_if_small(&mut self) -> Option<String> {
        let b = self.budget.budget_estimate()?;
        if self.prompt.terse || (self.builtin_cost as f64) <= b as f64 * small::TERSE_SHARE {
            return None;
        }
        self.prompt.terse = true;
        self.defs = small::compact(&self.all_defs, (b as f64 * small::COMPACT_SHARE) as u64).into();
        self.hidden = self
            .all_defs
            .iter()
            .filter(|d| !self.defs.iter().any(|o| o.name == d.name))
            .map(|d| d.name.clone())
            .collect();
        self.tool_cost = schemas::cost(&self.defs);
        Some(format!(
            "the {}-token context window is small: corral sends a short system prompt and a compact tool set ({}); \
             the other tools are left out",
            self.budget.window().unwrap_or(0),
            self.defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
        ))
    }
}
