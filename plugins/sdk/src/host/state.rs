//! Session state (`kv`) and durable sections (`context`) behind [`State`], the person behind
//! [`Asker`]: tool logic takes `&dyn State` / `&dyn Asker`, [`Host`] is the real thing and
//! [`super::fake::FakeState`] / [`super::fake::FakeAsker`] stand in for native tests.

use super::{Host, context, kv};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a stateful tool keeps between calls: its private key-value store and the
/// context sections the host shows the model.
pub trait State {
    /// The value under `key`, if any.
    fn get(&self, key: &str) -> Option<String>;
    /// Stores `value` under `key`; fails when the plugin's state would exceed the host's limit.
    fn set(&self, key: &str, value: &str) -> Result<(), String>;
    /// Removes `key` (a missing key is fine).
    fn delete(&self, key: &str);
    /// Replaces section `name` with `body`; an empty body removes it.
    fn set_section(&self, name: &str, body: &str) -> Result<(), String>;
    /// The current body of section `name`.
    fn section(&self, name: &str) -> Option<String>;
}

/// Someone who may answer a question: the person at the terminal, or nobody.
pub trait Asker {
    /// The answer, or the host's message for the model when no one can answer.
    fn ask(&self, question: &str, choices: &[String]) -> Result<String, String>;
}

impl State for Host {
    fn get(&self, key: &str) -> Option<String> {
        kv::get(key)
    }
    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        kv::set(key, value)
    }
    fn delete(&self, key: &str) {
        kv::delete(key)
    }
    fn set_section(&self, name: &str, body: &str) -> Result<(), String> {
        context::set_section(name, body)
    }
    fn section(&self, name: &str) -> Option<String> {
        context::section(name)
    }
}

impl Asker for Host {
    fn ask(&self, question: &str, choices: &[String]) -> Result<String, String> {
        context::ask(question, choices)
    }
}

/// The value under `key` decoded from JSON; `Ok(None)` when the key is unset, an error
/// (naming the key) when the stored text is not a `T`.
pub fn load_json<T: DeserializeOwned>(state: &dyn State, key: &str) -> Result<Option<T>, String> {
    match state.get(key) {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("the stored state '{key}' is not readable: {e}")),
    }
}

/// Stores `value` as JSON under `key`.
pub fn save_json<T: Serialize>(state: &dyn State, key: &str, value: &T) -> Result<(), String> {
    let text = serde_json::to_string(value).map_err(|e| format!("cannot encode the state '{key}': {e}"))?;
    state.set(key, &text)
}
