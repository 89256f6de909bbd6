//! Setting values: what a layer supplies (`Input`), the checked form (`Value`), and the one
//! check every layer goes through, with messages that say what is allowed.

use super::keys::{KeyDef, Kind};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A value as a layer supplied it, before checking.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Strs(Vec<String>),
    Paths(Vec<PathBuf>),
    /// A table whose values are all strings.
    Map(Vec<(String, String)>),
    /// A table whose values are all arrays of strings.
    ListMap(Vec<(String, Vec<String>)>),
    /// Text from an environment variable, read according to the key's kind.
    Text(String),
    /// Something no key accepts, described ("a table", "a datetime").
    Other(String),
}

impl From<bool> for Input {
    fn from(b: bool) -> Self {
        Input::Bool(b)
    }
}
impl From<u64> for Input {
    fn from(n: u64) -> Self {
        Input::Int(n.into())
    }
}
impl From<u32> for Input {
    fn from(n: u32) -> Self {
        Input::Int(n.into())
    }
}
impl From<f64> for Input {
    fn from(f: f64) -> Self {
        Input::Float(f)
    }
}
impl From<f32> for Input {
    fn from(f: f32) -> Self {
        Input::Float(f32_to_f64(f))
    }
}
impl From<String> for Input {
    fn from(s: String) -> Self {
        Input::Str(s)
    }
}
impl From<Vec<String>> for Input {
    fn from(v: Vec<String>) -> Self {
        Input::Strs(v)
    }
}
impl From<PathBuf> for Input {
    fn from(p: PathBuf) -> Self {
        Input::Paths(vec![p])
    }
}
impl From<Vec<PathBuf>> for Input {
    fn from(v: Vec<PathBuf>) -> Self {
        Input::Paths(v)
    }
}

/// An `f32` as the `f64` with the same decimal form (0.7, not 0.699999988).
pub fn f32_to_f64(f: f32) -> f64 {
    f.to_string().parse().unwrap_or(f64::from(f))
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Bool(b) => write!(f, "{b}"),
            Input::Int(n) => write!(f, "{n}"),
            Input::Float(x) => write!(f, "{x}"),
            Input::Str(s) | Input::Text(s) => write!(f, "{s:?}"),
            Input::Strs(_) | Input::Paths(_) => write!(f, "an array"),
            Input::Map(_) | Input::ListMap(_) => write!(f, "a table"),
            Input::Other(what) => write!(f, "{what}"),
        }
    }
}

/// A checked value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An optional setting that nothing set.
    Unset,
    Bool(bool),
    Int(u64),
    Float(f64),
    Str(String),
    List(Vec<String>),
    Paths(Vec<PathBuf>),
    Map(BTreeMap<String, String>),
    /// Name -> list (`plugins.grants`).
    ListMap(BTreeMap<String, Vec<String>>),
    Path(PathBuf),
}

impl Value {
    /// The value as JSON (`Unset` is null).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Unset => serde_json::Value::Null,
            Value::Bool(b) => json!(b),
            Value::Int(n) => json!(n),
            Value::Float(x) => json!(x),
            Value::Str(s) => json!(s),
            Value::List(v) => json!(v),
            Value::Paths(v) => json!(v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()),
            Value::Map(m) => json!(m),
            Value::ListMap(m) => json!(m),
            Value::Path(p) => json!(p.display().to_string()),
        }
    }
}

impl fmt::Display for Value {
    /// TOML-like: strings quoted, lists in brackets, `(unset)` for nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unset => write!(f, "(unset)"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(v) => write!(f, "{v:?}"),
            Value::Paths(v) => {
                let shown: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
                write!(f, "{shown:?}")
            }
            Value::Map(m) => inline_table(f, m.iter().map(|(k, v)| format!("{k:?} = {v:?}"))),
            Value::ListMap(m) => inline_table(f, m.iter().map(|(k, v)| format!("{k:?} = {v:?}"))),
            Value::Path(p) => write!(f, "{:?}", p.display().to_string()),
        }
    }
}

/// `{ a = 1, b = 2 }`, or `{}` when empty.
fn inline_table(f: &mut fmt::Formatter<'_>, pairs: impl Iterator<Item = String>) -> fmt::Result {
    let pairs: Vec<String> = pairs.collect();
    if pairs.is_empty() { f.write_str("{}") } else { write!(f, "{{ {} }}", pairs.join(", ")) }
}

/// What `kind` accepts, in words.
pub fn expected(kind: Kind) -> String {
    match kind {
        Kind::UInt { min, max } if max == u64::MAX || max == u64::from(u32::MAX) => {
            format!("an integer ≥ {min}")
        }
        Kind::UInt { min, max } => format!("an integer from {min} to {max}"),
        Kind::Float { min, max, open_min: true } => format!("a number between {min} and {max} (above {min})"),
        Kind::Float { min, max, open_min: false } => format!("a number from {min} to {max}"),
        Kind::Bool => "true or false".into(),
        Kind::Str => "a string".into(),
        Kind::Choice(allowed) => format!("one of {}", allowed.join(", ")),
        Kind::List => "an array of strings".into(),
        Kind::Paths => "an array of paths (strings)".into(),
        Kind::Map => "a table of strings, like { \"name\" = \"value\" }".into(),
        Kind::ListMap(allowed) => {
            format!(
                "a table of lists, like {{ \"name\" = [\"{}\"] }} (values: {})",
                allowed[0],
                allowed.join(", ")
            )
        }
        Kind::Path => "a path (a string)".into(),
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Checks `input` against `def`; relative paths are joined to `base`. The error says what
/// was expected and what was found.
pub fn check(def: &KeyDef, input: Input, base: &Path) -> Result<Value, String> {
    let fail = |input: &Input| Err(format!("expected {}, found {input}", expected(def.kind)));
    match (def.kind, input) {
        (Kind::UInt { min, max }, Input::Int(n)) => {
            if n >= i128::from(min) && n <= i128::from(max) {
                Ok(Value::Int(n as u64))
            } else {
                fail(&Input::Int(n))
            }
        }
        (Kind::Float { min, max, open_min }, input @ (Input::Int(_) | Input::Float(_))) => {
            let x = match input {
                Input::Int(n) => n as f64,
                Input::Float(x) => x,
                _ => return fail(&input),
            };
            let low_ok = if open_min { x > min } else { x >= min };
            if x.is_finite() && low_ok && x <= max { Ok(Value::Float(x)) } else { fail(&input) }
        }
        (Kind::UInt { .. }, Input::Text(s)) => match s.trim().parse::<i128>() {
            Ok(n) => check(def, Input::Int(n), base),
            Err(_) => fail(&Input::Text(s)),
        },
        (Kind::Float { .. }, Input::Text(s)) => match s.trim().parse::<f64>() {
            Ok(x) => check(def, Input::Float(x), base),
            Err(_) => fail(&Input::Text(s)),
        },
        (Kind::Bool, Input::Bool(b)) => Ok(Value::Bool(b)),
        (Kind::Bool, Input::Text(s)) => match parse_bool(&s) {
            Some(b) => Ok(Value::Bool(b)),
            None => fail(&Input::Text(s)),
        },
        (Kind::Str, Input::Str(s) | Input::Text(s)) => Ok(Value::Str(s)),
        (Kind::Choice(allowed), Input::Str(s) | Input::Text(s)) => {
            if allowed.contains(&s.trim()) {
                Ok(Value::Str(s.trim().to_string()))
            } else {
                fail(&Input::Str(s))
            }
        }
        (Kind::List, Input::Strs(v)) => Ok(Value::List(v)),
        (Kind::Paths, Input::Strs(v)) => Ok(Value::Paths(v.iter().map(|p| base.join(p)).collect())),
        (Kind::Paths, Input::Paths(v)) => Ok(Value::Paths(v.iter().map(|p| base.join(p)).collect())),
        (Kind::Map, Input::Map(v)) => Ok(Value::Map(v.into_iter().collect())),
        (Kind::ListMap(allowed), Input::ListMap(v)) => list_map(allowed, v),
        (Kind::ListMap(allowed), Input::Map(v)) => {
            list_map(allowed, v.into_iter().map(|(k, v)| (k, split_commas(&v))).collect())
        }
        (Kind::ListMap(allowed), Input::Strs(items)) => {
            let mut pairs = Vec::new();
            for item in items {
                let Some((name, values)) = item.split_once('=') else {
                    return Err(format!("expected NAME=VALUE[,VALUE...], found {item:?}"));
                };
                pairs.push((name.trim().to_string(), split_commas(values)));
            }
            list_map(allowed, pairs)
        }
        (Kind::Path, Input::Str(s) | Input::Text(s)) if !s.is_empty() => Ok(Value::Path(base.join(s))),
        (Kind::Path, Input::Paths(mut v)) if v.len() == 1 => Ok(Value::Path(base.join(v.remove(0)))),
        (_, input) => fail(&input),
    }
}

fn split_commas(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_string).collect()
}

/// Checks a table of lists: names are not empty and every value is one of `allowed`.
/// A name given twice (repeated flags) gets the union of its lists.
fn list_map(allowed: &[&str], pairs: Vec<(String, Vec<String>)>) -> Result<Value, String> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, values) in pairs {
        if name.is_empty() {
            return Err("a name is empty".into());
        }
        let list = out.entry(name.clone()).or_default();
        for v in values {
            if !allowed.contains(&v.as_str()) {
                return Err(format!("unknown value {v:?} for {name:?}; allowed: {}", allowed.join(", ")));
            }
            if !list.contains(&v) {
                list.push(v);
            }
        }
    }
    Ok(Value::ListMap(out))
}
