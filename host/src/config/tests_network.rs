//! Unit tests of the `[network]` keys (mode, allowlists, the hosts map) and of the
//! `[plugin-settings.<plugin>]` tables: parsing, merging across layers, masking, errors.

use super::*;

fn load(
    user: Option<&str>,
    project: &str,
    env: &[(&str, &str)],
) -> Result<(Settings, Provenance), ConfigError> {
    let tmp = tempfile::tempdir().unwrap();
    let (user_dir, ws) = (tmp.path().join("user"), tmp.path().join("ws"));
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    if let Some(u) = user {
        std::fs::write(user_dir.join(USER_FILE), u).unwrap();
    }
    std::fs::write(ws.join(PROJECT_FILE), project).unwrap();
    let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
    load_at(&ws, &user_dir, &get)
}

fn load_at(
    ws: &Path,
    user: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Settings, Provenance), ConfigError> {
    super::load(ws, Some(user), env, &Flags::new(Path::new("/cwd")), true)
}

#[test]
fn network_defaults_to_llm_only_with_no_exceptions() {
    let (s, p) = load(None, "", &[]).unwrap();
    assert_eq!(s.network, NetworkSettings::default());
    assert_eq!(s.network.mode, "llm-only");
    assert_eq!(p.source("network.mode").unwrap(), "default");
    assert!(s.plugin_settings.is_empty());
}

#[test]
fn network_keys_are_read_and_the_hosts_map_merges_across_layers() {
    let user = "[network]\nmode = \"on\"\nallow_hosts = [\"docs.rs\"]\nhosts = { \"a.test\" = \"127.0.0.1\", \"b.test\" = \"10.0.0.1\" }\n";
    let project = "[network]\nallow_private = [\"127.0.0.1:8123\"]\nallow_hosts = [\"*.python.org\"]\n\
                   [network.hosts]\n\"b.test\" = \"10.0.0.2\"\n";
    let (s, p) = load(Some(user), project, &[]).unwrap();
    assert_eq!(s.network.mode, "on");
    assert_eq!(s.network.allow_hosts, vec!["docs.rs".to_string(), "*.python.org".to_string()]);
    assert_eq!(s.network.allow_private, vec!["127.0.0.1:8123".to_string()]);
    assert_eq!(s.network.hosts.get("a.test").map(String::as_str), Some("127.0.0.1"));
    assert_eq!(s.network.hosts.get("b.test").map(String::as_str), Some("10.0.0.2"), "the project file wins");
    assert!(p.source("network.hosts").unwrap().contains(" + "), "{:?}", p.source("network.hosts"));
    let text = p.to_text();
    assert!(
        text.contains("network.hosts = { \"a.test\" = \"127.0.0.1\", \"b.test\" = \"10.0.0.2\" }"),
        "{text}"
    );
}

#[test]
fn network_mode_comes_from_the_environment_and_is_checked() {
    let (s, p) = load(None, "", &[("CORRAL_NETWORK", "off")]).unwrap();
    assert_eq!(s.network.mode, "off");
    assert!(p.to_text().contains("network.hosts = {} "), "an empty table is shown as {{}}: {}", p.to_text());
    assert_eq!(p.source("network.mode").unwrap(), "env CORRAL_NETWORK");
    let e = load(None, "[network]\nmode = \"full\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("network.mode: expected one of off, llm-only, on, found \"full\""), "{e}");
    let e = load(None, "[network]\nhosts = { \"a.test\" = 1 }\n", &[]).unwrap_err().to_string();
    assert!(e.contains("network.hosts: expected a table of strings"), "{e}");
    let e = load(None, "[network]\nhosts = \"a.test\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("network.hosts: expected a table of strings"), "{e}");
}

#[test]
fn plugin_settings_are_read_merged_and_masked() {
    let user = "[plugin-settings.web_search]\nbackend = \"brave\"\napi_key = \"BSA-0123456789abcdef\"\n";
    let project = "[plugin-settings.web_search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\n\
                   count = 5\n[plugin-settings.fetch_url]\nallow_hosts = [\"a.com\", \"b.org\"]\n";
    let (s, p) = load(Some(user), project, &[]).unwrap();
    let ws = &s.plugin_settings["web_search"];
    // The person's key is never joined by a project's endpoint, even in a trusted workspace.
    assert_eq!(ws["backend"], "brave", "a project never redirects a plugin holding the person's secret");
    assert_eq!(ws["api_key"], "BSA-0123456789abcdef");
    assert!(!ws.contains_key("url"));
    let left_out: Vec<&str> = p.ignored.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(
        left_out,
        [
            "plugin-settings.web_search.backend",
            "plugin-settings.web_search.count",
            "plugin-settings.web_search.url"
        ]
    );
    assert_eq!(s.plugin_settings["fetch_url"]["allow_hosts"], "a.com,b.org");
    let text = p.to_text();
    assert!(text.contains("plugin-settings.web_search.backend = \"brave\""), "{text}");
    assert!(text.contains("plugin-settings.web_search.api_key = BSA-****"), "{text}");
    assert!(!text.contains("0123456789abcdef"), "{text}");
    let json = p.to_json();
    assert_eq!(json["plugin_settings"]["fetch_url"]["allow_hosts"]["value"], "a.com,b.org");
    assert!(!json.to_string().contains("0123456789abcdef"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn plugin_secrets_in_the_project_file_are_warned_about() {
    let (_, p) = load(None, "[plugin-settings.web_search]\napi_key = \"x\"\n", &[]).unwrap();
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("plugin-settings.web_search.api_key"), "{:?}", p.warnings);
}

#[test]
fn bad_plugin_settings_name_the_line() {
    let e = load(None, "[plugin-settings]\nweb_search = 3\n", &[]).unwrap_err().to_string();
    assert!(e.contains(":2: plugin-settings.web_search must be a table"), "{e}");
    let e = load(None, "\n[plugin-settings.x]\nk = { a = 1 }\n", &[]).unwrap_err().to_string();
    assert!(e.contains(":3: plugin-settings.x.k: expected a string, found a table"), "{e}");
    let e = load(None, "[plugin-settings.x]\nk = [1]\n", &[]).unwrap_err().to_string();
    assert!(e.contains("plugin-settings.x.k: expected a string"), "{e}");
}
