//! Unit tests of the capability settings: `[plugins.grants]` (parsing, checking, merging per
//! plugin), `[commands]`, and the policy file (parsing, and fixing settings without letting
//! them widen).

use super::*;

fn load_at(user: Option<&str>, project: &str, flags: &Flags) -> Result<(Settings, Provenance), ConfigError> {
    let tmp = tempfile::tempdir().unwrap();
    let (user_dir, ws) = (tmp.path().join("user"), tmp.path().join("ws"));
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    if let Some(u) = user {
        std::fs::write(user_dir.join(USER_FILE), u).unwrap();
    }
    std::fs::write(ws.join(PROJECT_FILE), project).unwrap();
    let env =
        |k: &str| (k == "CORRAL_COMMANDS").then(|| "ask".to_string()).filter(|_| project.contains("#env"));
    super::load(&ws, Some(&user_dir), &env, flags, true)
}

fn no_flags() -> Flags {
    Flags::new(Path::new("/cwd"))
}

fn caps(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn grants_are_read_in_both_table_forms_and_replaced_per_plugin() {
    let user = "[plugins.grants]\nfetcher = [\"http\"]\nnotes = [\"kv\", \"context\"]\n";
    let project = "[plugins]\ngrants = { fetcher = [\"http\", \"kv\"], empty = [] }\n";
    let (s, p) = load_at(Some(user), project, &no_flags()).unwrap();
    assert_eq!(s.grants["fetcher"], caps(&["http", "kv"]), "the project's entry replaces the user's");
    assert_eq!(s.grants["notes"], caps(&["kv", "context"]));
    assert_eq!(s.grants["empty"], caps(&[]));
    assert!(p.source("plugins.grants").unwrap().contains(" + "));
    assert!(
        p.to_text().contains(
            "plugins.grants = { \"empty\" = [], \"fetcher\" = [\"http\", \"kv\"], \"notes\" = [\"kv\", \"context\"] }"
        ),
        "{}",
        p.to_text()
    );
    assert_eq!(
        p.to_json()["settings"]["plugins.grants"]["value"]["fetcher"],
        serde_json::json!(["http", "kv"])
    );
}

#[test]
fn grant_flags_merge_per_plugin_and_override_files() {
    let mut flags = no_flags();
    flags.set("plugins.grants", "--grant", caps(&["a=http", "a=kv", "b="]));
    let (s, p) = load_at(None, "[plugins.grants]\na = [\"context\"]\nc = [\"kv\"]\n", &flags).unwrap();
    assert_eq!(s.grants["a"], caps(&["http", "kv"]));
    assert_eq!(s.grants["b"], caps(&[]));
    assert_eq!(s.grants["c"], caps(&["kv"]));
    assert!(p.source("plugins.grants").unwrap().ends_with("flag --grant"));
}

#[test]
fn bad_grants_say_what_is_allowed() {
    let e = load_at(None, "[plugins.grants]\nx = [\"htp\"]\n", &no_flags()).unwrap_err().to_string();
    assert!(
        e.ends_with(":1: plugins.grants: unknown value \"htp\" for \"x\"; allowed: workspace-write, kv, http, process, context"),
        "{e}"
    );
    let e = load_at(None, "[plugins.grants]\nx = 3\n", &no_flags()).unwrap_err().to_string();
    assert!(e.contains("plugins.grants: expected a table of lists"), "{e}");
    let mut flags = no_flags();
    flags.set("plugins.grants", "--grant", caps(&["nohttp"]));
    let e = load_at(None, "", &flags).unwrap_err().to_string();
    assert_eq!(e, "--grant (plugins.grants): expected NAME=VALUE[,VALUE...], found \"nohttp\"");
}

#[test]
fn commands_are_off_until_something_is_allowed() {
    let (s, _) = load_at(None, "", &no_flags()).unwrap();
    assert_eq!(s.commands, CommandSettings::default());
    assert!(!s.commands.enabled());
    let (s, _) =
        load_at(None, "[commands]\nallowed = [\"git\"]\nenv = [\"CARGO_HOME\"]\n", &no_flags()).unwrap();
    assert!(s.commands.enabled());
    assert_eq!((s.commands.allowed.clone(), s.commands.env.clone()), (caps(&["git"]), caps(&["CARGO_HOME"])));
    let (s, _) = load_at(None, "[commands]\nmode = \"off\"\nallowed = [\"git\"]\n", &no_flags()).unwrap();
    assert!(!s.commands.enabled(), "off wins over the list");
    let (s, p) = load_at(None, "#env\n", &no_flags()).unwrap();
    assert!(s.commands.enabled() && s.commands.mode == "ask");
    assert_eq!(p.source("commands.mode").unwrap(), "env CORRAL_COMMANDS");
    let (s, _) = load_at(None, "[commands]\nyolo = true\n", &no_flags()).unwrap();
    assert!(s.commands.enabled());
    let e = load_at(None, "[commands]\nmode = \"sometimes\"\n", &no_flags()).unwrap_err().to_string();
    assert!(e.contains("commands.mode: expected one of off, allowlist, ask"), "{e}");
}

fn policy(text: &str) -> Result<Policy, ConfigError> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("p.toml");
    std::fs::write(&path, text).unwrap();
    Policy::load(&path)
}

const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[test]
fn policy_files_are_checked() {
    let p = policy(&format!("[plugins.read_file]\nsha256 = \"{SHA}\"\n")).unwrap();
    assert_eq!((p.network.as_str(), p.commands.as_str(), p.yolo), ("llm-only", "off", false));
    assert_eq!(p.pins()["read_file"], SHA);
    assert_eq!(p.sha256.len(), 64);
    let cases = [
        ("network = \"all\"\n", "network = \"all\": expected one of off, llm-only, on"),
        ("commands = \"sometimes\"\n", "commands = \"sometimes\": expected one of off, allowlist, ask"),
        ("yolo = true\n", "yolo = true needs commands = \"allowlist\" or \"ask\""),
        ("[plugins.x]\nsha256 = \"abc\"\n", "plugins.x.sha256 = \"abc\": expected 64 lowercase hex digits"),
        ("unknown = 1\n", "unknown field `unknown`"),
    ];
    for (text, why) in cases {
        let e = policy(text).unwrap_err().to_string();
        assert!(e.starts_with("policy file ") && e.contains(why), "{text}: {e}");
    }
    let e =
        policy(&format!("[plugins.x]\nsha256 = \"{SHA}\"\ngrants = [\"root\"]\n")).unwrap_err().to_string();
    assert!(e.contains("plugins.x.grants: unknown capability \"root\""), "{e}");
    let e = Policy::load(Path::new("/nonexistent/p.toml")).unwrap_err().to_string();
    assert!(e.starts_with("policy file /nonexistent/p.toml: cannot read it: "), "{e}");
}

#[test]
fn a_policy_fills_in_unset_settings_keeps_narrower_ones_and_refuses_wider_ones() {
    let p = policy(&format!(
        "network = \"on\"\ncommands = \"allowlist\"\nallowed_commands = [\"git\", \"ls\"]\n\
         [plugins.w]\nsha256 = \"{SHA}\"\ngrants = [\"workspace-write\", \"kv\"]\n"
    ))
    .unwrap();
    let (mut s, prov) = load_at(None, "", &no_flags()).unwrap();
    p.apply(&mut s, &prov).unwrap();
    assert_eq!(s.network.mode, "on");
    assert_eq!((s.commands.mode.as_str(), s.commands.allowed.clone()), ("allowlist", caps(&["git", "ls"])));
    assert_eq!(s.grants["w"], caps(&["workspace-write", "kv"]));

    let narrower =
        "[network]\nmode = \"off\"\n[commands]\nallowed = [\"ls\"]\n[plugins.grants]\nw = [\"kv\"]\n";
    let (mut s, prov) = load_at(None, narrower, &no_flags()).unwrap();
    p.apply(&mut s, &prov).unwrap();
    assert_eq!((s.network.mode.as_str(), s.commands.allowed.clone()), ("off", caps(&["ls"])));
    assert_eq!(s.grants["w"], caps(&["kv"]));

    let wider = [
        ("[commands]\nallowed = [\"rm\"]\n", "commands.allowed = [\"rm\"] (from project file "),
        ("[commands]\nmode = \"ask\"\n", "commands.mode = \"ask\" (from project file "),
        ("[commands]\nyolo = true\n", "commands.yolo = true (from project file "),
        ("[plugins.grants]\nw = [\"http\"]\n", "plugins.grants.w = [\"http\"] (from project file "),
        ("[plugins.grants]\nother = [\"kv\"]\n", "; it allows other is not in its [plugins]"),
    ];
    for (text, why) in wider {
        let (mut s, prov) = load_at(None, text, &no_flags()).unwrap();
        let e = p.apply(&mut s, &prov).unwrap_err().to_string();
        assert!(e.starts_with("the policy file ") && e.contains(why), "{text}: {e}");
    }
    let strict = policy("").unwrap();
    let (mut s, prov) = load_at(None, "[network]\nmode = \"on\"\n", &no_flags()).unwrap();
    let e = strict.apply(&mut s, &prov).unwrap_err().to_string();
    assert!(e.contains("network.mode = \"on\"") && e.contains("it allows network = \"llm-only\""), "{e}");
}
