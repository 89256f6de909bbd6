//! Turns a core WebAssembly module built against WASI preview 1 (clang + wasi-libc) into a
//! component: `wit-component` with the preview-1 reactor adapter of this wasmtime release.

use super::AuthoringError;
use std::path::Path;
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};

/// What the first eight bytes of a WebAssembly binary say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    Module,
    Component,
    NotWasm,
}

/// Reads the preamble: `\0asm`, then the version and layer fields.
pub fn binary_kind(bytes: &[u8]) -> BinaryKind {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => BinaryKind::Module,
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => BinaryKind::Component,
        _ => BinaryKind::NotWasm,
    }
}

/// The component made from the core module `core` (read from `path`, named in errors).
pub fn componentize(path: &Path, core: &[u8]) -> Result<Vec<u8>, AuthoringError> {
    match binary_kind(core) {
        BinaryKind::Module => {}
        BinaryKind::Component => return Err(AuthoringError::AlreadyComponent { path: path.to_path_buf() }),
        BinaryKind::NotWasm => return Err(AuthoringError::NotWasm { path: path.to_path_buf() }),
    }
    let fail =
        |e: anyhow::Error| AuthoringError::Componentize { path: path.to_path_buf(), why: format!("{e:#}") };
    let component = wit_component::ComponentEncoder::default()
        .validate(true)
        .module(core)
        .map_err(fail)?
        .adapter(WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        .map_err(fail)?
        .encode()
        .map_err(fail)?;
    let exports = exported_interfaces(&component).map_err(fail)?;
    if !exports.iter().any(|e| e.starts_with("corral:plugin/")) {
        return Err(fail(anyhow::anyhow!(
            "it exports no corral:plugin interface (exports: {})",
            if exports.is_empty() { "none".to_string() } else { exports.join(", ") }
        )));
    }
    Ok(component)
}

/// The names of the interfaces a component exports, from its embedded type.
fn exported_interfaces(component: &[u8]) -> anyhow::Result<Vec<String>> {
    let wit_component::DecodedWasm::Component(resolve, world) = wit_component::decode(component)? else {
        anyhow::bail!("the encoder did not produce a component");
    };
    Ok(resolve.worlds[world].exports.keys().map(|k| resolve.name_world_key(k)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_are_told_apart() {
        assert_eq!(binary_kind(b"\0asm\x01\0\0\0rest"), BinaryKind::Module);
        assert_eq!(binary_kind(b"\0asm\x0d\0\x01\0rest"), BinaryKind::Component);
        assert_eq!(binary_kind(b"\0asm"), BinaryKind::NotWasm);
        assert_eq!(binary_kind(b"#!/bin/sh\n"), BinaryKind::NotWasm);
    }

    #[test]
    fn wrong_inputs_get_clear_errors() {
        let p = Path::new("x.wasm");
        let e = componentize(p, b"\0asm\x0d\0\x01\0").unwrap_err().to_string();
        assert!(e.contains("already a component"), "{e}");
        let e = componentize(p, b"hello").unwrap_err().to_string();
        assert!(e.contains("not a WebAssembly module"), "{e}");
        // A valid module without the world's type section cannot be made a component.
        let e = componentize(p, b"\0asm\x01\0\0\0").unwrap_err().to_string();
        assert!(e.contains("cannot make a component of x.wasm") && e.contains("_component_type.o"), "{e}");
    }
}
