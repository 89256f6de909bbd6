//! The files of a skill folder: the listing (dot entries skipped, bounded depth and count),
//! the resource path rules, and the scripts under `scripts/` with the program that runs each.

use corral_plugin_sdk::skill::{FileInfo, Script};
use corral_plugin_sdk::{ErrorKind, ToolError};
use std::path::Path;

/// How deep the listing goes below the folder.
pub const MAX_DEPTH: usize = 4;
/// The most files listed.
pub const MAX_FILES: usize = 500;
/// The largest resource returned, in bytes.
pub const MAX_RESOURCE_BYTES: u64 = 1024 * 1024;
/// The folder whose files are scripts.
pub const SCRIPTS_DIR: &str = "scripts";

/// Every file of the skill except `SKILL.md`, sorted by path.
pub fn list(dir: &Path) -> Result<Vec<FileInfo>, ToolError> {
    let mut out = Vec::new();
    walk(dir, "", 0, &mut out).map_err(|e| {
        ToolError::new(ErrorKind::Io, format!("cannot list the skill folder {}: {e}", dir.display()))
    })?;
    out.retain(|f| f.path != "SKILL.md");
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<FileInfo>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= MAX_FILES {
            return Ok(());
        }
        let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
        if name.starts_with('.') {
            continue;
        }
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        // Follows links that stay inside the folder; the preopen refuses the others.
        let Ok(meta) = std::fs::metadata(e.path()) else { continue };
        if meta.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(&e.path(), &path, depth + 1, out)?;
            }
        } else if meta.is_file() {
            out.push(FileInfo { path, size: meta.len() });
        }
    }
    Ok(())
}

/// Checks a resource path from the model: relative, `/`-separated, no `.`/`..` parts, no
/// hidden parts. Returns it without a leading `./`.
pub fn check_path(path: &str) -> Result<&str, ToolError> {
    let p = path.trim();
    let p = p.strip_prefix("./").unwrap_or(p);
    let bad = |why: &str| ToolError::invalid_args(format!("invalid resource path '{path}': {why}"));
    if p.is_empty() {
        return Err(bad("it is empty"));
    }
    if p.starts_with('/') || p.starts_with('\\') || p.contains('\0') {
        return Err(bad("use a path relative to the skill, as listed"));
    }
    if p.split(['/', '\\']).any(|part| part == ".." || part == "." || part.is_empty()) {
        return Err(bad("'.' and '..' parts are not allowed"));
    }
    if p.split('/').any(|part| part.starts_with('.')) {
        return Err(bad("hidden files are not part of a skill"));
    }
    Ok(p)
}

/// Reads one resource of the skill in `dir`.
pub fn read(dir: &Path, path: &str) -> Result<Vec<u8>, ToolError> {
    let rel = check_path(path)?;
    let full = dir.join(rel);
    let meta = std::fs::metadata(&full).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::new(ErrorKind::NotFound, format!("this skill has no file '{rel}'"))
        }
        _ => ToolError::new(ErrorKind::Io, format!("cannot read '{rel}': {e}")),
    })?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "'{rel}' is a folder; load the files in it by their paths"
        )));
    }
    if meta.len() > MAX_RESOURCE_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!("'{rel}' is {} bytes; resources are served up to {MAX_RESOURCE_BYTES} bytes", meta.len()),
        ));
    }
    std::fs::read(&full).map_err(|e| ToolError::new(ErrorKind::Io, format!("cannot read '{rel}': {e}")))
}

/// The scripts: every listed file under `scripts/`, described by its leading comment.
pub fn scripts(dir: &Path, files: &[FileInfo]) -> Vec<Script> {
    files
        .iter()
        .filter(|f| f.path.starts_with(&format!("{SCRIPTS_DIR}/")))
        .map(|f| {
            let head = read_head(&dir.join(&f.path));
            let what = leading_comment(&head);
            let runner = match program_for(&f.path, &head) {
                Some(p) => format!("runs with {p}"),
                None => "cannot be run: it has no '#!' line and an unknown extension".to_string(),
            };
            let description = if what.is_empty() {
                format!("No description ({runner}); read it with the load action to see what it does.")
            } else {
                format!("{what} ({runner}.)")
            };
            Script { name: f.path.clone(), description }
        })
        .collect()
}

/// The first 4 KB of a file, as text.
pub fn read_head(path: &Path) -> String {
    use std::io::Read;
    let mut buf = vec![0u8; 4096];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut buf)).unwrap_or(0);
    buf.truncate(n);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The comment block at the top of a script (after any `#!` line), as one line.
pub fn leading_comment(head: &str) -> String {
    let mut words = Vec::new();
    for line in head.lines().skip_while(|l| l.starts_with("#!")) {
        let t = line.trim();
        let text = t.strip_prefix("//").or_else(|| t.strip_prefix('#'));
        match text {
            Some(text) => words.push(text.trim().to_string()),
            None => break,
        }
    }
    let joined = words.into_iter().filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    let mut s: String = joined.chars().take(300).collect();
    if joined.chars().count() > 300 {
        s.push_str("...");
    }
    s
}

/// The program that runs a script: from its `#!` line (`/usr/bin/env X` gives X), else from
/// its extension.
pub fn program_for(path: &str, head: &str) -> Option<String> {
    if let Some(line) = head.lines().next().and_then(|l| l.strip_prefix("#!")) {
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let base = first.rsplit('/').next().unwrap_or(first);
        if base == "env" {
            return words.find(|w| !w.starts_with('-')).map(str::to_string);
        }
        return Some(base.to_string());
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    let program = match ext {
        "sh" => "sh",
        "bash" => "bash",
        "py" => "python3",
        "js" | "mjs" => "node",
        "rb" => "ruby",
        "pl" => "perl",
        _ => return None,
    };
    Some(program.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::create_dir_all(d.join("references/deep/er/still/too")).unwrap();
        std::fs::create_dir_all(d.join("scripts")).unwrap();
        std::fs::create_dir_all(d.join(".git")).unwrap();
        std::fs::write(d.join("SKILL.md"), "---\n").unwrap();
        std::fs::write(d.join("references/guide.md"), "guide").unwrap();
        std::fs::write(d.join("references/deep/er/still/too/far.md"), "x").unwrap();
        std::fs::write(d.join(".hidden"), "x").unwrap();
        std::fs::write(d.join(".git/config"), "x").unwrap();
        std::fs::write(
            d.join("scripts/stat.sh"),
            "#!/bin/sh\n# Prints the diff stat.\n# Args: BASE\ngit diff --stat \"$1\"\n",
        )
        .unwrap();
        std::fs::write(d.join("scripts/tool.py"), "print(1)\n").unwrap();
        std::fs::write(d.join("scripts/data.bin"), "\0\0").unwrap();
        t
    }

    #[test]
    fn listing_skips_skill_md_hidden_entries_and_deep_files() {
        let t = tree();
        let l: Vec<String> = list(t.path()).unwrap().into_iter().map(|f| f.path).collect();
        assert_eq!(l, ["references/guide.md", "scripts/data.bin", "scripts/stat.sh", "scripts/tool.py"]);
    }

    #[test]
    fn listing_stops_at_the_file_cap() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..MAX_FILES + 5 {
            std::fs::write(t.path().join(format!("f{i:04}")), "x").unwrap();
        }
        assert_eq!(list(t.path()).unwrap().len(), MAX_FILES);
    }

    #[test]
    fn resource_paths_must_stay_inside_the_skill() {
        assert_eq!(check_path("./references/guide.md").unwrap(), "references/guide.md");
        for bad in ["", "/etc/passwd", "../x", "references/../../x", "a//b", "a/./b", ".git/config", "\\x"] {
            let e = check_path(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidArgs, "{bad}");
            assert!(e.message.starts_with(&format!("invalid resource path '{bad}'")), "{}", e.message);
        }
    }

    #[test]
    fn reading_resources() {
        let t = tree();
        assert_eq!(read(t.path(), "references/guide.md").unwrap(), b"guide");
        let e = read(t.path(), "references/none.md").unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::NotFound, "this skill has no file 'references/none.md'")
        );
        let e = read(t.path(), "references").unwrap_err();
        assert!(e.message.contains("is a folder"), "{}", e.message);
        std::fs::write(t.path().join("big"), vec![b'x'; MAX_RESOURCE_BYTES as usize + 1]).unwrap();
        assert_eq!(read(t.path(), "big").unwrap_err().kind, ErrorKind::TooLarge);
    }

    #[test]
    fn scripts_are_described_by_their_leading_comment() {
        let t = tree();
        let files = list(t.path()).unwrap();
        let s = scripts(t.path(), &files);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["scripts/data.bin", "scripts/stat.sh", "scripts/tool.py"]);
        assert_eq!(s[1].description, "Prints the diff stat. Args: BASE (runs with sh.)");
        assert!(s[2].description.starts_with("No description (runs with python3)"), "{}", s[2].description);
        assert!(s[0].description.contains("cannot be run"), "{}", s[0].description);
    }

    #[test]
    fn the_program_comes_from_the_shebang_or_the_extension() {
        assert_eq!(program_for("x", "#!/usr/bin/env python3\n").as_deref(), Some("python3"));
        assert_eq!(program_for("x", "#!/usr/bin/env -S node --flag\n").as_deref(), Some("node"));
        assert_eq!(program_for("x.py", "#!/bin/bash -e\n").as_deref(), Some("bash"));
        assert_eq!(program_for("x.sh", "echo\n").as_deref(), Some("sh"));
        assert_eq!(program_for("x.mjs", "").as_deref(), Some("node"));
        assert_eq!(program_for("x.exe", ""), None);
        assert_eq!(program_for("noext", ""), None);
    }
}
