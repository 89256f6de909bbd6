//! `corral plugin new`: a ready-to-build plugin project in Rust, Python, JavaScript or C,
//! with the WIT from this binary, one starter tool, a build, a self-test and a README.

use super::{AuthoringError, valid_plugin_name, wit, write_atomic};
use crate::capabilities::grant::CapSet;
use std::path::{Path, PathBuf};

/// The languages a project can be created in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Js,
    C,
}

impl Lang {
    pub const NAMES: &'static [&'static str] = &["rust", "python", "js", "c"];

    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "rust" => Some(Lang::Rust),
            "python" => Some(Lang::Python),
            "js" | "javascript" => Some(Lang::Js),
            "c" => Some(Lang::C),
            _ => None,
        }
    }

    fn files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Js => JS,
            Lang::C => C,
        }
    }
}

macro_rules! files {
    ($($dir:literal / $name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../templates/", $dir, "/", $name)))),*]
    };
}

/// Files every project has.
const COMMON: &[(&str, &str)] = files!["common" / "testdata/sample.txt", "common" / "testdata/expected.txt"];
const RUST: &[(&str, &str)] = files![
    "rust" / "Cargo.toml",
    "rust" / "sdk/Cargo.toml",
    "rust" / "src/lib.rs",
    "rust" / "Makefile",
    "rust" / "README.md",
    "rust" / ".gitignore",
];
/// The guest SDK's sources, copied into a Rust project's `sdk/` (see [`vendored_sdk`]).
macro_rules! sdk {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../plugins/sdk/src/", $name)))),*]
    };
}
const SDK: &[(&str, &str)] = sdk![
    "lib.rs",
    "args.rs",
    "paths.rs",
    "skill.rs",
    "spec.rs",
    "host/mod.rs",
    "host/fake.rs",
    "host/process.rs",
    "host/snapshot.rs",
    "host/state.rs",
    "host/web.rs",
];

/// The contract crate the SDK builds on (rules host and guest share), copied into `contract/`.
macro_rules! contract {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../contract/", $name)))),*]
    };
}
const CONTRACT: &[(&str, &str)] = contract![
    "Cargo.toml",
    "src/lib.rs",
    "src/frontmatter.rs",
    "src/capability.rs",
    "src/error.rs",
    "src/paths.rs",
    "src/skill.rs",
    "src/text.rs",
    "src/words.rs"
];

/// The SDK's files under `sdk/src/`, their bindings pointed at the project's `wit/` (in
/// corral's tree they read the repository's WIT folder), and the contract crate's under
/// `contract/`.
fn vendored_sdk() -> Vec<(PathBuf, Vec<u8>)> {
    let sdk = SDK.iter().map(|(name, text)| {
        (Path::new("sdk/src").join(name), point_bindings_at_project_wit(text).into_bytes())
    });
    let contract =
        CONTRACT.iter().map(|(name, text)| (Path::new("contract").join(name), text.as_bytes().to_vec()));
    sdk.chain(contract).collect()
}

/// `text` with every `path: "..."` of a `wit_bindgen::generate!` replaced by `"../wit"`.
fn point_bindings_at_project_wit(text: &str) -> String {
    const KEY: &str = "path: \"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let value = &rest[at + KEY.len()..];
        let Some(end) = value.find('"') else { break };
        out.push_str(&rest[..at + KEY.len()]);
        out.push_str(if value[..end].contains("wit") { "../wit" } else { &value[..end] });
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

const PYTHON: &[(&str, &str)] = files![
    "python" / "app.py",
    "python" / "counting.py",
    "python" / "test_counting.py",
    "python" / "Makefile",
    "python" / "README.md",
    "python" / ".gitignore",
];
const JS: &[(&str, &str)] = files![
    "js" / "tool.js",
    "js" / "package.json",
    "js" / "Makefile",
    "js" / "README.md",
    "js" / ".gitignore",
];
const C: &[(&str, &str)] = files!["c" / "tool.c", "c" / "Makefile", "c" / "README.md", "c" / ".gitignore"];

/// Fills the placeholders: `{{name}}` (plugin name), `{{tool}}` (tool and file name), and
/// `{{version}}` (corral's version).
fn fill(text: &str, name: &str) -> String {
    text.replace("{{name}}", name)
        .replace("{{tool}}", &name.replace('-', "_"))
        .replace("{{version}}", env!("CARGO_PKG_VERSION"))
}

/// The WIT a new project gets: narrowed to `caps` when given; else, for Python and
/// JavaScript (whose components import every function their world names), narrowed to no
/// capability at all, so the starter tool loads without grants; else the whole contract.
fn narrowing(lang: Lang, caps: Option<CapSet>) -> Option<CapSet> {
    match (lang, caps) {
        (_, Some(c)) => Some(c),
        (Lang::Python | Lang::Js, None) => Some(CapSet::EMPTY),
        _ => None,
    }
}

/// Every file of a new `lang` project called `name`: (relative path, contents). `caps`: the
/// capabilities its WIT offers (see [`narrowing`]).
pub fn project_files(
    name: &str,
    lang: Lang,
    caps: Option<CapSet>,
) -> Result<Vec<(PathBuf, Vec<u8>)>, AuthoringError> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = COMMON
        .iter()
        .chain(lang.files())
        .map(|(path, text)| (PathBuf::from(path), fill(text, name).into_bytes()))
        .collect();
    if lang == Lang::Rust {
        out.extend(vendored_sdk());
    }
    for (rel, text) in wit::files(lang == Lang::Js, narrowing(lang, caps))? {
        out.push((Path::new("wit").join(rel), text.as_bytes().to_vec()));
    }
    Ok(out)
}

/// Creates the project in `dir`, which must not exist or be empty. The files are written
/// to a temporary folder beside it that is renamed into place, so a failure leaves nothing.
pub fn create(
    dir: &Path,
    name: &str,
    lang: Lang,
    caps: Option<CapSet>,
) -> Result<Vec<PathBuf>, AuthoringError> {
    if !valid_plugin_name(name) {
        return Err(AuthoringError::BadName(name.to_string()));
    }
    let is_empty_dir = |d: &Path| std::fs::read_dir(d).map(|mut e| e.next().is_none()).unwrap_or(false);
    if dir.exists() && !is_empty_dir(dir) {
        return Err(AuthoringError::Exists(dir.to_path_buf()));
    }
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let werr = |source| AuthoringError::Write { path: dir.to_path_buf(), source };
    std::fs::create_dir_all(parent).map_err(werr)?;
    let staging = parent.join(format!(".{name}.corral-new-{}", std::process::id()));
    let files = project_files(name, lang, caps)?;
    let result = (|| {
        for (rel, bytes) in &files {
            write_atomic(&staging.join(rel), bytes)?;
        }
        if dir.exists() {
            std::fs::remove_dir(dir).map_err(werr)?;
        }
        std::fs::rename(&staging, dir).map_err(werr)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result?;
    Ok(files.into_iter().map(|(rel, _)| dir.join(rel)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_everywhere() {
        for lang in Lang::NAMES.iter().map(|l| Lang::parse(l).unwrap()) {
            for (path, bytes) in project_files("line-stats", lang, None).unwrap() {
                if path.starts_with("sdk/src") {
                    continue; // copied as they are, not filled
                }
                let text = String::from_utf8(bytes).unwrap();
                assert!(!text.contains("{{"), "{lang:?} {}: unfilled placeholder", path.display());
            }
        }
        let files = project_files("line-stats", Lang::Rust, None).unwrap();
        let cargo = files.iter().find(|(p, _)| p == Path::new("Cargo.toml")).unwrap();
        assert!(String::from_utf8_lossy(&cargo.1).contains("name = \"line-stats\""));
        let lib = files.iter().find(|(p, _)| p == Path::new("src/lib.rs")).unwrap();
        assert!(String::from_utf8_lossy(&lib.1).contains("\"line_stats\""));
    }

    /// The Rust project builds on the SDK: every source file of plugins/sdk is copied, its
    /// bindings read the project's wit/, and its manifest asks for the dependency versions
    /// corral's own plugins build with.
    #[test]
    fn rust_projects_carry_the_sdk() {
        let files = project_files("x", Lang::Rust, None).unwrap();
        let text = |file: &str| {
            files
                .iter()
                .find(|(p, _)| p == Path::new(file))
                .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        };
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk/src");
        let mut on_disk = Vec::new();
        for e in walkdir(&sdk) {
            on_disk.push(e.strip_prefix(&sdk).unwrap().to_string_lossy().into_owned());
        }
        on_disk.sort();
        let mut copied: Vec<String> = SDK.iter().map(|(n, _)| n.to_string()).collect();
        copied.sort();
        assert_eq!(copied, on_disk, "template.rs's SDK list must name every file of plugins/sdk/src");
        let contract = Path::new(env!("CARGO_MANIFEST_DIR")).join("../contract");
        let mut on_disk: Vec<String> = walkdir(&contract)
            .into_iter()
            .map(|p| p.strip_prefix(&contract).unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut copied: Vec<String> = CONTRACT.iter().map(|(n, _)| n.to_string()).collect();
        copied.sort();
        assert_eq!(copied, on_disk, "template.rs's CONTRACT list must name every file of contract/");
        let sdk_manifest: toml::Value = toml::from_str(&text("sdk/Cargo.toml").unwrap()).unwrap();
        assert_eq!(sdk_manifest["dependencies"]["corral-contract"]["path"].as_str(), Some("../contract"));
        for (name, _) in SDK {
            let code = text(&format!("sdk/src/{name}")).unwrap();
            for (at, _) in code.match_indices("path: \"") {
                let value = code[at + 7..].split('"').next().unwrap_or("");
                assert!(!value.contains("wit") || value == "../wit", "sdk/src/{name}: {value}");
            }
        }
        assert!(text("sdk/src/lib.rs").unwrap().contains("path: \"../wit\""));
        assert!(text("wit/plugin.wit").is_some() || files.iter().any(|(p, _)| p.starts_with("wit")));
        #[allow(clippy::disallowed_methods)]
        let plugins: toml::Value =
            toml::from_str(&std::fs::read_to_string(sdk.join("../../Cargo.toml")).unwrap()).unwrap();
        let manifest: toml::Value = toml::from_str(&text("sdk/Cargo.toml").unwrap()).unwrap();
        for dep in ["wit-bindgen", "serde", "serde_json"] {
            let want = &plugins["workspace"]["dependencies"][dep];
            let have = &manifest["dependencies"][dep];
            let version = |v: &toml::Value| v.get("version").cloned().unwrap_or_else(|| v.clone());
            assert_eq!(version(have), version(want), "{dep}");
            assert_eq!(have.get("features"), want.get("features"), "{dep}");
        }
    }

    fn walkdir(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let entries = std::fs::read_dir(dir).unwrap();
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() { out.extend(walkdir(&p)) } else { out.push(p) }
        }
        out
    }

    #[test]
    fn js_projects_get_the_wasi_world() {
        let files = |lang| project_files("x", lang, None).unwrap();
        let text = |lang, file: &str| {
            files(lang)
                .into_iter()
                .find(|(p, _)| p == Path::new(file))
                .map(|(_, b)| String::from_utf8(b).unwrap())
        };
        assert!(text(Lang::Js, "wit/plugin.wit").unwrap().contains("world tool-plugin-js {"));
        assert!(text(Lang::Js, "wit/deps/io.wit").is_some());
        assert!(text(Lang::C, "wit/plugin.wit").is_some() && text(Lang::C, "wit/deps/io.wit").is_none());
    }

    #[test]
    fn python_and_js_projects_get_a_narrowed_contract() {
        let wit = |lang, caps| {
            let files = project_files("x", lang, caps).unwrap();
            String::from_utf8(files.into_iter().find(|(p, _)| p == Path::new("wit/plugin.wit")).unwrap().1)
                .unwrap()
        };
        for lang in [Lang::Python, Lang::Js] {
            let text = wit(lang, None);
            assert!(text.contains("corral plugin wit --capabilities none"), "{lang:?}");
            assert!(!text.contains("import http;") && !text.contains("import process;"), "{lang:?}");
        }
        let full = std::fs::read_to_string(crate::wit::contract_file("plugin.wit")).unwrap();
        assert_eq!(wit(Lang::Rust, None), full);
        assert!(wit(Lang::Python, Some(CapSet::parse(&["kv"]).unwrap())).contains("import kv;"));
    }

    #[test]
    fn create_refuses_bad_names_and_busy_folders_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let e = create(&tmp.path().join("p"), "Bad Name", Lang::C, None).unwrap_err().to_string();
        assert!(e.contains("invalid plugin name"), "{e}");
        let busy = tmp.path().join("busy");
        std::fs::create_dir_all(&busy).unwrap();
        std::fs::write(busy.join("keep.txt"), "mine").unwrap();
        let e = create(&busy, "busy", Lang::C, None).unwrap_err().to_string();
        assert!(e.contains("already exists and is not empty"), "{e}");
        assert_eq!(std::fs::read_to_string(busy.join("keep.txt")).unwrap(), "mine");
        let made = create(&tmp.path().join("ok"), "ok", Lang::Python, None).unwrap();
        assert!(made.iter().all(|p| p.is_file()));
        let names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into())
            .collect();
        assert!(names.iter().all(|n| !n.contains("corral-new")), "{names:?}");
    }
}
