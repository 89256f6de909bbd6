//! Session state for plugins: string values under string keys, private to each plugin,
//! bounded in total size per plugin.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The most a plugin may keep, keys and values together, in bytes.
pub const MAX_BYTES_PER_PLUGIN: usize = 1024 * 1024;

/// All plugins' state.
#[derive(Debug, Default)]
pub struct Store {
    inner: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

impl Store {
    pub fn get(&self, plugin: &str, key: &str) -> Option<String> {
        let map = self.inner.lock().ok()?;
        map.get(plugin)?.get(key).cloned()
    }

    pub fn set(&self, plugin: &str, key: &str, value: &str) -> Result<(), String> {
        let mut map = self.inner.lock().map_err(|_| "state store unavailable".to_string())?;
        let entries = map.entry(plugin.to_string()).or_default();
        let current: usize =
            entries.iter().filter(|(k, _)| k.as_str() != key).map(|(k, v)| k.len() + v.len()).sum();
        if current + key.len() + value.len() > MAX_BYTES_PER_PLUGIN {
            return Err(format!(
                "storing {} bytes under '{key}' would exceed the {MAX_BYTES_PER_PLUGIN}-byte state limit",
                key.len() + value.len()
            ));
        }
        entries.insert(key.to_string(), value.to_string());
        Ok(())
    }

    pub fn delete(&self, plugin: &str, key: &str) {
        if let Ok(mut map) = self.inner.lock()
            && let Some(entries) = map.get_mut(plugin)
        {
            entries.remove(key);
        }
    }

    /// Every key and value of `plugin` (to save a session's state).
    pub fn entries(&self, plugin: &str) -> BTreeMap<String, String> {
        self.inner.lock().ok().and_then(|m| m.get(plugin).cloned()).unwrap_or_default()
    }

    /// Forgets every plugin's state.
    pub fn clear(&self) {
        if let Ok(mut map) = self.inner.lock() {
            map.clear();
        }
    }

    pub fn keys(&self, plugin: &str, prefix: &str) -> Vec<String> {
        let Ok(map) = self.inner.lock() else { return Vec::new() };
        map.get(plugin)
            .map(|e| e.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    #[test]
    fn plugins_do_not_see_each_other() {
        let s = Store::default();
        s.set("a", "k", "1").unwrap();
        assert_eq!(s.get("a", "k").as_deref(), Some("1"));
        assert_eq!(s.get("b", "k"), None);
        assert!(s.keys("b", "").is_empty());
    }

    #[test]
    fn size_limit_counts_replacement_once() {
        let s = Store::default();
        let big = "x".repeat(MAX_BYTES_PER_PLUGIN - 10);
        s.set("a", "k", &big).unwrap();
        s.set("a", "k", &big).unwrap();
        let e = s.set("a", "k2", &"y".repeat(20)).unwrap_err();
        assert!(e.contains("state limit"), "{e}");
        s.delete("a", "k");
        s.set("a", "k2", "y").unwrap();
        assert_eq!(s.keys("a", "k"), vec!["k2".to_string()]);
    }
}
