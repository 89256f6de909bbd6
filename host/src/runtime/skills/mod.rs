//! Skills: components of world `skill-plugin` and `SKILL.md` folders (served by corral's
//! built-in folder server), found in the project, the user's folder and corral itself,
//! loaded once, and called in a fresh sandbox like tools. A name clash is settled by source.

pub mod call;
pub mod digest;
pub mod discover;
mod load;
pub mod rules;

pub use call::Ctx;
pub use discover::{Candidate, discover};

use super::site::View;
use super::{CacheStatus, CallState};
use crate::capabilities::grant::{CapSet, Capability};
use crate::wit::skill_world::SkillPluginPre;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where a skill came from. When two skills share a name, the earlier source wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// `<workspace>/.corral/skills/`.
    Project,
    /// `<user_dir>/skills/` (`~/.config/corral/skills/`).
    User,
    /// Built into corral (`skills/` in its repository).
    Shipped,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::User => "user",
            Source::Shipped => "shipped",
        }
    }
}

/// What a skill is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A component exporting the `skill` interface.
    Component,
    /// A folder with a `SKILL.md`, served by corral's folder server.
    Folder,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Component => "component",
            Kind::Folder => "folder",
        }
    }
}

/// A loaded skill.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub kind: Kind,
    pub source: Source,
    /// Where it came from, as shown to people (a path, or `embedded in corral (...)`).
    pub location: String,
    /// The component file or the folder on disk, if there is one.
    pub path: Option<PathBuf>,
    /// Index of its component in [`SkillSet`].
    component: usize,
    /// What its calls may see.
    view: View,
    /// Its digest, once asked for (a folder's means reading all of it).
    digest: OnceLock<Result<String, String>>,
}

impl Skill {
    /// The name its calls run under: what the audit log records and what host functions check
    /// grants against (never a tool plugin's name).
    pub fn plugin_name(&self) -> String {
        plugin_label(&self.name)
    }

    /// What the skill may do through host functions: keep state (`kv`), and for a `SKILL.md`
    /// folder also run its scripts as commands, which the commands policy still decides.
    pub fn grants(&self) -> CapSet {
        match self.kind {
            Kind::Component => [Capability::Kv].into_iter().collect(),
            Kind::Folder => [Capability::Kv, Capability::Process].into_iter().collect(),
        }
    }
}

/// The plugin name the calls of skill `skill` run under.
pub fn plugin_label(skill: &str) -> String {
    format!("skill:{skill}")
}

/// A skill that lost a name clash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    pub name: String,
    pub source: Source,
    pub location: String,
    /// The winner's source and location.
    pub by_source: Source,
    pub by_location: String,
}

/// A skill component, compiled when first needed: a start whose skills' answers are kept
/// runs and loads none of them.
struct Component {
    sha256: String,
    bytes: Cow<'static, [u8]>,
    /// The folder server (it may import `commands`); other components may not.
    server: bool,
    /// The code, ready to instantiate, with how the cache served it; or why it cannot load.
    loaded: OnceLock<Result<(SkillPluginPre<CallState>, CacheStatus), String>>,
}

/// The loaded skills, one per name, sorted by name.
#[derive(Default)]
pub struct SkillSet {
    components: Vec<Component>,
    skills: Vec<Skill>,
    /// Skills hidden by another of the same name.
    pub shadowed: Vec<Shadowed>,
    /// Skills that could not be loaded, and clashes, as sentences for the person.
    pub warnings: Vec<String>,
}

impl SkillSet {
    /// Every skill, sorted by name.
    pub fn all(&self) -> &[Skill] {
        &self.skills
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The SHA-256 of the component behind `skill` (for a folder, the folder server's).
    pub fn component_sha256(&self, skill: &Skill) -> &str {
        &self.components[skill.component].sha256
    }

    /// How `skill`'s code was obtained (`Deferred` while it is not loaded).
    pub fn cache_status(&self, skill: &Skill) -> CacheStatus {
        match self.components[skill.component].loaded.get() {
            Some(Ok((_, status))) => status.clone(),
            Some(Err(why)) => CacheStatus::Failed(why.clone()),
            None => CacheStatus::Deferred,
        }
    }

    /// What `skill` is, as one SHA-256 (see [`digest`]): its component file's, or its
    /// folder's. This is what a policy file pins. Computed once per skill.
    pub fn digest(&self, skill: &Skill) -> Result<String, String> {
        let digest = skill.digest.get_or_init(|| match (skill.kind, &skill.path) {
            (Kind::Folder, Some(dir)) => digest::folder(dir),
            _ => Ok(self.component_sha256(skill).to_string()),
        });
        digest.clone()
    }

    /// Keeps only the skills `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&Skill) -> bool) {
        self.skills.retain(keep);
    }

    /// Every skill name, closest to `name` first.
    pub fn closest(&self, name: &str) -> Vec<&str> {
        closest_first(name, self.skills.iter().map(|s| s.name.as_str()))
    }
}

/// `options` ordered by edit distance to `want` (ties by name).
pub fn closest_first<'a>(want: &str, options: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> =
        options.map(|o| (super::registry::edit_distance(want, o), o)).collect();
    scored.sort();
    scored.into_iter().map(|(_, o)| o).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_rank_project_user_shipped() {
        let mut s = vec![Source::Shipped, Source::Project, Source::User];
        s.sort();
        assert_eq!(s, [Source::Project, Source::User, Source::Shipped]);
    }

    #[test]
    fn closest_names_come_first() {
        let names = ["code-review", "markdown-docs", "rust-testing"];
        assert_eq!(closest_first("markdwn-docs", names.into_iter())[0], "markdown-docs");
        assert_eq!(closest_first("zzz", ["b", "a"].into_iter()), ["a", "b"], "ties go by name");
        assert_eq!(closest_first("code-reveiw", names.into_iter())[0], "code-review");
    }
}
