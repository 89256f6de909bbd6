//! Running the built-ins' precompiled code where it lies in the binary.
//!
//! wasmtime loads a precompiled artifact by copying it into fresh memory and making the copy's
//! code executable: for the built-ins a session loads ahead, about 10 MB copied and held twice
//! (the binary's pages read to copy, the copy itself) before the first model request. On Linux
//! x86-64 the build places each artifact, page-aligned, in the binary's code section
//! (`builtins::CODE_IN_PLACE`), which the loader maps read-execute; wasmtime can then run it in
//! place (`Component::deserialize_raw`) provided the engine is told how code is made
//! executable: [`InPlace`] does nothing for those ranges (already executable, never written)
//! and does what wasmtime would do for everything else (code compiled at run time or mapped
//! from the cache): `mprotect` read-execute on publish, read-write on unpublish. x86-64 needs no
//! instruction-cache maintenance after code is written, which is why the target is restricted.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Mutex;
use wasmtime::component::Component;
use wasmtime::{CustomCodeMemory, Engine};

/// The artifacts running in place: (start address, the engine that loaded it, the component).
/// wasmtime registers code process-wide by its address, so one artifact can be loaded in place
/// only once: the first engine to load it keeps it for the life of the process (the runtime
/// makes one engine; tests make many), its later loads share it, and another engine's load
/// is a copy.
static LOADED: Mutex<Vec<(usize, Engine, Component)>> = Mutex::new(Vec::new());

/// The embedded artifact `code` as a component of `engine`, run in place; None where it cannot
/// be (not placed among the code, loaded in place by another engine, or refused: the caller
/// then loads a copy, which reports any refusal).
pub fn load(engine: &Engine, code: &'static [u8]) -> Option<Component> {
    if !crate::builtins::CODE_IN_PLACE {
        return None;
    }
    let at = code.as_ptr().addr();
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, owner, component)) = loaded.iter().find(|(a, ..)| *a == at) {
        return Engine::same(owner, engine).then(|| component.clone());
    }
    // SAFETY: `code` is a static of this binary that the build placed in its code section
    // (page-aligned, mapped read-execute, never written), so it outlives the component and
    // never changes; wasmtime checks that it was compiled by this wasmtime under a compatible
    // Config for features this CPU has. An engine without `InPlace` refuses it.
    let component = unsafe { Component::deserialize_raw(engine, NonNull::from(code)) }.ok()?;
    loaded.push((at, engine.clone(), component.clone()));
    Some(component)
}

/// wasmtime's code publishing for an engine that runs the embedded artifacts in place.
#[derive(Debug)]
pub struct InPlace {
    page: usize,
    /// The address ranges of the artifacts embedded in the code section.
    embedded: Vec<Range<usize>>,
}

impl InPlace {
    /// For this binary's embedded artifacts, if the build placed them among its code.
    pub fn for_this_binary() -> Option<InPlace> {
        if !crate::builtins::CODE_IN_PLACE {
            return None;
        }
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let embedded = crate::builtins::all_precompiled()
            .map(|c| c.as_ptr_range())
            .map(|r| r.start.addr()..r.end.addr());
        Some(InPlace { page, embedded: embedded.collect() })
    }

    /// Whether `ptr..ptr+len` lies inside one embedded artifact.
    fn is_embedded(&self, ptr: *const u8, len: usize) -> bool {
        let start = ptr.addr();
        let end = start.saturating_add(len);
        self.embedded.iter().any(|r| r.start <= start && end <= r.end)
    }

    fn protect(&self, ptr: *const u8, len: usize, prot: libc::c_int) -> wasmtime::Result<()> {
        // SAFETY: wasmtime passes the page-aligned text range of a code image it owns and that
        // no one else uses while it changes state (publish before any call, unpublish after
        // the last); changing its protection affects only that image.
        let r = unsafe { libc::mprotect(ptr.cast_mut().cast(), len, prot) };
        if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error().into()) }
    }
}

impl CustomCodeMemory for InPlace {
    fn required_alignment(&self) -> usize {
        self.page
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        if self.is_embedded(ptr, len) {
            return Ok(());
        }
        self.protect(ptr, len, libc::PROT_READ | libc::PROT_EXEC)
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        if self.is_embedded(ptr, len) {
            return Ok(());
        }
        self.protect(ptr, len, libc::PROT_READ | libc::PROT_WRITE)
    }
}

#[cfg(test)]
#[path = "in_place_tests.rs"]
mod tests;
