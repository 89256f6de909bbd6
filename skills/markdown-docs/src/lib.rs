//! The `markdown-docs` skill: instructions for keeping Markdown documentation navigable, two
//! reference notes, and three scripts (toc, outline, check-links) that read the workspace
//! through the sandbox's read-only preopen.

pub mod headings;
pub mod links;
pub mod toc;

use corral_plugin_sdk::skill::{self, Embedded, FileInfo, Info, Script, Skill};
use corral_plugin_sdk::{ErrorKind, Output, ToolError};
use std::path::{Path, PathBuf};

pub const NAME: &str = "markdown-docs";
pub const DESCRIPTION: &str = "Keep Markdown documentation navigable: generate a table of contents with \
GitHub-compatible anchors, outline a long document with line numbers, and find broken relative links and \
anchors. Use when writing, restructuring or reviewing README and docs/*.md files.";

const INSTRUCTIONS: &str = include_str!("../files/instructions.md");
const FILES: Embedded = Embedded(&[
    ("references/anchors.md", include_str!("../files/references/anchors.md")),
    ("references/structure.md", include_str!("../files/references/structure.md")),
]);

/// The largest Markdown file a script reads, in bytes.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The most files `check-links` reads when it is given folders.
pub const MAX_FILES: usize = 500;

/// The scripts, as listed to the model.
pub fn scripts() -> Vec<Script> {
    vec![
        Script::new(
            "toc",
            "toc FILE [--min-level N] [--max-level N]: prints a table of contents for FILE as a Markdown \
             list of links (levels 2-3 by default when the file has one title, else 1-3), and says whether \
             an existing <!-- toc --> ... <!-- tocstop --> block is up to date.",
        ),
        Script::new(
            "outline",
            "outline FILE: prints every heading of FILE with its line number and anchor, to find sections \
             of a long document before reading them with read_file.",
        ),
        Script::new(
            "check-links",
            "check-links PATH...: checks the relative links, images and #anchors of each Markdown file \
             (folders are searched for *.md) and prints every broken one as file:line; links to other \
             sites are counted, not fetched.",
        ),
    ]
}

/// Runs script `name` with `args` against the workspace `root`.
pub fn run(name: &str, args: &[String], root: &Path) -> Result<String, ToolError> {
    let resolver = skill::resolver_for(root);
    match name {
        "toc" => {
            let (paths, min, max) = parse_args(args, &["--min-level", "--max-level"])?;
            let [path] = paths.as_slice() else {
                return Err(usage("toc takes exactly one FILE", "toc README.md --max-level 2"));
            };
            let abs = resolver.resolve(path)?;
            let text = read_markdown(&abs, path)?;
            let levels = match (min, max) {
                (None, None) => None,
                (min, max) => {
                    let min = min.unwrap_or(1);
                    let max = max.unwrap_or(6);
                    if !(1..=6).contains(&min) || !(min..=6).contains(&max) {
                        return Err(ToolError::invalid_args(format!(
                            "levels must satisfy 1 <= --min-level ({min}) <= --max-level ({max}) <= 6"
                        )));
                    }
                    Some(toc::Levels { min, max })
                }
            };
            Ok(toc::report(&resolver.display(&abs), &text, levels))
        }
        "outline" => {
            let (paths, _, _) = parse_args(args, &[])?;
            let [path] = paths.as_slice() else {
                return Err(usage("outline takes exactly one FILE", "outline docs/guide.md"));
            };
            let abs = resolver.resolve(path)?;
            let text = read_markdown(&abs, path)?;
            Ok(toc::outline(&resolver.display(&abs), &text))
        }
        "check-links" => {
            let (paths, _, _) = parse_args(args, &[])?;
            if paths.is_empty() {
                return Err(usage("check-links needs at least one PATH", "check-links README.md docs"));
            }
            let mut docs = Vec::new();
            let mut skipped = 0;
            for p in &paths {
                let abs = resolver.resolve(p)?;
                for file in markdown_files(&abs, p)? {
                    if docs.len() >= MAX_FILES {
                        skipped += 1;
                        continue;
                    }
                    let text = read_markdown(&file, &file.to_string_lossy())?;
                    docs.push((resolver.display(&file), file, text));
                }
            }
            let mut text = links::check(&links::Disk, root, &docs).text();
            if skipped > 0 {
                text.push_str(&format!(
                    "{skipped} more file(s) were not checked (limit {MAX_FILES}); name fewer folders.\n"
                ));
            }
            Ok(text)
        }
        other => Err(ToolError::new(ErrorKind::NotFound, format!("markdown-docs has no script '{other}'"))
            .with_hint("its scripts are toc, outline and check-links")),
    }
}

fn usage(what: &str, example: &str) -> ToolError {
    ToolError::invalid_args(what.to_string()).with_hint(format!("for example: {example}"))
}

/// A script's arguments: the paths, and the values of up to two numeric options.
type Parsed = (Vec<String>, Option<u8>, Option<u8>);

/// Positional arguments and the values of the (at most two) numeric options in `options`.
fn parse_args(args: &[String], options: &[&str]) -> Result<Parsed, ToolError> {
    let mut paths = Vec::new();
    let mut values: [Option<u8>; 2] = [None, None];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(i) = options.iter().position(|o| o == a) {
            let v = it.next().ok_or_else(|| ToolError::invalid_args(format!("{a} needs a number")))?;
            values[i] = Some(
                v.parse().map_err(|_| ToolError::invalid_args(format!("{a} needs a number, got '{v}'")))?,
            );
        } else if a.starts_with("--") {
            let known = if options.is_empty() { "none".to_string() } else { options.join(", ") };
            return Err(ToolError::invalid_args(format!("unknown option '{a}' (options: {known})")));
        } else {
            paths.push(a.clone());
        }
    }
    Ok((paths, values[0], values[1]))
}

fn read_markdown(abs: &Path, shown: &str) -> Result<String, ToolError> {
    let meta = std::fs::metadata(abs).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::new(ErrorKind::NotFound, format!("'{shown}' does not exist"))
        }
        _ => ToolError::new(ErrorKind::Io, format!("cannot read '{shown}': {e}")),
    })?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!("'{shown}' is a folder; name a Markdown file")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!("'{shown}' is {} bytes; the limit is {MAX_FILE_BYTES}", meta.len()),
        ));
    }
    let bytes = std::fs::read(abs)
        .map_err(|e| ToolError::new(ErrorKind::Io, format!("cannot read '{shown}': {e}")))?;
    String::from_utf8(bytes)
        .map_err(|_| ToolError::new(ErrorKind::Unsupported, format!("'{shown}' is not UTF-8 text")))
}

/// `path` itself when it is a file, else the `*.md` / `*.markdown` files under it (hidden
/// folders, `target` and `node_modules` skipped), sorted.
fn markdown_files(path: &Path, shown: &str) -> Result<Vec<PathBuf>, ToolError> {
    let meta = std::fs::metadata(path)
        .map_err(|_| ToolError::new(ErrorKind::NotFound, format!("'{shown}' does not exist")))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() && (name.ends_with(".md") || name.ends_with(".markdown")) {
                out.push(e.path());
            }
        }
        if out.len() > MAX_FILES * 2 {
            break;
        }
    }
    out.sort();
    Ok(out)
}

struct MarkdownDocs;

impl Skill for MarkdownDocs {
    fn describe() -> Result<Info, ToolError> {
        Ok(Info { name: NAME.into(), description: DESCRIPTION.into() })
    }

    fn instructions() -> Result<String, ToolError> {
        Ok(INSTRUCTIONS.to_string())
    }

    fn resources() -> Result<Vec<FileInfo>, ToolError> {
        Ok(FILES.list())
    }

    fn read_resource(path: &str) -> Result<Vec<u8>, ToolError> {
        FILES.read(path)
    }

    fn scripts() -> Result<Vec<Script>, ToolError> {
        Ok(scripts())
    }

    fn run_script(name: &str, args: &[String]) -> Result<Output, ToolError> {
        let root = skill::workspace_root()
            .ok_or_else(|| ToolError::new(ErrorKind::Internal, "the host gave this skill no workspace"))?;
        run(name, args, &root).map(Output::text)
    }
}

corral_plugin_sdk::export_skill!(MarkdownDocs);

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("docs/.hidden")).unwrap();
        std::fs::write(
            root.join("README.md"),
            "# P\n## Install\n## Use\nSee [guide](docs/guide.md#start).\n",
        )
        .unwrap();
        std::fs::write(root.join("docs/guide.md"), "# Guide\n## Begin\n[back](../README.md#use)\n").unwrap();
        std::fs::write(root.join("docs/.hidden/x.md"), "[x](nowhere.md)\n").unwrap();
        t
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn toc_reads_a_workspace_file() {
        let t = ws();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let out = run("toc", &args(&["README.md"]), &root).unwrap();
        assert!(out.starts_with("Table of contents for README.md (heading levels 2 to 3, 2 entries):\n\n- [Install](#install)\n- [Use](#use)\n"), "{out}");
        let out = run("toc", &args(&["README.md", "--min-level", "1", "--max-level", "1"]), &root).unwrap();
        assert!(out.contains("\n- [P](#p)\n"), "{out}");
        let e = run("toc", &args(&["README.md", "--max-level", "9"]), &root).unwrap_err();
        assert!(e.message.starts_with("levels must satisfy"), "{}", e.message);
        let e = run("toc", &args(&[]), &root).unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("for example: toc README.md --max-level 2"));
        let e = run("toc", &args(&["../outside.md"]), &root).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied, "{}", e.message);
        let e = run("toc", &args(&["README.md", "--depth", "2"]), &root).unwrap_err();
        assert_eq!(e.message, "unknown option '--depth' (options: --min-level, --max-level)");
    }

    #[test]
    fn check_links_walks_folders_and_skips_hidden_ones() {
        let t = ws();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let out = run("check-links", &args(&["."]), &root).unwrap();
        assert_eq!(
            out,
            "Checked 2 file(s): 2 link(s), of which 0 point to other sites and were not checked.\nBroken (1):\n\
             README.md:4: [guide](docs/guide.md#start): no heading in docs/guide.md has the anchor '#start'\n"
        );
    }

    #[test]
    fn outline_and_unknown_scripts() {
        let t = ws();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let out = run("outline", &args(&["docs/guide.md"]), &root).unwrap();
        assert_eq!(
            out,
            "Outline of docs/guide.md (3 lines, 2 headings):\n1  # Guide  (#guide)\n2    ## Begin  (#begin)\n"
        );
        let e = run("nope", &[], &root).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(scripts().len(), 3);
        assert!(DESCRIPTION.chars().count() <= 1024);
    }
}
