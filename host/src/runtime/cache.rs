//! The on-disk cache of compiled components. An entry is keyed by the component's SHA-256
//! and the engine's compatibility hash, and carries a BLAKE3 digest of its own bytes: an
//! entry that is missing, corrupt or made by another engine is recompiled, never trusted.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Bumped when the cache layout changes.
const LAYOUT: &str = "v1";

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

    /// Whether a valid-looking entry exists (without verifying it).
    pub fn contains(&self, sha256: &str) -> bool {
        self.entry_path(sha256).is_some_and(|p| p.exists())
    }

    /// Loads the component from the cache, or compiles `bytes` and stores the result.
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let Some(path) = self.entry_path(sha256) else {
            return Ok((Component::from_binary(engine, bytes)?, CacheStatus::Disabled));
        };
        let status = match verify(&path) {
            Ok(true) => {
                // SAFETY: the file was written by this cache from a component this process
                // compiled, and its digest was checked just now; the engine key in its name
                // matches this engine. wasmtime re-checks the header and compatibility.
                match unsafe { Component::deserialize_file(engine, &path) } {
                    Ok(c) => return Ok((c, CacheStatus::Hit)),
                    Err(e) => CacheStatus::Rebuilt(format!("cache entry rejected by wasmtime: {e}")),
                }
            }
            Ok(false) => CacheStatus::Rebuilt("cache entry failed its integrity check".into()),
            Err(_) => CacheStatus::Compiled,
        };
        let component = Component::from_binary(engine, bytes)?;
        let stored = component.serialize().ok().map(|cwasm| store(&path, &cwasm));
        let status = match stored {
            Some(Ok(())) => status,
            _ => CacheStatus::Disabled,
        };
        Ok((component, status))
    }
}

fn digest_path(path: &Path) -> PathBuf {
    path.with_extension("b3")
}

/// Ok(true) if the entry and its digest exist and agree; Err if there is no entry.
fn verify(path: &Path) -> std::io::Result<bool> {
    let data = std::fs::read(path)?;
    let want = std::fs::read_to_string(digest_path(path)).unwrap_or_default();
    Ok(blake3::hash(&data).to_hex().as_str() == want.trim())
}

/// Writes the entry and its digest, each atomically.
fn store(path: &Path, cwasm: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = |p: &Path| {
        let mut name = p.as_os_str().to_os_string();
        name.push(format!(".tmp{}", std::process::id()));
        PathBuf::from(name)
    };
    let digest = blake3::hash(cwasm).to_hex().to_string();
    let dp = digest_path(path);
    std::fs::write(tmp(&dp), digest)?;
    std::fs::write(tmp(path), cwasm)?;
    // Digest first: a reader that sees the new entry also sees its digest.
    std::fs::rename(tmp(&dp), &dp)?;
    std::fs::rename(tmp(path), path)
}
