//! The source files under a folder that `outline` can parse: a walk that honours
//! .gitignore/.ignore (with or without git), skips hidden entries and dependency and build
//! folders, and stops at a bound.

use crate::lang::Lang;
use std::path::{Path, PathBuf};

/// Folders never surveyed: dependencies, virtual environments, build output.
pub const SKIPPED_DIRS: &[&str] =
    &["node_modules", "target", "vendor", "dist", "__pycache__", ".venv", "venv", "third_party"];
/// Entries walked before the survey stops and says so.
pub const MAX_WALK: usize = 20_000;

/// The files found, sorted by path, and whether the walk stopped at [`MAX_WALK`].
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<PathBuf>,
    pub capped: bool,
}

/// The files under `root` whose extension names a supported language.
pub fn sources(root: &Path) -> Found {
    let mut found = Found::default();
    let mut walked = 0usize;
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name().to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        })
        .build();
    for entry in walker {
        walked += 1;
        if walked > MAX_WALK {
            found.capped = true;
            break;
        }
        // An unreadable folder is left out, like the other walks do.
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_some_and(|t| t.is_file()) && Lang::known_extension(entry.path()) {
            found.files.push(entry.into_path());
        }
    }
    found.files.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn survey_keeps_sources_and_skips_ignored_hidden_and_dependency_folders() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for p in [
            "src/main.rs",
            "src/util/mod.py",
            "README.md",
            "node_modules/x/index.js",
            "target/debug/build.rs",
            ".hidden/a.go",
            "gen/out.c",
            "web/app.tsx",
        ] {
            fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            fs::write(r.join(p), "x").unwrap();
        }
        fs::write(r.join(".gitignore"), "gen/\n").unwrap();
        let found = sources(r);
        let rel: Vec<String> =
            found.files.iter().map(|p| p.strip_prefix(r).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(rel, ["src/main.rs", "src/util/mod.py", "web/app.tsx"]);
        assert!(!found.capped);
    }
}
