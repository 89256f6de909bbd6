//! Where corral keeps its own local state, outside any workspace: a leaf that every layer may
//! use (the runtime's cache key, the per-workspace state folder).

use std::path::{Path, PathBuf};

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
