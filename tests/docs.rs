//! The examples in README.md and docs/ are run: every `corral ...` command line in a ```sh
//! block parses (each flag and subcommand exists and takes what it is given), and every
//! ```toml block is a settings file or policy file corral accepts without a warning. (The Rust
//! plugin examples are built by the authoring suite.)

use crate::support;

use std::path::{Path, PathBuf};
use support::Sandbox;

/// Every Markdown file a user reads.
fn documents() -> Vec<PathBuf> {
    let root = support::repo();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The fenced blocks of `lang` in `text`, with the line each starts on.
fn blocks(text: &str, lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) if info.trim() == lang => open = Some((i + 1, String::new())),
            (None, Some(_)) => open = Some((0, String::new())),
            (Some(_), Some(_)) => {
                if let Some((at, body)) = open.take().filter(|(at, _)| *at > 0) {
                    out.push((at, body));
                }
            }
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A shell line's words: single and double quotes group, a `#` after white space starts a
/// comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The corral command lines of a shell block (after a pipe too); lines that show a choice of
/// values (`a|b`, `[--user]`, `...`) are descriptions, not commands.
fn corral_lines(block: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in block.lines() {
        let command = line.rsplit("| ").next().unwrap_or(line).trim();
        let words = shell_words(command);
        if words.first().map(String::as_str) != Some("corral") {
            continue;
        }
        let placeholder = words.iter().skip(1).any(|w| {
            (w.contains('|') && !w.starts_with('{'))
                || w.starts_with('[')
                || w.as_str() == "..."
                || w.starts_with('<')
        });
        if !placeholder {
            out.push(words[1..].to_vec());
        }
    }
    out
}

#[test]
fn every_corral_command_line_in_the_docs_parses() {
    let sb = Sandbox::new();
    let mut checked = 0;
    let mut bad = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (at, block) in blocks(&text, "sh") {
            for args in corral_lines(&block) {
                // `--help` after the words: clap checks every word before it, then prints the help
                // of the (sub)command they name instead of running it.
                let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
                if !with_help.contains(&"--help") {
                    with_help.push("--help");
                }
                let r = sb.run(&with_help);
                checked += 1;
                if r.code != 0 || r.stdout.is_empty() {
                    bad.push(format!("{}:{at}: corral {}\n{}", doc.display(), args.join(" "), r.stderr));
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} command lines found: is the extraction broken?");
    assert!(bad.is_empty(), "command lines in the docs that corral does not accept:\n{}", bad.join("\n"));
}

/// A digest written shortened for the page (`"2c4e...e1"`) made a well-formed one.
fn fill_placeholders(toml: &str) -> String {
    toml.lines()
        .map(|l| match l.split_once("sha256 = \"") {
            Some((head, rest)) if rest.contains("...") => {
                let tail = rest.split_once('"').map(|(_, t)| t).unwrap_or("");
                format!("{head}sha256 = \"{}\"{tail}", "0".repeat(64))
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One block may show alternatives separated by a `# or` line.
fn alternatives(block: &str) -> Vec<String> {
    block.split("\n# or\n").map(|s| format!("{}\n", s.trim())).collect()
}

/// Whether a TOML example is a policy file (it pins plugins or sets `[bounds]`).
fn is_policy(toml: &str) -> bool {
    toml.contains("[bounds]")
        || toml.lines().any(|l| l.split('=').next().is_some_and(|key| key.trim().ends_with("sha256")))
}

fn check_settings(sb: &Sandbox, doc: &Path, at: usize, toml: &str) -> Option<String> {
    let r = if is_policy(toml) {
        let file = sb.tmp.path().join("policy.toml");
        std::fs::write(&file, fill_placeholders(toml)).unwrap();
        sb.run(&["config", "--policy", file.to_str().unwrap()])
    } else {
        std::fs::write(sb.config.join("config.toml"), toml).unwrap();
        let r = sb.run(&["config"]);
        std::fs::remove_file(sb.config.join("config.toml")).unwrap();
        r
    };
    let warned = r.stderr.contains("warning") || r.stderr.contains("unknown");
    (r.code != 0 || warned).then(|| format!("{}:{at}:\n{toml}\n{}", doc.display(), r.stderr))
}

#[test]
fn every_toml_example_in_the_docs_is_accepted() {
    let sb = Sandbox::new();
    let mut checked = 0;
    let mut bad = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (at, block) in blocks(&text, "toml") {
            for toml in alternatives(&block) {
                checked += 1;
                bad.extend(check_settings(&sb, &doc, at, &toml));
            }
        }
    }
    assert!(checked >= 6, "only {checked} TOML examples found: is the extraction broken?");
    assert!(
        bad.is_empty(),
        "TOML examples in the docs that corral refuses or warns about:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_extraction_reads_blocks_words_and_placeholders() {
    let md = "text\n```sh\ncorral --flag 'a b' \"c\"  # note\necho '{}' | corral tool grep -\ncorral new x --lang rust|c\n```\n```toml\na = 1\n```\n";
    let sh = blocks(md, "sh");
    assert_eq!(sh.len(), 1);
    assert_eq!(sh[0].0, 2);
    let lines = corral_lines(&sh[0].1);
    assert_eq!(lines, vec![vec!["--flag", "a b", "c"], vec!["tool", "grep", "-"]]);
    assert_eq!(blocks(md, "toml"), vec![(7, "a = 1\n".to_string())]);
    assert_eq!(
        fill_placeholders("sha256 = \"2c4e...e1\"   # x"),
        format!("sha256 = \"{}\"   # x", "0".repeat(64))
    );
}

/// The Rust plugin in docs/authoring.md, as written there, built against the guest SDK of
/// this checkout and run by the corral under test on a file of the workspace.
#[test]
fn the_rust_plugin_example_in_the_authoring_guide_builds_and_runs() {
    let root = support::repo();
    let guide = std::fs::read_to_string(root.join("docs/authoring.md")).unwrap();
    let code = blocks(&guide, "rust");
    assert_eq!(code.len(), 1, "one Rust example expected in docs/authoring.md");
    let sb = Sandbox::new();
    let krate = sb.tmp.path().join("guide-example");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(krate.join("src/lib.rs"), &code[0].1).unwrap();
    let sdk = root.join("plugins/sdk");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"guide-example\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\n\
             crate-type = [\"cdylib\"]\n\n[dependencies]\ncorral-plugin-sdk = {{ path = {:?} }}\n\n[workspace]\n",
            sdk.display().to_string()
        ),
    )
    .unwrap();
    // The SDK's dependencies at the versions the built-in plugins use (already fetched).
    std::fs::copy(root.join("plugins/Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    // Compiled once per checkout, not per run, in the target folder of the other Rust guests
    // (the Rust example and `plugin new`'s project), whose proc macros it shares.
    let target = support::guests::examples_dir().join("rust-target");
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "the example does not build:\n{}", String::from_utf8_lossy(&out.stderr));
    let wasm = target.join("wasm32-wasip2/release/guide_example.wasm");
    std::fs::create_dir_all(sb.ws.join("docs")).unwrap();
    std::fs::write(sb.ws.join("docs/notes.txt"), "three small words\n").unwrap();
    let plugin = wasm.display().to_string();
    let r = sb
        .tool(&["--plugin", &plugin], "word_count", &serde_json::json!({"file_path": "docs/notes.txt"}))
        .ok();
    assert_eq!(r.stdout.trim(), "3");
    let r = sb
        .tool(&["--plugin", &plugin], "word_count", &serde_json::json!({"file_path": "none.txt"}))
        .tool_err();
    assert!(r.stderr.contains("none.txt"), "{}", r.stderr);
}
