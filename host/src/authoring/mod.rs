//! Tools for plugin authors: the WIT this binary was built against, C bindings, turning a
//! core module into a component, new-project templates, and reading what a component offers.

pub mod cbind;
pub mod componentize;
pub mod inspect;
pub mod template;
pub mod wit;

use std::path::{Path, PathBuf};

/// Why an authoring command failed; each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum AuthoringError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("the embedded WIT does not parse ({0}); this is a bug in corral")]
    Wit(String),
    #[error("{0}")]
    Capabilities(String),
    #[error("cannot generate the C bindings: {0}")]
    Bindings(String),
    #[error("{path} is already a component; `plugin componentize` takes the core module clang produced")]
    AlreadyComponent { path: PathBuf },
    #[error("{path} is not a WebAssembly module (no \\0asm header)")]
    NotWasm { path: PathBuf },
    #[error(
        "cannot make a component of {path}: {why}\n\
         The module must be linked with the bindings' *_component_type.o (see `corral plugin c-bindings`)."
    )]
    Componentize { path: PathBuf, why: String },
    #[error(
        "invalid plugin name '{0}': use 1 to 64 lowercase ASCII letters, digits, '-' or '_', starting with a letter"
    )]
    BadName(String),
    #[error("{0} already exists and is not empty; choose another name or --dir")]
    Exists(PathBuf),
}

/// Writes `contents` to `path` atomically (a temporary file beside it, then a rename).
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), AuthoringError> {
    let err = |source| AuthoringError::Write { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(format!(".corral-tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    if let Err(e) = std::fs::write(&tmp, contents).and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}

/// Whether `name` is a valid plugin name: a letter, then letters, digits, `-` or `_`.
pub fn valid_plugin_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names() {
        assert!(valid_plugin_name("checksum"));
        assert!(valid_plugin_name("code-stats_2"));
        for bad in ["", "2x", "Caps", "a b", "a.b", "-x", &"a".repeat(65)] {
            assert!(!valid_plugin_name(bad), "{bad}");
        }
    }

    #[test]
    fn atomic_writes_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/f.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
        let e = write_atomic(&dir.path().join("sub/f.txt/x"), b"no").unwrap_err().to_string();
        assert!(e.starts_with("cannot write"), "{e}");
    }
}
