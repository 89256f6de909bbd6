//! `file_search`: fuzzy file-name search over the workspace, ranked like an editor's
//! "go to file" (nucleo's path scoring), honouring .gitignore/.ignore through the shared walk.

use crate::common::walk::{self, Flow, Kind};
use corral_plugin_sdk::args::{opt_str, opt_u64, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::Resolver;
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Results shown when `limit` is not given.
const DEFAULT_LIMIT: u64 = 20;
/// The most results one call returns.
const MAX_LIMIT: u64 = 200;
/// Entries walked before the search stops and says so.
const MAX_WALK: usize = 200_000;

pub fn spec() -> Spec {
    Spec::new(
        "file_search",
        "Find files by fuzzy name, like an editor's \"go to file\": `query` letters must appear in order in the \
         path (`mdrs` finds `src/model.rs`); space-separated words must all match. Best matches first. \
         Files ignored by .gitignore/.ignore are skipped.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Part of the file name or path, e.g. `agent loop` or `cfgkeys`."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Most results (default 20)."},
                "path": {"type": "string", "description": "Directory to search (default: the workspace root)."}
            },
            "required": ["query"]
        }),
    )
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    run_with(ws, args, MAX_WALK)
}

fn run_with(ws: &dyn Workspace, args: &Value, max_walk: usize) -> Result<Output, ToolError> {
    let query = req_str(args, "query")?.trim();
    if query.is_empty() {
        return Err(ToolError::invalid_args("'query' is empty").with_hint("give part of a file name"));
    }
    let limit = match opt_u64(args, "limit")? {
        None | Some(0) => DEFAULT_LIMIT,
        Some(n) => n.min(MAX_LIMIT),
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let resolver = Resolver::new(ws);
    let path = opt_str(args, "path")?.filter(|p| !p.trim().is_empty()).unwrap_or(".");
    let root = resolver.resolve(path)?;
    let mut files: Vec<String> = Vec::new();
    let mut capped = false;
    let opened = walk::walk(&root, None, &mut |entry| {
        if files.len() >= max_walk {
            capped = true;
            return Flow::Stop;
        }
        if matches!(entry.kind, Kind::File | Kind::Symlink)
            && let Ok(rel) = entry.path.strip_prefix(&root)
        {
            files.push(rel.to_string_lossy().into_owned());
        }
        Flow::Continue
    });
    if !opened {
        return Err(ToolError::new(ErrorKind::InvalidArgs, format!("'{path}' is not a directory"))
            .with_hint("'path' must be a directory inside the workspace"));
    }
    let ranked = rank(query, &files);
    let total = ranked.len();
    let shown_prefix = if path == "." { String::new() } else { format!("{}/", resolver.display(&root)) };
    let mut text = String::new();
    for name in ranked.iter().take(limit) {
        text.push_str(&shown_prefix);
        text.push_str(name);
        text.push('\n');
    }
    if total == 0 {
        text.push_str(&format!("No file name matches '{query}'\n"));
    } else if total > limit {
        text.push_str(&format!("({} more matches; raise limit or refine the query)\n", total - limit));
    }
    if capped {
        text.push_str(&format!("(only the first {max_walk} files were searched; narrow 'path')\n"));
    }
    Ok(Output::text(text))
}

/// The files matching `query`, best first; equal scores go by the file name's own match,
/// then shorter path first, then by name.
pub fn rank<'a>(query: &str, files: &'a [String]) -> Vec<&'a str> {
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    // Plain fuzzy words: no fzf operators, since file names may hold `^`, `!` or `$`.
    let pattern = Pattern::new(query, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy);
    // Between equal scores, the path whose file name matches the last word better wins,
    // as in an editor, where `config keys` means the file `keys` in `config`.
    let last = query.split_whitespace().last().unwrap_or(query);
    let name_pattern = Pattern::new(last, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, u32, &str)> = files
        .iter()
        .filter_map(|f| {
            let score = pattern.score(Utf32Str::new(f, &mut buf), &mut matcher)?;
            let name = f.rsplit('/').next().unwrap_or(f);
            let name_score = name_pattern.score(Utf32Str::new(name, &mut buf), &mut matcher).unwrap_or(0);
            Some((score, name_score, f.as_str()))
        })
        .collect();
    scored
        .sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.len().cmp(&b.2.len())).then(a.2.cmp(b.2)));
    scored.into_iter().map(|(_, _, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn letters_in_order_match_and_word_starts_rank_first() {
        let files = names(&["src/model.rs", "docs/mode_dl.rs", "src/md/rs.txt", "README.md", "x/mxdxrxs"]);
        let got = rank("mdrs", &files);
        assert!(got.contains(&"src/model.rs") && got.contains(&"x/mxdxrxs"), "{got:?}");
        assert!(!got.contains(&"README.md"), "{got:?}");
        let got = rank("model.rs", &files);
        assert_eq!(got.first(), Some(&"src/model.rs"), "{got:?}");
    }

    #[test]
    fn a_file_name_beats_the_same_letters_spread_over_directories() {
        let files = names(&["a/config/keys/util.rs", "host/src/config/keys.rs", "keys.txt"]);
        assert_eq!(rank("config keys", &files).first(), Some(&"host/src/config/keys.rs"));
        let files = names(&["src/agent/loop_impl.rs", "src/agent/mod.rs", "tests/agent.rs"]);
        assert_eq!(rank("agent.rs", &files).first(), Some(&"tests/agent.rs"));
    }

    #[test]
    fn smart_case_and_no_operators() {
        let files = names(&["Makefile", "make.rs", "a^b$.txt"]);
        assert_eq!(rank("Make", &files), vec!["Makefile"], "an upper-case query is case-sensitive");
        assert_eq!(rank("make", &files).len(), 2);
        assert_eq!(rank("^b$", &files), vec!["a^b$.txt"], "^ and $ are letters, not anchors");
    }

    #[test]
    fn the_tool_honours_gitignore_limit_and_path() {
        let (dir, ws) = setup();
        put(dir.path(), ".gitignore", "target/\n", 10);
        put(dir.path(), "src/main.rs", "", 10);
        put(dir.path(), "src/mainly.txt", "", 10);
        put(dir.path(), "target/main.rs", "", 10);
        put(dir.path(), "doc/main.md", "", 10);
        let out = run(&ws, &json!({"query": "main"})).unwrap();
        assert!(!out.text.contains("target/"), "{}", out.text);
        assert_eq!(out.text.lines().count(), 3, "{}", out.text);
        let out = run(&ws, &json!({"query": "main", "limit": 1})).unwrap();
        assert_eq!(
            out.text.lines().nth(1),
            Some("(2 more matches; raise limit or refine the query)"),
            "{}",
            out.text
        );
        let out = run(&ws, &json!({"query": "main", "path": "src"})).unwrap();
        assert_eq!(out.text, "src/main.rs\nsrc/mainly.txt\n");
        let out = run(&ws, &json!({"query": "zzz"})).unwrap();
        assert_eq!(out.text, "No file name matches 'zzz'\n");
        assert_eq!(run(&ws, &json!({"query": "  "})).unwrap_err().message, "'query' is empty");
        assert!(run(&ws, &json!({"query": "a", "path": "../"})).is_err());
        let out = run_with(&ws, &json!({"query": "main"}), 2).unwrap();
        assert!(
            out.text.ends_with("(only the first 2 files were searched; narrow 'path')\n"),
            "{}",
            out.text
        );
    }

    #[test]
    fn fifteen_thousand_files_rank_without_trouble() {
        let files: Vec<String> =
            (0..15_000).map(|i| format!("pkg{}/mod{}/file_{i}.rs", i % 37, i % 101)).collect();
        let got = rank("file_14999", &files);
        assert_eq!(got.first(), Some(&"pkg14/mod51/file_14999.rs"));
    }
}
