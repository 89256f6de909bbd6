//! The WIT contract embedded at build time, written out for authors; for JavaScript guests
//! also a world that names the WASI filesystem imports, with the WASI WIT it needs.

use super::{AuthoringError, write_atomic};
use crate::capabilities::grant::{self, CapSet};
use std::borrow::Cow;
use std::collections::HashSet;
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
    ("io.wit", include_str!("../../../wit/builtin/deps/io.wit")),
    ("clocks.wit", include_str!("../../../wit/builtin/deps/clocks.wit")),
    ("filesystem.wit", include_str!("../../../wit/builtin/deps/filesystem.wit")),
];

/// The WIT files for a plugin project, as (path relative to the WIT folder, text): the
/// contract as it is, or with `narrow`, [`narrowed`] to those capabilities.
pub fn files(js: bool, narrow: Option<CapSet>) -> Result<Vec<(PathBuf, Cow<'static, str>)>, AuthoringError> {
    let mut out: Vec<(PathBuf, Cow<'static, str>)> = match narrow {
        None => WIT_FILES.iter().map(|(name, text)| (PathBuf::from(name), Cow::Borrowed(*text))).collect(),
        Some(caps) => vec![(PathBuf::from("plugin.wit"), Cow::Owned(narrowed(js, caps)?))],
    };
    if js {
        if narrow.is_none() {
            out.push((PathBuf::from(JS_WORLD_FILE.0), Cow::Borrowed(JS_WORLD_FILE.1)));
        }
        out.extend(WASI_DEPS.iter().map(|(name, text)| (Path::new("deps").join(name), Cow::Borrowed(*text))));
    }
    Ok(out)
}

/// Writes the WIT files into `dir` (created if missing); returns the paths written.
pub fn write(dir: &Path, js: bool, narrow: Option<CapSet>) -> Result<Vec<PathBuf>, AuthoringError> {
    let mut written = Vec::new();
    for (rel, text) in files(js, narrow)? {
        let path = dir.join(rel);
        write_atomic(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// The contract as one file, narrowed to `caps`: every host function that needs a capability
/// outside `caps` is left out of its interface, and the worlds no longer import an interface
/// left with no functions. Python and JavaScript components import every function their
/// world names, so a guest built against the whole contract asks for every capability and is
/// refused at load unless granted all of them; built against this, it asks only for `caps`.
/// (Rust and C components import only the functions they call, so they need no narrowing.)
pub fn narrowed(js: bool, caps: CapSet) -> Result<String, AuthoringError> {
    let (mut resolve, world) = resolve(if js { JS_WORLD } else { TOOL_WORLD })?;
    let pkg = resolve.worlds[world]
        .package
        .ok_or_else(|| AuthoringError::Wit("the world has no package".into()))?;
    let mut emptied = HashSet::new();
    let ids: Vec<_> = resolve.packages[pkg].interfaces.values().copied().collect();
    for id in ids {
        let iface = &mut resolve.interfaces[id];
        let Some(name) = iface.name.clone() else { continue };
        let had = iface.functions.len();
        iface.functions.retain(|f, _| grant::needed_by(&name, f).is_none_or(|c| caps.contains(c)));
        if had > 0 && iface.functions.is_empty() {
            emptied.insert(id);
        }
    }
    let worlds: Vec<_> = resolve.packages[pkg].worlds.values().copied().collect();
    for w in worlds {
        resolve.worlds[w].imports.retain(|_, item| match item {
            wit_parser::WorldItem::Interface { id, .. } => !emptied.contains(id),
            _ => true,
        });
    }
    let mut printer = wit_component::WitPrinter::default();
    printer.print(&resolve, pkg, &[]).map_err(|e| AuthoringError::Wit(format!("{e:#}")))?;
    Ok(format!(
        "// Written by `corral plugin wit --capabilities {caps}`: corral's contract, with only the host\n\
         // functions those capabilities allow (and those every plugin may call). Regenerate it with\n\
         // other capabilities when the plugin needs more, and grant them to the plugin.\n\n{}",
        printer.output
    ))
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
    for (name, text) in WIT_FILES {
        map.push_str(name, *text);
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
        assert!(imports.contains(&crate::wit::interface("workspace")), "{imports:?}");
    }

    #[test]
    fn written_files_are_the_embedded_contract() {
        let dir = tempfile::tempdir().unwrap();
        let written = write(dir.path(), true, None).unwrap();
        let plugin = std::fs::read_to_string(dir.path().join("plugin.wit")).unwrap();
        let repo = std::fs::read_to_string(crate::wit::contract_file("plugin.wit")).unwrap();
        assert_eq!(plugin, repo);
        assert!(dir.path().join("deps/filesystem.wit").is_file());
        assert!(written.iter().any(|p| p.ends_with("tool-plugin-js.wit")));
        // What was written parses as a package with its deps, as componentize-js reads it.
        let mut r = wit_parser::Resolve::default();
        let (pkg, _) = r.push_dir(dir.path()).unwrap();
        assert!(r.select_world(&[pkg], Some(JS_WORLD)).is_ok());
    }

    fn imports(text: &str, deps: bool, world: &str) -> (Vec<String>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plugin.wit"), text).unwrap();
        if deps {
            for (name, t) in WASI_DEPS {
                std::fs::create_dir_all(dir.path().join("deps")).unwrap();
                std::fs::write(dir.path().join("deps").join(name), t).unwrap();
            }
        }
        let mut r = wit_parser::Resolve::default();
        let (pkg, _) = r.push_dir(dir.path()).unwrap();
        let w = r.select_world(&[pkg], Some(world)).unwrap();
        let names = r.worlds[w].imports.keys().map(|k| r.name_world_key(k)).collect();
        let ws = r.packages[pkg].interfaces["workspace"];
        (names, r.interfaces[ws].functions.keys().cloned().collect())
    }

    #[test]
    fn narrowing_leaves_out_what_the_capabilities_do_not_allow() {
        let (names, ws) = imports(&narrowed(false, CapSet::EMPTY).unwrap(), false, TOOL_WORLD);
        for gone in ["kv", "context", "http", "process"] {
            assert!(!names.iter().any(|n| n.contains(&format!("/{gone}@"))), "{gone} in {names:?}");
        }
        for kept in ["log", "workspace", "host-info", "types"] {
            assert!(names.iter().any(|n| n.contains(&format!("/{kept}@"))), "{kept} not in {names:?}");
        }
        assert_eq!(
            ws,
            ["roots", "undecodable-names"],
            "note-read, write, move and trash need workspace-write"
        );

        let caps = CapSet::parse(&["workspace-write", "http"]).unwrap();
        let (names, ws) = imports(&narrowed(true, caps).unwrap(), true, JS_WORLD);
        assert!(names.iter().any(|n| n.contains("/http@")) && !names.iter().any(|n| n.contains("/kv@")));
        assert!(names.contains(&"wasi:filesystem/preopens@0.2.12".to_string()), "{names:?}");
        assert!(ws.contains(&"write".to_string()), "{ws:?}");
    }
}
