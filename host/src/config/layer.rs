//! One layer of settings (a file, the environment, or the flags) read into checked values
//! under dotted keys, each layer labelled with its source.

use super::ConfigError;
use super::keys::{self, EnvRule, KeyDef};
use super::value::{Input, Value, check};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile(PathBuf),
    ProjectFile(PathBuf),
    Env(&'static str),
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::UserFile(p) => write!(f, "user file {}", p.display()),
            Source::ProjectFile(p) => write!(f, "project file {}", p.display()),
            Source::Env(v) => write!(f, "env {v}"),
            Source::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// Each plugin's own settings: plugin name -> setting name -> value.
pub type PluginSettings = BTreeMap<String, BTreeMap<String, String>>;

/// One `[mcp_servers.<name>]` table as written (its values are checked by `mcp::config`),
/// with where it came from; relative paths in it are taken from `base`.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTable {
    pub table: toml::Table,
    pub source: Source,
    pub base: PathBuf,
}

/// `[mcp_servers.<name>]` tables by name.
pub type McpTables = BTreeMap<String, McpTable>;

/// The checked values one source supplies.
#[derive(Debug, Clone)]
pub struct Layer {
    pub source: Source,
    pub values: Vec<(&'static KeyDef, Value)>,
    /// `[plugin-settings.<plugin>]` tables (files only).
    pub plugin_settings: PluginSettings,
    /// `[mcp_servers.<name>]` tables (files only).
    pub mcp_servers: McpTables,
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// A TOML value as an `Input`.
fn input_of(v: &DeValue<'_>) -> Input {
    match v {
        DeValue::String(s) => Input::Str(s.to_string()),
        DeValue::Integer(i) => match i128::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Input::Int(n),
            Err(_) => Input::Other(format!("the integer {i}")),
        },
        DeValue::Float(x) => match x.as_str().parse::<f64>() {
            Ok(f) => Input::Float(f),
            Err(_) => Input::Other(format!("the number {x}")),
        },
        DeValue::Boolean(b) => Input::Bool(*b),
        DeValue::Datetime(_) => Input::Other("a datetime".into()),
        DeValue::Table(t) => {
            let pairs: Option<Vec<(String, String)>> = t
                .iter()
                .map(|(k, v)| v.get_ref().as_str().map(|s| (k.get_ref().to_string(), s.to_string())))
                .collect();
            let lists: Option<Vec<(String, Vec<String>)>> = t
                .iter()
                .map(|(k, v)| match input_of(v.get_ref()) {
                    Input::Strs(items) => Some((k.get_ref().to_string(), items)),
                    Input::Str(s) => Some((k.get_ref().to_string(), vec![s])),
                    _ => None,
                })
                .collect();
            match (pairs, lists) {
                (Some(v), _) => Input::Map(v),
                (None, Some(v)) => Input::ListMap(v),
                _ => Input::Other("a table with a value that is not a string".into()),
            }
        }
        DeValue::Array(items) => {
            let strs: Option<Vec<String>> =
                items.iter().map(|i| i.get_ref().as_str().map(str::to_string)).collect();
            match strs {
                Some(v) => Input::Strs(v),
                None => Input::Other("an array with a value that is not a string".into()),
            }
        }
    }
}

/// Reads settings file `text` (from `path`); relative paths in it are taken from `base`.
pub fn parse_file(text: &str, path: &Path, base: &Path, source: Source) -> Result<Layer, ConfigError> {
    let err = |offset: usize, why: String| ConfigError::File {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        why,
    };
    let doc = DeTable::parse(text)
        .map_err(|e| err(e.span().map_or(0, |s| s.start), format!("invalid TOML: {}", e.message().trim())))?;
    let mut tables: Vec<_> = doc.get_ref().iter().collect();
    tables.sort_by_key(|(k, _)| k.span().start);
    let mut values = Vec::new();
    let mut plugin_settings = PluginSettings::new();
    let mut mcp_seen = false;
    for (table, body) in tables {
        let name: &str = table.get_ref();
        let start = table.span().start;
        if name == keys::MCP_SERVERS {
            check_mcp_servers(body.get_ref(), start).map_err(|(at, why)| err(at, why))?;
            mcp_seen = true;
            continue;
        }
        if name == keys::PLUGIN_SETTINGS {
            plugin_settings =
                parse_plugin_settings(body.get_ref(), start).map_err(|(at, why)| err(at, why))?;
            continue;
        }
        if !keys::TABLES.contains(&name) {
            return Err(err(
                start,
                format!(
                    "unknown table [{name}]; allowed tables: {}, {}.<plugin>, {}.<name>",
                    keys::TABLES.join(", "),
                    keys::PLUGIN_SETTINGS,
                    keys::MCP_SERVERS
                ),
            ));
        }
        let DeValue::Table(body) = body.get_ref() else {
            return Err(err(start, format!("'{name}' must be a table, like [{name}]")));
        };
        let mut entries: Vec<_> = body.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (k, v) in entries {
            let kname: &str = k.get_ref();
            let Some(def) = keys::find(&format!("{name}.{kname}")) else {
                return Err(err(
                    k.span().start,
                    format!(
                        "unknown key '{kname}' in [{name}]; allowed keys: {}",
                        keys::names_in(name).join(", ")
                    ),
                ));
            };
            let value = check(def, input_of(v.get_ref()), base)
                .map_err(|why| err(v.span().start, format!("{}: {why}", def.key)))?;
            values.push((def, value));
        }
    }
    let mut mcp_servers = McpTables::new();
    if mcp_seen {
        // The structure was checked above; the values are kept as written for `mcp::config`.
        let whole: toml::Table = toml::from_str(text).map_err(|e| err(0, format!("invalid TOML: {e}")))?;
        if let Some(toml::Value::Table(servers)) = whole.get(keys::MCP_SERVERS) {
            for (name, t) in servers {
                if let toml::Value::Table(table) = t {
                    let entry =
                        McpTable { table: table.clone(), source: source.clone(), base: base.to_path_buf() };
                    mcp_servers.insert(name.clone(), entry);
                }
            }
        }
    }
    Ok(Layer { source, values, plugin_settings, mcp_servers })
}

/// Checks the shape of `[mcp_servers.<name>]` tables: tables of known keys. The error carries
/// the byte offset it is about.
fn check_mcp_servers(body: &DeValue<'_>, start: usize) -> Result<(), (usize, String)> {
    let like = "like [mcp_servers.docs] with command = \"npx\" or url = \"https://...\"";
    let DeValue::Table(servers) = body else {
        return Err((start, format!("'{}' must be a table of tables, {like}", keys::MCP_SERVERS)));
    };
    for (name, table) in servers.iter() {
        let sname: &str = name.get_ref();
        let DeValue::Table(entries) = table.get_ref() else {
            return Err((
                name.span().start,
                format!("{}.{sname} must be a table, {like}", keys::MCP_SERVERS),
            ));
        };
        for (k, _) in entries.iter() {
            let kname: &str = k.get_ref();
            if !keys::MCP_SERVER_KEYS.contains(&kname) {
                return Err((
                    k.span().start,
                    format!(
                        "unknown key '{kname}' in [{}.{sname}]; allowed keys: {}",
                        keys::MCP_SERVERS,
                        keys::MCP_SERVER_KEYS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Reads `[plugin-settings.<plugin>]` tables. Values are strings; numbers and booleans are
/// kept as their text and arrays of strings are joined with commas. The error carries the
/// byte offset it is about.
fn parse_plugin_settings(body: &DeValue<'_>, start: usize) -> Result<PluginSettings, (usize, String)> {
    let like = "like [plugin-settings.web_search] with url = \"...\"";
    let DeValue::Table(plugins) = body else {
        return Err((start, format!("'{}' must be a table of tables, {like}", keys::PLUGIN_SETTINGS)));
    };
    let mut out = PluginSettings::new();
    for (plugin, table) in plugins.iter() {
        let pname: &str = plugin.get_ref();
        let DeValue::Table(entries) = table.get_ref() else {
            return Err((plugin.span().start, format!("plugin-settings.{pname} must be a table, {like}")));
        };
        let settings = out.entry(pname.to_string()).or_default();
        for (k, v) in entries.iter() {
            let text = match v.get_ref() {
                DeValue::String(s) => s.to_string(),
                DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_) => {
                    input_of(v.get_ref()).to_string()
                }
                DeValue::Array(_) => match input_of(v.get_ref()) {
                    Input::Strs(items) => items.join(","),
                    other => {
                        let key = k.get_ref();
                        return Err((
                            v.span().start,
                            format!("plugin-settings.{pname}.{key}: expected a string, found {other}"),
                        ));
                    }
                },
                _ => {
                    let key = k.get_ref();
                    return Err((
                        v.span().start,
                        format!(
                            "plugin-settings.{pname}.{key}: expected a string, found {}",
                            input_of(v.get_ref())
                        ),
                    ));
                }
            };
            settings.insert(k.get_ref().to_string(), text);
        }
    }
    Ok(out)
}

/// Reads a settings file; `Ok(None)` when it does not exist.
pub fn read_file(path: &Path, base: &Path, source: Source) -> Result<Option<Layer>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_file(&text, path, base, source).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_path_buf(), source }),
    }
}

/// The values set by environment variables; empty variables count as unset. Each
/// variable is its own layer so that its name is the source.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Layer>, ConfigError> {
    let mut layers = Vec::new();
    for def in keys::KEYS {
        let Some(rule) = def.env else { continue };
        let name = rule.var();
        let Some(raw) = env(name).filter(|v| !v.trim().is_empty()) else { continue };
        let input = match rule {
            EnvRule::Plain(_) | EnvRule::Negated(_) => Input::Text(raw.clone()),
            EnvRule::Presence(_, fixed) => Input::Str(fixed.to_string()),
        };
        let bad = |why: String| ConfigError::Env { name, value: raw.clone(), key: def.key, why };
        let mut value = check(def, input, Path::new("")).map_err(bad)?;
        if let (EnvRule::Negated(_), Value::Bool(b)) = (rule, &value) {
            value = Value::Bool(!b);
        }
        layers.push(Layer {
            source: Source::Env(name),
            values: vec![(def, value)],
            plugin_settings: PluginSettings::new(),
            mcp_servers: McpTables::new(),
        });
    }
    Ok(layers)
}

/// Values given on the command line, each with the flag that gave it. Relative paths are
/// taken from `base` (the current directory).
#[derive(Debug, Clone, Default)]
pub struct Flags {
    base: PathBuf,
    given: Vec<(&'static str, &'static str, Input)>,
}

impl Flags {
    pub fn new(base: &Path) -> Flags {
        Flags { base: base.to_path_buf(), given: Vec::new() }
    }

    /// Records that `flag` set `key` (a dotted key) to `value`.
    pub fn set(&mut self, key: &'static str, flag: &'static str, value: impl Into<Input>) -> &mut Self {
        self.given.push((key, flag, value.into()));
        self
    }

    /// Records `value` when the flag was given.
    pub fn opt<T: Into<Input>>(
        &mut self,
        key: &'static str,
        flag: &'static str,
        value: Option<T>,
    ) -> &mut Self {
        if let Some(v) = value {
            self.set(key, flag, v);
        }
        self
    }

    /// A switch: when `given`, sets `key` to `value` (`--no-history` sets history false).
    pub fn switch(&mut self, key: &'static str, flag: &'static str, given: bool, value: bool) -> &mut Self {
        if given {
            self.set(key, flag, value);
        }
        self
    }

    /// A repeatable flag: sets `key` when given at least once.
    pub fn list<T: Clone>(&mut self, key: &'static str, flag: &'static str, values: &[T]) -> &mut Self
    where
        Vec<T>: Into<Input>,
    {
        if !values.is_empty() {
            self.set(key, flag, values.to_vec());
        }
        self
    }

    /// One layer per flag, checked.
    pub fn layers(&self) -> Result<Vec<Layer>, ConfigError> {
        let mut layers = Vec::new();
        for (key, flag, input) in &self.given {
            let bad = |why: String| ConfigError::Flag { flag, key, why };
            let def = keys::find(key).ok_or_else(|| bad("no such setting (a bug in corral)".into()))?;
            let value = check(def, input.clone(), &self.base).map_err(bad)?;
            layers.push(Layer {
                source: Source::Flag(flag),
                values: vec![(def, value)],
                plugin_settings: PluginSettings::new(),
                mcp_servers: McpTables::new(),
            });
        }
        Ok(layers)
    }
}
