//! Why settings could not be loaded: every error names where the bad value came from (file
//! and line, environment variable, or flag) and what is allowed instead.

use std::path::PathBuf;

/// A setting that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// A problem at one line of a settings file.
    #[error("{}:{line}: {why}", path.display())]
    File { path: PathBuf, line: usize, why: String },
    #[error("environment variable {name}={value} is not valid: {key}: {why}")]
    Env { name: &'static str, value: String, key: &'static str, why: String },
    #[error("{flag} ({key}): {why}")]
    Flag { flag: &'static str, key: &'static str, why: String },
    #[error("policy file {}: {why}", path.display())]
    Policy { path: PathBuf, why: String },
    #[error("the policy file {} does not allow {what}. Remove the setting or change the policy.", path.display())]
    PolicyWider { path: PathBuf, what: String },
}
