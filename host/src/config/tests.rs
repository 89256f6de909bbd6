//! Unit tests of the layered settings: order of layers and provenance, lists, every error
//! message with its file and line, masking, NO_COLOR.

use super::*;
use std::time::Duration;

/// A user dir and a workspace in a temporary folder.
struct Fixture {
    _tmp: tempfile::TempDir,
    user: PathBuf,
    ws: PathBuf,
}

impl Fixture {
    fn new(user_toml: Option<&str>, project_toml: Option<&str>) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let (user, ws) = (tmp.path().join("user"), tmp.path().join("ws"));
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        if let Some(t) = user_toml {
            std::fs::write(user.join(USER_FILE), t).unwrap();
        }
        if let Some(t) = project_toml {
            std::fs::write(ws.join(PROJECT_FILE), t).unwrap();
        }
        Fixture { _tmp: tmp, user, ws }
    }

    fn load(&self, env: &[(&str, &str)], flags: &Flags) -> Result<(Settings, Provenance), ConfigError> {
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        load(&self.ws, Some(&self.user), &get, flags, true)
    }

    fn user_src(&self) -> String {
        format!("user file {}", self.user.join(USER_FILE).display())
    }

    fn project_src(&self) -> String {
        format!("project file {}", self.ws.join(PROJECT_FILE).display())
    }

    fn project_err(&self, text: &str) -> String {
        std::fs::write(self.ws.join(PROJECT_FILE), text).unwrap();
        self.load(&[], &Flags::default()).unwrap_err().to_string()
    }
}

fn no_flags() -> Flags {
    Flags::new(Path::new("/cwd"))
}

const USER: &str = "[limits]\ntimeout_secs = 5\nmemory_mib = 64\n[model]\nname = \"u\"\nretries = 2\n\
                    [agent]\nmax_turns = 10\nhistory = false\n[output]\nformat = \"json\"\n";
const PROJECT: &str = "[limits]\ntimeout_secs = 7\n[model]\nname = \"p\"\n[agent]\nmax_turns = 20\n";

#[test]
fn defaults_when_nothing_is_set() {
    let f = Fixture::new(None, None);
    let (s, p) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s, Settings::default());
    assert!(p.entries.iter().all(|e| e.source() == "default"));
    assert_eq!(p.entries.len(), keys::KEYS.len());
    assert_eq!(s.model.max_output_tokens, 32768);
    assert_eq!((s.model.retries, s.model.retry_base_ms, s.model.timeout_secs), (5, 1000, 600));
    assert_eq!(s.agent.max_turns, 100);
    assert_eq!(p.get("limits.timeout_secs").unwrap().value, Value::Float(30.0));
    assert!(p.files.iter().all(|f| !f.found) && p.files.len() == 2);
}

#[test]
fn each_layer_overrides_the_one_before() {
    let f = Fixture::new(Some(USER), None);
    let (s, p) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s.limits.timeout, Duration::from_secs(5));
    assert_eq!(s.model.model.as_deref(), Some("u"));
    assert_eq!(s.agent.max_turns, 10);
    assert_eq!(p.source("model.name").unwrap(), f.user_src());
    assert_eq!(p.source("model.stream").unwrap(), "default");

    std::fs::write(f.ws.join(PROJECT_FILE), PROJECT).unwrap();
    let (s, p) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s.limits.timeout, Duration::from_secs(7));
    assert_eq!(s.limits.memory_bytes, 64 << 20, "the user file's other keys stay");
    assert_eq!((s.model.model.as_deref(), s.model.retries, s.agent.max_turns), (Some("p"), 2, 20));
    assert_eq!(p.source("limits.timeout_secs").unwrap(), f.project_src());
    assert_eq!(p.source("limits.memory_mib").unwrap(), f.user_src());
    assert_eq!(p.source("agent.history").unwrap(), f.user_src());
    assert_eq!(p.source("output.format").unwrap(), f.user_src());

    let env = [("CORRAL_TIMEOUT_SECS", "9"), ("CORRAL_MODEL", "e"), ("CORRAL_MAX_TURNS", "30")];
    let (s, p) = f.load(&env, &no_flags()).unwrap();
    assert_eq!(s.limits.timeout, Duration::from_secs(9));
    assert_eq!((s.model.model.as_deref(), s.agent.max_turns), (Some("e"), 30));
    assert_eq!(p.source("model.name").unwrap(), "env CORRAL_MODEL");
    assert_eq!(p.source("agent.max_turns").unwrap(), "env CORRAL_MAX_TURNS");

    let mut flags = no_flags();
    flags.set("model.name", "--model", "f".to_string()).set("limits.timeout_secs", "--timeout", 11.0);
    flags.set("agent.max_turns", "--max-turns", 40u32).set(
        "output.format",
        "--output-format",
        "stream-json".to_string(),
    );
    let (s, p) = f.load(&env, &flags).unwrap();
    assert_eq!(s.limits.timeout, Duration::from_secs(11));
    assert_eq!((s.model.model.as_deref(), s.agent.max_turns), (Some("f"), 40));
    assert_eq!(s.output.format, OutputFormat::StreamJson);
    assert_eq!(p.source("model.name").unwrap(), "flag --model");
    assert_eq!(p.source("limits.timeout_secs").unwrap(), "flag --timeout");
    assert_eq!(p.source("output.format").unwrap(), "flag --output-format");
    assert_eq!(p.source("limits.memory_mib").unwrap(), f.user_src());
}

#[test]
fn lists_accumulate_across_layers_and_paths_follow_their_file() {
    let f = Fixture::new(
        Some("[plugins]\ndisabled = [\"a\"]\nload = [\"p.wasm\"]\n[workspace]\nadd_dirs_ro = [\"shared\"]\n"),
        Some("[plugins]\ndisabled = [\"b\"]\n[workspace]\nadd_dirs_ro = [\"../x\"]\nadd_dirs = [\"w\"]\n"),
    );
    let mut flags = no_flags();
    flags.list("plugins.disabled", "--disable-plugin", &["c".to_string()]);
    flags.list("workspace.add_dirs_ro", "--add-dir-ro", &[PathBuf::from("y")]);
    let (s, p) = f.load(&[], &flags).unwrap();
    assert_eq!(s.disabled_plugins, ["a", "b", "c"]);
    assert_eq!(
        p.source("plugins.disabled").unwrap(),
        format!("{} + {} + flag --disable-plugin", f.user_src(), f.project_src())
    );
    assert_eq!(s.extra_plugins, vec![f.user.join("p.wasm")]);
    assert_eq!(
        s.extra_roots,
        vec![
            (f.ws.join("w"), true),
            (f.user.join("shared"), false),
            (f.ws.join("../x"), false),
            (PathBuf::from("/cwd/y"), false),
        ]
    );
    assert_eq!(p.source("workspace.add_dirs").unwrap(), f.project_src());
}

#[test]
fn bad_values_name_the_file_line_key_and_what_is_allowed() {
    let f = Fixture::new(None, None);
    let path = f.ws.join(PROJECT_FILE).display().to_string();
    let cases = [
        (
            "[model]\nname = \"m\"\n\n\nmax_output_tokens = \"big\"\n",
            5,
            "model.max_output_tokens: expected an integer ≥ 16, found \"big\"",
        ),
        (
            "[limits]\ntimeout_secs = 0\n",
            2,
            "limits.timeout_secs: expected a number between 0 and 3600 (above 0), found 0",
        ),
        (
            "[limits]\n\nmemory_mib = 1\n",
            3,
            "limits.memory_mib: expected an integer from 16 to 16384, found 1",
        ),
        ("[model]\nretries = 1.5\n", 2, "model.retries: expected an integer from 1 to 20, found 1.5"),
        ("[model]\ntemperature = 2.5\n", 2, "model.temperature: expected a number from 0 to 2, found 2.5"),
        (
            "[model]\nprovider = \"gpt\"\n",
            2,
            "model.provider: expected one of openai, anthropic, ollama, llamacpp, lmstudio, openrouter, found \"gpt\"",
        ),
        ("[agent]\nhistory = \"no\"\n", 2, "agent.history: expected true or false, found \"no\""),
        (
            "[output]\ncolor = \"blue\"\n",
            2,
            "output.color: expected one of auto, always, never, found \"blue\"",
        ),
        (
            "[plugins]\ndisabled = [1]\n",
            2,
            "plugins.disabled: expected an array of strings, found an array with a value that is not a string",
        ),
        (
            "[workspace]\nadd_dirs = \"x\"\n",
            2,
            "workspace.add_dirs: expected an array of paths (strings), found \"x\"",
        ),
        (
            "[model]\nmax_context_tokens = 100\n",
            2,
            "model.max_context_tokens: expected an integer ≥ 1024, found 100",
        ),
    ];
    for (text, line, why) in cases {
        assert_eq!(f.project_err(text), format!("{path}:{line}: {why}"), "for {text:?}");
    }
}

#[test]
fn unknown_keys_tables_and_bad_syntax_name_the_line() {
    let f = Fixture::new(None, None);
    let path = f.ws.join(PROJECT_FILE).display().to_string();
    assert_eq!(
        f.project_err("[limits]\ntimeout_secs = 3\ntimeout = 5\n"),
        format!(
            "{path}:3: unknown key 'timeout' in [limits]; allowed keys: timeout_secs, memory_mib, max_output_kb"
        )
    );
    assert_eq!(
        f.project_err("# c\n[modle]\nname = \"x\"\n"),
        format!(
            "{path}:2: unknown table [modle]; allowed tables: limits, plugins, workspace, undo, model, agent, sessions, \
             output, network, commands, plugin-settings.<plugin>, mcp_servers.<name>"
        )
    );
    assert_eq!(f.project_err("\nlimits = 3\n"), format!("{path}:2: 'limits' must be a table, like [limits]"));
    let e = f.project_err("[model]\nname = \"x\"\nstream = tru\n");
    assert!(e.starts_with(&format!("{path}:3: invalid TOML: ")), "{e}");
    let e = f.project_err("[agent]\nmax_turns = 3\nmax_turns = 4\n");
    assert!(e.starts_with(&format!("{path}:3: invalid TOML: ")), "{e}");
    // The user file is checked the same way and named.
    std::fs::remove_file(f.ws.join(PROJECT_FILE)).unwrap();
    std::fs::write(f.user.join(USER_FILE), "[agent]\ncontinue = 1\n").unwrap();
    let e = f.load(&[], &no_flags()).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}:2: agent.continue: expected true or false, found 1", f.user.join(USER_FILE).display())
    );
}

#[test]
fn bad_environment_values_name_the_variable() {
    let f = Fixture::new(None, None);
    let e = f.load(&[("CORRAL_MAX_TURNS", "abc")], &no_flags()).unwrap_err().to_string();
    assert_eq!(
        e,
        "environment variable CORRAL_MAX_TURNS=abc is not valid: agent.max_turns: expected an integer ≥ 1, found \"abc\""
    );
    let e = f.load(&[("CORRAL_PROVIDER", "x")], &no_flags()).unwrap_err().to_string();
    assert!(e.contains("CORRAL_PROVIDER=x") && e.contains("openrouter"), "{e}");
    let e = f.load(&[("CORRAL_TIMEOUT_SECS", "abc")], &no_flags()).unwrap_err().to_string();
    assert!(e.contains("CORRAL_TIMEOUT_SECS=abc"), "{e}");
    let e = f.load(&[("CORRAL_NO_READ_GUARD", "maybe")], &no_flags()).unwrap_err().to_string();
    assert!(e.contains("CORRAL_NO_READ_GUARD=maybe"), "{e}");
    let (s, p) = f.load(&[("CORRAL_NO_READ_GUARD", "1"), ("CORRAL_MODEL", "")], &no_flags()).unwrap();
    assert!(!s.read_guard);
    assert_eq!(p.source("workspace.read_guard").unwrap(), "env CORRAL_NO_READ_GUARD");
    assert_eq!(p.source("model.name").unwrap(), "default", "an empty variable is unset");
}

#[test]
fn bad_flag_values_name_the_flag() {
    let f = Fixture::new(None, None);
    let mut flags = no_flags();
    flags.set("limits.memory_mib", "--memory-mib", 1u64);
    let e = f.load(&[], &flags).unwrap_err().to_string();
    assert_eq!(e, "--memory-mib (limits.memory_mib): expected an integer from 16 to 16384, found 1");
}

#[test]
fn api_keys_are_masked_and_warned_about_in_project_files() {
    assert_eq!(mask("sk-abcdefghijklmnop"), "sk-a****");
    assert_eq!(mask("short"), "(set)");
    let f = Fixture::new(Some("[model]\napi_key = \"sk-user-0123456789\"\n"), None);
    let (s, p) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s.model.api_key.as_deref(), Some("sk-user-0123456789"));
    assert!(p.warnings.is_empty());
    let text = p.to_text();
    assert!(text.contains("model.api_key = sk-u****"), "{text}");
    assert!(!text.contains("0123456789"), "{text}");
    let json = p.to_json();
    assert_eq!(json["settings"]["model.api_key"]["value"], "sk-u****");
    assert!(!json.to_string().contains("0123456789"));

    // A project file never supplies the key, trusted or not.
    std::fs::write(f.ws.join(PROJECT_FILE), "[model]\napi_key = \"sk-proj-0123456789\"\n").unwrap();
    let (s, p) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s.model.api_key.as_deref(), Some("sk-user-0123456789"));
    assert_eq!(p.ignored.len(), 1, "{:?}", p.ignored);
    assert_eq!(
        (p.ignored[0].key.as_str(), p.ignored[0].why),
        ("model.api_key", crate::config::Refusal::Never)
    );
    assert!(!p.ignored[0].shown.contains("0123456789"), "{:?}", p.ignored[0]);
}

#[test]
fn no_color_means_never_unless_a_flag_says_otherwise() {
    let f = Fixture::new(None, Some("[output]\ncolor = \"always\"\n"));
    let (s, _) = f.load(&[], &no_flags()).unwrap();
    assert_eq!(s.output.color, ColorChoice::Always);
    let (s, p) = f.load(&[("NO_COLOR", "1")], &no_flags()).unwrap();
    assert_eq!(s.output.color, ColorChoice::Never);
    assert_eq!(p.source("output.color").unwrap(), "env NO_COLOR");
    let (s, _) = f.load(&[("NO_COLOR", "")], &no_flags()).unwrap();
    assert_eq!(s.output.color, ColorChoice::Always, "an empty NO_COLOR does not count");
    let mut flags = no_flags();
    flags.set("output.color", "--color", "auto".to_string());
    let (s, p) = f.load(&[("NO_COLOR", "1")], &flags).unwrap();
    assert_eq!(s.output.color, ColorChoice::Auto);
    assert_eq!(p.source("output.color").unwrap(), "flag --color");
    assert!(
        !ColorChoice::Never.enabled(true)
            && ColorChoice::Auto.enabled(true)
            && !ColorChoice::Auto.enabled(false)
    );
}

#[test]
fn every_key_round_trips_through_the_settings() {
    for def in keys::KEYS {
        let sample = match def.kind {
            keys::Kind::UInt { min, .. } => Value::Int(min + 1),
            keys::Kind::Float { max, .. } => Value::Float(max / 2.0),
            keys::Kind::Bool => {
                Value::Bool(!matches!(settings::get(&Settings::default(), def.key), Value::Bool(true)))
            }
            keys::Kind::Str => Value::Str("sample".into()),
            keys::Kind::Choice(c) => Value::Str(c[c.len() - 1].into()),
            keys::Kind::List => Value::List(vec!["x".into()]),
            keys::Kind::Paths => Value::Paths(vec![PathBuf::from("/x")]),
            keys::Kind::Map => Value::Map([("a".to_string(), "b".to_string())].into()),
            keys::Kind::ListMap(v) => Value::ListMap([("a".to_string(), vec![v[0].to_string()])].into()),
            keys::Kind::Path => Value::Path(PathBuf::from("/p")),
        };
        let mut s = Settings::default();
        settings::set(&mut s, def.key, sample.clone());
        assert_ne!(s, Settings::default(), "{} changed nothing", def.key);
        assert_eq!(settings::get(&s, def.key), sample, "{}", def.key);
    }
}

#[test]
fn the_listing_is_stable_and_names_the_files() {
    let f = Fixture::new(None, Some("[agent]\nmax_turns = 3\n"));
    let (_, p) = f.load(&[], &no_flags()).unwrap();
    let text = p.to_text();
    let keys: Vec<&str> =
        text.lines().take_while(|l| !l.is_empty()).map(|l| l.split(" = ").next().unwrap()).collect();
    let expected: Vec<&str> = keys::KEYS.iter().map(|k| k.key).collect();
    assert_eq!(keys, expected);
    let line = text.lines().find(|l| l.starts_with("agent.max_turns = 3 ")).unwrap();
    assert!(line.ends_with(&format!("    # {}", f.project_src())), "{line}");
    assert!(text.contains("model.name = (unset)"), "{text}");
    assert!(text.contains(&format!("{} (not found)", f.user_src())), "{text}");
    assert!(text.contains(&format!("{} (found)", f.project_src())), "{text}");
    let json = p.to_json();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["settings"]["agent.max_turns"]["value"], 3);
    assert_eq!(json["settings"]["model.name"]["value"], serde_json::Value::Null);
    assert_eq!(json["files"][1]["found"], true);
    assert_eq!(json["files"][0]["found"], false);
}

#[test]
fn a_provider_flag_brings_its_own_endpoint() {
    let f = Fixture::new(Some("[model]\nbase_url = \"http://127.0.0.1:1234/v1\"\n"), None);
    let mut flags = Flags::new(Path::new("/cwd"));
    flags.set("model.provider", "--provider", Input::Text("openai".into()));
    let (s, p) = f.load(&[], &flags).unwrap();
    assert_eq!(s.model.base_url, None);
    assert!(
        p.warnings.iter().any(|w| w.contains("--provider openai brings its own endpoint")),
        "{:?}",
        p.warnings
    );
    flags.set("model.base_url", "--base-url", Input::Text("http://127.0.0.1:9/v1".into()));
    let (s, p) = f.load(&[], &flags).unwrap();
    assert_eq!(s.model.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    // Without a provider flag, the file's endpoint stands.
    let (s, _) = f.load(&[], &Flags::new(Path::new("/cwd"))).unwrap();
    assert_eq!(s.model.base_url.as_deref(), Some("http://127.0.0.1:1234/v1"));
}
