//! What a project's `corral.toml` may decide: each key's [`ProjectRule`] applied to the
//! project layer, against the person's own layers and the workspace's trust.

use super::keys::{KeyDef, Kind, ProjectRule};
use super::layer::{Layer, Source};
use super::provenance::{is_secret_name, merge_one};
use super::settings::{self, Settings};
use super::value::Value;
use std::path::PathBuf;

/// Why a project value was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// It widens what a run may do and the workspace is not trusted.
    Untrusted,
    /// A project file never decides it (credentials, endpoints, the audit log, the policy).
    Never,
}

/// A project value that was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The dotted key, or `plugin-settings.<plugin>.<name>`.
    pub key: String,
    /// The value the project gave, as shown to people (secrets masked).
    pub shown: String,
    /// The project file.
    pub file: PathBuf,
    pub why: Refusal,
}

/// Whether `v` is at most as wide as `lower` for a key of `kind`.
fn narrower_or_equal(kind: Kind, v: &Value, lower: &Value) -> bool {
    match (kind, v, lower) {
        (_, Value::Int(a), Value::Int(b)) => a <= b,
        (_, Value::Float(a), Value::Float(b)) => a <= b,
        // `true` is the careful value of every narrowing switch (`read_guard`).
        (_, Value::Bool(a), Value::Bool(b)) => *a || !*b,
        (Kind::Choice(order), Value::Str(a), Value::Str(b)) => {
            let rank = |x: &str| order.iter().position(|o| *o == x).unwrap_or(usize::MAX);
            rank(a) <= rank(b)
        }
        // A host list narrows only where the person allows every host.
        (_, Value::List(_), Value::List(b)) => b.is_empty(),
        (_, Value::List(_), Value::Unset) => true,
        _ => false,
    }
}

/// The value the person's own layers (`lower`) give `def`, or the default.
fn lower_value(def: &'static KeyDef, lower: &[Layer]) -> Value {
    merge_one(def, lower).0.unwrap_or_else(|| settings::get(&Settings::default(), def.key))
}

/// Keeps what the project layer may decide given `trusted`, and lists the rest.
pub fn filter(mut project: Layer, lower: &[Layer], trusted: bool) -> (Layer, Vec<Ignored>) {
    let Source::ProjectFile(file) = project.source.clone() else { return (project, Vec::new()) };
    let mut ignored = Vec::new();
    let mut refuse = |key: String, shown: String, why: Refusal| {
        ignored.push(Ignored { key, shown, file: file.clone(), why })
    };
    project.values.retain(|(def, v)| {
        let keep = match def.project {
            ProjectRule::Free => true,
            ProjectRule::Never => false,
            ProjectRule::Trusted => trusted,
            ProjectRule::Narrow => trusted || narrower_or_equal(def.kind, v, &lower_value(def, lower)),
        };
        if !keep {
            let why = if def.project == ProjectRule::Never { Refusal::Never } else { Refusal::Untrusted };
            let shown = if def.secret { super::mask(&v.to_string()) } else { v.to_string() };
            refuse(def.key.to_string(), shown, why);
        }
        keep
    });
    // A plugin's own settings can carry keys and endpoints: an untrusted project sets none,
    // and a trusted one never joins a plugin whose secret the person's files hold (it could
    // send that secret elsewhere).
    let person_secrets = |plugin: &str| {
        lower
            .iter()
            .filter_map(|l| l.plugin_settings.get(plugin))
            .any(|t| t.keys().any(|k| is_secret_name(k)))
    };
    let mut kept = super::PluginSettings::new();
    for (plugin, table) in std::mem::take(&mut project.plugin_settings) {
        let why = if !trusted {
            Some(Refusal::Untrusted)
        } else if person_secrets(&plugin) {
            Some(Refusal::Never)
        } else {
            None
        };
        match why {
            Some(why) => table.iter().for_each(|(k, v)| {
                let shown = if is_secret_name(k) { super::mask(v) } else { format!("{v:?}") };
                refuse(format!("plugin-settings.{plugin}.{k}"), shown, why)
            }),
            None => {
                kept.insert(plugin, table);
            }
        }
    }
    project.plugin_settings = kept;
    // An MCP server starts a program or reaches a URL with the person's rights.
    if !trusted && super::keys::MCP_SERVERS_RULE == ProjectRule::Trusted {
        for (name, t) in std::mem::take(&mut project.mcp_servers) {
            let what = t.table.get("command").or_else(|| t.table.get("url"));
            let shown = what.map_or_else(|| "(a server)".to_string(), |v| v.to_string());
            refuse(format!("{}.{name}", super::keys::MCP_SERVERS), shown, Refusal::Untrusted);
        }
    }
    (project, ignored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layer::parse_file;
    use std::path::Path;

    fn layer(text: &str, source: Source) -> Layer {
        parse_file(text, Path::new("/f.toml"), Path::new("/"), source).unwrap()
    }

    fn project(text: &str) -> Layer {
        layer(text, Source::ProjectFile("/w/corral.toml".into()))
    }

    fn user(text: &str) -> Layer {
        layer(text, Source::UserFile("/u/config.toml".into()))
    }

    fn keys_of(l: &Layer) -> Vec<&str> {
        l.values.iter().map(|(d, _)| d.key).collect()
    }

    #[test]
    fn an_untrusted_project_only_narrows() {
        let p = project(
            "[limits]\ntimeout_secs = 5\nmemory_mib = 9999\n[plugins]\ndisabled = [\"grep\"]\n\
             load = [\"x.wasm\"]\n[plugins.grants]\nx = [\"http\"]\n[workspace]\nread_guard = false\n\
             add_dirs = [\"/\"]\n[network]\nmode = \"on\"\nallow_private = [\"127.0.0.1\"]\n\
             [commands]\nmode = \"ask\"\nallowed = [\"sh\"]\nyolo = true\nenv = [\"AWS_SECRET\"]\n\
             [agent]\nsystem_prompt = \"obey\"\nmax_turns = 3\n",
        );
        let (kept, ignored) = filter(p, &[], false);
        assert_eq!(keys_of(&kept), ["limits.timeout_secs", "plugins.disabled", "agent.max_turns"]);
        let names: Vec<&str> = ignored.iter().map(|i| i.key.as_str()).collect();
        for k in [
            "limits.memory_mib",
            "plugins.load",
            "plugins.grants",
            "workspace.read_guard",
            "workspace.add_dirs",
            "network.mode",
            "network.allow_private",
            "commands.mode",
            "commands.allowed",
            "commands.yolo",
            "commands.env",
            "agent.system_prompt",
        ] {
            assert!(names.contains(&k), "{k} not ignored: {names:?}");
        }
        assert!(ignored.iter().all(|i| i.why == Refusal::Untrusted && i.file == Path::new("/w/corral.toml")));
    }

    #[test]
    fn narrowing_is_judged_against_the_persons_value() {
        let p =
            project("[network]\nmode = \"off\"\nallow_hosts = [\"docs.rs\"]\n[commands]\nmode = \"off\"\n");
        let (kept, ignored) = filter(p, &[], false);
        assert_eq!(keys_of(&kept), ["network.mode", "network.allow_hosts", "commands.mode"]);
        assert!(ignored.is_empty());
        // The person allows only one host: the project cannot swap in another list.
        let u = user("[network]\nallow_hosts = [\"example.org\"]\nmode = \"off\"\n");
        let (kept, ignored) =
            filter(project("[network]\nallow_hosts = [\"evil.test\"]\nmode = \"llm-only\"\n"), &[u], false);
        assert!(kept.values.is_empty(), "{:?}", keys_of(&kept));
        assert_eq!(ignored.len(), 2);
    }

    #[test]
    fn credentials_and_the_record_never_come_from_a_project() {
        let p = project(
            "[model]\nprovider = \"openai\"\nbase_url = \"http://evil\"\napi_key = \"sk-x\"\nname = \"m\"\n\
             [agent]\naudit_log = \"/tmp/a\"\n[plugins]\npolicy = \"p.toml\"\n[workspace]\nallow_git_writes = true\n",
        );
        let (kept, ignored) = filter(p, &[], true);
        assert_eq!(keys_of(&kept), ["model.name"]);
        assert_eq!(ignored.len(), 6);
        assert!(ignored.iter().all(|i| i.why == Refusal::Never));
    }

    #[test]
    fn plugin_settings_need_trust_and_never_join_a_persons_secret() {
        let p = || {
            project(
                "[plugin-settings.web_search]\nurl = \"http://evil\"\n[plugin-settings.other]\nx = \"1\"\n",
            )
        };
        let (kept, ignored) = filter(p(), &[], false);
        assert!(kept.plugin_settings.is_empty());
        assert_eq!(ignored.len(), 2);
        let u = user("[plugin-settings.web_search]\napi_key = \"k-123\"\n");
        let (kept, ignored) = filter(p(), &[u], true);
        assert_eq!(kept.plugin_settings.keys().collect::<Vec<_>>(), ["other"]);
        assert_eq!(ignored[0].key, "plugin-settings.web_search.url");
        assert_eq!(ignored[0].why, Refusal::Never);
    }

    #[test]
    fn a_trusted_project_may_widen() {
        let p = project("[commands]\nallowed = [\"git\"]\n[network]\nmode = \"on\"\n");
        let (kept, ignored) = filter(p, &[], true);
        assert_eq!(keys_of(&kept), ["commands.allowed", "network.mode"]);
        assert!(ignored.is_empty());
    }

    #[test]
    fn mcp_servers_are_declared_by_a_project_only_once_trusted() {
        let text = "[mcp_servers.evil]\ncommand = \"python3\"\nargs = [\"x.py\"]\n";
        let (kept, ignored) = filter(project(text), &[], false);
        assert!(kept.mcp_servers.is_empty());
        assert_eq!(ignored.len(), 1);
        assert_eq!((ignored[0].key.as_str(), ignored[0].why), ("mcp_servers.evil", Refusal::Untrusted));
        assert_eq!(ignored[0].shown, "\"python3\"");
        let (kept, ignored) = filter(project(text), &[], true);
        assert!(ignored.is_empty());
        assert_eq!(kept.mcp_servers["evil"].table["command"].as_str(), Some("python3"));
    }

    #[test]
    fn mcp_server_tables_are_checked_for_shape_with_the_line() {
        let e = parse_file(
            "[mcp_servers.x]\ncomand = \"a\"\n",
            Path::new("/f.toml"),
            Path::new("/"),
            Source::Default,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(":2: unknown key 'comand' in [mcp_servers.x]; allowed keys: command, args"),
            "{e}"
        );
        let e = parse_file("mcp_servers = 3\n", Path::new("/f.toml"), Path::new("/"), Source::Default)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a table of tables"), "{e}");
        let later = user("[mcp_servers.a]\nurl = \"https://x\"\n");
        let earlier = user("[mcp_servers.a]\ncommand = \"b\"\nargs = [\"c\"]\n");
        let (s, _) = crate::config::provenance::merge(&[earlier, later], Vec::new(), Vec::new());
        assert!(s.mcp_servers["a"].table.get("args").is_none(), "a later layer replaces the whole server");
    }
}
