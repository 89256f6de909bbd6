//! The person's list of trusted workspaces, `trusted.toml` in corral's user directory: each
//! workspace's real path and the digest of the project files it was trusted with.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// The file name inside the user directory.
pub const FILE: &str = "trusted.toml";

/// One trusted workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: PathBuf,
    /// [`super::digest::project_digest`] when it was trusted.
    pub digest: String,
    /// Seconds since the epoch.
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    workspace: Vec<Entry>,
}

/// The trusted workspaces, as read from `user_dir`.
#[derive(Debug, Default)]
pub struct Store {
    path: Option<PathBuf>,
    entries: Vec<Entry>,
}

impl Store {
    /// Reads the list; a missing file is an empty list. A damaged file is an error: nothing
    /// is trusted until the person fixes or deletes it.
    pub fn load(user_dir: Option<&Path>) -> io::Result<Store> {
        let Some(dir) = user_dir else { return Ok(Store::default()) };
        let path = dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let file: File = toml::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is damaged ({}); fix or delete it", path.display(), e.message()),
            )
        })?;
        Ok(Store { path: Some(path), entries: file.workspace })
    }

    /// The entry for the workspace at real path `ws`.
    pub fn get(&self, ws: &Path) -> Option<&Entry> {
        self.entries.iter().find(|e| e.path == ws)
    }

    /// Trusts `ws` with the project files whose digest is `digest`, and saves.
    pub fn trust(&mut self, ws: &Path, digest: &str, now: u64) -> io::Result<()> {
        self.entries.retain(|e| e.path != ws);
        self.entries.push(Entry { path: ws.to_path_buf(), digest: digest.to_string(), trusted_at: now });
        self.save()
    }

    /// Forgets `ws`; whether it was there. Saves.
    pub fn revoke(&mut self, ws: &Path) -> io::Result<bool> {
        let before = self.entries.len();
        self.entries.retain(|e| e.path != ws);
        let removed = self.entries.len() != before;
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> io::Result<()> {
        let Some(path) = &self.path else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no user directory (set HOME or CORRAL_CONFIG_DIR) to keep trusted workspaces in",
            ));
        };
        let text = toml::to_string(&File { workspace: self.entries.clone() }).map_err(io::Error::other)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{FILE}.{}.tmp", std::process::id()));
        std::fs::write(
            &tmp,
            format!("# Workspaces trusted with `corral trust`; `corral trust --revoke` removes one.\n{text}"),
        )?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_revoke_round_trip_and_a_damaged_file_trusts_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::load(Some(t.path())).unwrap();
        assert!(s.get(Path::new("/w")).is_none());
        s.trust(Path::new("/w"), "abc", 7).unwrap();
        s.trust(Path::new("/w"), "def", 8).unwrap();
        let s2 = Store::load(Some(t.path())).unwrap();
        assert_eq!(s2.get(Path::new("/w")).map(|e| e.digest.as_str()), Some("def"));
        assert_eq!(s2.entries.len(), 1);
        let mut s3 = Store::load(Some(t.path())).unwrap();
        assert!(s3.revoke(Path::new("/w")).unwrap());
        assert!(!s3.revoke(Path::new("/w")).unwrap());
        assert!(Store::load(Some(t.path())).unwrap().get(Path::new("/w")).is_none());
        std::fs::write(t.path().join(FILE), "workspace = 3").unwrap();
        let e = Store::load(Some(t.path())).unwrap_err().to_string();
        assert!(e.contains("damaged") && e.contains("fix or delete it"), "{e}");
    }
}
