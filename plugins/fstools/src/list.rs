//! `list_files`: paths matching a glob, newest first.

use crate::common::walk::{self, Flow, Kind};
use crate::common::{MAX_OUTPUT_BYTES, MAX_WALK_ENTRIES};
use corral_plugin_sdk::args::{opt_str, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Most paths one call returns.
pub const MAX_RESULTS: usize = 100;

pub fn spec() -> Spec {
    Spec::new(
        "list_files",
        "Find files and directories whose path matches a glob, newest first (by modification \
         time). The pattern is matched against the whole path relative to `path` (default: the \
         workspace root): `*` and `?` stay within one directory level and `**` spans any number of \
         levels, so `*.rs` only matches directly inside `path` while `**/*.rs` matches at any \
         depth; `src/**/test_*.py` and `{a,b}/*.md` also work. Directories are shown with a \
         trailing `/`. Like git, files ignored by .gitignore/.ignore are left out and `.git` is \
         never searched; other hidden files are included. Symlinked directories are listed but not \
         entered. At most 100 results; the walk stops after 20,000 entries.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Glob such as `**/*.rs` or `src/*.toml`; no `..`"
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search from (default: the workspace root)"
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    )
}

struct Hit {
    path: PathBuf,
    /// Newest first; `None` (a broken symlink) sorts last.
    mtime: Option<u128>,
    dir: bool,
    /// Its name is not UTF-8: shown escaped, and it cannot be opened.
    undecodable: bool,
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    run_with(ws, args, MAX_WALK_ENTRIES)
}

/// [`run`] with the walk stopping after `max_walk` entries.
fn run_with(ws: &dyn Workspace, args: &Value, max_walk: usize) -> Result<Output, ToolError> {
    let pattern = req_str(args, "pattern")?.trim();
    let path = opt_str(args, "path")?;
    if pattern.is_empty() {
        return Err(ToolError::invalid_args("'pattern' is empty").with_hint("try '**/*' to list everything"));
    }
    if pattern.split(['/', '\\']).any(|c| c == "..") {
        return Err(ToolError::invalid_args(format!("the pattern '{pattern}' contains '..'"))
            .with_hint("patterns look downwards only; set 'path' to the directory to start from"));
    }
    let resolver = Resolver::new(ws);
    if corral_plugin_sdk::paths::is_home_path(pattern) {
        return Err(resolver.home(pattern, "the pattern"));
    }

    // Where the walk starts: `path`, or for an absolute pattern its literal leading part.
    let (base_shown, base_pattern) = if Path::new(pattern).is_absolute() {
        let (prefix, rest) = split_literal_prefix(pattern);
        (format!("/{prefix}"), rest)
    } else {
        (path.unwrap_or(".").to_string(), pattern.to_string())
    };
    let base = resolver.resolve(&base_shown)?;
    let meta = std::fs::metadata(&base).map_err(|e| io_error(&base_shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::new(ErrorKind::InvalidArgs, format!("'{base_shown}' is not a directory"))
            .with_hint("'path' must be a directory; use read_file for a single file"));
    }

    // Literal leading directories of the pattern only narrow the walk.
    let (prefix, rest) = split_literal_prefix(&base_pattern);
    let root = if prefix.is_empty() { base.clone() } else { base.join(&prefix) };
    let dirs_only = rest.ends_with('/');
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() {
        return Err(ToolError::invalid_args(format!("the pattern '{pattern}' names no files")));
    }
    let glob = globset::GlobBuilder::new(rest)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| ToolError::invalid_args(format!("invalid glob pattern '{pattern}': {e}")))?
        .compile_matcher();
    let max_depth = if rest.contains("**") { None } else { Some(rest.split('/').count()) };

    let mut hits = Vec::new();
    let mut found: Vec<(PathBuf, Kind)> = Vec::new();
    let mut walked = 0usize;
    let mut walk_capped = false;
    // The pattern's literal directories may not exist: then nothing matches.
    walk::walk(&root, max_depth, &mut |entry| {
        walked += 1;
        if walked > max_walk {
            walk_capped = true;
            return Flow::Stop;
        }
        let Ok(rel) = entry.path.strip_prefix(&root) else { return Flow::Continue };
        if !glob.is_match(rel) {
            return Flow::Continue;
        }
        if entry.kind == Kind::Undecodable {
            if !dirs_only {
                hits.push(Hit { path: entry.path.clone(), mtime: None, dir: false, undecodable: true });
            }
            return Flow::Continue;
        }
        found.push((entry.path.clone(), entry.kind));
        Flow::Continue
    });
    // Ages and kinds after the walk, a directory's entries together (symlinks followed).
    let (paths, kinds): (Vec<PathBuf>, Vec<Kind>) = found.into_iter().unzip();
    let stats = walk::stat_all(&paths);
    for ((path, kind), stat) in paths.into_iter().zip(kinds).zip(stats) {
        match stat {
            Ok(s) if dirs_only && s.kind != Kind::Dir => {}
            Ok(s) => {
                hits.push(Hit { path, mtime: Some(s.mtime), dir: s.kind == Kind::Dir, undecodable: false })
            }
            // A dangling symlink is still a match; it sorts last.
            Err(e) if kind == Kind::Symlink && !dirs_only && e.kind() == std::io::ErrorKind::NotFound => {
                hits.push(Hit { path, mtime: None, dir: false, undecodable: false })
            }
            // Unreadable, or a symlink the sandbox refuses (it leads out of the workspace).
            Err(_) => {}
        }
    }
    hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));

    let mut out = String::new();
    let walk_note = if walk_capped {
        format!(
            "[the walk stopped after {max_walk} entries, so the results may be incomplete; \
             narrow 'path' or the pattern]\n"
        )
    } else {
        String::new()
    };
    if hits.is_empty() {
        let _ = writeln!(out, "No files match '{pattern}' in '{}'", resolver.display(&base));
        if !rest.contains("**") && !rest.contains('/') {
            let _ = writeln!(
                out,
                "[a pattern without '/' only matches entries directly inside that directory; \
                 use '**/{rest}' to search subdirectories too]"
            );
        }
        out.push_str(&walk_note);
        return Ok(Output::text(out).truncated(walk_capped));
    }
    let cap = MAX_OUTPUT_BYTES - 512;
    let mut shown = 0usize;
    for hit in hits.iter().take(MAX_RESULTS) {
        let mut line = resolver.display(&hit.path);
        if hit.dir {
            line.push('/');
        }
        if hit.undecodable {
            line.push_str(" (its name is not UTF-8, shown escaped: no tool can open it; rename it with a command to use it)");
        } else if hit.mtime.is_none() {
            line.push_str(" (broken symlink)");
        }
        if out.len() + line.len() + 1 > cap {
            break;
        }
        out.push_str(&line);
        out.push('\n');
        shown += 1;
    }
    if shown < hits.len() {
        let _ = writeln!(
            out,
            "[showing the {shown} most recently modified of {} matches; narrow the pattern or 'path' \
             to see the others]",
            hits.len()
        );
    }
    out.push_str(&walk_note);
    Ok(Output::text(out).truncated(walk_capped || shown < hits.len()))
}

/// Splits a glob into its leading literal directories and the rest, which keeps at least
/// the last component: `src/util/*.rs` gives `("src/util", "*.rs")`, `src/a.rs` gives
/// `("src", "a.rs")`. Empty and `.` components are dropped.
fn split_literal_prefix(pattern: &str) -> (String, String) {
    let trailing_slash = pattern.ends_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let literal = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .take_while(|c| !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .count();
    let mut rest = parts[literal..].join("/");
    if trailing_slash && !rest.is_empty() {
        rest.push('/');
    }
    (parts[..literal].join("/"), rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use corral_plugin_sdk::host::fake::FakeWorkspace;
    use std::fs;
    use std::time::{Duration, SystemTime};

    /// Creates `rel` (and its parents), holding its own name, `age` seconds old.
    fn touch(root: &Path, rel: &str, age: u64) {
        put(root, rel, rel, age);
    }

    fn set_dir_age(root: &Path, rel: &str, age: u64) {
        let t = SystemTime::now() - Duration::from_secs(age);
        fs::File::open(root.join(rel)).unwrap().set_modified(t).unwrap();
    }

    fn list(ws: &FakeWorkspace, args: Value) -> Result<Output, ToolError> {
        run(ws, &args)
    }

    #[test]
    fn a_home_pattern_is_refused_with_the_reason() {
        let (_dir, ws) = setup();
        let e = list(&ws, json!({"pattern": "~/projects/**"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert!(e.message.starts_with("the pattern '~/projects/**' starts with '~', the home directory"));
        assert!(list(&ws, json!({"pattern": "*.rs", "path": "~"})).is_err());
    }

    #[test]
    fn star_is_one_level_and_double_star_recurses() {
        let (dir, ws) = setup();
        touch(dir.path(), "top.rs", 30);
        touch(dir.path(), "src/lib.rs", 20);
        touch(dir.path(), "src/deep/mod.rs", 10);
        touch(dir.path(), "src/notes.txt", 5);
        assert_eq!(list(&ws, json!({"pattern": "*.rs"})).unwrap().text, "top.rs\n");
        assert_eq!(
            list(&ws, json!({"pattern": "**/*.rs"})).unwrap().text,
            "src/deep/mod.rs\nsrc/lib.rs\ntop.rs\n"
        );
        assert_eq!(list(&ws, json!({"pattern": "src/*.rs"})).unwrap().text, "src/lib.rs\n");
        assert_eq!(
            list(&ws, json!({"pattern": "*.rs", "path": "src"})).unwrap().text,
            "src/lib.rs\n",
            "paths are shown relative to the workspace root"
        );
        assert_eq!(
            list(&ws, json!({"pattern": "src/**/*.{rs,txt}"})).unwrap().text,
            "src/notes.txt\nsrc/deep/mod.rs\nsrc/lib.rs\n"
        );
    }

    #[test]
    fn newest_first_with_directories_marked() {
        let (dir, ws) = setup();
        touch(dir.path(), "old.txt", 300);
        touch(dir.path(), "new.txt", 1);
        touch(dir.path(), "mid/x", 200);
        set_dir_age(dir.path(), "mid", 100);
        assert_eq!(list(&ws, json!({"pattern": "*"})).unwrap().text, "new.txt\nmid/\nold.txt\n");
        assert_eq!(list(&ws, json!({"pattern": "*/"})).unwrap().text, "mid/\n");
    }

    #[test]
    fn dotdot_is_refused() {
        let (_dir, ws) = setup();
        let e = list(&ws, json!({"pattern": "../*.rs"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert_eq!(e.message, "the pattern '../*.rs' contains '..'");
        assert!(list(&ws, json!({"pattern": "src/../../x"})).is_err());
        let e = list(&ws, json!({"pattern": "*", "path": "../"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
    }

    #[test]
    fn absolute_patterns_are_split_into_a_root() {
        let (dir, ws) = setup();
        touch(dir.path(), "a/b/c.rs", 10);
        let root = fs::canonicalize(dir.path()).unwrap();
        let pattern = format!("{}/a/**/*.rs", root.display());
        assert_eq!(list(&ws, json!({"pattern": pattern})).unwrap().text, "a/b/c.rs\n");
        let e = list(&ws, json!({"pattern": "/etc/*.conf"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
    }

    #[test]
    fn no_match_is_said_clearly() {
        let (dir, ws) = setup();
        touch(dir.path(), "src/a.rs", 10);
        assert_eq!(
            list(&ws, json!({"pattern": "*.rs"})).unwrap().text,
            "No files match '*.rs' in '.'\n[a pattern without '/' only matches entries directly inside \
             that directory; use '**/*.rs' to search subdirectories too]\n"
        );
        assert_eq!(
            list(&ws, json!({"pattern": "nowhere/**/*.rs"})).unwrap().text,
            "No files match 'nowhere/**/*.rs' in '.'\n"
        );
    }

    #[test]
    fn bad_arguments() {
        let (dir, ws) = setup();
        touch(dir.path(), "f.txt", 10);
        assert_eq!(list(&ws, json!({})).unwrap_err().message, "missing required field 'pattern'");
        assert_eq!(list(&ws, json!({"pattern": " "})).unwrap_err().message, "'pattern' is empty");
        let e = list(&ws, json!({"pattern": "[a"})).unwrap_err();
        assert!(e.message.starts_with("invalid glob pattern '[a': "), "{}", e.message);
        let e = list(&ws, json!({"pattern": "*", "path": "f.txt"})).unwrap_err();
        assert_eq!(e.message, "'f.txt' is not a directory");
        let e = list(&ws, json!({"pattern": "*", "path": "missing"})).unwrap_err();
        assert_eq!(e.message, "'missing' does not exist");
    }

    #[test]
    fn at_most_100_results_newest_first() {
        let (dir, ws) = setup();
        for i in 0..130 {
            touch(dir.path(), &format!("f{i:03}.txt"), 1000 - i);
        }
        let out = list(&ws, json!({"pattern": "*.txt"})).unwrap();
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(lines.len(), 101);
        assert_eq!(lines[0], "f129.txt");
        assert_eq!(lines[99], "f030.txt");
        assert_eq!(
            lines[100],
            "[showing the 100 most recently modified of 130 matches; narrow the pattern or 'path' to see the others]"
        );
        assert!(out.truncated);
    }

    #[test]
    fn git_dirs_and_ignored_files_are_skipped_hidden_files_are_not() {
        let (dir, ws) = setup();
        touch(dir.path(), ".git/config", 10);
        touch(dir.path(), ".github/ci.yml", 10);
        touch(dir.path(), ".gitignore", 10);
        fs::write(dir.path().join(".gitignore"), "target/\n*.log\n").unwrap();
        touch(dir.path(), "target/out.bin", 10);
        touch(dir.path(), "debug.log", 10);
        touch(dir.path(), "main.rs", 10);
        let out = list(&ws, json!({"pattern": "**/*"})).unwrap().text;
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort();
        assert_eq!(lines, [".github/", ".github/ci.yml", ".gitignore", "main.rs"]);
        // Naming an ignored directory explicitly still lists it.
        assert_eq!(list(&ws, json!({"pattern": "target/*"})).unwrap().text, "target/out.bin\n");
        assert_eq!(list(&ws, json!({"pattern": "*", "path": "target"})).unwrap().text, "target/out.bin\n");
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_not_entered() {
        let (dir, ws) = setup();
        touch(dir.path(), "real/a.txt", 10);
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("dangling.txt")).unwrap();
        assert_eq!(
            list(&ws, json!({"pattern": "**/*.txt"})).unwrap().text,
            "real/a.txt\ndangling.txt (broken symlink)\n"
        );
        let out = list(&ws, json!({"pattern": "**/*"})).unwrap().text;
        assert!(out.contains("link/\n") && !out.contains("link/a.txt"), "{out}");
    }

    #[test]
    fn the_walk_stops_after_its_entry_limit() {
        let (dir, ws) = setup();
        for i in 0..10 {
            touch(dir.path(), &format!("d{i}/f.txt"), 10 + i);
        }
        let out = run_with(&ws, &json!({"pattern": "**/*.txt"}), 8).unwrap();
        // Entries in name order: d0/, d0/f.txt, d1/, ... so 8 entries reach d3/f.txt.
        assert_eq!(
            out.text,
            "d0/f.txt\nd1/f.txt\nd2/f.txt\nd3/f.txt\n[the walk stopped after 8 entries, so the results may be \
             incomplete; narrow 'path' or the pattern]\n"
        );
        assert!(out.truncated);
        let out = run_with(&ws, &json!({"pattern": "*.none"}), 3).unwrap();
        assert!(out.text.ends_with("[the walk stopped after 3 entries, so the results may be incomplete; narrow 'path' or the pattern]\n"));
    }

    #[test]
    fn literal_prefix_split() {
        assert_eq!(split_literal_prefix("src/util/*.rs"), ("src/util".into(), "*.rs".into()));
        assert_eq!(split_literal_prefix("./src/a.rs"), ("src".into(), "a.rs".into()));
        assert_eq!(split_literal_prefix("**/*.rs"), ("".into(), "**/*.rs".into()));
        assert_eq!(split_literal_prefix("a/{b,c}/d"), ("a".into(), "{b,c}/d".into()));
        assert_eq!(split_literal_prefix("src/"), ("".into(), "src/".into()));
    }
}
