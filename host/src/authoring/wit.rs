//! The WIT contract embedded at build time, written out for authors; for JavaScript guests
//! also a world that names the WASI filesystem imports, with the WASI WIT it needs.

use super::{AuthoringError, write_atomic};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/wit_files.rs"));

/// The world tool plugins implement.
pub const TOOL_WORLD: &str = "tool-plugin";

/// The world JavaScript tool plugins implement (`tool-plugin` plus WASI filesystem).
pub const JS_WORLD: &str = "tool-plugin-js";

/// The file holding [`JS_WORLD`], beside the contract's own files.
const JS_WORLD_FILE: (&str, &str) = (
    "tool-plugin-js.wit",
    "// Written by `corral plugin wit --js`. componentize-js lets JavaScript import only what\n\
     // its world names, and StarlingMonkey has no file API of its own, so a JavaScript tool\n\
     // reads the workspace through these WASI imports (the same ones every other guest's\n\
     // libc uses behind the scenes). It belongs to the package declared in plugin.wit.\n\
     \n\
     world tool-plugin-js {\n    \
         include tool-plugin;\n    \
         import wasi:filesystem/preopens@0.2.12;\n    \
         import wasi:filesystem/types@0.2.12;\n\
     }\n",
);

/// WASI packages the JavaScript world needs, written under `deps/`.
const WASI_DEPS: &[(&str, &str)] = &[
    ("io.wit", include_str!("wasi/io.wit")),
    ("clocks.wit", include_str!("wasi/clocks.wit")),
    ("filesystem.wit", include_str!("wasi/filesystem.wit")),
];

/// The WIT files for a plugin project, as (path relative to the WIT folder, text).
pub fn files(js: bool) -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> =
        WIT_FILES.iter().map(|(name, text)| (PathBuf::from(name), *text)).collect();
    if js {
        out.push((PathBuf::from(JS_WORLD_FILE.0), JS_WORLD_FILE.1));
        out.extend(WASI_DEPS.iter().map(|(name, text)| (Path::new("deps").join(name), *text)));
    }
    out
}

/// Writes the WIT files into `dir` (created if missing); returns the paths written.
pub fn write(dir: &Path, js: bool) -> Result<Vec<PathBuf>, AuthoringError> {
    let mut written = Vec::new();
    for (rel, text) in files(js) {
        let path = dir.join(rel);
        write_atomic(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// The contract parsed and resolved, with the id of `world`.
pub fn resolve(world: &str) -> Result<(wit_parser::Resolve, wit_parser::WorldId), AuthoringError> {
    let js = world == JS_WORLD;
    let err = |e: &dyn std::fmt::Display| AuthoringError::Wit(format!("{e:#}"));
    let mut resolve = wit_parser::Resolve::default();
    let mut deps = Vec::new();
    if js {
        for (name, text) in WASI_DEPS {
            let mut map = wit_parser::SourceMap::new();
            map.push_str(name, *text);
            deps.push(map.parse().map_err(|(_, e)| err(&e))?);
        }
    }
    let mut map = wit_parser::SourceMap::new();
    for (rel, text) in files(false) {
        map.push_str(&rel.to_string_lossy(), text);
    }
    if js {
        map.push_str(JS_WORLD_FILE.0, JS_WORLD_FILE.1);
    }
    let main = map.parse().map_err(|(_, e)| err(&e))?;
    let pkg = resolve.push_groups(main, deps).map_err(|e| err(&e))?;
    let world_id = resolve.select_world(&[pkg], Some(world)).map_err(|e| err(&e))?;
    Ok((resolve, world_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_worlds_resolve() {
        let (r, w) = resolve(TOOL_WORLD).unwrap();
        assert_eq!(r.worlds[w].name, "tool-plugin");
        let (r, w) = resolve(JS_WORLD).unwrap();
        let imports: Vec<String> = r.worlds[w].imports.keys().map(|k| r.name_world_key(k)).collect();
        assert!(imports.contains(&"wasi:filesystem/preopens@0.2.12".to_string()), "{imports:?}");
        assert!(imports.contains(&"corral:plugin/workspace@0.1.0".to_string()), "{imports:?}");
    }

    #[test]
    fn written_files_are_the_embedded_contract() {
        let dir = tempfile::tempdir().unwrap();
        let written = write(dir.path(), true).unwrap();
        let plugin = std::fs::read_to_string(dir.path().join("plugin.wit")).unwrap();
        let repo =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/plugin.wit")).unwrap();
        assert_eq!(plugin, repo);
        assert!(dir.path().join("deps/filesystem.wit").is_file());
        assert!(written.iter().any(|p| p.ends_with("tool-plugin-js.wit")));
        // What was written parses as a package with its deps, as componentize-js reads it.
        let mut r = wit_parser::Resolve::default();
        let (pkg, _) = r.push_dir(dir.path()).unwrap();
        assert!(r.select_world(&[pkg], Some(JS_WORLD)).is_ok());
    }
}
