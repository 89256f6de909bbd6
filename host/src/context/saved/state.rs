//! The state a session keeps beside its conversation, taken from and put back into the
//! capabilities' session: durable sections, the session state of the plugins that set them
//! (the todo tool keeps its items there), and the snapshot summaries.

use super::record::{Section, State};
use crate::capabilities::Session;

/// What `session` keeps beside the conversation now.
pub fn capture(session: &Session) -> State {
    let mut state = State::default();
    for (name, s) in session.sections().all() {
        if !state.kv.contains_key(&s.plugin) {
            let kv = session.kv().entries(&s.plugin);
            if !kv.is_empty() {
                state.kv.insert(s.plugin.clone(), kv);
            }
        }
        state.sections.push(Section { name, plugin: s.plugin, body: s.body });
    }
    state.snapshots = session.snapshot().history();
    state
}

/// Puts `state` back into `session` (a fresh or cleared one). What the session's own limits
/// refuse is left out and named in the returned warnings.
pub fn restore(session: &Session, state: &State) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in &state.sections {
        match session.sections().set(&s.plugin, &s.name, &s.body) {
            Ok(()) if s.name == "todo" => {
                crate::capabilities::state::mirror_todo(session.local(), session.log(), &s.body)
            }
            Ok(()) => {}
            Err(e) => warnings.push(format!("the saved section '{}' is left out: {e}", s.name)),
        }
    }
    for (plugin, kv) in &state.kv {
        for (k, v) in kv {
            if let Err(e) = session.kv().set(plugin, k, v) {
                warnings.push(format!("the saved state of plugin '{plugin}' is left out: {e}"));
                break;
            }
        }
    }
    for (label, summary) in &state.snapshots {
        session.snapshot().restored(label, summary);
    }
    warnings
}
