//! The contract's guarantees, checked: the frozen folder of each released version is unchanged,
//! every item is documented (without backslashes), and the bindings' folder is [`VERSION`]'s.

use super::VERSION;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// SHA-256 over the `*.wit` files of `wit/0.1/` (name, NUL, text, NUL; sorted by name), as
/// released. Plugins built against 0.1 keep loading only as long as this does not change.
const FROZEN_0_1: &str = "6a80522caf85ab406966e5192f2e19881ae2e49c52f6ee12616b2be37fd2d9aa";

fn folder(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../wit").join(version)
}

/// The digest of a version folder's `*.wit` files.
fn digest(version: &str) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder(version))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wit"))
        .collect();
    files.sort();
    let mut hash = Sha256::new();
    for f in files {
        hash.update(f.file_name().unwrap().to_string_lossy().as_bytes());
        hash.update([0]);
        #[allow(clippy::disallowed_methods)] // the repository's own files, not a workspace's
        hash.update(std::fs::read(&f).unwrap());
        hash.update([0]);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_released_0_1_contract_is_frozen() {
    assert_eq!(
        digest("0.1"),
        FROZEN_0_1,
        "wit/0.1/ changed. 0.1 is frozen: plugins built against it must keep loading, so its WIT \
         (even a doc comment) does not change. Add a new version instead: copy it to wit/0.2/, \
         make the change there and follow docs/wit-versions.md. (Only if this change was never \
         released may the digest here be updated.)"
    );
}

fn resolved() -> (wit_parser::Resolve, wit_parser::PackageId) {
    let mut resolve = wit_parser::Resolve::default();
    let (pkg, _) = resolve.push_dir(folder(&VERSION.folder())).unwrap();
    (resolve, pkg)
}

#[test]
fn the_bindings_folder_holds_the_version_corral_names() {
    let (resolve, pkg) = resolved();
    let name = &resolve.packages[pkg].name;
    assert_eq!(format!("{}:{}", name.namespace, name.name), super::PACKAGE);
    assert_eq!(name.version.as_ref().map(|v| v.to_string()), Some(VERSION.to_string()));
    // The path in the bindgen! calls of mod.rs is a literal: it must be this folder.
    let src = include_str!("mod.rs");
    let path = format!("path: \"../wit/{}\"", VERSION.folder());
    assert_eq!(src.matches(&path).count(), 2, "both bindgen! calls read {path}");
}

#[test]
fn every_item_is_documented_without_backslashes() {
    let (resolve, pkg) = resolved();
    let mut missing = Vec::new();
    let mut check = |what: String, docs: &wit_parser::Docs| match &docs.contents {
        None => missing.push(format!("{what}: no doc comment")),
        // The Python bindings put doc comments in docstrings, where a backslash is an escape.
        Some(text) if text.contains('\\') => missing.push(format!("{what}: a backslash in its doc")),
        Some(_) => {}
    };
    let package = &resolve.packages[pkg];
    for (name, id) in &package.interfaces {
        let iface = &resolve.interfaces[*id];
        check(format!("interface {name}"), &iface.docs);
        for (fname, f) in &iface.functions {
            check(format!("{name}.{fname}"), &f.docs);
        }
        for (tname, tid) in &iface.types {
            let ty = &resolve.types[*tid];
            use wit_parser::TypeDefKind as K;
            match &ty.kind {
                // A `use` of another interface's type: documented where it is defined.
                K::Type(_) => continue,
                K::Record(r) => {
                    for field in &r.fields {
                        check(format!("{name}.{tname}.{}", field.name), &field.docs);
                    }
                }
                K::Enum(e) => {
                    for case in &e.cases {
                        check(format!("{name}.{tname}.{}", case.name), &case.docs);
                    }
                }
                K::Variant(v) => {
                    for case in &v.cases {
                        check(format!("{name}.{tname}.{}", case.name), &case.docs);
                    }
                }
                K::Flags(fl) => {
                    for flag in &fl.flags {
                        check(format!("{name}.{tname}.{}", flag.name), &flag.docs);
                    }
                }
                _ => {}
            }
            check(format!("{name}.{tname}"), &ty.docs);
        }
    }
    for (name, id) in &package.worlds {
        check(format!("world {name}"), &resolve.worlds[*id].docs);
    }
    assert!(missing.is_empty(), "undocumented WIT items:\n{}", missing.join("\n"));
}

#[test]
fn every_item_is_gated_since_a_version() {
    let (resolve, pkg) = resolved();
    let mut ungated = Vec::new();
    let mut check = |what: String, s: &wit_parser::Stability| {
        if !matches!(s, wit_parser::Stability::Stable { .. }) {
            ungated.push(what);
        }
    };
    let package = &resolve.packages[pkg];
    for (name, id) in &package.interfaces {
        let iface = &resolve.interfaces[*id];
        check(format!("interface {name}"), &iface.stability);
        for (fname, f) in &iface.functions {
            check(format!("{name}.{fname}"), &f.stability);
        }
        for (tname, tid) in &iface.types {
            check(format!("{name}.{tname}"), &resolve.types[*tid].stability);
        }
    }
    for (name, id) in &package.worlds {
        let world = &resolve.worlds[*id];
        check(format!("world {name}"), &world.stability);
        for (key, item) in world.imports.iter().chain(&world.exports) {
            check(format!("world {name}: {}", resolve.name_world_key(key)), item.stability(&resolve));
        }
    }
    assert!(ungated.is_empty(), "items without @since(version = ...):\n{}", ungated.join("\n"));
}
