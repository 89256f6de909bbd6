//! Grants and policy files through the real binary: components importing host interfaces they
//! were not granted are refused at load with the setting that grants them; granted, they
//! load and `corral plugins` shows what they asked for and got; a policy file pins plugins by
//! sha256, fixes their grants, and cannot be widened by flags.

use crate::support;

use serde_json::{Value, json};
use support::Sandbox;

fn plugin(name: &str) -> String {
    support::test_plugin(name).to_str().unwrap().to_string()
}

fn sha256_of(path: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

fn entry<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

/// Marking files as read unlocks them for writers: a plugin that imports note-read needs
/// workspace-write, and without it is refused at load with the way to grant it.
#[test]
fn marking_files_as_read_needs_workspace_write() {
    let sb = Sandbox::new();
    let p = plugin("marks_read");
    let r = sb.run(&["--plugin", &p, "tools"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("imports corral:plugin/workspace@0.1.0 (note-read), which needs the 'workspace-write'")
            && r.stderr.contains("--grant marks_read=workspace-write"),
        "{}",
        r.stderr
    );
    let r = sb.run(&["--plugin", &p, "--grant", "marks_read=workspace-write", "tools"]).ok();
    assert!(r.stdout.contains("mark_read"), "{}", r.stdout);
}

#[test]
fn a_plugin_importing_http_without_a_grant_is_refused_at_load() {
    let sb = Sandbox::new();
    let p = plugin("needs_http");
    let r = sb.run(&["--plugin", &p, "tools"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "error: plugin needs_http ({p}) imports corral:plugin/http@0.1.0 (fetch), which needs the 'http' \
             capability, and it was not granted.\nTo grant it, add to your user config (~/.config/corral/config.toml, or a \
             trusted workspace's corral.toml):\n  [plugins.grants]\n  \
             needs_http = [\"http\"]\nor pass --grant needs_http=http\n"
        )
    );
    // A grant of something else does not do.
    let r = sb.run(&["--plugin", &p, "--grant", "needs_http=kv", "tools"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("needs_http = [\"kv\", \"http\"]\nor pass --grant needs_http=kv,http"),
        "{}",
        r.stderr
    );
    // Granted by the flag or by the project file, it loads.
    let r = sb.run(&["--plugin", &p, "--grant", "needs_http=http", "tools"]).ok();
    assert!(r.stdout.contains("fetch_probe"), "{}", r.stdout);
    std::fs::write(sb.ws.join("corral.toml"), "[plugins.grants]\nneeds_http = [\"http\"]\n").unwrap();
    // An untrusted project grants nothing, and says how to trust it.
    let r = sb.run(&["--plugin", &p, "tools"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("settings plugins.grants are ignored") && r.stderr.contains("`corral trust`"),
        "{}",
        r.stderr
    );
    sb.trust();
    let r = sb.run(&["--plugin", &p, "plugins", "--json"]).ok();
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    let e = entry(&list, "needs_http");
    assert_eq!((e["capabilities"].clone(), e["granted"].clone()), (json!(["http"]), json!(["http"])));
    // Loaded, but the network is not on: the host refuses the fetch at call time.
    let r = sb.tool(&["--plugin", &p], "fetch_probe", &json!({"url": "http://127.0.0.1:9/"})).tool_err();
    assert!(r.stderr.contains("denied"), "{}", r.stderr);
}

#[test]
fn a_plugin_importing_process_needs_its_grant_and_then_the_command_policy() {
    let sb = Sandbox::new();
    let p = plugin("needs_process");
    let r = sb.run(&["--plugin", &p, "tools"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "imports corral:plugin/process@0.1.0 (run), which needs the 'process' capability, and it was not \
             granted."
        ) && r.stderr.contains("--grant needs_process=process"),
        "{}",
        r.stderr
    );
    let flags = ["--plugin", p.as_str(), "--grant", "needs_process=process"];
    let r = sb.tool(&flags, "exec_probe", &json!({"argv": ["echo", "hi"]})).tool_err();
    assert!(r.stderr.contains("running commands is off"), "{}", r.stderr);
    let mut with_echo = flags.to_vec();
    with_echo.extend(["--allowed-commands", "echo"]);
    let r = sb.tool(&with_echo, "exec_probe", &json!({"argv": ["echo", "hi"]})).ok();
    assert_eq!(r.stdout, "exit Some(0): hi\n");
    let r = sb.tool(&with_echo, "exec_probe", &json!({"argv": ["cat", "hello.txt"]})).tool_err();
    assert!(r.stderr.contains("'cat' is not an allowed command"), "{}", r.stderr);
    let r = sb.run(&[&with_echo[..], &["plugins"]].concat()).ok();
    assert!(
        r.stdout.contains("needs_process\n") && r.stdout.contains("granted:      process"),
        "{}",
        r.stdout
    );
}

#[test]
fn built_ins_show_their_grants_and_are_left_out_when_narrowed() {
    let sb = Sandbox::new();
    let r = sb.run(&["plugins", "--json"]).ok();
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(entry(&list, "write_file")["granted"], json!(["workspace-write"]));
    assert_eq!(entry(&list, "read_file")["granted"], json!([]));
    assert_eq!(entry(&list, "think")["granted"], json!(["kv", "context"]));
    let rc = entry(&list, "run_command");
    assert_eq!((rc["loaded"].clone(), rc["capabilities"].clone()), (json!(false), json!(["process"])));
    // An empty grant for write_file leaves it out rather than failing.
    let r = sb.run(&["--grant", "write_file=", "plugins"]).ok();
    assert!(
        r.stdout.contains("write_file (built-in, sha256 ")
            && r.stdout.contains("it needs workspace-write, which its entry in plugins.grants leaves out"),
        "{}",
        r.stdout
    );
    let tools = sb.run(&["--grant", "write_file=", "tools"]).ok().stdout;
    assert!(!tools.contains("write_file") && tools.contains("edit_file"), "{tools}");
}

/// A policy file pinning the built-ins `names` (with their grants) plus `extra` TOML.
fn policy(sb: &Sandbox, names: &[(&str, &str)], extra: &str) -> String {
    let list: Value =
        serde_json::from_str(&sb.run(&["--allowed-commands", "echo", "plugins", "--json"]).ok().stdout)
            .unwrap();
    let mut text = format!("{extra}\n");
    for (name, grants) in names {
        let sha = entry(&list, name)["sha256"].as_str().unwrap().to_string();
        text.push_str(&format!("[plugins.{name}]\nsha256 = \"{sha}\"\ngrants = {grants}\n"));
    }
    let path = sb.tmp.path().join("policy.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_policy_pins_plugins_by_sha256() {
    let sb = Sandbox::new();
    let p = plugin("faulty");
    let sha = sha256_of(&p);
    let wrong = "0".repeat(64);
    let file = policy(&sb, &[("read_file", "[]")], &format!("[plugins.faulty]\nsha256 = \"{wrong}\"\n"));
    let r = sb.run(&["--policy", &file, "--plugin", &p, "tools"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: plugin faulty ({p}) has sha256 {sha}, but the policy file {file} pins {wrong}; it is \
             refused. If this component is trusted, update the pin.\n"
        )
    );
    // A plugin the policy does not name is refused.
    let file = policy(&sb, &[("read_file", "[]")], "");
    let r = sb.run(&["--policy", &file, "--plugin", &p, "tools"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: plugin faulty ({p}, sha256 {sha}) is not in the policy file {file}, so it is refused. To \
             allow it, add:\n  [plugins.faulty]\n  sha256 = \"{sha}\"\n"
        )
    );
    // The right hash loads; built-ins the policy does not name are left out.
    let file = policy(&sb, &[("read_file", "[]")], &format!("[plugins.faulty]\nsha256 = \"{sha}\"\n"));
    let r = sb.run(&["--policy", &file, "--plugin", &p, "tools"]).ok();
    let names: Vec<&str> = r.stdout.lines().skip(1).map(|l| l.split_whitespace().next().unwrap()).collect();
    // The read_file plugin also offers view_image.
    assert_eq!(
        names,
        ["count", "flood", "huge", "membomb", "ok", "panic", "read_file", "recurse", "spin", "view_image"]
    );
    let r = sb.run(&["--policy", &file, "--plugin", &p, "skills"]).ok();
    assert!(!r.stdout.contains("code-review"), "no skill loads under a policy: {}", r.stdout);
    let r = sb.run(&["--policy", &file, "--plugin", &p, "plugins"]).ok();
    assert!(r.stdout.contains("write_file (built-in, sha256 "), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("it is not in the policy file {file}")), "{}", r.stdout);
}

#[test]
fn a_policy_fixes_grants_network_and_commands_and_flags_cannot_widen_them() {
    let sb = Sandbox::new();
    let file = policy(
        &sb,
        &[("read_file", "[]"), ("write_file", "[]"), ("run_command", "[\"process\"]")],
        "network = \"llm-only\"\ncommands = \"allowlist\"\nallowed_commands = [\"echo\"]",
    );
    // The policy's grants apply: write_file gets none, so it is left out; commands come from it.
    let r = sb.run(&["--policy", &file, "tools"]).ok();
    assert!(r.stdout.contains("run_command") && !r.stdout.contains("write_file"), "{}", r.stdout);
    let r = sb.tool(&["--policy", &file], "run_command", &json!({"command": ["echo", "pinned"]})).ok();
    assert_eq!(r.stdout, "pinned\n");
    let refusals: [(&[&str], &str); 4] = [
        (
            &["--network", "on"],
            "network.mode = \"on\" (from flag --network); it allows network = \"llm-only\"",
        ),
        (&["--allowed-commands", "echo,cat"], "\"cat\" is not in it"),
        (&["--yolo"], "commands.yolo = true (from flag --yolo); it allows yolo = false"),
        (
            &["--grant", "write_file=workspace-write"],
            "plugins.write_file.grants = []; \"workspace-write\" is not in it",
        ),
    ];
    for (flags, why) in refusals {
        let r = sb.run(&[&["--policy", file.as_str()], flags, &["tools"]].concat());
        assert_eq!(r.code, 2, "{flags:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("error: the policy file {file} does not allow "))
                && r.stderr.contains(why),
            "{flags:?}: {}",
            r.stderr
        );
    }
    // Narrowing is fine.
    let r = sb.run(&["--policy", &file, "--commands", "off", "tools"]).ok();
    assert!(!r.stdout.contains("run_command"), "{}", r.stdout);
    // A broken policy file says where.
    std::fs::write(&file, "network = \"everything\"\n").unwrap();
    let r = sb.run(&["--policy", &file, "tools"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!(
            "policy file {file}: network = \"everything\": expected one of off, llm-only, on"
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_project_plugin_named_like_a_built_in_gets_neither_its_place_nor_its_settings() {
    let sb = Sandbox::new();
    // The person's search key, given to the built-in web_search by name.
    std::fs::write(
        sb.config.join("config.toml"),
        "[plugin-settings.web_search]\nbackend = \"brave\"\napi_key = \"BSA-secret-key-1234\"\n",
    )
    .unwrap();
    // A project ships its own web_search.wasm (any component will do).
    std::fs::create_dir_all(sb.ws.join(".corral/plugins")).unwrap();
    let file = sb.ws.join(".corral/plugins/web_search.wasm");
    std::fs::copy(support::test_plugin("faulty"), &file).unwrap();
    sb.trust();
    let r = sb.run(&["--network", "on", "plugins", "--json"]).ok();
    // Reported with both locations; not loaded, so its tools are not offered and it is never
    // called with the settings.
    assert!(
        r.stderr.contains("has the name of the built-in plugin web_search (embedded in corral)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(file.to_str().unwrap()), "{}", r.stderr);
    assert!(!r.stderr.contains("BSA-secret"), "{}", r.stderr);
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    let named: Vec<&Value> = list.as_array().unwrap().iter().filter(|p| p["name"] == "web_search").collect();
    assert_eq!(named.len(), 2, "{list}");
    let builtin = named.iter().find(|p| p["origin"] == "built-in").unwrap();
    assert_eq!(builtin["loaded"], true, "{builtin}");
    let project = named.iter().find(|p| p["origin"] == "project").unwrap();
    assert_eq!(project["loaded"], false, "{project}");
    assert!(
        !list
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["tools"].as_array().is_some_and(|t| t.contains(&json!("ok"))))
    );
    // Its tools cannot be called either.
    let r = sb.run(&["tool", "ok", "{}"]);
    assert_ne!(r.code, 0);
    assert!(!r.stdout.contains("fine"), "{}", r.stdout);
}
