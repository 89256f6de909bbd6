//! Settings, layered: defaults < user file < project file (`corral.toml`) < environment
//! < command-line flags, every value remembering which layer gave it.

pub mod bounds;
mod error;
pub mod keys;
mod layer;
pub mod policy;
pub mod project;
mod provenance;
mod settings;
mod value;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_capabilities;
#[cfg(test)]
mod tests_network;

pub use error::ConfigError;
pub use layer::{Flags, Layer, Source};
pub use layer::{McpTable, McpTables, PluginSettings};
pub use policy::Policy;
pub use project::{Ignored, Refusal};
pub use provenance::{Entry, FileStatus, PluginEntry, Provenance, is_secret_name, mask};
pub use settings::{
    AgentSettings, ColorChoice, CommandSettings, ModelSettings, NetworkSettings, OutputFormat,
    OutputSettings, SessionSettings, Settings,
};
pub use value::{Input, Value};

use std::path::{Path, PathBuf};

/// The user settings file inside corral's user directory.
pub const USER_FILE: &str = "config.toml";
/// The project settings file at the workspace root.
pub const PROJECT_FILE: &str = "corral.toml";

/// corral's user directory: `$CORRAL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/corral`, else
/// `~/.config/corral`.
pub fn user_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CORRAL_CONFIG_DIR")
        .or_else(|| var("XDG_CONFIG_HOME").map(|d| d.join("corral")))
        .or_else(|| dirs::home_dir().map(|h| h.join(".config").join("corral")))
}

pub use crate::paths::{state_dir, workspace_state_dir};

/// Resolves the settings for `workspace`: the user file in `user_dir`, the project file
/// (only what [`project::filter`] lets it decide, given `trusted`), the variables `env`
/// returns, then `flags`. Paths in a file are relative to its folder. What the project file
/// was not allowed to decide is in the provenance's `ignored`.
pub fn load(
    workspace: &Path,
    user_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    flags: &Flags,
    trusted: bool,
) -> Result<(Settings, Provenance), ConfigError> {
    let mut layers = Vec::new();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    if let Some(dir) = user_dir {
        let path = dir.join(USER_FILE);
        let layer = layer::read_file(&path, dir, Source::UserFile(path.clone()))?;
        files.push(FileStatus { path: path.clone(), source: Source::UserFile(path), found: layer.is_some() });
        layers.extend(layer);
    }
    let path = workspace.join(PROJECT_FILE);
    let source = Source::ProjectFile(path.clone());
    let mut ignored = Vec::new();
    let project = match read_project(workspace)? {
        ProjectFile::Missing => None,
        ProjectFile::Refused(why) => {
            warnings.push(format!("{} is not loaded: {why}", path.display()));
            None
        }
        ProjectFile::Text(text) => Some(layer::parse_file(&text, &path, workspace, source.clone())?),
    };
    files.push(FileStatus { path, source, found: project.is_some() });
    if let Some(p) = project {
        for (plugin, table) in &p.plugin_settings {
            for k in table.keys().filter(|k| provenance::is_secret_name(k)) {
                warnings.push(format!(
                    "{} sets plugin-settings.{plugin}.{k}; project files often get committed. Move it to the user \
                     file.",
                    workspace.join(PROJECT_FILE).display()
                ));
            }
        }
        let (kept, mut left_out) = project::filter(p, &layers, trusted);
        ignored.append(&mut left_out);
        layers.push(kept);
    }
    layers.extend(layer::from_env(env)?);
    layers.extend(flags.layers()?);
    let (mut settings, mut prov) = provenance::merge(&layers, files, warnings);
    prov.ignored = ignored;
    provider_brings_its_endpoint(&mut settings, &mut prov);
    Ok((settings, prov))
}

/// A provider chosen on the command line brings its own endpoint: a base URL from a file or
/// the environment (made for another provider) is not used unless a flag gives it too.
fn provider_brings_its_endpoint(s: &mut Settings, prov: &mut Provenance) {
    let from_flag = |key: &str| prov.source(key).is_some_and(|src| src.starts_with("flag "));
    if !from_flag("model.provider") || from_flag("model.base_url") || s.model.base_url.is_none() {
        return;
    }
    let from = prov.source("model.base_url").unwrap_or_default();
    prov.warnings.push(format!(
        "--provider {} brings its own endpoint, so model.base_url from {from} is not used; pass --base-url to \
         choose another",
        s.model.provider.as_deref().unwrap_or_default()
    ));
    s.model.base_url = None;
    if let Some(e) = prov.entries.iter_mut().find(|e| e.key == "model.base_url") {
        e.value = Value::Unset;
        e.sources = vec![Source::Default];
    }
}

/// The project settings file as found.
enum ProjectFile {
    Missing,
    /// Present but not to be read (a link, not a regular file, another user's).
    Refused(String),
    Text(String),
}

/// The largest project settings file read.
const PROJECT_FILE_MAX: u64 = 1 << 20;

/// Reads `corral.toml` through the workspace's handle: no link, regular files only, owned
/// by this user (or root), at most 1 MiB.
fn read_project(workspace: &Path) -> Result<ProjectFile, ConfigError> {
    use std::os::unix::fs::MetadataExt;
    let path = workspace.join(PROJECT_FILE);
    let read_err = |source: std::io::Error| ConfigError::Read { path: path.clone(), source };
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ProjectFile::Missing),
        Err(e) => return Err(read_err(e)),
    };
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        return Ok(ProjectFile::Refused(format!(
            "it belongs to another user (uid {}); corral loads only your own settings files",
            meta.uid()
        )));
    }
    let dir = match cap_std::fs::Dir::open_ambient_dir(workspace, cap_std::ambient_authority()) {
        Ok(d) => d,
        Err(e) => return Err(read_err(e)),
    };
    match crate::capabilities::hostread::read_regular(&dir, Path::new(PROJECT_FILE), PROJECT_FILE_MAX) {
        Ok(None) => Ok(ProjectFile::Missing),
        Ok(Some(c)) if c.truncated() => {
            Ok(ProjectFile::Refused(format!("it is larger than {} KiB", PROJECT_FILE_MAX >> 10)))
        }
        Ok(Some(c)) => match String::from_utf8(c.bytes) {
            Ok(text) => Ok(ProjectFile::Text(text)),
            Err(_) => Ok(ProjectFile::Refused("it is not UTF-8 text".into())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(ProjectFile::Refused(e.to_string())),
        Err(e) => Err(read_err(e)),
    }
}
