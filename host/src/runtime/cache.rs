//! The on-disk cache of compiled components. An entry is keyed by the component's SHA-256
//! and the engine's compatibility hash, and carries a seal: the BLAKE3 digest of its bytes
//! and, once the digest has been checked, the file's identity (device, inode, size, change
//! time). An entry whose identity still matches its seal is the file that was checked, so it
//! is not hashed again; any other entry is hashed, and resealed if it is intact. An entry that
//! is missing, corrupt or made by another engine is recompiled, never trusted.
//!
//! Beside each entry the registry keeps the component's description (see
//! `registry::manifest`), written with [`write_atomic`] under [`Cache::sidecar_path`].

use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Bumped when the cache layout changes.
const LAYOUT: &str = "v2";

/// How a component was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// Loaded from a valid cache entry.
    Hit,
    /// Compiled now (no entry); the result was stored if the cache is writable.
    Compiled,
    /// An entry existed but was rejected (corrupt or incompatible) and was rebuilt.
    Rebuilt(String),
    /// Caching is off (no usable cache directory).
    Disabled,
    /// Described from the cache; the compiled code is loaded when the plugin is first called.
    Deferred,
    /// The code could not be loaded (the reason says why and what to do).
    Failed(String),
}

/// The component cache.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
    engine_key: String,
}

/// The default cache directory: `$CORRAL_CACHE_DIR`, else the user's cache dir + `corral`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CORRAL_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|d| d.join("corral"))
}

impl Cache {
    /// A cache in `dir` (None disables caching) for components compiled by `engine`.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> Cache {
        let mut h = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        Cache { dir: dir.map(|d| d.join("components")), engine_key: format!("{:016x}", h.finish()) }
    }

    /// The entry path for a component with this SHA-256.
    pub fn entry_path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{sha256}-{}-{LAYOUT}.cwasm", self.engine_key)))
    }

    /// A file kept beside the entry for this SHA-256, with extension `ext`.
    pub fn sidecar_path(&self, sha256: &str, ext: &str) -> Option<PathBuf> {
        self.entry_path(sha256).map(|p| p.with_extension(ext))
    }

    /// Loads the component from the cache, or compiles `bytes` and stores the result.
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        self.load_or_compile(engine, sha256, || Ok(Cow::Borrowed(bytes)))
    }

    /// Like [`Cache::load`], but the component's bytes are asked for only when it has to be
    /// compiled.
    pub fn load_or_compile<'b>(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: impl FnOnce() -> wasmtime::Result<Cow<'b, [u8]>>,
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let Some(path) = self.entry_path(sha256) else {
            return Ok((Component::from_binary(engine, &bytes()?)?, CacheStatus::Disabled));
        };
        let status = match verify(&path) {
            Ok(true) => {
                // SAFETY: the file was written by this cache from a component a corral of this
                // version compiled, and it is the file whose digest was checked (just now, or
                // earlier with its identity unchanged since); the engine key in its name
                // matches this engine. wasmtime re-checks the header and compatibility.
                match unsafe { Component::deserialize_file(engine, &path) } {
                    Ok(c) => return Ok((c, CacheStatus::Hit)),
                    Err(e) => CacheStatus::Rebuilt(format!("cache entry rejected by wasmtime: {e}")),
                }
            }
            Ok(false) => CacheStatus::Rebuilt("cache entry failed its integrity check".into()),
            Err(_) => CacheStatus::Compiled,
        };
        let component = Component::from_binary(engine, &bytes()?)?;
        let stored = component.serialize().ok().map(|cwasm| store(&path, &cwasm));
        let status = match stored {
            Some(Ok(())) => status,
            _ => CacheStatus::Disabled,
        };
        Ok((component, status))
    }
}

fn seal_path(path: &Path) -> PathBuf {
    path.with_extension("seal")
}

/// What identifies one version of a file: replacing it changes its inode, and rewriting it,
/// even in place and to the same size, changes its change time, which no unprivileged process
/// can set back. (File times advance by the kernel's clock tick: a rewrite in place within a
/// few milliseconds of the stamp could go unseen. The cache itself only ever replaces files.)
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp(String);

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        Some(Stamp(format!(
            "{} {} {} {}.{:09} {}.{:09}",
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.mtime(),
            meta.mtime_nsec()
        )))
    }

    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<Stamp> {
        None
    }
}

/// An entry's seal: `blake3 HEX` and, once checked, `stamp ...` on the next line.
#[derive(Debug, Default)]
struct Seal {
    digest: String,
    stamp: Option<Stamp>,
}

impl Seal {
    fn read(path: &Path) -> Seal {
        let text = std::fs::read_to_string(seal_path(path)).unwrap_or_default();
        let mut seal = Seal::default();
        for line in text.lines() {
            if let Some(d) = line.strip_prefix("blake3 ") {
                seal.digest = d.trim().to_string();
            } else if let Some(s) = line.strip_prefix("stamp ") {
                seal.stamp = Some(Stamp(s.trim().to_string()));
            }
        }
        seal
    }

    fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut text = format!("blake3 {}\n", self.digest);
        if let Some(s) = &self.stamp {
            text.push_str(&format!("stamp {}\n", s.0));
        }
        write_atomic(&seal_path(path), text.as_bytes())
    }
}

/// Ok(true) if the entry agrees with its seal; Err if there is no entry. An entry whose
/// identity matches the seal's stamp is not read; one that is hashed and found intact is
/// stamped (best effort), so the next start does not hash it again.
fn verify(path: &Path) -> std::io::Result<bool> {
    let meta = std::fs::metadata(path)?;
    let mut seal = Seal::read(path);
    if seal.digest.is_empty() {
        return Ok(false);
    }
    let stamp = Stamp::of(&meta);
    if stamp.is_some() && seal.stamp == stamp {
        return Ok(true);
    }
    let data = std::fs::read(path)?;
    if blake3::hash(&data).to_hex().as_str() != seal.digest {
        return Ok(false);
    }
    if stamp.is_some() {
        seal.stamp = stamp;
        let _ = seal.write(path);
    }
    Ok(true)
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that a reader sees the
/// old file or the whole new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // Unique per process and call: two threads may store the same entry at once.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".tmp{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let tmp = PathBuf::from(name);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Writes the entry and its seal. The seal (digest only) goes first, so a reader that sees
/// the new entry also sees its digest; once the entry is in place it is stamped.
fn store(path: &Path, cwasm: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let mut seal = Seal { digest: blake3::hash(cwasm).to_hex().to_string(), stamp: None };
    seal.write(path)?;
    write_atomic(path, cwasm)?;
    seal.stamp = std::fs::metadata(path).ok().as_ref().and_then(Stamp::of);
    if seal.stamp.is_some() {
        let _ = seal.write(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: &Path) -> PathBuf {
        let path = dir.join("entry.cwasm");
        store(&path, b"compiled code").unwrap();
        path
    }

    #[test]
    fn a_stored_entry_is_sealed_and_stamped() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        let seal = Seal::read(&path);
        assert_eq!(seal.digest, blake3::hash(b"compiled code").to_hex().as_str());
        assert_eq!(seal.stamp, Stamp::of(&std::fs::metadata(&path).unwrap()));
        assert!(verify(&path).unwrap());
        let names: Vec<String> = dir
            .path()
            .read_dir()
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "the entry and its seal, no temporary files: {names:?}");
    }

    #[test]
    fn a_rewritten_or_replaced_entry_is_hashed_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        // Replaced by another file of the same size: another inode.
        let other = dir.path().join("other");
        std::fs::write(&other, b"compiled cod3").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(!verify(&path).unwrap());
        // Rewritten in place to the same size: the change time moves on. File times advance
        // by the kernel's clock tick (up to 10 ms), so the rewrite waits past one.
        let path = entry(dir.path());
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(&path, b"compiled cod3").unwrap();
        assert!(!verify(&path).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn an_intact_entry_with_a_stale_stamp_is_hashed_then_restamped() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        // A copy of the cache (another inode) holds the same bytes.
        let copy = dir.path().join("copy.cwasm");
        std::fs::copy(&path, &copy).unwrap();
        std::fs::copy(seal_path(&path), seal_path(&copy)).unwrap();
        assert_ne!(Seal::read(&copy).stamp, Stamp::of(&std::fs::metadata(&copy).unwrap()));
        assert!(verify(&copy).unwrap());
        assert_eq!(Seal::read(&copy).stamp, Stamp::of(&std::fs::metadata(&copy).unwrap()));
    }

    #[test]
    fn an_entry_without_a_seal_is_refused_and_a_missing_entry_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        std::fs::remove_file(seal_path(&path)).unwrap();
        assert!(!verify(&path).unwrap());
        assert!(verify(&dir.path().join("absent.cwasm")).is_err());
    }
}
