//! The command line end to end: the file tools change the disk as promised, the read guard
//! and trash work across the host boundary, plugins are discovered from every source, the
//! compile cache is used and distrusted when damaged, bad input gets clear errors, and
//! `corral config` shows every setting with its source.

use crate::support;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{Run, Sandbox};

#[test]
fn write_then_edit_then_read_round_trip() {
    let sb = Sandbox::new();
    let r = sb
        .tool(&[], "write_file", &json!({"file_path": "src/new/lib.rs", "content": "fn a() {}\nfn b() {}\n"}))
        .ok();
    assert!(r.stdout.starts_with("Wrote 20 bytes to src/new/lib.rs"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(sb.ws.join("src/new/lib.rs")).unwrap(), "fn a() {}\nfn b() {}\n");
    // A new corral process is a new session: the guard needs a read first.
    let r = sb
        .tool(
            &[],
            "edit_file",
            &json!({"file_path": "src/new/lib.rs", "old_string": "fn b() {}", "new_string": "fn c() {}"}),
        )
        .tool_err();
    assert!(r.stderr.contains("has not been read"), "{}", r.stderr);
    assert!(r.stderr.contains("hint: each `corral tool` call is a session of its own"), "{}", r.stderr);
    assert!(r.stderr.contains("corral --no-read-guard tool edit_file"), "{}", r.stderr);
    let edited = sb
        .tool(
            &["--no-read-guard"],
            "edit_file",
            &json!({"file_path": "src/new/lib.rs", "old_string": "fn b() {}", "new_string": "fn c() {}"}),
        )
        .ok();
    let r = sb.tool(&[], "read_file", &json!({"file_path": "src/new/lib.rs"})).ok();
    assert!(r.stdout.contains("1: fn a() {}\n2: fn c() {}"), "{}", r.stdout);
    // The checksum the edit reported is the one a read of the new content shows.
    let sum = |text: &str| text.split("[checksum=").nth(1).map(|s| s[..8].to_string());
    assert_eq!(sum(&edited.stdout), sum(&r.stdout), "{}\n{}", edited.stdout, r.stdout);
    assert!(sum(&r.stdout).is_some());
}

#[test]
fn overwriting_an_unread_file_is_refused_and_leaves_it_intact() {
    let sb = Sandbox::new();
    let r = sb.tool(&[], "write_file", &json!({"file_path": "hello.txt", "content": "clobbered"})).tool_err();
    assert!(r.stderr.contains("error (conflict)"), "{}", r.stderr);
    // Reading first cannot help from the command line: the hint names the flag that can.
    assert!(
        r.stderr.contains("hint: each `corral tool` call is a session of its own")
            && r.stderr.contains("corral --no-read-guard tool write_file"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("read the file with read_file first"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(sb.ws.join("hello.txt")).unwrap(), "hello\nworld\n");
    let leftovers: Vec<_> = std::fs::read_dir(&sb.ws)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("corral-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

#[test]
fn delete_moves_to_the_trash_with_an_index() {
    let sb = Sandbox::new();
    let r = sb.tool(&["--no-read-guard"], "delete_file", &json!({"file_path": "hello.txt"})).ok();
    assert!(!sb.ws.join("hello.txt").exists());
    let index = std::fs::read_to_string(sb.state_file("trash.jsonl")).unwrap();
    assert!(!sb.ws.join(".corral/trash/index.jsonl").exists(), "the index is not kept in the workspace");
    let entry: Value = serde_json::from_str(index.lines().next().unwrap()).unwrap();
    assert_eq!(entry["original_path"], "hello.txt");
    assert_eq!(entry["bytes"], 12);
    let id = entry["trash_id"].as_str().unwrap();
    assert!(r.stdout.contains(&format!(".corral/trash/{id}")), "{}", r.stdout);
    let kept = std::fs::read_to_string(sb.ws.join(format!(".corral/trash/{id}/hello.txt"))).unwrap();
    assert_eq!(kept, "hello\nworld\n");
    // Without the guard flag an unread file is not deleted.
    std::fs::write(sb.ws.join("keep.txt"), "x").unwrap();
    sb.tool(&[], "delete_file", &json!({"file_path": "keep.txt"})).tool_err();
    assert!(sb.ws.join("keep.txt").exists());
}

#[test]
fn trash_retention_purges_old_entries_first() {
    let sb = Sandbox::new();
    let trash = sb.ws.join(".corral/trash");
    std::fs::create_dir_all(trash.join("0ld")).unwrap();
    std::fs::write(trash.join("0ld/f.txt"), "old").unwrap();
    let old = json!({"trash_id": "0ld", "original_path": "f.txt", "timestamp": 1, "bytes": 3});
    // An index planted in the workspace is not honoured: it purges nothing.
    std::fs::write(trash.join("index.jsonl"), format!("{old}\n")).unwrap();
    sb.tool(&["--no-read-guard"], "delete_file", &json!({"file_path": "hello.txt"})).ok();
    assert!(trash.join("0ld").exists(), "a planted index was honoured");
    let kept = std::fs::read_to_string(sb.state_file("trash.jsonl")).unwrap();
    std::fs::write(sb.state_file("trash.jsonl"), format!("{kept}{old}\n")).unwrap();
    std::fs::write(sb.ws.join("bye.txt"), "bye").unwrap();
    sb.tool(&["--no-read-guard"], "delete_file", &json!({"file_path": "bye.txt"})).ok();
    assert!(!trash.join("0ld").exists(), "an entry older than 7 days survived");
    let index = std::fs::read_to_string(sb.state_file("trash.jsonl")).unwrap();
    assert_eq!(index.lines().count(), 2, "{index}");
    assert!(index.contains("bye.txt") && !index.contains("0ld"), "{index}");
    assert!(index.contains("hello.txt"));
}

#[test]
fn move_from_renames_without_reading() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("img.bin"), [0u8, 159, 146, 150]).unwrap();
    sb.tool(&[], "write_file", &json!({"file_path": "assets/img.bin", "move_from": "img.bin"})).ok();
    assert_eq!(std::fs::read(sb.ws.join("assets/img.bin")).unwrap(), vec![0u8, 159, 146, 150]);
    assert!(!sb.ws.join("img.bin").exists());
}

#[test]
fn list_and_grep_see_the_workspace() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join("src/deep")).unwrap();
    std::fs::write(sb.ws.join("src/deep/a.rs"), "fn main() { todo!() }\n").unwrap();
    std::fs::write(sb.ws.join("src/b.rs"), "// nothing\n").unwrap();
    std::fs::write(sb.ws.join(".gitignore"), "ignored.rs\n").unwrap();
    std::fs::write(sb.ws.join("src/ignored.rs"), "todo!()\n").unwrap();
    let r = sb.tool(&[], "list_files", &json!({"pattern": "**/*.rs"})).ok();
    assert!(r.stdout.contains("src/deep/a.rs") && r.stdout.contains("src/b.rs"), "{}", r.stdout);
    let r = sb.tool(&[], "grep", &json!({"pattern": "todo!"})).ok();
    assert!(r.stdout.contains("src/deep/a.rs") && r.stdout.contains("Line 1:"), "{}", r.stdout);
    assert!(!r.stdout.contains("ignored.rs"), "grep ignored .gitignore: {}", r.stdout);
}

/// Sets the modification time of `p` to `secs` seconds ago.
fn age(p: &std::path::Path, secs: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

/// A search over many files reads them in parts side by side (the `parallel` import, one part
/// per core) and answers exactly as one instance would: newest first, every match. The parts
/// are not tools: the model, or `corral tool`, cannot call one.
#[test]
fn grep_reads_a_large_tree_in_parts_and_answers_as_one_call() {
    let sb = Sandbox::new();
    let mut want = Vec::new();
    for i in 0..1500u64 {
        let rel = format!("d{}/f{i:04}.txt", i % 10);
        let path = sb.ws.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let needle = i % 100 == 7;
        std::fs::write(&path, if needle { format!("hay\nneedle {i}\n") } else { "hay\n".into() }).unwrap();
        age(&path, 10 + i);
        if needle {
            want.push(format!("\n{rel}:\n  Line 2: needle {i}\n"));
        }
    }
    let r = sb.tool(&["--verbose"], "grep", &json!({"pattern": "needle \\d+"})).ok();
    assert_eq!(r.stdout, format!("Found 15 matches\n{}", want.concat()), "newest first, every match");
    let cores = std::thread::available_parallelism().unwrap().get().min(8);
    if cores > 1 {
        let line = format!("parallel.run: {cores} calls, {cores} answered, at most {cores} at a time");
        assert!(r.stderr.contains(&line), "{line} not in:\n{}", r.stderr);
    }
    let r = sb.tool(&[], "grep/scan", &json!({"pattern": "needle", "files": [sb.ws.join("d7/f0007.txt")]}));
    assert_ne!(r.code, 0, "a part is not a tool: {}", r.stdout);
    assert!(r.stderr.contains("grep/scan") && !r.stdout.contains("matching"), "{}\n{}", r.stdout, r.stderr);
}

/// Over grep's cap of 20,000 files only the newest are searched. Inside the sandbox the
/// files' ages are read by name from each directory (not by whole path): an old file with a
/// match is left out, the newest are searched, a symlink counts with its target's age.
#[test]
fn grep_over_the_file_cap_searches_the_newest_files() {
    let sb = Sandbox::new();
    for d in 0..20 {
        let dir = sb.ws.join(format!("d{d:02}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("f{f:04}.txt")), "plain\n").unwrap();
        }
    }
    // 20,000 files above, each about as old as the test; three more, two of them a day old,
    // and a symlink to one of those.
    std::fs::write(sb.ws.join("d00/stale.txt"), "needle in an old file\n").unwrap();
    age(&sb.ws.join("d00/stale.txt"), 86_400);
    std::fs::write(sb.ws.join("d19/older.txt"), "needle behind a link\n").unwrap();
    age(&sb.ws.join("d19/older.txt"), 86_400);
    std::os::unix::fs::symlink(sb.ws.join("d19/older.txt"), sb.ws.join("d05/link.txt")).unwrap();
    std::fs::write(sb.ws.join("d10/fresh.txt"), "needle in a new file\n").unwrap();
    let r = sb.tool(&[], "grep", &json!({"pattern": "needle"})).ok();
    assert!(r.stdout.contains("d10/fresh.txt"), "{}", r.stdout);
    assert!(!r.stdout.contains("stale.txt") && !r.stdout.contains("link.txt"), "{}", r.stdout);
    assert!(
        r.stdout.contains("[only the 20000 most recently modified of 20004 files were searched"),
        "{}",
        r.stdout
    );
}

#[test]
fn tools_lists_every_built_in() {
    let sb = Sandbox::new();
    let r = sb.run(&["tools"]).ok();
    for t in [
        "read_file",
        "read_multiple_files",
        "write_file",
        "edit_file",
        "delete_file",
        "list_files",
        "grep",
        "patch",
        "file_search",
    ] {
        assert!(r.stdout.lines().any(|l| l.starts_with(&format!("{t} "))), "{t} missing:\n{}", r.stdout);
    }
    let json: Value = serde_json::from_str(&sb.run(&["tools", "--json"]).ok().stdout).unwrap();
    let write = json.as_array().unwrap().iter().find(|t| t["name"] == "write_file").unwrap();
    assert_eq!(write["input_schema"]["type"], "object");
    assert_eq!(write["read_only"], false);
    assert_eq!(write["capabilities"], json!(["workspace-write"]));
    let patch = json.as_array().unwrap().iter().find(|t| t["name"] == "patch").unwrap();
    assert_eq!((&patch["read_only"], &patch["capabilities"]), (&json!(false), &json!(["workspace-write"])));
    let search = json.as_array().unwrap().iter().find(|t| t["name"] == "file_search").unwrap();
    assert_eq!(search["read_only"], true);
}

#[test]
fn plugins_are_found_in_project_user_and_flag_locations() {
    let sb = Sandbox::new();
    let faulty = support::test_plugin("faulty");
    let bytes = std::fs::read(&faulty).unwrap();
    std::fs::create_dir_all(sb.ws.join(".corral/plugins")).unwrap();
    std::fs::write(sb.ws.join(".corral/plugins/proj.wasm"), &bytes).unwrap();
    // Not read until the person trusts the workspace.
    let r = sb.tool(&[], "ok", &json!({}));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("1 plugin(s) in .corral/plugins/") && r.stderr.contains("`corral trust`"),
        "{}",
        r.stderr
    );
    sb.trust();
    let r = sb.tool(&[], "ok", &json!({})).ok();
    assert_eq!(r.stdout, "fine\n");
    // The same tools from the user's directory clash with the project's copy.
    std::fs::create_dir_all(sb.config.join("plugins")).unwrap();
    std::fs::write(sb.config.join("plugins/user.wasm"), &bytes).unwrap();
    let r = sb.run(&["tools"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("offered by two plugins") && r.stderr.contains("user.wasm"), "{}", r.stderr);
    assert!(r.stderr.contains("proj.wasm"), "{}", r.stderr);
    std::fs::write(sb.ws.join("corral.toml"), "[plugins]\ndisabled = [\"user\"]\n").unwrap();
    sb.trust();
    let r = sb.run(&["plugins", "--json"]).ok();
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    let proj = list.as_array().unwrap().iter().find(|p| p["name"] == "proj").unwrap();
    assert_eq!(proj["origin"], "project");
    let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(proj["sha256"], sha);
    assert_eq!(proj["size"], bytes.len());
    assert!(!list.as_array().unwrap().iter().any(|p| p["name"] == "user"));
}

#[test]
fn the_cache_is_used_and_a_damaged_entry_is_rebuilt() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    // A user plugin goes through the compile cache; the built-ins come precompiled.
    std::fs::create_dir_all(sb.config.join("plugins")).unwrap();
    std::fs::copy(support::test_plugin("faulty"), sb.config.join("plugins/mine.wasm")).unwrap();
    let run = |args: &[&str]| {
        let out = sb.cmd().env("CORRAL_CACHE_DIR", &cache).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let mine =
        |v: &Value| -> Value { v.as_array().unwrap().iter().find(|p| p["name"] == "mine").unwrap().clone() };
    let builtins_precompiled = |v: &Value| {
        for p in v.as_array().unwrap().iter().filter(|p| p["loaded"] == true && p["origin"] == "built-in") {
            assert_eq!(p["cache"], "precompiled in corral", "{p}");
        }
    };
    let first = run(&["plugins", "--json"]);
    assert_eq!(mine(&first)["cached"], false, "{first}");
    builtins_precompiled(&first);
    let second = run(&["plugins", "--json"]);
    assert_eq!(mine(&second)["cached"], true, "{second}");
    builtins_precompiled(&second);
    // Flip one byte in every compiled entry: each must be detected and recompiled.
    let mut flipped = 0;
    for e in std::fs::read_dir(cache.join("components")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "cwasm") {
            let mut bytes = std::fs::read(e.path()).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x5a;
            std::fs::write(e.path(), bytes).unwrap();
            flipped += 1;
        }
    }
    assert_eq!(flipped, 1, "only the user plugin has an entry");
    let third = run(&["plugins", "--json"]);
    assert!(mine(&third)["cache"].as_str().unwrap().contains("integrity check"), "{third}");
    let out = sb.cmd().env("CORRAL_CACHE_DIR", &cache).args(["tool", "ok", "{}"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fine\n");
    let fourth = run(&["plugins", "--json"]);
    assert_eq!(mine(&fourth)["cached"], true, "{fourth}");
}

/// Runs corral with its own compile cache in `cache`.
fn run_cached(sb: &Sandbox, cache: &std::path::Path, args: &[&str]) -> Run {
    sb.run_with_env(args, &[("CORRAL_CACHE_DIR", cache.to_str().unwrap())])
}

/// The compile cache's files of one kind (`cwasm`, `seal`, `json`) in `cache`.
fn cache_files(cache: &std::path::Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

#[test]
fn built_ins_are_offered_from_their_build_time_descriptions_and_touch_no_cache() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let run = |args: &[&str]| run_cached(&sb, &cache, args);
    let tools = run(&["tools"]).ok().stdout;
    assert!(tools.contains("read_file") && tools.contains("outline"), "{tools}");
    let verbose = run(&["-v", "tools"]).ok().stderr;
    assert!(verbose.contains("plugin read_file (embedded in corral): Deferred"), "{verbose}");
    assert!(verbose.contains("plugin outline (embedded in corral): Deferred"), "{verbose}");
    // The first call loads the code precompiled in corral: nothing is compiled or stored.
    let r = run(&["tool", "read_file", r#"{"file_path":"hello.txt"}"#]).ok();
    assert!(r.stdout.contains("1: hello"), "{}", r.stdout);
    // Nor do the shipped skills: their answers to `describe` are built in as well.
    let stored: Vec<_> = std::fs::read_dir(cache.join("components"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        stored.is_empty(),
        "a built-in or shipped skill needs neither a description nor compiled code in the cache: {stored:?}"
    );
    // `corral plugins` reports on the code itself: it loads all of it, from corral itself.
    let list: Value = serde_json::from_str(&run(&["plugins", "--json"]).ok().stdout).unwrap();
    let loaded: Vec<&Value> = list.as_array().unwrap().iter().filter(|p| p["loaded"] == true).collect();
    assert!(loaded.len() >= 10, "{list}");
    for p in &loaded {
        assert_eq!(p["cache"], "precompiled in corral", "{p}");
    }
}

#[test]
fn a_warm_start_offers_tools_from_kept_descriptions_and_loads_code_on_first_use() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let faulty = support::test_plugin("faulty").to_string_lossy().into_owned();
    let run = |args: &[&str]| run_cached(&sb, &cache, &[&["--plugin", faulty.as_str()], args].concat());
    let cold = run(&["tools"]).ok().stdout;
    assert!(cold.contains("ok") && cold.contains("read_file"), "{cold}");
    // The plugin's description is kept beside its compiled code.
    let kept = cache_files(&cache, "json");
    assert_eq!(kept.len(), 1, "{kept:?}");
    let with_code = || kept.iter().filter(|d| d.with_extension("").with_extension("cwasm").exists()).count();
    assert_eq!(with_code(), 1);
    // With the compiled code gone, the tools are still offered, from the description alone...
    for f in cache_files(&cache, "cwasm") {
        std::fs::remove_file(f).unwrap();
    }
    assert_eq!(run(&["tools"]).ok().stdout, cold);
    assert_eq!(with_code(), 0, "listing tools loads no plugin's code");
    let verbose = run(&["-v", "tools"]).ok().stderr;
    assert!(verbose.contains("plugin faulty (") && verbose.contains("): Deferred"), "{verbose}");
    // ...and the first call reads the file again, compiles it and keeps the code.
    assert_eq!(run(&["tool", "ok", "{}"]).ok().stdout, "fine\n");
    assert_eq!(with_code(), 1);
    // A project plugin's file is read again to compile it when its entry is gone.
    std::fs::create_dir_all(sb.ws.join(".corral/plugins")).unwrap();
    std::fs::copy(support::test_plugin("faulty"), sb.ws.join(".corral/plugins/proj.wasm")).unwrap();
    sb.trust();
    let proj_run = |args: &[&str]| run_cached(&sb, &cache, args);
    assert_eq!(proj_run(&["tool", "ok", "{}"]).ok().stdout, "fine\n");
    for f in cache_files(&cache, "cwasm") {
        std::fs::remove_file(f).unwrap();
    }
    assert_eq!(proj_run(&["tool", "ok", "{}"]).ok().stdout, "fine\n");
    assert_eq!(with_code(), 1, "compiled and kept again");
}

/// A kept description's text: its tag line and its JSON.
fn description(f: &std::path::Path) -> (String, Value) {
    let text = std::fs::read_to_string(f).unwrap();
    let (tag, json) = text.split_once('\n').unwrap();
    assert!(tag.starts_with("tag "), "{text}");
    (tag.to_string(), serde_json::from_str(json).unwrap())
}

#[test]
fn a_tampered_description_is_ignored_and_made_again() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let faulty = support::test_plugin("faulty").to_string_lossy().into_owned();
    let run = |args: &[&str]| run_cached(&sb, &cache, &[&["--plugin", faulty.as_str()], args].concat());
    run(&["tools"]).ok();
    // Claim an import the plugin's code does not have, and a tool.
    let file = cache_files(&cache, "json").pop().expect("faulty's description");
    let (tag, mut d) = description(&file);
    d["imports"].as_array_mut().unwrap().push(json!("corral:plugin/log@0.1.0-extra"));
    d["tools"][0]["name"] = json!("planted_tool");
    std::fs::write(&file, format!("{tag}\n{d}")).unwrap();
    // Its tag no longer matches: the plugin is described afresh, from its code.
    let tools = run(&["tools"]).ok().stdout;
    assert!(!tools.contains("planted_tool") && tools.contains("\nok "), "{tools}");
    assert_eq!(run(&["tool", "ok", "{}"]).ok().stdout, "fine\n");
    let (_, again) = description(&file);
    assert!(!again.to_string().contains("planted_tool") && !again.to_string().contains("-extra"), "{again}");
}

#[test]
fn a_description_naming_an_import_corral_does_not_provide_is_not_trusted() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let faulty = support::test_plugin("faulty").to_string_lossy().into_owned();
    let run = |args: &[&str]| run_cached(&sb, &cache, &[&["--plugin", faulty.as_str()], args].concat());
    run(&["tools"]).ok();
    let files = cache_files(&cache, "json");
    assert_eq!(files.len(), 1);
    for f in &files {
        let (tag, mut d) = description(f);
        d["imports"].as_array_mut().unwrap().push(json!("evil:host/escape@1.0.0"));
        std::fs::write(f, format!("{tag}\n{d}")).unwrap();
    }
    let r = run(&["tools"]).ok();
    assert!(r.stdout.contains("\nok "), "{}", r.stdout);
    for f in cache_files(&cache, "json") {
        assert!(!std::fs::read_to_string(&f).unwrap().contains("evil:host"), "{}", f.display());
    }
}

#[test]
fn the_workspace_root_is_found_from_a_subdirectory() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join("a/b")).unwrap();
    let out = sb
        .cmd()
        .current_dir(sb.ws.join("a/b"))
        .args(["tool", "read_file", r#"{"file_path":"hello.txt"}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let other = sb.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.txt"), "x\n").unwrap();
    let r = sb
        .run(&["--workspace", other.to_str().unwrap(), "tool", "read_file", r#"{"file_path":"x.txt"}"#])
        .ok();
    assert!(r.stdout.contains("1: x"));
}

#[test]
fn bad_input_gets_clear_errors() {
    let sb = Sandbox::new();
    let r = sb.run(&["tool", "read_fil", "{}"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no tool named 'read_fil'") && r.stderr.contains("read_file"), "{}", r.stderr);
    let r = sb.run(&["tool", "read_file", "{not json"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not valid JSON"), "{}", r.stderr);
    let r = sb.run(&["tool", "read_file", "[1]"]);
    assert!(r.code == 2 && r.stderr.contains("must be a JSON object"), "{}", r.stderr);
    std::fs::write(sb.ws.join("corral.toml"), "[limits]\ntimeout = 3\n").unwrap();
    let r = sb.run(&["tools"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("corral.toml:2: unknown key 'timeout' in [limits]; allowed keys: timeout_secs"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(sb.ws.join("corral.toml")).unwrap();
    let r = sb.run(&["--timeout", "0", "tools"]);
    assert!(r.code == 2 && r.stderr.contains("between 0 and 3600"), "{}", r.stderr);
    let r = sb.run(&["--plugin", "/nonexistent/x.wasm", "tools"]);
    assert!(r.code == 2 && r.stderr.contains("cannot read plugin /nonexistent/x.wasm"), "{}", r.stderr);
    std::fs::write(sb.ws.join("junk.wasm"), b"not a component").unwrap();
    let r = sb.run(&["--plugin", "junk.wasm", "tools"]);
    assert!(r.code == 2 && r.stderr.contains("is not a valid component"), "{}", r.stderr);
}

#[test]
fn arguments_can_come_on_stdin() {
    use std::io::Write;
    let sb = Sandbox::new();
    let mut child = sb
        .cmd()
        .args(["tool", "read_file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(br#"{"file_path": "hello.txt"}"#).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("2: world"));
}

#[test]
fn every_command_has_help() {
    let sb = Sandbox::new();
    let r = sb.run(&["--help"]).ok();
    for w in ["tools", "tool", "plugins", "--workspace", "--add-dir-ro", "--no-read-guard", "--memory-mib"] {
        assert!(r.stdout.contains(w), "--help lacks {w}");
    }
    for w in ["--max-turns", "--provider", "--allowed-commands", "--output-format"] {
        assert!(r.stdout.contains(w), "--help lacks the agent option {w}");
    }
    let r = sb.run(&["tool", "--help"]).ok();
    assert!(r.stdout.contains("Exits 0 on success, 1 when the tool reports an error"), "{}", r.stdout);
    // A subcommand's help shows its own options and the sandbox's, not the agent's.
    for w in ["<NAME>", "--workspace", "--no-read-guard", "corral --help"] {
        assert!(r.stdout.contains(w), "tool --help lacks {w}:\n{}", r.stdout);
    }
    for w in ["--max-turns", "--provider", "--allowed-commands", "--output-format", "--temperature"] {
        assert!(!r.stdout.contains(w), "tool --help shows the agent option {w}:\n{}", r.stdout);
    }
    let short = sb.run(&["tool", "-h"]).ok().stdout;
    assert!(short.lines().count() < 40, "tool -h is {} lines:\n{short}", short.lines().count());
    let r = sb.run(&["plugins", "--help"]).ok();
    assert!(r.stdout.contains("sha256") && r.stdout.contains("--json") && !r.stdout.contains("--max-turns"));
}

/// Kills `corral tool write_file` with SIGKILL at staggered points of a large write: the file
/// always holds the old or the new content whole, and no temporary file is ever left.
#[test]
fn kill_9_during_writes_leaves_no_partial_and_no_temporary_file() {
    use std::io::Write;
    let sb = Sandbox::new();
    let old = "old\n".repeat(10);
    let new = "new content line\n".repeat(60_000);
    let args = json!({"file_path": "big.txt", "content": new}).to_string();
    let mut killed_running = 0;
    for trial in 0..12u32 {
        std::fs::write(sb.ws.join("big.txt"), &old).unwrap();
        let mut child = sb
            .cmd()
            .args(["--no-read-guard", "tool", "write_file", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(args.as_bytes()).unwrap();
        drop(stdin);
        // Staggered kill points: poll the child a growing number of times first.
        for _ in 0..trial * 5000 {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::yield_now();
        }
        if child.try_wait().unwrap().is_none() {
            killed_running += 1;
        }
        let _ = child.kill();
        child.wait().unwrap();
        let text = std::fs::read_to_string(sb.ws.join("big.txt")).unwrap();
        assert!(text == old || text == new, "trial {trial}: a partial file of {} bytes", text.len());
        let names: Vec<String> = std::fs::read_dir(&sb.ws)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("corral-tmp"))
            .collect();
        assert!(names.is_empty(), "trial {trial} left {names:?}");
    }
    assert!(killed_running > 0, "no trial killed a running write");
}

/// Runs corral with extra environment variables.
fn run_env(sb: &Sandbox, env: &[(&str, &str)], args: &[&str]) -> Run {
    let out = sb.cmd().envs(env.iter().copied()).args(args).output().expect("run corral");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The line of `corral config` for `key`.
fn config_line(stdout: &str, key: &str) -> String {
    let prefix = format!("{key} = ");
    stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {key} in:\n{stdout}"))
        .to_string()
}

#[test]
fn config_shows_each_value_with_its_source() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("corral.toml"), "[model]\nname = \"proj-model\"\n[agent]\nmax_turns = 7\n")
        .unwrap();
    let r = sb.run(&["config"]).ok();
    let project = format!("# project file {}", sb.ws.join("corral.toml").display());
    let line = config_line(&r.stdout, "model.name");
    assert!(line.starts_with("model.name = \"proj-model\"") && line.ends_with(&project), "{line}");
    assert!(config_line(&r.stdout, "model.retries").ends_with("# default"), "{}", r.stdout);
    assert!(config_line(&r.stdout, "limits.timeout_secs").contains("= 30 "), "{}", r.stdout);
    let user = sb.config.join("config.toml");
    assert!(r.stdout.contains(&format!("user file {} (not found)", user.display())), "{}", r.stdout);
    // A user file value shows as such; a project api_key is masked and warned about.
    std::fs::write(&user, "[limits]\nmemory_mib = 64\n").unwrap();
    std::fs::write(sb.ws.join("corral.toml"), "[model]\napi_key = \"sk-secret-0123456789\"\n").unwrap();
    let r = sb.run(&["config"]).ok();
    let line = config_line(&r.stdout, "limits.memory_mib");
    assert!(line.ends_with(&format!("# user file {}", user.display())), "{line}");
    assert!(!r.stdout.contains("0123456789"), "{}", r.stdout);
    assert!(r.stderr.contains("warning:") && r.stderr.contains("model.api_key"), "{}", r.stderr);
    assert!(r.stderr.contains("a project file never decides"), "{}", r.stderr);
    assert!(config_line(&r.stdout, "model.api_key").ends_with("# default"), "{}", r.stdout);
}

#[test]
fn config_flag_beats_env_beats_project() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("corral.toml"), "[agent]\nmax_turns = 7\n[plugins]\ndisabled = [\"a\"]\n")
        .unwrap();
    let r = sb.run(&["config"]).ok();
    assert!(config_line(&r.stdout, "agent.max_turns").starts_with("agent.max_turns = 7 "), "{}", r.stdout);
    let r = run_env(&sb, &[("CORRAL_MAX_TURNS", "8")], &["config"]).ok();
    let line = config_line(&r.stdout, "agent.max_turns");
    assert!(line.starts_with("agent.max_turns = 8 ") && line.ends_with("# env CORRAL_MAX_TURNS"), "{line}");
    // Global flags work before or after the subcommand.
    for args in [&["config", "--max-turns", "9"][..], &["--max-turns", "9", "config"][..]] {
        let r = run_env(&sb, &[("CORRAL_MAX_TURNS", "8")], args).ok();
        let line = config_line(&r.stdout, "agent.max_turns");
        assert!(line.starts_with("agent.max_turns = 9 ") && line.ends_with("# flag --max-turns"), "{line}");
    }
    // Lists accumulate: the project's entry and the flag's.
    let r = sb.run(&["config", "--disable-plugin", "b"]).ok();
    let line = config_line(&r.stdout, "plugins.disabled");
    assert!(line.contains(r#"["a", "b"]"#) && line.contains("corral.toml + flag --disable-plugin"), "{line}");
}

#[test]
fn config_json_has_a_schema_version_values_and_sources() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("corral.toml"), "[output]\nformat = \"json\"\n").unwrap();
    let r = run_env(&sb, &[("NO_COLOR", "1")], &["config", "--json", "--temperature", "0.5"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    assert_eq!(v["schema_version"], 1);
    let s = &v["settings"];
    assert_eq!(s["output.format"]["value"], "json");
    assert_eq!(s["output.format"]["source"], format!("project file {}", sb.ws.join("corral.toml").display()));
    assert_eq!(s["output.color"], json!({"value": "never", "source": "env NO_COLOR"}));
    assert_eq!(s["model.temperature"], json!({"value": 0.5, "source": "flag --temperature"}));
    assert_eq!(s["model.name"], json!({"value": null, "source": "default"}));
    assert_eq!(s["model.max_output_tokens"]["value"], 32768);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        files[0],
        json!({"path": sb.config.join("config.toml").display().to_string(), "kind": "user", "found": false})
    );
    assert_eq!(files[1]["found"], true);
}

#[test]
fn a_bad_settings_file_exits_2_naming_the_line_and_key() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("corral.toml"), "[model]\nname = \"m\"\nmax_output_tokens = \"big\"\n")
        .unwrap();
    for cmd in ["config", "tools"] {
        let r = sb.run(&[cmd]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("corral.toml:3: model.max_output_tokens: expected an integer ≥ 16, found \"big\""),
            "{}",
            r.stderr
        );
    }
    std::fs::write(sb.ws.join("corral.toml"), "[agent]\nmax_turns = 3\n\nturns = 4\n").unwrap();
    let r = sb.run(&["config"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("corral.toml:4: unknown key 'turns' in [agent]; allowed keys: max_turns"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(sb.ws.join("corral.toml")).unwrap();
    let r = run_env(&sb, &[("CORRAL_MAX_TURNS", "lots")], &["config"]);
    assert!(r.code == 2 && r.stderr.contains("CORRAL_MAX_TURNS=lots"), "{}", r.stderr);
}

#[test]
fn a_first_run_says_everything_missing_and_init_writes_a_project_file() {
    let sb = Sandbox::new();
    let r = sb.run(&["fix the bug"]);
    assert_eq!(r.code, 1);
    let user = sb.config.join("config.toml");
    assert!(
        r.stderr.contains("corral has no model configured. Missing: a model server")
            && r.stderr.contains("a model: --model NAME")
            && r.stderr.contains(&user.display().to_string())
            && r.stderr.contains("corral setup"),
        "{}",
        r.stderr
    );
    // At a terminal with nothing to find, set-up says so and what to do.
    let screen = sb.in_terminal(&["fix the bug"], &[], &[]);
    assert!(
        screen.contains("corral needs a model server") && screen.contains("no Ollama (:11434)"),
        "{screen}"
    );
    assert!(!user.exists());
    let r = sb.run(&["init"]).ok();
    assert!(r.stderr.contains("Wrote") && r.stderr.contains("corral trust"), "{}", r.stderr);
    let text = std::fs::read_to_string(sb.ws.join("corral.toml")).unwrap();
    assert!(text.contains("[agent]"), "{text}");
    assert_eq!(sb.run(&["init"]).code, 2);
    assert_eq!(std::fs::read_to_string(sb.ws.join("corral.toml")).unwrap(), text);
    sb.run(&["config"]).ok();
}

#[test]
fn a_cold_start_with_no_usable_cache_compiles_no_built_in_and_stays_quiet() {
    let sb = Sandbox::new();
    // A fresh HOME (no state, so no cache key yet), and a cache dir that cannot be created.
    let fresh = sb.tmp.path().join("fresh-home");
    std::fs::create_dir_all(&fresh).unwrap();
    let blocker = sb.tmp.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let cache = blocker.join("cache");
    let home = fresh.to_str().unwrap();
    let r = sb
        .run_with_env(&["-v", "plugins"], &[("HOME", home), ("CORRAL_CACHE_DIR", cache.to_str().unwrap())])
        .ok();
    let lines: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("plugin ")).collect();
    let built_in: Vec<&&str> = lines.iter().filter(|l| l.contains("(embedded in corral)")).collect();
    assert!(built_in.len() >= 10, "{}", r.stderr);
    // Described at build time, precompiled: no built-in's code is even loaded at start.
    for l in &built_in {
        assert!(l.ends_with(": Deferred"), "a built-in was loaded: {l}\n{}", r.stderr);
    }
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    assert!(r.stdout.contains("precompiled in corral"), "{}", r.stdout);
    // Without -v nothing at all is said about the cache.
    let r =
        sb.run_with_env(&["tools"], &[("HOME", home), ("CORRAL_CACHE_DIR", cache.to_str().unwrap())]).ok();
    assert_eq!(r.stderr, "", "{}", r.stderr);
    assert!(r.stdout.contains("read_file"), "{}", r.stdout);
    // The key was made in the fresh HOME's state dir, private, and nowhere in the workspace.
    let key = fresh.join(".local/state/corral/cache.key");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!sb.ws.join(".corral").exists());
}

#[test]
fn a_planted_cache_entry_is_not_run() {
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let plugins = sb.config.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let key = sb.state_dir().join("cache.key");
    let mine = std::fs::read(&key).unwrap();
    // The attacker's cache: another component, compiled and tagged under another key.
    std::fs::write(&key, [9u8; 32]).unwrap();
    std::fs::copy(support::test_plugin("bulky"), plugins.join("mine.wasm")).unwrap();
    run_cached(&sb, &cache, &["plugins"]).ok();
    let planted = cache_files(&cache, "cwasm");
    assert_eq!(planted.len(), 1, "{planted:?}");
    // The person's own plugin, with the planted entry under its cache name.
    std::fs::write(&key, &mine).unwrap();
    let real = support::test_plugin("faulty");
    std::fs::copy(&real, plugins.join("mine.wasm")).unwrap();
    let sha: String =
        Sha256::digest(std::fs::read(&real).unwrap()).iter().map(|b| format!("{b:02x}")).collect();
    let name = planted[0].file_name().unwrap().to_str().unwrap().to_string();
    let (_, rest) = name.split_once('-').unwrap();
    let target = cache.join("components").join(format!("{sha}-{rest}"));
    std::fs::rename(&planted[0], &target).unwrap();
    std::fs::rename(planted[0].with_extension("seal"), target.with_extension("seal")).unwrap();
    for f in cache_files(&cache, "json") {
        std::fs::remove_file(f).unwrap();
    }
    let list: Value =
        serde_json::from_str(&run_cached(&sb, &cache, &["plugins", "--json"]).ok().stdout).unwrap();
    let entry = list.as_array().unwrap().iter().find(|p| p["name"] == "mine").unwrap();
    assert!(entry["cache"].as_str().unwrap().contains("integrity check"), "{entry}");
    assert!(entry["tools"].as_array().unwrap().contains(&json!("ok")), "{entry}");
    // The real plugin runs: its `ok` tool answers as only it does.
    assert_eq!(run_cached(&sb, &cache, &["tool", "ok", "{}"]).ok().stdout, "fine\n");
}

/// How many functions the pack kept for the component with SHA-256 `sha` holds in `cache`
/// (None: no pack). The count follows the pack's magic line and its `tag HEX` line.
fn pack_rows(cache: &std::path::Path, sha: &str) -> Option<u32> {
    let dir = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("functions-"))?;
    let bytes = std::fs::read(dir.join(format!("{sha}.pack"))).ok()?;
    let head = b"corral functions v1\n".len() + "tag \n".len() + 64;
    assert!(bytes.starts_with(b"corral functions v1\ntag "), "not a pack");
    Some(u32::from_le_bytes(bytes[head..head + 4].try_into().unwrap()))
}

/// Compiling a component keeps the functions Cranelift compiled, tagged under the user's key:
/// a second component that shares code with it (here the same toolchain's standard library
/// and SDK) compiles only the functions it does not share, and runs; functions kept under
/// another key are not used.
#[test]
fn a_component_compiles_only_the_functions_it_does_not_share_with_one_compiled_before() {
    let sb = Sandbox::new();
    let (first, second) = (support::test_plugin("bulky"), support::test_plugin("faulty"));
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
    let sha: String =
        Sha256::digest(std::fs::read(second).unwrap()).iter().map(|b| format!("{b:02x}")).collect();
    let alone = sb.tmp.path().join("alone");
    run_cached(&sb, &alone, &["--plugin", second, "plugins"]).ok();
    let all = pack_rows(&alone, &sha).expect("the compile kept its functions");
    let shared = sb.tmp.path().join("shared");
    run_cached(&sb, &shared, &["--plugin", first, "plugins"]).ok();
    run_cached(&sb, &shared, &["--plugin", second, "plugins"]).ok();
    // Parallel compilation makes the counts vary by a function or two.
    let new = pack_rows(&shared, &sha).unwrap_or(0);
    assert!(new * 4 < all * 3, "{new} functions compiled again of {all}: little or nothing was reused");
    // The code assembled from kept functions runs as the plugin's own.
    assert_eq!(run_cached(&sb, &shared, &["--plugin", second, "tool", "ok", "{}"]).ok().stdout, "fine\n");
    // Under another key the kept functions (and the entry) are not used: all compiled again.
    std::fs::write(sb.state_dir().join("cache.key"), [9u8; 32]).unwrap();
    run_cached(&sb, &shared, &["--plugin", second, "plugins"]).ok();
    let again = pack_rows(&shared, &sha).unwrap_or(0);
    assert!(again * 10 >= all * 9, "{again} functions compiled of {all}: another key's were used");
    assert_eq!(run_cached(&sb, &shared, &["--plugin", second, "tool", "ok", "{}"]).ok().stdout, "fine\n");
}

/// A cache file of `len` bytes (sparse: it takes no disk) last modified `age` ago.
fn planted(path: &std::path::Path, len: u64, age: std::time::Duration) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
    f.set_modified(std::time::SystemTime::now() - age).unwrap();
}

/// The compile cache stays within its size (1 GiB): after a compile, entries of other corral
/// builds (and their compiled functions) go first, then this build's least recently used, each
/// whole; entries used in the last minutes stay, as do files that are not entries. A load
/// refreshes its entry's time of last use.
#[test]
fn the_compile_cache_keeps_within_its_size_dropping_other_builds_and_the_least_recently_used() {
    use std::time::Duration;
    let sb = Sandbox::new();
    let cache = sb.tmp.path().join("own-cache");
    let dir = cache.join("components");
    std::fs::create_dir_all(&dir).unwrap();
    let day = Duration::from_secs(24 * 3600);
    let (gib, theirs) = (1u64 << 30, format!("{}-00000000000000bb-v3", "a".repeat(64)));
    for ext in ["cwasm", "seal", "describe.json"] {
        planted(&dir.join(format!("{theirs}.{ext}")), if ext == "cwasm" { 2 * gib } else { 90 }, 3 * day);
    }
    std::fs::create_dir(dir.join("functions-00000000000000bb")).unwrap();
    planted(&dir.join("functions-00000000000000bb/x.pack"), 200 << 20, 4 * day);
    std::fs::write(dir.join("notes.txt"), "not an entry").unwrap();
    let (faulty, bulky) = (support::test_plugin("faulty"), support::test_plugin("bulky"));
    run_cached(&sb, &cache, &["--plugin", faulty.to_str().unwrap(), "plugins"]).ok();
    let names = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into())
            .collect();
        v.sort();
        v
    };
    assert!(!names().iter().any(|n| n.starts_with(&theirs)), "another build's entry stays: {:?}", names());
    assert!(!dir.join("functions-00000000000000bb").exists(), "{:?}", names());
    assert!(dir.join("notes.txt").exists(), "{:?}", names());
    let ours = cache_files(&cache, "cwasm");
    assert_eq!(ours.len(), 1, "{:?}", names());
    // This build's ending, from the entry just made: `-<engine key>-<layout>`.
    let name = ours[0].file_stem().unwrap().to_string_lossy().into_owned();
    let build = &name[64..];
    // A load refreshes a stale time of last use (on the seal, which no check covers).
    let seal = ours[0].with_extension("seal");
    std::fs::File::options()
        .write(true)
        .open(&seal)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - 3 * day)
        .unwrap();
    assert_eq!(
        run_cached(&sb, &cache, &["--plugin", faulty.to_str().unwrap(), "tool", "ok", "{}"]).ok().stdout,
        "fine\n"
    );
    let used = std::fs::metadata(&seal).unwrap().modified().unwrap();
    assert!(used.elapsed().unwrap_or_default() < day, "the seal's time was not refreshed");
    // Over the size with this build's entries: the least recently used goes, one used a
    // minute ago stays, and so does the faulty plugin's (just used).
    let (old, recent) = (format!("{}{build}", "b".repeat(64)), format!("{}{build}", "c".repeat(64)));
    for ext in ["cwasm", "seal"] {
        planted(&dir.join(format!("{old}.{ext}")), gib, 5 * day);
        planted(&dir.join(format!("{recent}.{ext}")), gib, Duration::from_secs(60));
    }
    run_cached(&sb, &cache, &["--plugin", bulky.to_str().unwrap(), "plugins"]).ok();
    assert!(!names().iter().any(|n| n.starts_with(&old)), "{:?}", names());
    assert!(dir.join(format!("{recent}.cwasm")).exists(), "{:?}", names());
    assert!(ours[0].exists() && cache_files(&cache, "cwasm").len() == 3, "{:?}", names());
}

#[test]
fn a_model_server_that_is_not_running_is_named_at_once_with_where_its_address_came_from() {
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // From the command line: the flag is named.
    let url = format!("http://127.0.0.1:{port}/v1");
    let r = sb.run(&["--provider", "openai", "--base-url", &url, "--model", "m", "hello"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("nothing is listening at 127.0.0.1:{port} (connection refused)")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("point corral at the server you use: --base-url"), "{}", r.stderr);
    assert!(!r.stderr.contains("retrying"), "no retries for a refused local connection: {}", r.stderr);
    // From the person's settings file: that file is named, not a flag they never passed.
    let user = sb.config.join("config.toml");
    std::fs::write(&user, format!("[model]\nprovider = \"openai\"\nbase_url = \"{url}\"\nname = \"m\"\n"))
        .unwrap();
    let r = sb.run(&["hello"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("model.base_url (set in user file {})", user.display())),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("--base-url"), "{}", r.stderr);
}

#[test]
fn the_repl_says_at_start_when_nothing_listens_at_the_model_server() {
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = sb.repl(&format!("http://127.0.0.1:{port}/v1"), &["--provider", "openai"], &["/exit"]);
    assert!(out.contains(&format!("nothing is listening at 127.0.0.1:{port}")), "{out}");
}

/// A file name that is not UTF-8 cannot be returned by a WASI listing: list_files shows it
/// escaped (from the host) with what that means, grep says it was not searched, and every
/// other entry is still listed and searched.
#[test]
fn names_that_are_not_utf8_are_shown_escaped_not_hidden() {
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join("sub")).unwrap();
    for dir in [sb.ws.clone(), sb.ws.join("sub")] {
        std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"bad\xffname.txt")), "hello\n").unwrap();
        std::fs::write(dir.join("z.txt"), "hello\n").unwrap();
    }
    let r = sb.tool(&[], "list_files", &json!({"pattern": "**/*.txt"})).ok();
    for shown in ["bad\\xffname.txt (its name is not UTF-8", "sub/bad\\xffname.txt (its name is not UTF-8"] {
        assert!(r.stdout.contains(shown), "{shown} in {}", r.stdout);
    }
    for other in ["hello.txt", "z.txt", "sub/z.txt"] {
        assert!(r.stdout.lines().any(|l| l == other), "{other} in {}", r.stdout);
    }
    let r = sb.tool(&[], "grep", &json!({"pattern": "hello"})).ok();
    assert!(r.stdout.contains("Found 3 matches"), "{}", r.stdout);
    assert!(r.stdout.contains("not searched: 2 file(s) whose names are not UTF-8"), "{}", r.stdout);
    assert!(
        r.stdout.contains("bad\\xffname.txt") && r.stdout.contains("sub/bad\\xffname.txt"),
        "{}",
        r.stdout
    );
}
