//! Whether the person trusts a workspace's own files (`corral.toml`, `.corral/` plugins and
//! skills): the trust list in the user directory, the digest it was given for, and what an
//! untrusted project asks for. A project is never trusted under `corral exec`, `--ci` or a
//! policy file.

pub mod digest;
pub mod store;

use crate::config::{Ignored, Refusal};
use std::io;
use std::path::{Path, PathBuf};

/// How the project's files count this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The person trusted these exact project files.
    Trusted,
    /// Never trusted here.
    Untrusted,
    /// Trusted once, but the project files changed since.
    Changed,
    /// A locked-down run (the reason: `corral exec`, `--ci`, a policy file): never trusted.
    Locked(&'static str),
}

/// The trust check of one workspace.
#[derive(Debug, Clone)]
pub struct Check {
    /// The workspace's real path (the trust list's key).
    pub workspace: PathBuf,
    pub standing: Standing,
}

impl Check {
    pub fn trusted(&self) -> bool {
        self.standing == Standing::Trusted
    }
}

/// Checks `workspace` against the trust list in `user_dir`; `locked` names why the run may
/// not trust any project.
pub fn check(workspace: &Path, user_dir: Option<&Path>, locked: Option<&'static str>) -> io::Result<Check> {
    let workspace = std::fs::canonicalize(workspace)?;
    // The project files are hashed only when there is a trust entry to compare with: a
    // locked-down run, or a workspace never trusted, does not pay for reading its plugins.
    let standing = match locked {
        Some(why) => Standing::Locked(why),
        None => match store::Store::load(user_dir)?.get(&workspace) {
            Some(e) if e.digest == digest::project_digest(&workspace) => Standing::Trusted,
            Some(_) => Standing::Changed,
            None => Standing::Untrusted,
        },
    };
    Ok(Check { workspace, standing })
}

/// Trusts the workspace of `check` with its project files as they are now.
pub fn grant(check: &Check, user_dir: Option<&Path>) -> io::Result<()> {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let digest = digest::project_digest(&check.workspace);
    store::Store::load(user_dir)?.trust(&check.workspace, &digest, now)
}

/// Removes the workspace from the trust list; whether it was there.
pub fn revoke(workspace: &Path, user_dir: Option<&Path>) -> io::Result<bool> {
    let real = std::fs::canonicalize(workspace)?;
    store::Store::load(user_dir)?.revoke(&real)
}

/// What an untrusted project asks for: settings that widen, its plugins and its skills.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asks {
    /// `key = value` of each widening setting left out.
    pub settings: Vec<String>,
    /// Plugin files under `.corral/plugins/`.
    pub plugins: Vec<String>,
    /// Skill folders and components under `.corral/skills/` and `.claude/skills/`.
    pub skills: Vec<String>,
}

/// Where a project's plugins are, relative to the workspace.
pub const PROJECT_PLUGINS: &str = ".corral/plugins";
pub use crate::runtime::skills::discover::PROJECT_SKILLS;

impl Asks {
    /// What the project in `workspace` asks for, given what its settings file was refused.
    pub fn of(workspace: &Path, ignored: &[Ignored]) -> Asks {
        let listing = |rel: &str, keep: &dyn Fn(&Path) -> bool| -> Vec<String> {
            let Ok(rd) = std::fs::read_dir(workspace.join(rel)) else { return Vec::new() };
            let mut v: Vec<String> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.')) && keep(p))
                .map(|p| format!("{rel}/{}", p.file_name().unwrap_or_default().to_string_lossy()))
                .collect();
            v.sort();
            v
        };
        Asks {
            settings: ignored
                .iter()
                .filter(|i| i.why == Refusal::Untrusted)
                .map(|i| format!("{} = {}", i.key, i.shown))
                .collect(),
            plugins: listing(PROJECT_PLUGINS, &|p| p.extension().is_some_and(|x| x == "wasm")),
            skills: PROJECT_SKILLS.iter().flat_map(|d| listing(d, &|_| true)).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.settings.is_empty() && self.plugins.is_empty() && self.skills.is_empty()
    }

    /// One line for the person: what was left out, and how to trust the workspace.
    pub fn summary_line(&self, standing: &Standing) -> String {
        let mut parts = Vec::new();
        if !self.settings.is_empty() {
            let keys: Vec<&str> =
                self.settings.iter().map(|s| s.split_once(" = ").map_or(s.as_str(), |(k, _)| k)).collect();
            parts.push(format!("settings {}", keys.join(", ")));
        }
        if !self.plugins.is_empty() {
            parts.push(format!("{} plugin(s) in {PROJECT_PLUGINS}/", self.plugins.len()));
        }
        if !self.skills.is_empty() {
            parts.push(format!("{} skill(s) in {}", self.skills.len(), PROJECT_SKILLS.join("/ and ") + "/"));
        }
        let what = parts.join("; ");
        match standing {
            Standing::Locked(why) => format!(
                "the project's {what} are ignored: under {why} a project's own files never widen what the run may do \
                 (only flags, your user config and the policy decide)"
            ),
            Standing::Changed => format!(
                "the project's {what} are ignored: its corral.toml or .corral/ changed since you trusted this \
                 workspace; review them with `corral trust --show`, then run `corral trust`"
            ),
            _ => format!(
                "the project's {what} are ignored: this workspace is not trusted; review them with \
                 `corral trust --show`, then run `corral trust` to use them"
            ),
        }
    }

    /// The full list, one item a line, for the prompt and `corral trust --show`.
    pub fn details(&self) -> String {
        let mut out = String::new();
        for (title, items) in
            [("settings", &self.settings), ("plugins", &self.plugins), ("skills", &self.skills)]
        {
            if items.is_empty() {
                continue;
            }
            out.push_str(&format!("  {title}:\n"));
            for i in items {
                out.push_str(&format!("    {i}\n"));
            }
        }
        out
    }
}

/// One line for project values no project may set, trusted or not.
pub fn never_line(ignored: &[Ignored]) -> Option<String> {
    let keys: Vec<&str> =
        ignored.iter().filter(|i| i.why == Refusal::Never).map(|i| i.key.as_str()).collect();
    let file = ignored.first()?.file.display();
    (!keys.is_empty()).then(|| {
        format!(
            "{file} sets {}, which a project file never decides (where requests and your key go, the policy, the \
             audit log, .git writes); it is ignored. Set it with a flag or in your user config.",
            keys.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standing_follows_the_list_and_the_digest() {
        let t = tempfile::tempdir().unwrap();
        let (ws, user) = (t.path().join("ws"), t.path().join("user"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("corral.toml"), "[commands]\nallowed = [\"sh\"]\n").unwrap();
        let c = check(&ws, Some(&user), None).unwrap();
        assert_eq!(c.standing, Standing::Untrusted);
        grant(&c, Some(&user)).unwrap();
        assert_eq!(check(&ws, Some(&user), None).unwrap().standing, Standing::Trusted);
        assert_eq!(check(&ws, Some(&user), Some("--ci")).unwrap().standing, Standing::Locked("--ci"));
        std::fs::write(ws.join("corral.toml"), "[commands]\nallowed = [\"sh\", \"curl\"]\n").unwrap();
        assert_eq!(check(&ws, Some(&user), None).unwrap().standing, Standing::Changed);
        assert!(revoke(&ws, Some(&user)).unwrap());
        assert_eq!(check(&ws, Some(&user), None).unwrap().standing, Standing::Untrusted);
    }

    #[test]
    fn asks_lists_settings_plugins_and_skills() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".corral/plugins")).unwrap();
        std::fs::write(ws.join(".corral/plugins/evil.wasm"), "x").unwrap();
        std::fs::create_dir_all(ws.join(".claude/skills/deploy")).unwrap();
        let ignored = vec![Ignored {
            key: "commands.allowed".into(),
            shown: "[\"sh\"]".into(),
            file: ws.join("corral.toml"),
            why: Refusal::Untrusted,
        }];
        let a = Asks::of(ws, &ignored);
        assert_eq!(a.settings, ["commands.allowed = [\"sh\"]"]);
        assert_eq!(a.plugins, [".corral/plugins/evil.wasm"]);
        assert_eq!(a.skills, [".claude/skills/deploy"]);
        let line = a.summary_line(&Standing::Untrusted);
        assert!(line.contains("settings commands.allowed") && line.contains("`corral trust`"), "{line}");
        assert!(a.details().contains("    .corral/plugins/evil.wasm\n"));
    }
}
