//! Settings, layered: defaults < user file < project file (`corral.toml`) < environment
//! < command-line flags, every value remembering which layer gave it.

mod error;
pub mod keys;
mod layer;
pub mod policy;
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
pub use layer::PluginSettings;
pub use layer::{Flags, Layer, Source};
pub use policy::Policy;
pub use provenance::{Entry, FileStatus, PluginEntry, Provenance, mask};
pub use settings::{
    AgentSettings, ColorChoice, CommandSettings, ModelSettings, NetworkSettings, OutputFormat,
    OutputSettings, Settings,
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

/// corral's state directory (local state that is neither settings nor cache: approvals, the
/// continue note, history, trust): `$CORRAL_STATE_DIR`, else `$XDG_STATE_HOME/corral`, else
/// `~/.local/state/corral`.
pub fn state_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CORRAL_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("corral")))
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state").join("corral")))
}

/// The folder for one workspace's local state inside `state_dir`: `workspaces/<key>`, where
/// the key is the first 16 bytes of the SHA-256 of the workspace's real path, in hex.
pub fn workspace_state_dir(state_dir: &Path, workspace_real: &Path) -> PathBuf {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let digest = sha2::Sha256::digest(workspace_real.as_os_str().as_bytes());
    let key: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    state_dir.join("workspaces").join(key)
}

/// Resolves the settings for `workspace`: the user file in `user_dir`, the project file,
/// the variables `env` returns, then `flags`. Paths in a file are relative to its folder.
pub fn load(
    workspace: &Path,
    user_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    flags: &Flags,
) -> Result<(Settings, Provenance), ConfigError> {
    let mut layers = Vec::new();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let user = user_dir.map(|d| (d.join(USER_FILE), d.to_path_buf(), true));
    let project = Some((workspace.join(PROJECT_FILE), workspace.to_path_buf(), false));
    for (path, base, is_user) in user.into_iter().chain(project) {
        let source = if is_user { Source::UserFile(path.clone()) } else { Source::ProjectFile(path.clone()) };
        let layer = layer::read_file(&path, &base, source.clone())?;
        let secret = layer.as_ref().is_some_and(|l| l.values.iter().any(|(k, _)| k.secret));
        if secret && !is_user {
            warnings.push(format!(
                "{} sets model.api_key; project files often get committed. Move the key to \
                 the user file or CORRAL_API_KEY.",
                path.display()
            ));
        }
        let plugin_secrets =
            layer.as_ref().into_iter().flat_map(|l| &l.plugin_settings).flat_map(|(p, t)| {
                t.keys()
                    .filter(|k| provenance::is_secret_name(k))
                    .map(move |k| format!("plugin-settings.{p}.{k}"))
            });
        for name in plugin_secrets.filter(|_| !is_user) {
            warnings.push(format!(
                "{} sets {name}; project files often get committed. Move it to the user file.",
                path.display()
            ));
        }
        files.push(FileStatus { path, source, found: layer.is_some() });
        layers.extend(layer);
    }
    layers.extend(layer::from_env(env)?);
    layers.extend(flags.layers()?);
    Ok(provenance::merge(&layers, files, warnings))
}
