//! A plugin's compiled code. A plugin described from the compile cache (see
//! [`super::manifest`]) starts without it: the code is loaded (from the cache, or compiled
//! again if the entry went missing) the first time a tool of the plugin is called, or earlier
//! by [`super::Registry::warm_up`]'s background thread, whichever comes first. Its imports
//! are checked against the description when it is loaded.

use super::{grants, manifest};
use crate::runtime::{Cache, CacheStatus, CallState};
use crate::wit::ToolPluginPre;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use wasmtime::Engine;
use wasmtime::component::Linker;

/// What loading code needs; cheap to clone and usable from any thread.
#[derive(Clone)]
pub struct Loader {
    pub engine: Engine,
    pub linker: Arc<Linker<CallState>>,
    pub cache: Cache,
}

/// Where a component's bytes are, should its code have to be compiled again. A plugin file
/// is not kept in memory for the session (a Python component is ~18 MB): it is read again in
/// the rare case its compiled entry is gone, and must still have the same SHA-256.
pub enum Wasm {
    Embedded(&'static [u8]),
    File(PathBuf),
    Held(Vec<u8>),
}

impl Wasm {
    /// From a candidate's bytes and file.
    pub fn of(bytes: Cow<'static, [u8]>, path: Option<&Path>) -> Wasm {
        match (bytes, path) {
            (Cow::Borrowed(b), _) => Wasm::Embedded(b),
            (Cow::Owned(_), Some(p)) => Wasm::File(p.to_path_buf()),
            (Cow::Owned(v), None) => Wasm::Held(v),
        }
    }

    fn bytes(&self, sha256: &str) -> wasmtime::Result<Cow<'_, [u8]>> {
        match self {
            Wasm::Embedded(b) => Ok(Cow::Borrowed(b)),
            Wasm::Held(v) => Ok(Cow::Borrowed(v)),
            Wasm::File(p) => {
                let bytes =
                    std::fs::read(p).map_err(|e| wasmtime::format_err!("cannot read it again: {e}"))?;
                let now = super::sha256_hex(&bytes);
                if now != sha256 {
                    wasmtime::bail!(
                        "the file changed since corral started; start corral again to use the new version"
                    );
                }
                Ok(Cow::Owned(bytes))
            }
        }
    }
}

/// Where deferred code comes from.
struct Source {
    loader: Loader,
    location: String,
    sha256: String,
    wasm: Wasm,
    /// The imports the description recorded.
    imports: Vec<String>,
}

struct Loaded {
    pre: ToolPluginPre<CallState>,
    status: CacheStatus,
}

/// A plugin's code: loaded already, or loaded on first use.
pub struct Code {
    cell: OnceLock<Result<Loaded, String>>,
    source: Option<Source>,
}

impl Code {
    /// Code that is loaded already.
    pub fn ready(pre: ToolPluginPre<CallState>, status: CacheStatus) -> Code {
        Code { cell: OnceLock::from(Ok(Loaded { pre, status })), source: None }
    }

    /// Code to load on first use, from the cache entry for `sha256`, or compiled from `wasm`.
    pub fn deferred(
        loader: Loader,
        location: String,
        sha256: String,
        wasm: Wasm,
        imports: Vec<String>,
    ) -> Code {
        Code { cell: OnceLock::new(), source: Some(Source { loader, location, sha256, wasm, imports }) }
    }

    /// The code, loading it now if needed. The error says what is wrong and what to do.
    ///
    /// A caller never waits for another thread's load: if the code is not there yet it loads
    /// it itself, and the first load to finish is kept. (The background thread runs at a low
    /// priority; waiting for it on a busy machine could take long.)
    pub fn get(&self) -> Result<&ToolPluginPre<CallState>, &str> {
        let loaded = match self.cell.get() {
            Some(loaded) => loaded,
            None => {
                let mine = match &self.source {
                    Some(src) => load(src),
                    None => Err("the plugin's code is missing".into()),
                };
                self.cell.get_or_init(|| mine)
            }
        };
        match loaded {
            Ok(l) => Ok(&l.pre),
            Err(e) => Err(e),
        }
    }

    /// How the code was obtained: [`CacheStatus::Deferred`] until it is loaded.
    pub fn status(&self) -> CacheStatus {
        match self.cell.get() {
            None => CacheStatus::Deferred,
            Some(Ok(l)) => l.status.clone(),
            Some(Err(e)) => CacheStatus::Failed(e.clone()),
        }
    }

    /// Whether the code waits to be loaded.
    pub fn is_pending(&self) -> bool {
        self.cell.get().is_none()
    }
}

fn load(src: &Source) -> Result<Loaded, String> {
    let Loader { engine, linker, cache } = &src.loader;
    let (component, status) = cache
        .load_or_compile(engine, &src.sha256, || src.wasm.bytes(&src.sha256))
        .map_err(|e| format!("plugin {} cannot be loaded: {e:#}", src.location))?;
    // Compared with what the load allowed, not judged again.
    let imports = grants::imports(engine, &component, true).map(|(names, _)| names).unwrap_or_default();
    if imports != src.imports {
        // The description was not made from this component: drop it, so the next start
        // loads and describes the plugin afresh.
        manifest::forget(cache, &src.sha256);
        return Err(format!(
            "the compiled code of plugin {} does not match the description kept in the compile cache \
             (their imports differ), so it was not run; the description was removed: start corral again",
            src.location
        ));
    }
    let pre = linker
        .instantiate_pre(&component)
        .and_then(ToolPluginPre::new)
        .map_err(|e| format!("plugin {} cannot be linked: {e:#}", src.location))?;
    Ok(Loaded { pre, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_file_is_read_again_only_if_it_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.wasm");
        std::fs::write(&path, b"\0asm version one").unwrap();
        let wasm = Wasm::of(Cow::Owned(b"\0asm version one".to_vec()), Some(&path));
        assert!(matches!(wasm, Wasm::File(_)), "a file's bytes are not held for the session");
        let want = super::super::sha256_hex(b"\0asm version one");
        assert_eq!(&*wasm.bytes(&want).unwrap(), b"\0asm version one");
        std::fs::write(&path, b"\0asm version two").unwrap();
        let e = wasm.bytes(&want).unwrap_err().to_string();
        assert!(e.contains("the file changed since corral started; start corral again"), "{e}");
        std::fs::remove_file(&path).unwrap();
        let e = wasm.bytes(&want).unwrap_err().to_string();
        assert!(e.contains("cannot read it again"), "{e}");
    }

    #[test]
    fn embedded_and_held_bytes_are_used_as_they_are() {
        static EMBEDDED: &[u8] = b"built in";
        let wasm = Wasm::of(Cow::Borrowed(EMBEDDED), None);
        assert!(matches!(wasm, Wasm::Embedded(_)));
        assert_eq!(&*wasm.bytes("any").unwrap(), EMBEDDED);
        let held = Wasm::of(Cow::Owned(b"held".to_vec()), None);
        assert_eq!(&*held.bytes("any").unwrap(), b"held");
    }
}
