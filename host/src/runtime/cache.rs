//! The on-disk cache of compiled components. An entry is keyed by the component's SHA-256
//! and the engine's compatibility hash, and carries a seal: the keyed BLAKE3 tag of its bytes
//! under the user's secret (see [`super::secret`]) and, once the tag has been checked, the
//! file's identity (device, inode, size, change time) with its own tag. An entry whose
//! identity still matches its sealed stamp is the file that was checked, so it is not hashed
//! again; any other entry is hashed, and resealed if it is intact. An entry that is missing,
//! corrupt, planted (no valid tag: whoever wrote it lacks the secret) or made by another
//! engine is recompiled, never loaded. Without a secret the disk cache is not used.
//!
//! The built-ins come precompiled inside the binary (see `build.rs`): they are loaded from
//! there and never touch the disk cache, unless this machine cannot run that code.
//!
//! Compiling a component keeps the functions Cranelift compiled (see [`super::functions`]) in
//! `functions-<engine key>/` beside the entries, so the next component that shares them
//! (another Python plugin, a rebuilt one) compiles only what is new.
//!
//! Beside each entry the registry keeps the component's description (see
//! `registry::manifest`), written atomically under [`Cache::sidecar_path`].

use super::atomic::write_atomic;
use super::functions::Functions;
use super::secret::Secret;
use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::Component;
use wasmtime::{Engine, Precompiled};

/// Bumped when the cache layout changes.
const LAYOUT: &str = "v3";
/// Tag domains: compiled code, a stamp, and (for the registry) a kept description.
const CODE: &str = "corral cache entry v3";
const STAMP: &str = "corral cache stamp v3";

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
    /// Loaded from the code compiled when corral was built (a built-in).
    Precompiled,
}

/// The component cache.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
    engine_key: String,
    secret: Option<Secret>,
    /// Why the disk cache is off, when it is.
    off: Option<String>,
    /// The compiled functions the engine's compiler keeps and reuses.
    functions: Option<Arc<Functions>>,
}

/// The default cache directory: `$CORRAL_CACHE_DIR`, else the user's cache dir + `corral`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CORRAL_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|d| d.join("corral"))
}

impl Cache {
    /// A cache in `dir` (None disables caching) for components compiled by `engine`, its
    /// entries authenticated with the user's secret in `secret_dir` (made there on first
    /// use); without a secret the disk cache is off.
    pub fn new(engine: &Engine, dir: Option<PathBuf>, secret_dir: Option<&Path>) -> Cache {
        let (secret, off) = match (&dir, Secret::load_or_create(secret_dir)) {
            (None, _) => (None, Some("no cache directory".to_string())),
            (Some(_), Ok(s)) => (Some(s), None),
            (Some(_), Err(e)) => (None, Some(e.to_string())),
        };
        Cache::with_secret(engine, dir.filter(|_| secret.is_some()), secret, off)
    }

    /// A cache in `dir` whose entries are tagged with `secret`.
    pub(crate) fn with_secret(
        engine: &Engine,
        dir: Option<PathBuf>,
        secret: Option<Secret>,
        off: Option<String>,
    ) -> Cache {
        let mut h = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        let dir = dir.map(|d| d.join("components"));
        Cache { dir, engine_key: format!("{:016x}", h.finish()), secret, off, functions: None }
    }

    /// This cache, with `functions` (the store the engine's compiler was given) written
    /// beside the entries after each compile, when there is a disk cache.
    pub(crate) fn with_functions(mut self, functions: Arc<Functions>) -> Cache {
        if let (Some(dir), Some(secret)) = (&self.dir, &self.secret) {
            functions.open(dir.join(format!("functions-{}", self.engine_key)), secret.clone());
        }
        self.functions = Some(functions);
        self
    }

    /// Compiles `bytes`; the functions compiled for it are then kept (under its SHA-256).
    fn compile(&self, engine: &Engine, sha256: &str, bytes: &[u8]) -> wasmtime::Result<Component> {
        let component = Component::from_binary(engine, bytes);
        if let Some(functions) = &self.functions {
            functions.keep(sha256);
        }
        component
    }

    /// Why the disk cache is not used, if it is not.
    pub fn off_reason(&self) -> Option<&str> {
        self.off.as_deref()
    }

    /// The keyed tag of `data` in `domain`, if there is a secret.
    pub(crate) fn tag(&self, domain: &str, data: &[u8]) -> Option<String> {
        self.secret.as_ref().map(|s| s.tag(domain, data))
    }

    /// Whether `tag` is `data`'s tag in `domain` under the user's secret.
    pub(crate) fn check(&self, domain: &str, data: &[u8], tag: &str) -> bool {
        self.secret.as_ref().is_some_and(|s| s.check(domain, data, tag))
    }

    /// The entry path for a component with this SHA-256.
    pub fn entry_path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{sha256}-{}-{LAYOUT}.cwasm", self.engine_key)))
    }

    /// A file kept beside the entry for this SHA-256, with extension `ext`.
    pub fn sidecar_path(&self, sha256: &str, ext: &str) -> Option<PathBuf> {
        self.entry_path(sha256).map(|p| p.with_extension(ext))
    }

    /// A file kept beside the entry for `sha256` whose first line is `tag HEX`, the keyed tag
    /// in `domain` over `sha256` and the rest; None when it is missing, damaged or its tag is
    /// not valid under this user's secret (so a planted or moved file is never taken).
    pub(crate) fn read_tagged(&self, domain: &str, sha256: &str, ext: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.sidecar_path(sha256, ext)?).ok()?;
        let split = bytes.iter().position(|&b| b == b'\n')?;
        let (first, body) = (&bytes[..split], &bytes[split + 1..]);
        let tag = std::str::from_utf8(first).ok()?.strip_prefix("tag ")?;
        self.check(domain, &bind(sha256, body), tag).then(|| body.to_vec())
    }

    /// Keeps `body` beside the entry for `sha256`, tagged as [`Cache::read_tagged`] checks
    /// (best effort: without it the next start does the work again).
    pub(crate) fn write_tagged(&self, domain: &str, sha256: &str, ext: &str, body: &[u8]) {
        if let Some(path) = self.sidecar_path(sha256, ext)
            && let Some(tag) = self.tag(domain, &bind(sha256, body))
        {
            // A precompiled built-in has no compiled entry: this may be the first file.
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = write_atomic(&path, &[format!("tag {tag}\n").as_bytes(), body].concat());
        }
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
        let mut rebuilt = None;
        if let Some(code) = crate::builtins::precompiled(sha256) {
            match deserialize_embedded(engine, code) {
                Ok(c) => return Ok((c, CacheStatus::Precompiled)),
                Err(why) => rebuilt = Some(why),
            }
        }
        let (Some(path), Some(secret)) = (self.entry_path(sha256), &self.secret) else {
            return Ok((self.compile(engine, sha256, &bytes()?)?, CacheStatus::Disabled));
        };
        let status = match verify(&path, secret) {
            Ok(true) => {
                // SAFETY: the file carries a tag made with this user's secret, which only a
                // corral of this user computes, over code it compiled itself; it is the file
                // whose tag was checked (just now, or earlier with its identity unchanged since,
                // that identity tagged too); the engine key in its name matches this engine.
                // wasmtime re-checks the header and compatibility.
                match unsafe { Component::deserialize_file(engine, &path) } {
                    Ok(c) => {
                        super::evict::mark_used(&seal_path(&path), std::time::SystemTime::now());
                        return Ok((c, CacheStatus::Hit));
                    }
                    Err(e) => CacheStatus::Rebuilt(format!("cache entry rejected by wasmtime: {e}")),
                }
            }
            Ok(false) => CacheStatus::Rebuilt(
                "cache entry failed its integrity check (no valid tag under this user's key)".into(),
            ),
            Err(_) => match rebuilt {
                Some(why) => CacheStatus::Rebuilt(why),
                None => CacheStatus::Compiled,
            },
        };
        let component = self.compile(engine, sha256, &bytes()?)?;
        let stored = component.serialize().ok().map(|cwasm| store(&path, &cwasm, secret));
        let status = match stored {
            Some(Ok(())) => {
                self.evict(sha256);
                status
            }
            _ => CacheStatus::Disabled,
        };
        Ok((component, status))
    }

    /// Keeps the cache within its size once an entry for `sha256` was stored (see
    /// [`super::evict`]).
    fn evict(&self, sha256: &str) {
        if let Some(dir) = &self.dir {
            let build = format!("-{}-{LAYOUT}", self.engine_key);
            let current = format!("{sha256}{build}");
            super::evict::prune(dir, &build, &current, super::evict::KEEP, std::time::SystemTime::now());
        }
    }
}

/// Loads a built-in's build-time artifact; `Err` says why this machine cannot use it.
fn deserialize_embedded(engine: &Engine, code: &'static [u8]) -> Result<Component, String> {
    if Engine::detect_precompiled(code) != Some(Precompiled::Component) {
        return Err("the built-in's precompiled code is not a component artifact".into());
    }
    if let Some(c) = super::in_place::load(engine, code) {
        return Ok(c);
    }
    // SAFETY: the bytes are part of this binary, written by its own build script from the
    // built-in components; wasmtime checks that they were compiled by this wasmtime under a
    // compatible Config and that this CPU has every feature the code uses, and refuses them
    // otherwise.
    unsafe { Component::deserialize(engine, code) }
        .map_err(|e| format!("the built-in's precompiled code does not suit this machine: {e}"))
}

/// What a sidecar's tag covers: the entry's SHA-256 and the file's body.
fn bind(sha256: &str, body: &[u8]) -> Vec<u8> {
    [sha256.as_bytes(), b"\n", body].concat()
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

/// An entry's seal: `tag HEX` (the entry's keyed tag) and, once checked, `stamp STAMP TAG`
/// on the next line, where TAG binds the stamp to the entry's tag under the same key.
#[derive(Debug, Default)]
struct Seal {
    tag: String,
    stamp: Option<(Stamp, String)>,
}

impl Seal {
    fn read(path: &Path) -> Seal {
        let text = std::fs::read_to_string(seal_path(path)).unwrap_or_default();
        let mut seal = Seal::default();
        for line in text.lines() {
            if let Some(d) = line.strip_prefix("tag ") {
                seal.tag = d.trim().to_string();
            } else if let Some((s, t)) = line.strip_prefix("stamp ").and_then(|r| r.rsplit_once(' ')) {
                seal.stamp = Some((Stamp(s.trim().to_string()), t.trim().to_string()));
            }
        }
        seal
    }

    fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut text = format!("tag {}\n", self.tag);
        if let Some((s, t)) = &self.stamp {
            text.push_str(&format!("stamp {} {t}\n", s.0));
        }
        write_atomic(&seal_path(path), text.as_bytes())
    }

    /// What a stamp's tag covers: the stamp and the entry's tag.
    fn stamped(stamp: &Stamp, tag: &str) -> Vec<u8> {
        format!("{}\n{tag}", stamp.0).into_bytes()
    }

    fn set_stamp(&mut self, stamp: Option<Stamp>, secret: &Secret) {
        self.stamp = stamp.map(|s| {
            let t = secret.tag(STAMP, &Seal::stamped(&s, &self.tag));
            (s, t)
        });
    }
}

/// Ok(true) if the entry's tag is valid under `secret`; Err if there is no entry. An entry
/// whose identity matches the seal's (validly tagged) stamp is not read; one that is hashed
/// and found intact is stamped (best effort), so the next start does not hash it again.
fn verify(path: &Path, secret: &Secret) -> std::io::Result<bool> {
    let meta = std::fs::metadata(path)?;
    let mut seal = Seal::read(path);
    if seal.tag.is_empty() {
        return Ok(false);
    }
    let stamp = Stamp::of(&meta);
    if let (Some(now), Some((sealed, t))) = (&stamp, &seal.stamp)
        && now == sealed
        && secret.check(STAMP, &Seal::stamped(sealed, &seal.tag), t)
    {
        return Ok(true);
    }
    let data = std::fs::read(path)?;
    if !secret.check(CODE, &data, &seal.tag) {
        return Ok(false);
    }
    if stamp.is_some() {
        seal.set_stamp(stamp, secret);
        let _ = seal.write(path);
    }
    Ok(true)
}

/// Writes the entry and its seal. The seal (tag only) goes first, so a reader that sees
/// the new entry also sees its tag; once the entry is in place it is stamped.
fn store(path: &Path, cwasm: &[u8], secret: &Secret) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let mut seal = Seal { tag: secret.tag(CODE, cwasm), stamp: None };
    seal.write(path)?;
    write_atomic(path, cwasm)?;
    let stamp = std::fs::metadata(path).ok().as_ref().and_then(Stamp::of);
    if stamp.is_some() {
        seal.set_stamp(stamp, secret);
        let _ = seal.write(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> Secret {
        Secret::from_bytes([b; 32])
    }

    fn entry(dir: &Path) -> PathBuf {
        let path = dir.join("entry.cwasm");
        store(&path, b"compiled code", &key(1)).unwrap();
        path
    }

    #[test]
    fn a_stored_entry_is_tagged_and_stamped() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        let seal = Seal::read(&path);
        assert_eq!(seal.tag, key(1).tag(CODE, b"compiled code"));
        assert_ne!(seal.tag, blake3::hash(b"compiled code").to_hex().as_str(), "keyed, not a plain digest");
        assert_eq!(seal.stamp.map(|s| s.0), Stamp::of(&std::fs::metadata(&path).unwrap()));
        assert!(verify(&path, &key(1)).unwrap());
        let names: Vec<String> = dir
            .path()
            .read_dir()
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "the entry and its seal, no temporary files: {names:?}");
    }

    #[test]
    fn another_users_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        // Restored from someone else's cache: their tag and stamp, not this user's.
        assert!(!verify(&path, &key(2)).unwrap());
    }

    #[test]
    fn a_tampered_or_planted_entry_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        // Tampered: other bytes under the old seal (a rewrite gives another stamp).
        let path = entry(dir.path());
        let other = dir.path().join("other");
        std::fs::write(&other, b"compiled cod3").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(!verify(&path, &key(1)).unwrap());
        // Planted: an entry with an unkeyed digest and a stamp that matches the planted file.
        let planted = dir.path().join("planted.cwasm");
        std::fs::write(&planted, b"foreign code").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&planted).unwrap()).unwrap();
        let digest = blake3::hash(b"foreign code").to_hex().to_string();
        let text = format!("tag {digest}\nstamp {} {digest}\n", stamp.0);
        std::fs::write(seal_path(&planted), text).unwrap();
        assert!(!verify(&planted, &key(1)).unwrap());
        // Planted with the valid tag of other bytes and a forged stamp line.
        let text = format!("tag {}\nstamp {} 00\n", key(1).tag(CODE, b"compiled code"), stamp.0);
        std::fs::write(seal_path(&planted), text).unwrap();
        assert!(!verify(&planted, &key(1)).unwrap());
    }

    #[test]
    fn a_rewritten_entry_is_hashed_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        // Rewritten in place to the same size: the change time moves on. File times advance
        // by the kernel's clock tick (up to 10 ms), so the rewrite waits past one.
        let path = entry(dir.path());
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(&path, b"compiled cod3").unwrap();
        assert!(!verify(&path, &key(1)).unwrap());
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
        let now = Stamp::of(&std::fs::metadata(&copy).unwrap());
        assert_ne!(Seal::read(&copy).stamp.map(|s| s.0), now);
        assert!(verify(&copy, &key(1)).unwrap());
        assert_eq!(Seal::read(&copy).stamp.map(|s| s.0), now);
    }

    #[test]
    fn an_entry_without_a_seal_is_refused_and_a_missing_entry_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = entry(dir.path());
        std::fs::remove_file(seal_path(&path)).unwrap();
        assert!(!verify(&path, &key(1)).unwrap());
        assert!(verify(&dir.path().join("absent.cwasm"), &key(1)).is_err());
    }

    #[test]
    fn without_a_secret_the_disk_cache_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = Cache::new(&engine, Some(dir.path().join("cache")), None);
        assert_eq!(cache.entry_path("ab"), None);
        assert!(
            cache.off_reason().is_some_and(|r| r.contains("CORRAL_STATE_DIR")),
            "{:?}",
            cache.off_reason()
        );
        let cache = Cache::new(&engine, Some(dir.path().join("cache")), Some(&dir.path().join("state")));
        assert!(cache.entry_path("ab").is_some());
        assert!(dir.path().join("state").join(super::super::secret::FILE).is_file());
    }
}
