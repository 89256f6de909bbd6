//! The example plugins in four languages (plugins/examples/), each built with its own
//! toolchain: called through `corral tool` on a prepared workspace with exact outputs and
//! clear tool errors, and all four together through a scripted model session.

use crate::support;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::Path;
use support::guests::example;
use support::model_server::{Flavor, ModelServer, Reply, Step};
use support::{Run, Sandbox};

fn plugin_flag(path: &Path) -> String {
    path.display().to_string()
}

/// Calls `tool` with the example plugin `lang` loaded.
fn call(sb: &Sandbox, lang: &str, tool: &str, args: Value) -> Run {
    let plugin = plugin_flag(&example(lang));
    sb.tool(&["--plugin", &plugin], tool, &args)
}

fn write(sb: &Sandbox, rel: &str, text: &str) {
    let path = sb.ws.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace with configuration files, sources and data for all four examples.
fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    write(
        &sb,
        "package.json",
        r#"{"name": "demo", "version": "1.2.0", "dependencies": {"left-pad": "^1.3.0", "react": "18.2.0"}, "devDependencies": {"jest": "~29.0.0"}}"#,
    );
    write(&sb, "config/app.toml", "[server]\nport = 8080\nhost = \"localhost\"\n");
    write(&sb, "config/broken.toml", "[server]\nport = \nhost = 1\n");
    write(&sb, "config/ci.yml", "jobs:\n  test:\n    runs-on: linux\n");
    write(&sb, "data/bad.json", "{\n  \"a\": 1,\n  \"b\" 2\n}\n");
    write(&sb, "node_modules/dep/package.json", "{ not json");
    write(&sb, "src/main.rs", "// entry point\nfn main() {\n    /* say hi */\n    println!(\"hi\");\n}\n\n");
    write(&sb, "src/util.py", "# helpers\n\ndef f():\n    return 1  # one\n");
    write(&sb, "check/123.txt", "123456789");
    sb
}

#[test]
fn rust_validate_config_reports_each_file_with_positions() {
    let sb = workspace();
    let r = call(&sb, "rust", "validate_config", json!({})).ok();
    assert_eq!(
        r.stdout,
        "5 file(s) checked: 3 valid, 2 with problems\n\
         INVALID config/broken.toml (TOML) line 2, column 8: string values must be quoted, expected literal string\n\
         INVALID data/bad.json (JSON) line 3, column 7: expected `:`\n\
         ok config/app.toml (TOML)\n\
         ok config/ci.yml (YAML)\n\
         ok package.json (JSON)\n",
        "node_modules is skipped, problems come first"
    );
    let r = call(&sb, "rust", "validate_config", json!({"paths": ["config/app.toml"]})).ok();
    assert_eq!(r.stdout, "1 file(s) checked: 1 valid, 0 with problems\nok config/app.toml (TOML)\n");
    let r = call(&sb, "rust", "validate_config", json!({"paths": ["nope.json"]})).tool_err();
    assert!(r.stderr.contains("error (not-found): 'nope.json' does not exist"), "{}", r.stderr);
    let r = call(&sb, "rust", "validate_config", json!({"paths": ["src/main.rs"]})).tool_err();
    assert!(
        r.stderr.contains("error (unsupported): 'src/main.rs' is not a JSON, TOML or YAML file"),
        "{}",
        r.stderr
    );
    let r = call(&sb, "rust", "validate_config", json!({"paths": ["../outside/secret.txt"]})).tool_err();
    assert!(!r.stderr.contains("top secret") && !r.stdout.contains("top secret"));
}

#[test]
fn python_code_stats_counts_lines_per_language() {
    let sb = workspace();
    let r = call(&sb, "python", "code_stats", json!({"path": "src"})).ok();
    let rows: Vec<Vec<&str>> = r.stdout.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        rows,
        vec![
            vec!["language", "files", "code", "comment", "blank"],
            vec!["Rust", "1", "3", "2", "1"],
            vec!["Python", "1", "2", "1", "1"],
            vec!["total", "2", "5", "3", "2"],
        ],
        "{}",
        r.stdout
    );
    let r = call(&sb, "python", "code_stats", json!({"path": "missing"})).tool_err();
    assert!(r.stderr.contains("error (not-found): 'missing' does not exist"), "{}", r.stderr);
    assert!(r.stderr.contains("hint: paths are relative to the workspace root"), "{}", r.stderr);
    let r = call(&sb, "python", "code_stats", json!({"max_files": 0})).tool_err();
    assert!(r.stderr.contains("error (invalid-args): 'max_files' must be an integer"), "{}", r.stderr);
}

#[test]
fn js_json_query_selects_values_with_their_paths() {
    let sb = workspace();
    let r = call(&sb, "js", "json_query", json!({"path": "package.json", "query": "dependencies.*"})).ok();
    assert_eq!(
        r.stdout,
        "2 matches for dependencies.* in package.json\n\
         $.dependencies[\"left-pad\"] = \"^1.3.0\"\n$.dependencies.react = \"18.2.0\"\n"
    );
    let r = call(&sb, "js", "json_query", json!({"path": "package.json"})).ok();
    assert!(r.stdout.starts_with("$: object with 4 keys\n  name: string = \"demo\"\n"), "{}", r.stdout);
    assert!(r.stdout.contains("  dependencies: object with 2 keys\n"), "{}", r.stdout);
    let r = call(&sb, "js", "json_query", json!({"path": "package.json", "query": "..jest"})).ok();
    assert_eq!(r.stdout, "1 match for ..jest in package.json\n$.devDependencies.jest = \"~29.0.0\"\n");
    let r = call(&sb, "js", "json_query", json!({"path": "data/bad.json"})).tool_err();
    assert!(
        r.stderr.contains("error (unsupported): 'data/bad.json' is not valid JSON: ")
            && r.stderr.contains("line 3 column 7"),
        "{}",
        r.stderr
    );
    let r = call(&sb, "js", "json_query", json!({"path": "package.json", "query": "a[x]"})).tool_err();
    assert!(r.stderr.contains("error (invalid-args): '[x]' is not an index"), "{}", r.stderr);
    let r = call(&sb, "js", "json_query", json!({"path": "gone.json"})).tool_err();
    assert!(r.stderr.contains("error (not-found): 'gone.json' does not exist"), "{}", r.stderr);
}

#[test]
fn c_checksum_matches_sha256_and_crc32() {
    let sb = workspace();
    let hex = |b: &[u8]| Sha256::digest(b).iter().map(|x| format!("{x:02x}")).collect::<String>();
    let r = call(&sb, "c", "checksum", json!({"paths": ["config", "package.json"]})).ok();
    let want = ["config/app.toml", "config/broken.toml", "config/ci.yml", "package.json"]
        .iter()
        .map(|p| format!("{}  {p}\n", hex(&std::fs::read(sb.ws.join(p)).unwrap())))
        .collect::<String>();
    assert_eq!(r.stdout, want);
    let r = call(&sb, "c", "checksum", json!({"paths": ["check/123.txt"], "algorithm": "crc32"})).ok();
    assert_eq!(r.stdout, "cbf43926  check/123.txt\n");
    let r = call(&sb, "c", "checksum", json!({"paths": ["nope"]})).tool_err();
    assert!(r.stderr.contains("error (not-found): 'nope' does not exist"), "{}", r.stderr);
    let r = call(&sb, "c", "checksum", json!({"paths": "x"})).tool_err();
    assert!(r.stderr.contains("error (invalid-args): 'paths' must be a non-empty list"), "{}", r.stderr);
    let r = call(&sb, "c", "checksum", json!({"paths": ["a"], "algorithm": "md5"})).tool_err();
    assert!(r.stderr.contains("'algorithm' must be \"sha256\" or \"crc32\""), "{}", r.stderr);
    // The sandbox holds: a path outside the workspace is refused, whatever the spelling.
    let secret = sb.outside.join("secret.txt").display().to_string();
    for p in [secret.as_str(), "../outside/secret.txt"] {
        let r = call(&sb, "c", "checksum", json!({"paths": [p]})).tool_err();
        assert!(!r.stdout.contains(&hex(b"top secret\n")), "{p}: {}", r.stdout);
    }
}

/// Every tool result text in an OpenAI-format request.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_model_session_uses_all_four_examples() {
    let sb = workspace();
    let plugins: Vec<String> =
        ["rust", "python", "js", "c"].iter().map(|l| plugin_flag(&example(l))).collect();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tool("validate_config", r#"{"paths": ["config"]}"#)),
            Step::Reply(Reply::tool("code_stats", r#"{"path": "src"}"#)),
            Step::Reply(Reply::tool("json_query", r#"{"path": "package.json", "query": "version"}"#)),
            Step::Reply(Reply::tool("checksum", r#"{"paths": ["check/123.txt"], "algorithm": "crc32"}"#)),
            Step::Reply(Reply::text("config/broken.toml has an error on line 2.")),
        ],
    );
    let url = server.url();
    let mut args: Vec<&str> = vec!["--base-url", &url, "--model", "test-model"];
    for p in &plugins {
        args.extend(["--plugin", p]);
    }
    args.push("check the project");
    let run = sb.cmd().env("CORRAL_API_KEY", "test-key").args(&args).output().expect("run corral");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(stdout, "config/broken.toml has an error on line 2.\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let offered: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for t in ["validate_config", "code_stats", "json_query", "checksum", "read_file"] {
        assert!(offered.contains(&t), "{t} not offered: {offered:?}");
    }
    let results = tool_results(&reqs[4].body);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].contains("INVALID config/broken.toml (TOML) line 2"), "{}", results[0]);
    assert!(results[1].contains("Rust") && results[1].contains("Python"), "{}", results[1]);
    assert_eq!(results[2], "1 match for version in package.json\n$.version = \"1.2.0\"");
    assert_eq!(results[3], "cbf43926  check/123.txt\n");
}
