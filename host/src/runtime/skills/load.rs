//! Loading skills: ask every skill who it is (or take its kept answer), check the answer, and
//! settle name clashes: project over user over shipped, each clash reported. A shipped skill's
//! answer is known since the build. A component (the folder server once for all folders) is
//! compiled and its imports checked when first needed: to ask it, or at its first call when
//! its answer was kept or built in. A skill that cannot load when
//! asked is skipped with a warning.

use super::{Candidate, Component, Kind, Shadowed, Skill, SkillSet, rules};
use crate::builtins::{BuiltSkill, SKILL_SERVER};
use crate::capabilities::Session;
use crate::runtime::CacheStatus;
use crate::runtime::registry::{grants, sha256_hex};
use crate::runtime::site::{Site, View};
use crate::runtime::{CallState, Limits, Runtime, ToolError};
use crate::wit::skill_world::{SkillPlugin, SkillPluginPre};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use wasmtime::Store;

impl SkillSet {
    /// Loads every candidate (in precedence order: project, user, shipped).
    pub async fn load(
        rt: &Runtime,
        session: &Arc<Session>,
        candidates: Vec<Candidate>,
        limits: &Limits,
    ) -> SkillSet {
        let mut set = SkillSet::default();
        let mut server: Option<usize> = None;
        let mut loaded: Vec<Skill> = Vec::new();
        for mut c in candidates {
            let component = match c.kind {
                Kind::Component => set.add(std::mem::take(&mut c.bytes), c.sha256, false),
                Kind::Folder => *server.get_or_insert_with(|| {
                    set.add(SKILL_SERVER.bytes.into(), Some(SKILL_SERVER.sha256), true)
                }),
            };
            let view = match (&c.kind, &c.path) {
                (Kind::Folder, Some(dir)) => View::Folder(dir.clone()),
                _ => View::SkillRoots,
            };
            let hint = c.path.as_ref().and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned());
            let label = hint.unwrap_or_else(|| "skill".into());
            // A shipped skill's answer is known since the build; any other's may be kept.
            let key =
                if c.built.is_some() { None } else { answer_key(&set.components[component].sha256, &c) };
            let known = c.built.and_then(built).or_else(|| key.as_deref().and_then(|k| kept(rt, k)));
            let answer = match known {
                Some(answer) => Ok(answer),
                None => match set.components[component].pre(rt) {
                    Ok(pre) => {
                        let answer = describe(rt, pre, &label, session, limits, &view).await;
                        if let (Ok(a), Some(k)) = (&answer, &key) {
                            keep(rt, k, a);
                        }
                        answer
                    }
                    Err(why) => Err(why.to_string()),
                },
            };
            match answer {
                Ok((name, description)) => loaded.push(Skill {
                    name,
                    description,
                    kind: c.kind,
                    source: c.source,
                    location: c.location,
                    path: c.path,
                    component,
                    view,
                    digest: OnceLock::new(),
                }),
                Err(why) => set.warnings.push(format!("skipping skill {}: {why}", c.location)),
            }
        }
        set.settle(loaded);
        for skill in &set.skills {
            session.granted().set(&skill.plugin_name(), skill.grants());
        }
        set
    }

    /// Records one component (not compiled yet); its index.
    fn add(&mut self, bytes: Cow<'static, [u8]>, sha256: Option<&str>, server: bool) -> usize {
        let sha256 = sha256.map_or_else(|| sha256_hex(&bytes), str::to_string);
        self.components.push(Component { sha256, bytes, server, loaded: OnceLock::new() });
        self.components.len() - 1
    }

    /// Keeps the first skill of each name (candidates come in precedence order) and records
    /// the others as shadowed, with a warning naming both.
    fn settle(&mut self, loaded: Vec<Skill>) {
        for skill in loaded {
            match self.skills.iter().find(|s| s.name == skill.name) {
                Some(winner) => {
                    self.warnings.push(format!(
                        "skill '{}' from {} ({}) is hidden by the one from {} ({})",
                        skill.name,
                        skill.location,
                        skill.source.as_str(),
                        winner.location,
                        winner.source.as_str()
                    ));
                    self.shadowed.push(Shadowed {
                        name: skill.name,
                        source: skill.source,
                        location: skill.location,
                        by_source: winner.source,
                        by_location: winner.location.clone(),
                    });
                }
                None => self.skills.push(skill),
            }
        }
        self.skills.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

impl Component {
    /// The code, compiled (or loaded from the cache) and its imports checked on first use.
    pub(super) fn pre(&self, rt: &Runtime) -> Result<&SkillPluginPre<CallState>, &str> {
        match self.loaded.get_or_init(|| self.load(rt)) {
            Ok((pre, _)) => Ok(pre),
            Err(why) => Err(why),
        }
    }

    fn load(&self, rt: &Runtime) -> Result<(SkillPluginPre<CallState>, CacheStatus), String> {
        let (component, cache) = rt
            .cache()
            .load(rt.engine(), &self.bytes, &self.sha256)
            .map_err(|e| format!("it is not a valid component: {e:#}"))?;
        grants::version(rt.engine(), &component).map_err(|e| format!("it {e}"))?;
        let ty = component.component_type();
        let mut imports = ty.imports(rt.engine()).map(|(name, _)| name);
        if let Some(bad) = imports.find(|i| !grants::skill_import_allowed(i, self.server)) {
            return Err(format!(
                "it imports '{bad}', which skills cannot use. A skill component may import WASI and \
                 {}; its scripts run inside its own sandbox",
                crate::wit::pattern(&["log", "kv", "host-info"])
            ));
        }
        let pre = rt.linker.instantiate_pre(&component).map_err(|e| format!("it cannot be linked: {e:#}"))?;
        let pre = SkillPluginPre::new(pre)
            .map_err(|e| format!("it is not a skill component (world skill-plugin): {e:#}"))?;
        Ok((pre, cache))
    }
}

/// The tag's domain and the file's extension of a kept answer to `describe`.
const DOMAIN: &str = "corral skill description v1";
const EXT: &str = "skill";

#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    name: String,
    description: String,
}

/// What a skill's answer to `describe` is kept under: a component's SHA-256; for a folder, the
/// folder server's SHA-256 with that of the folder's `SKILL.md` (all the server's `describe`
/// reads). None (ask every time) when `SKILL.md` is not a regular file that can be read.
fn answer_key(component_sha256: &str, c: &Candidate) -> Option<String> {
    match (&c.kind, &c.path) {
        (Kind::Folder, Some(dir)) => {
            let doc = dir.join("SKILL.md");
            if !std::fs::symlink_metadata(&doc).ok()?.file_type().is_file() {
                return None;
            }
            let bytes = std::fs::read(&doc).ok()?;
            Some(sha256_hex(format!("{component_sha256}\n{}", sha256_hex(&bytes)).as_bytes()))
        }
        (Kind::Folder, None) => None,
        (Kind::Component, _) => Some(component_sha256.to_string()),
    }
}

/// The answer a skill gave before, kept in the cache under `key` (see [`answer_key`]), checked
/// again by the same rules; None if there is none, or it is damaged, planted or no longer
/// passes.
fn kept(rt: &Runtime, key: &str) -> Option<(String, String)> {
    let k: Kept = serde_json::from_slice(&rt.cache().read_tagged(DOMAIN, key, EXT)?).ok()?;
    passes(&k.name, &k.description).then_some((k.name, k.description))
}

/// Whether a name and description not asked for now (kept, or built in) pass the rules.
fn passes(name: &str, description: &str) -> bool {
    rules::check_name(name).is_ok() && rules::check_description(description).is_ok()
}

/// A shipped skill's answer from the build, checked by the same rules as any other.
fn built(b: &BuiltSkill) -> Option<(String, String)> {
    passes(b.name, b.description).then(|| (b.name.to_string(), b.description.to_string()))
}

/// Keeps a skill's answer, so the next start need not run the skill to ask again.
fn keep(rt: &Runtime, key: &str, (name, description): &(String, String)) {
    let k = Kept { name: name.clone(), description: description.clone() };
    if let Ok(json) = serde_json::to_vec(&k) {
        rt.cache().write_tagged(DOMAIN, key, EXT, &json);
    }
}

/// Asks a skill for its name and description in a fresh instance, and checks them.
async fn describe(
    rt: &Runtime,
    pre: &SkillPluginPre<CallState>,
    label: &str,
    session: &Arc<Session>,
    limits: &Limits,
    view: &View,
) -> Result<(String, String), String> {
    let call = async |inst: SkillPlugin, store: &mut Store<CallState>| {
        inst.corral_plugin_skill().call_describe(store).await
    };
    let site = Site { plugin: label, session, limits, view, parallel: None };
    let report = rt.caller.run(&site, pre, call, |r| r.map_err(ToolError::from)).await;
    let info = report.result.map_err(|e| e.message)?;
    rules::check_name(&info.name)?;
    rules::check_description(&info.description).map_err(|e| format!("skill '{}': {e}", info.name))?;
    Ok((info.name, info.description))
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;
    use crate::capabilities::{Policy, Roots, log};

    /// A session over the workspace `dir`.
    fn session(dir: &std::path::Path) -> Arc<Session> {
        Arc::new(Session::new(Roots::open(dir, &[], &[]).unwrap(), Policy::default(), log::Sink::new(false)))
    }

    /// Loads the skills of `user` (a folder with `skills/`) with `rt`'s cache.
    async fn load_user(rt: &Runtime, user: &std::path::Path) -> SkillSet {
        let ws = user.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let session = session(&ws);
        let found = super::super::discover(None, Some(user), &user.join("unpack"), &mut Vec::new());
        let found = found.into_iter().filter(|c| c.source == Source::User).collect();
        SkillSet::load(rt, &session, found, &Limits::default()).await
    }

    fn write_skill(user: &std::path::Path, description: &str) {
        let dir = user.join("skills").join("greeter");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: greeter\ndescription: {description}\n---\nSay hello.\n"),
        )
        .unwrap();
    }

    /// A runtime with its cache under `tmp`, and a user folder there with the `greeter` skill.
    fn with_greeter(tmp: &std::path::Path) -> (Runtime, std::path::PathBuf) {
        let (user, cache) = (tmp.join("user"), tmp.join("cache"));
        let rt = Runtime::with_key_dir(Some(cache), Some(&tmp.join("key"))).unwrap();
        write_skill(&user, "Greets people.");
        (rt, user)
    }

    fn description(set: &SkillSet) -> String {
        set.all().iter().find(|k| k.name == "greeter").map(|k| k.description.clone()).unwrap()
    }

    /// A skill's answer to `describe` is kept, tagged, under its component and its folder's
    /// `SKILL.md`: the next start takes it from there (here a kept answer put in its place shows
    /// it was read, not asked again); a changed `SKILL.md` is asked again; an untagged file is
    /// not taken.
    #[tokio::test]
    async fn a_skills_answer_is_kept_and_asked_again_when_its_skill_md_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (rt, user) = with_greeter(tmp.path());
        let first = load_user(&rt, &user).await;
        assert_eq!(description(&first), "Greets people.");

        let skill = first.all().iter().find(|k| k.name == "greeter").unwrap();
        let doc = std::fs::read(user.join("skills/greeter/SKILL.md")).unwrap();
        let key = sha256_hex(format!("{}\n{}", first.component_sha256(skill), sha256_hex(&doc)).as_bytes());
        let path = rt.cache().sidecar_path(&key, EXT).unwrap();
        assert!(path.is_file(), "no answer kept at {}", path.display());
        keep(&rt, &key, &("greeter".into(), "Kept answer.".into()));
        assert_eq!(description(&load_user(&rt, &user).await), "Kept answer.");

        // Not tagged under this user's key: not taken, and asked again.
        std::fs::write(&path, b"{\"name\":\"greeter\",\"description\":\"Planted.\"}").unwrap();
        assert_eq!(description(&load_user(&rt, &user).await), "Greets people.");

        // The folder changed: another key, the skill is asked.
        write_skill(&user, "Greets people warmly.");
        assert_eq!(description(&load_user(&rt, &user).await), "Greets people warmly.");
    }

    /// A start whose skill's answer is kept loads none of its code: the first call does, and
    /// works; a start without a kept answer loads it to ask.
    #[tokio::test]
    async fn a_kept_skill_is_loaded_on_its_first_call() {
        let tmp = tempfile::tempdir().unwrap();
        let (rt, user) = with_greeter(tmp.path());
        let first = load_user(&rt, &user).await;
        let greeter = |set: &SkillSet| set.all().iter().find(|k| k.name == "greeter").unwrap().clone();
        assert_ne!(first.cache_status(&greeter(&first)), CacheStatus::Deferred);

        let warm = load_user(&rt, &user).await;
        let skill = greeter(&warm);
        assert_eq!(warm.cache_status(&skill), CacheStatus::Deferred);
        let session = session(tmp.path());
        let ctx = super::super::Ctx { runtime: &rt, session: &session, limits: &Limits::default() };
        let said = warm.instructions(ctx, &skill).await.result.unwrap();
        assert!(said.contains("Say hello."), "{said}");
        assert_ne!(warm.cache_status(&skill), CacheStatus::Deferred);
    }

    /// The shipped skills as a start finds them, with `rt`'s cache and `unpack` for folders.
    async fn load_shipped(rt: &Runtime, tmp: &std::path::Path, unpack: &std::path::Path) -> SkillSet {
        let session = session(tmp);
        let found = super::super::discover(None, None, unpack, &mut Vec::new());
        let found = found.into_iter().filter(|c| c.source == Source::Shipped).collect();
        SkillSet::load(rt, &session, found, &Limits::default()).await
    }

    /// With an empty cache a start lists the shipped skills from their answers built in: none
    /// of their code is loaded and nothing is kept in the cache. Each built-in answer is the
    /// one the skill gives when asked (here, with the build's answer taken away).
    #[tokio::test]
    async fn shipped_skills_are_listed_from_the_build_without_running_them() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let rt = Runtime::with_key_dir(Some(cache.clone()), Some(&tmp.path().join("key"))).unwrap();
        let unpack = tmp.path().join("unpack");
        let set = load_shipped(&rt, tmp.path(), &unpack).await;
        let names: Vec<&str> = set.all().iter().map(|k| k.name.as_str()).collect();
        let shipped = crate::builtins::SHIPPED_SKILLS.len() + crate::builtins::SHIPPED_FOLDERS.len();
        assert_eq!(names.len(), shipped, "{names:?} {:?}", set.warnings);
        assert!(names.contains(&"markdown-docs") && names.contains(&"code-review"), "{names:?}");
        for skill in set.all() {
            assert_eq!(
                set.cache_status(skill),
                CacheStatus::Deferred,
                "{} was loaded to list it",
                skill.name
            );
        }
        let kept: Vec<_> =
            std::fs::read_dir(cache.join("components")).into_iter().flatten().flatten().collect();
        assert!(kept.is_empty(), "written to the cache: {kept:?}");

        // Asked for real, each answers what the build recorded.
        let session = session(tmp.path());
        let mut found = super::super::discover(None, None, &unpack, &mut Vec::new());
        found.retain(|c| c.source == Source::Shipped);
        for c in &mut found {
            assert!(c.built.take().is_some(), "{} has no answer built in", c.location);
        }
        let asked = SkillSet::load(&rt, &session, found, &Limits::default()).await;
        let answers = |set: &SkillSet| -> Vec<(String, String)> {
            set.all().iter().map(|k| (k.name.clone(), k.description.clone())).collect()
        };
        assert_eq!(answers(&asked), answers(&set));
        assert!(asked.all().iter().all(|k| asked.cache_status(k) != CacheStatus::Deferred));
    }

    /// An unpacked shipped folder whose `SKILL.md` was changed is asked, not listed from the
    /// build's answer.
    #[tokio::test]
    async fn a_changed_shipped_folder_is_asked_again() {
        let tmp = tempfile::tempdir().unwrap();
        let rt =
            Runtime::with_key_dir(Some(tmp.path().join("cache")), Some(&tmp.path().join("key"))).unwrap();
        let unpack = tmp.path().join("unpack");
        load_shipped(&rt, tmp.path(), &unpack).await;
        let folder = &crate::builtins::SHIPPED_FOLDERS[0];
        let doc = super::super::discover::unpack(&unpack, folder).unwrap().join("SKILL.md");
        let changed =
            format!("---\nname: {}\ndescription: Changed in the cache.\n---\nReview.\n", folder.name);
        std::fs::write(&doc, changed).unwrap();
        let set = load_shipped(&rt, tmp.path(), &unpack).await;
        let skill = set.all().iter().find(|k| k.name == folder.name).unwrap();
        assert_eq!(skill.description, "Changed in the cache.");
    }

    fn skill(name: &str, source: Source, location: &str) -> Skill {
        Skill {
            name: name.into(),
            description: "d".into(),
            kind: Kind::Folder,
            source,
            location: location.into(),
            path: None,
            component: 0,
            view: View::SkillRoots,
            digest: OnceLock::new(),
        }
    }

    #[test]
    fn project_beats_user_beats_shipped_and_each_clash_is_reported() {
        let mut set = SkillSet::default();
        set.settle(vec![
            skill("review", Source::Project, "/w/.corral/skills/review"),
            skill("docs", Source::User, "/u/skills/docs"),
            skill("review", Source::User, "/u/skills/review"),
            skill("docs", Source::Shipped, "embedded"),
            skill("review", Source::Shipped, "/cache/review"),
        ]);
        let kept: Vec<(&str, Source)> = set.all().iter().map(|s| (s.name.as_str(), s.source)).collect();
        assert_eq!(kept, [("docs", Source::User), ("review", Source::Project)]);
        assert_eq!(
            set.warnings,
            [
                "skill 'review' from /u/skills/review (user) is hidden by the one from /w/.corral/skills/review (project)",
                "skill 'docs' from embedded (shipped) is hidden by the one from /u/skills/docs (user)",
                "skill 'review' from /cache/review (shipped) is hidden by the one from /w/.corral/skills/review (project)",
            ]
        );
        assert_eq!(set.shadowed.len(), 3);
        assert_eq!(set.shadowed[0].by_source, Source::Project);
    }
}
