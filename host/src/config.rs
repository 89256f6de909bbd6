//! Settings, layered: defaults < user file < project file (`corral.toml`) < environment
//! < command-line flags. Each layer only overrides what it sets.

use crate::runtime::Limits;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A settings file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid: {why}\nFix the file or move it away.")]
    Parse { path: PathBuf, why: String },
    #[error("environment variable {name}={value} is not valid: {why}")]
    Env { name: &'static str, value: String, why: String },
    #[error("{what} must be {why}")]
    Value { what: String, why: &'static str },
}

/// The `[limits]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Wall-clock seconds per tool call.
    pub timeout_secs: Option<f64>,
    /// Memory cap per tool call, MiB.
    pub memory_mib: Option<u64>,
    /// Tool output cap, KB.
    pub max_output_kb: Option<u64>,
}

/// The `[plugins]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginsFile {
    /// Plugins not to load: a name, `origin:name` (e.g. `built-in:grep`), or a file path.
    pub disabled: Option<Vec<String>>,
}

/// The `[workspace]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceFile {
    /// Refuse changes to existing files the session has not read (default true).
    pub read_guard: Option<bool>,
    /// Extra read-write roots.
    pub add_dirs: Option<Vec<PathBuf>>,
    /// Extra read-only roots.
    pub add_dirs_ro: Option<Vec<PathBuf>>,
}

/// One settings file (user or project).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub limits: LimitsFile,
    #[serde(default)]
    pub plugins: PluginsFile,
    #[serde(default)]
    pub workspace: WorkspaceFile,
}

/// The settings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub limits: Limits,
    pub disabled_plugins: Vec<String>,
    pub read_guard: bool,
    /// Extra roots: (path, writable).
    pub extra_roots: Vec<(PathBuf, bool)>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Limits::default(),
            disabled_plugins: Vec::new(),
            read_guard: true,
            extra_roots: Vec::new(),
        }
    }
}

/// corral's user directory: `$CORRAL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/corral`, else
/// `~/.config/corral`.
pub fn user_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CORRAL_CONFIG_DIR")
        .or_else(|| var("XDG_CONFIG_HOME").map(|d| d.join("corral")))
        .or_else(|| dirs::home_dir().map(|h| h.join(".config").join("corral")))
}

/// Reads a settings file; a missing file is empty.
pub fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileConfig::default()),
        Err(source) => return Err(ConfigError::Read { path: path.to_path_buf(), source }),
    };
    toml::from_str(&text).map_err(|e| ConfigError::Parse { path: path.to_path_buf(), why: e.to_string() })
}

impl Settings {
    /// Applies one file's settings. Relative extra roots are taken from `base`.
    pub fn apply_file(&mut self, f: FileConfig, base: &Path) -> Result<(), ConfigError> {
        self.apply_limits(f.limits.timeout_secs, f.limits.memory_mib, f.limits.max_output_kb)?;
        if let Some(d) = f.plugins.disabled {
            self.disabled_plugins.extend(d);
        }
        if let Some(g) = f.workspace.read_guard {
            self.read_guard = g;
        }
        for (dirs, writable) in [(f.workspace.add_dirs, true), (f.workspace.add_dirs_ro, false)] {
            for d in dirs.unwrap_or_default() {
                self.extra_roots.push((base.join(d), writable));
            }
        }
        Ok(())
    }

    /// Applies limits given as numbers, checking their ranges.
    pub fn apply_limits(
        &mut self,
        timeout_secs: Option<f64>,
        memory_mib: Option<u64>,
        output_kb: Option<u64>,
    ) -> Result<(), ConfigError> {
        if let Some(t) = timeout_secs {
            if !(t > 0.0 && t <= 3600.0) {
                return Err(ConfigError::Value {
                    what: format!("timeout {t}"),
                    why: "between 0 and 3600 seconds",
                });
            }
            self.limits.timeout = Duration::from_secs_f64(t);
        }
        if let Some(m) = memory_mib {
            if !(16..=16384).contains(&m) {
                return Err(ConfigError::Value {
                    what: format!("memory limit {m} MiB"),
                    why: "16 to 16384 MiB",
                });
            }
            self.limits.memory_bytes = (m as usize) << 20;
        }
        if let Some(k) = output_kb {
            if !(1..=10240).contains(&k) {
                return Err(ConfigError::Value {
                    what: format!("output limit {k} KB"),
                    why: "1 to 10240 KB",
                });
            }
            self.limits.output_bytes = (k as usize) * 1024;
        }
        Ok(())
    }

    /// Applies `CORRAL_TIMEOUT_SECS`, `CORRAL_MEMORY_MIB`, `CORRAL_MAX_OUTPUT_KB`,
    /// `CORRAL_NO_READ_GUARD` from `get`.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        fn parse<T: std::str::FromStr>(
            name: &'static str,
            v: Option<String>,
        ) -> Result<Option<T>, ConfigError> {
            match v {
                None => Ok(None),
                Some(value) => value.trim().parse().map(Some).map_err(|_| ConfigError::Env {
                    name,
                    value,
                    why: "not a number".into(),
                }),
            }
        }
        let t = parse("CORRAL_TIMEOUT_SECS", get("CORRAL_TIMEOUT_SECS"))?;
        let m = parse("CORRAL_MEMORY_MIB", get("CORRAL_MEMORY_MIB"))?;
        let k = parse("CORRAL_MAX_OUTPUT_KB", get("CORRAL_MAX_OUTPUT_KB"))?;
        self.apply_limits(t, m, k)?;
        if let Some(v) = get("CORRAL_NO_READ_GUARD") {
            self.read_guard = !matches!(v.trim(), "1" | "true" | "yes");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_override_in_order() {
        let mut s = Settings::default();
        let user: FileConfig = toml::from_str("[limits]\ntimeout_secs = 5\nmemory_mib = 64\n").unwrap();
        let project: FileConfig =
            toml::from_str("[limits]\ntimeout_secs = 7\n[plugins]\ndisabled = [\"grep\"]\n").unwrap();
        s.apply_file(user, Path::new("/u")).unwrap();
        s.apply_file(project, Path::new("/p")).unwrap();
        assert_eq!(s.limits.timeout, Duration::from_secs(7));
        assert_eq!(s.limits.memory_bytes, 64 << 20);
        assert_eq!(s.disabled_plugins, vec!["grep".to_string()]);
        s.apply_env(|k| (k == "CORRAL_TIMEOUT_SECS").then(|| "9".to_string())).unwrap();
        assert_eq!(s.limits.timeout, Duration::from_secs(9));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        assert!(toml::from_str::<FileConfig>("[limits]\ntimeout = 5\n").is_err());
        let mut s = Settings::default();
        assert!(s.apply_limits(Some(0.0), None, None).is_err());
        assert!(s.apply_limits(None, Some(1), None).is_err());
        let e = s.apply_env(|_| Some("abc".into())).unwrap_err().to_string();
        assert!(e.contains("CORRAL_TIMEOUT_SECS=abc"), "{e}");
    }

    #[test]
    fn extra_roots_are_relative_to_their_file() {
        let mut s = Settings::default();
        let f: FileConfig =
            toml::from_str("[workspace]\nadd_dirs_ro = [\"../shared\"]\nread_guard = false\n").unwrap();
        s.apply_file(f, Path::new("/proj")).unwrap();
        assert_eq!(s.extra_roots, vec![(PathBuf::from("/proj/../shared"), false)]);
        assert!(!s.read_guard);
    }
}
