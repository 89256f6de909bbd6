//! The per-user secret that authenticates compile-cache entries: 32 random bytes in
//! `<state dir>/cache.key` (mode 0600), made on first use; never in a workspace or the cache.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The file's name inside corral's state directory.
pub const FILE: &str = "cache.key";

/// The secret key of BLAKE3's keyed mode.
#[derive(Clone)]
pub struct Secret([u8; 32]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Why there is no secret (the compile cache is then not used).
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("no state directory (set CORRAL_STATE_DIR or HOME)")]
    NoDir,
    #[error("cannot make the cache key {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error(
        "the cache key {} is not a private 32-byte file of this user ({why}); remove it and corral makes a new one",
        path.display()
    )]
    Unsafe { path: PathBuf, why: String },
}

impl Secret {
    /// From raw bytes (tests).
    #[cfg(test)]
    pub fn from_bytes(bytes: [u8; 32]) -> Secret {
        Secret(bytes)
    }

    /// The keyed BLAKE3 tag of `data` in a given `domain`, lowercase hex.
    pub fn tag(&self, domain: &str, data: &[u8]) -> String {
        let mut h = blake3::Hasher::new_keyed(&self.0);
        h.update(domain.as_bytes());
        h.update(&[0]);
        h.update(data);
        h.finalize().to_hex().to_string()
    }

    /// Whether `tag` is the tag of `data` in `domain` (compared in constant time).
    pub fn check(&self, domain: &str, data: &[u8], tag: &str) -> bool {
        let Ok(given) = blake3::Hash::from_hex(tag.trim()) else { return false };
        let mut h = blake3::Hasher::new_keyed(&self.0);
        h.update(domain.as_bytes());
        h.update(&[0]);
        h.update(data);
        h.finalize() == given
    }

    /// Reads the secret in `dir`, making it (and `dir`, mode 0700) if it does not exist.
    pub fn load_or_create(dir: Option<&Path>) -> Result<Secret, SecretError> {
        let dir = dir.ok_or(SecretError::NoDir)?;
        let path = dir.join(FILE);
        match read(&path) {
            Ok(s) => return Ok(s),
            Err(ReadError::Missing) => {}
            Err(ReadError::Unsafe(why)) => return Err(SecretError::Unsafe { path, why }),
        }
        let create = |source| SecretError::Create { path: path.clone(), source };
        create_private_dir(dir).map_err(create)?;
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(create)?;
        // Written under a temporary name, then linked into place: of two processes making it
        // at once, one link wins and both use the winner's key.
        let tmp = dir.join(format!("{FILE}.tmp{}", std::process::id()));
        let written = write_private(&tmp, &bytes).and_then(|()| std::fs::hard_link(&tmp, &path));
        let _ = std::fs::remove_file(&tmp);
        match written {
            Ok(()) => Ok(Secret(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(&path).map_err(|e| match e {
                ReadError::Missing => create(std::io::ErrorKind::NotFound.into()),
                ReadError::Unsafe(why) => SecretError::Unsafe { path: path.clone(), why },
            }),
            Err(e) => Err(create(e)),
        }
    }
}

enum ReadError {
    Missing,
    Unsafe(String),
}

#[cfg(unix)]
fn read(path: &Path) -> Result<Secret, ReadError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Unsafe(e.to_string())),
    };
    let meta = file.metadata().map_err(|e| ReadError::Unsafe(e.to_string()))?;
    // SAFETY: geteuid has no arguments and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.len() != 32 {
        return Err(ReadError::Unsafe("not a 32-byte regular file".into()));
    }
    if meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(ReadError::Unsafe("owned by another user or readable by others".into()));
    }
    let mut bytes = [0u8; 32];
    file.read_exact(&mut bytes).map_err(|e| ReadError::Unsafe(e.to_string()))?;
    Ok(Secret(bytes))
}

#[cfg(not(unix))]
fn read(_path: &Path) -> Result<Secret, ReadError> {
    Err(ReadError::Unsafe("private files are only checked on Unix".into()))
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let a = Secret::load_or_create(Some(&state)).unwrap();
        let b = Secret::load_or_create(Some(&state)).unwrap();
        assert_eq!(a.tag("x", b"data"), b.tag("x", b"data"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(state.join(FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(a.check("x", b"data", &a.tag("x", b"data")));
        assert!(!a.check("y", b"data", &a.tag("x", b"data")), "a tag is bound to its domain");
        assert!(!a.check("x", b"datA", &a.tag("x", b"data")));
        assert!(!a.check("x", b"data", "not hex"));
    }

    #[cfg(unix)]
    #[test]
    fn a_key_others_can_read_or_a_link_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, [7u8; 32]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Secret::load_or_create(Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("readable by others") && e.contains("remove it"), "{e}");
        std::fs::remove_file(&path).unwrap();
        let other = dir.path().join("elsewhere");
        std::fs::write(&other, [7u8; 32]).unwrap();
        std::os::unix::fs::symlink(&other, &path).unwrap();
        assert!(Secret::load_or_create(Some(dir.path())).is_err(), "a link is not followed");
        assert!(matches!(Secret::load_or_create(None), Err(SecretError::NoDir)));
    }
}
