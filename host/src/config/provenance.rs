//! Merging layers into the settings in force while remembering where each value came from,
//! and showing the result (`corral config`, text or JSON) with secrets masked.

use super::Settings;
use super::keys::{self, KeyDef};
use super::layer::{Layer, Source};
use super::settings;
use super::value::Value;
use std::path::PathBuf;

/// One effective setting and its sources (several for lists that accumulated).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: &'static str,
    pub value: Value,
    pub sources: Vec<Source>,
    pub secret: bool,
}

impl Entry {
    /// `default`, `env CORRAL_MODEL`, `user file A + project file B`, ...
    pub fn source(&self) -> String {
        self.sources.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" + ")
    }

    /// The value as shown to people: secrets masked.
    pub fn shown(&self) -> String {
        match (&self.value, self.secret) {
            (Value::Str(s), true) => mask(s),
            // A password in a URL (`http://user:pass@proxy`) is never shown.
            (v, _) => crate::redact::text(&v.to_string()).into_owned(),
        }
    }

    fn shown_json(&self) -> serde_json::Value {
        match (&self.value, self.secret) {
            (Value::Str(s), true) => serde_json::Value::String(mask(s)),
            (Value::Str(s), false) => serde_json::Value::String(crate::redact::text(s).into_owned()),
            (v, _) => v.to_json(),
        }
    }
}

/// A settings file that was looked for.
#[derive(Debug, Clone, PartialEq)]
pub struct FileStatus {
    pub path: PathBuf,
    /// `Source::UserFile` or `Source::ProjectFile`.
    pub source: Source,
    pub found: bool,
}

/// One `[plugin-settings.<plugin>]` value and the file that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginEntry {
    pub plugin: String,
    pub key: String,
    pub value: String,
    pub source: Source,
}

impl PluginEntry {
    /// Whether the setting's name says it holds a secret (`api_key`, `token`, ...).
    pub fn secret(&self) -> bool {
        is_secret_name(&self.key)
    }

    /// The value as shown to people: masked when it is a secret.
    pub fn shown(&self) -> String {
        if self.secret() { mask(&self.value) } else { self.value.clone() }
    }
}

/// Whether a plugin setting named `key` holds a secret.
pub fn is_secret_name(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["key", "token", "secret", "password"].iter().any(|w| k.contains(w))
}

/// Where every setting came from, the files consulted, and warnings for the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    /// Every key, in listing order.
    pub entries: Vec<Entry>,
    /// Every plugin setting, by plugin then name.
    pub plugin_settings: Vec<PluginEntry>,
    pub files: Vec<FileStatus>,
    pub warnings: Vec<String>,
    /// Project values left out (an untrusted workspace, or keys a project never decides).
    pub ignored: Vec<super::Ignored>,
}

/// A secret as `abcd****`, or `(set)` when it is too short to show any of it.
pub fn mask(secret: &str) -> String {
    if secret.chars().count() >= 12 {
        format!("{}****", secret.chars().take(4).collect::<String>())
    } else {
        "(set)".into()
    }
}

/// The merged value of `def` over `layers` (lowest first) and the layers that gave it.
pub(super) fn merge_one(def: &'static KeyDef, layers: &[Layer]) -> (Option<Value>, Vec<Source>) {
    let mut value: Option<Value> = None;
    let mut sources: Vec<Source> = Vec::new();
    for layer in layers {
        for (d, v) in &layer.values {
            if d.key != def.key {
                continue;
            }
            value = match (value, v) {
                (Some(Value::List(mut a)), Value::List(b)) if def.accumulates() => {
                    a.extend(b.iter().cloned());
                    Some(Value::List(a))
                }
                (Some(Value::Paths(mut a)), Value::Paths(b)) if def.accumulates() => {
                    a.extend(b.iter().cloned());
                    Some(Value::Paths(a))
                }
                (Some(Value::Map(mut a)), Value::Map(b)) if def.accumulates() => {
                    a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
                    Some(Value::Map(a))
                }
                (Some(Value::ListMap(mut a)), Value::ListMap(b)) if def.accumulates() => {
                    a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
                    Some(Value::ListMap(a))
                }
                _ => {
                    if !def.accumulates() {
                        sources.clear();
                    }
                    Some(v.clone())
                }
            };
            if !sources.contains(&layer.source) {
                sources.push(layer.source.clone());
            }
        }
    }
    (value, sources)
}

/// Builds the settings from `layers` (lowest priority first) and records their provenance.
pub fn merge(layers: &[Layer], files: Vec<FileStatus>, warnings: Vec<String>) -> (Settings, Provenance) {
    let mut s = Settings::default();
    let mut found: Vec<(&'static KeyDef, Vec<Source>)> = Vec::new();
    for def in keys::KEYS {
        let (value, sources) = merge_one(def, layers);
        if let Some(v) = value {
            settings::set(&mut s, def.key, v);
        }
        found.push((def, sources));
    }
    let mut plugin_sources: std::collections::BTreeMap<(String, String), Source> = Default::default();
    for layer in layers {
        for (plugin, table) in &layer.plugin_settings {
            for (k, v) in table {
                s.plugin_settings.entry(plugin.clone()).or_default().insert(k.clone(), v.clone());
                plugin_sources.insert((plugin.clone(), k.clone()), layer.source.clone());
            }
        }
    }
    for layer in layers {
        // A later layer's server replaces an earlier one of the same name as a whole.
        for (name, t) in &layer.mcp_servers {
            s.mcp_servers.insert(name.clone(), t.clone());
        }
    }
    let plugin_settings = plugin_sources
        .into_iter()
        .map(|((plugin, key), source)| {
            let value = s.plugin_settings.get(&plugin).and_then(|t| t.get(&key)).cloned().unwrap_or_default();
            PluginEntry { plugin, key, value, source }
        })
        .collect();
    let entries = found
        .into_iter()
        .map(|(def, sources)| Entry {
            key: def.key,
            value: settings::get(&s, def.key),
            sources: if sources.is_empty() { vec![Source::Default] } else { sources },
            secret: def.secret,
        })
        .collect();
    (s, Provenance { entries, plugin_settings, files, warnings, ignored: Vec::new() })
}

impl Provenance {
    /// The entry for `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The source of `key`, as `corral config` prints it.
    pub fn source(&self, key: &str) -> Option<String> {
        self.get(key).map(Entry::source)
    }

    /// `key = value    # source` lines, then the files consulted.
    pub fn to_text(&self) -> String {
        let lines: Vec<String> = self.entries.iter().map(|e| format!("{} = {}", e.key, e.shown())).collect();
        let width = lines.iter().map(|l| l.chars().count()).filter(|&n| n <= 60).max().unwrap_or(0);
        let mut out = String::new();
        for (line, e) in lines.iter().zip(&self.entries) {
            out.push_str(&format!("{line:width$}    # {}\n", e.source()));
        }
        out.push_str("\n# files, lowest priority first:\n");
        for f in &self.files {
            let state = if f.found { "found" } else { "not found" };
            out.push_str(&format!("#   {} ({state})\n", f.source));
        }
        if !self.plugin_settings.is_empty() {
            out.push_str("\n# plugin settings ([plugin-settings.<plugin>]):\n");
            for e in &self.plugin_settings {
                out.push_str(&format!(
                    "plugin-settings.{}.{} = {}    # {}\n",
                    e.plugin,
                    e.key,
                    if e.secret() { e.shown() } else { format!("{:?}", e.value) },
                    e.source
                ));
            }
        }
        out
    }

    /// `{"schema_version":1,"settings":{key:{"value","source"}},"files":[{"path","found"}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        let settings: serde_json::Map<String, serde_json::Value> = self
            .entries
            .iter()
            .map(|e| (e.key.to_string(), serde_json::json!({"value": e.shown_json(), "source": e.source()})))
            .collect();
        let files: Vec<serde_json::Value> = self
            .files
            .iter()
            .map(|f| {
                let kind = if matches!(f.source, Source::UserFile(_)) { "user" } else { "project" };
                serde_json::json!({"path": f.path.display().to_string(), "kind": kind, "found": f.found})
            })
            .collect();
        let mut plugins = serde_json::Map::new();
        for e in &self.plugin_settings {
            let table = plugins.entry(e.plugin.clone()).or_insert_with(|| serde_json::json!({}));
            table[&e.key] = serde_json::json!({"value": e.shown(), "source": e.source.to_string()});
        }
        serde_json::json!({"schema_version": 1, "settings": settings, "files": files, "plugin_settings": plugins})
    }
}
