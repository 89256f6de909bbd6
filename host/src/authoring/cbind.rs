//! C bindings for the tool-plugin world, generated in-process with the `wit-bindgen-c` crate
//! (the generator behind `wit-bindgen c`), so a C plugin needs only clang, wasi-libc and corral.

use super::{AuthoringError, wit, write_atomic};
use std::path::{Path, PathBuf};

/// The generated files for `world`: `<world>.h`, `<world>.c` and `<world>_component_type.o`.
pub fn generate(world: &str) -> Result<Vec<(String, Vec<u8>)>, AuthoringError> {
    let (mut resolve, world_id) = wit::resolve(world)?;
    let mut files = wit_bindgen_core::Files::default();
    let mut generator = wit_bindgen_c::Opts::default().build();
    generator
        .generate(&mut resolve, world_id, &mut files)
        .map_err(|e| AuthoringError::Bindings(format!("{e:#}")))?;
    Ok(files.iter().map(|(name, bytes)| (name.to_string(), bytes.to_vec())).collect())
}

/// Writes the C bindings of the tool-plugin world into `dir`; returns the paths written.
pub fn write(dir: &Path) -> Result<Vec<PathBuf>, AuthoringError> {
    let mut written = Vec::new();
    for (name, bytes) in generate(wit::TOOL_WORLD)? {
        let path = dir.join(&name);
        write_atomic(&path, &bytes)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_name_the_export_and_the_imports() {
        let files = generate(wit::TOOL_WORLD).unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["tool_plugin.c", "tool_plugin.h", "tool_plugin_component_type.o"]);
        let header = String::from_utf8(files[1].1.clone()).unwrap();
        assert!(header.contains("exports_corral_plugin_tool_describe"), "the export is declared");
        assert!(header.contains("corral_plugin_log_log"), "the log import is declared");
        // The object file carries the world's type for wit-component.
        assert_eq!(&files[2].1[..4], b"\0asm");
    }
}
