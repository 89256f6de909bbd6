//! The guest side of a skill component (world `skill-plugin`): implement [`Skill`], call
//! [`export_skill!`](crate::export_skill), build for `wasm32-wasip2`. Skills with files built
//! in can serve them with [`Embedded`]; scripts resolve workspace paths with [`resolver`].

use crate::host::Root;
use crate::paths::Resolver;
use crate::{ErrorKind, Output, ToolError};
use std::path::PathBuf;

/// The generated bindings of world `skill-plugin`; its imports are the tool world's.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/0.1",
        world: "skill-plugin",
        pub_export_macro: true,
        default_bindings_module: "corral_plugin_sdk::skill::bindings",
        export_macro_name: "__export_skill_plugin",
        with: {
            "corral:plugin/types@0.1.0": crate::bindings::corral::plugin::types,
            "corral:plugin/log@0.1.0": crate::bindings::corral::plugin::log,
            "corral:plugin/kv@0.1.0": crate::bindings::corral::plugin::kv,
            "corral:plugin/host-info@0.1.0": crate::bindings::corral::plugin::host_info,
            "corral:plugin/process@0.1.0": crate::bindings::corral::plugin::process,
        },
    });
}

use bindings::exports::corral::plugin::skill as wit;

/// The environment variable holding the workspace root, which the host preopens read-only.
pub const WORKSPACE_VAR: &str = "CORRAL_WORKSPACE";

/// The catalogue entry of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub name: String,
    pub description: String,
}

/// A file the skill carries, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub path: String,
    pub size: u64,
}

/// A script the skill can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub name: String,
    pub description: String,
}

impl Script {
    pub fn new(name: &str, description: &str) -> Self {
        Script { name: name.into(), description: description.into() }
    }
}

/// A skill: what the catalogue shows, its instructions, its files and its scripts.
pub trait Skill {
    fn describe() -> Result<Info, ToolError>;
    fn instructions() -> Result<String, ToolError>;
    fn resources() -> Result<Vec<FileInfo>, ToolError>;
    fn read_resource(path: &str) -> Result<Vec<u8>, ToolError>;
    fn scripts() -> Result<Vec<Script>, ToolError>;
    /// Runs script `name`; `args` are the arguments, one string each.
    fn run_script(name: &str, args: &[String]) -> Result<Output, ToolError>;
}

/// Files compiled into the skill: `(path, contents)`, served by path.
#[derive(Debug, Clone, Copy)]
pub struct Embedded(pub &'static [(&'static str, &'static str)]);

impl Embedded {
    /// The files, sorted by path.
    pub fn list(&self) -> Vec<FileInfo> {
        let mut out: Vec<FileInfo> =
            self.0.iter().map(|(p, c)| FileInfo { path: p.to_string(), size: c.len() as u64 }).collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The file at `path`, or a not-found error that lists the others.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, ToolError> {
        let path = path.strip_prefix("./").unwrap_or(path);
        match self.0.iter().find(|(p, _)| *p == path) {
            Some((_, c)) => Ok(c.as_bytes().to_vec()),
            None => Err(ToolError::new(ErrorKind::NotFound, format!("this skill has no file '{path}'"))
                .with_hint(format!(
                    "its files are: {}",
                    self.list().into_iter().map(|f| f.path).collect::<Vec<_>>().join(", ")
                ))),
        }
    }
}

/// The workspace root the host gave this call, if any.
pub fn workspace_root() -> Option<PathBuf> {
    std::env::var_os(WORKSPACE_VAR).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// A resolver for paths in script arguments: relative paths start at the workspace root,
/// and nothing outside it is accepted. Fails when the host gave no workspace.
pub fn resolver() -> Result<Resolver, ToolError> {
    let root = workspace_root().ok_or_else(|| {
        ToolError::new(ErrorKind::Internal, format!("the host did not set {WORKSPACE_VAR}"))
    })?;
    Ok(resolver_for(&root))
}

/// A resolver over the read-only workspace `root`.
pub fn resolver_for(root: &std::path::Path) -> Resolver {
    Resolver::from_roots(vec![Root { path: root.to_path_buf(), writable: false }])
}

fn err(e: ToolError) -> crate::bindings::corral::plugin::types::ToolError {
    e.into_wit()
}

#[doc(hidden)]
pub fn describe_for<S: Skill>() -> Result<wit::SkillInfo, crate::bindings::corral::plugin::types::ToolError> {
    S::describe().map(|i| wit::SkillInfo { name: i.name, description: i.description }).map_err(err)
}

#[doc(hidden)]
pub fn instructions_for<S: Skill>() -> Result<String, crate::bindings::corral::plugin::types::ToolError> {
    S::instructions().map_err(err)
}

#[doc(hidden)]
pub fn resources_for<S: Skill>()
-> Result<Vec<wit::SkillFile>, crate::bindings::corral::plugin::types::ToolError> {
    S::resources()
        .map(|l| l.into_iter().map(|f| wit::SkillFile { path: f.path, size: f.size }).collect())
        .map_err(err)
}

#[doc(hidden)]
pub fn read_resource_for<S: Skill>(
    path: String,
) -> Result<Vec<u8>, crate::bindings::corral::plugin::types::ToolError> {
    S::read_resource(&path).map_err(err)
}

#[doc(hidden)]
pub fn scripts_for<S: Skill>() -> Result<Vec<wit::Script>, crate::bindings::corral::plugin::types::ToolError>
{
    S::scripts()
        .map(|l| l.into_iter().map(|s| wit::Script { name: s.name, description: s.description }).collect())
        .map_err(err)
}

#[doc(hidden)]
pub fn run_script_for<S: Skill>(
    name: String,
    args: Vec<String>,
) -> Result<
    crate::bindings::corral::plugin::types::ToolOutput,
    crate::bindings::corral::plugin::types::ToolError,
> {
    S::run_script(&name, &args).map(Output::into_wit).map_err(err)
}

/// Exports a [`Skill`] implementation as the component's `skill` interface.
#[macro_export]
macro_rules! export_skill {
    ($skill:ty) => {
        #[doc(hidden)]
        pub struct __CorralSkillExport;
        impl $crate::skill::bindings::exports::corral::plugin::skill::Guest for __CorralSkillExport {
            fn describe() -> ::std::result::Result<
                $crate::skill::bindings::exports::corral::plugin::skill::SkillInfo,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::skill::describe_for::<$skill>()
            }
            fn instructions() -> ::std::result::Result<
                ::std::string::String,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::skill::instructions_for::<$skill>()
            }
            fn resources() -> ::std::result::Result<
                ::std::vec::Vec<$crate::skill::bindings::exports::corral::plugin::skill::SkillFile>,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::skill::resources_for::<$skill>()
            }
            fn read_resource(
                path: ::std::string::String,
            ) -> ::std::result::Result<::std::vec::Vec<u8>, $crate::bindings::corral::plugin::types::ToolError>
            {
                $crate::skill::read_resource_for::<$skill>(path)
            }
            fn scripts() -> ::std::result::Result<
                ::std::vec::Vec<$crate::skill::bindings::exports::corral::plugin::skill::Script>,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::skill::scripts_for::<$skill>()
            }
            fn run_script(
                name: ::std::string::String,
                args: ::std::vec::Vec<::std::string::String>,
            ) -> ::std::result::Result<
                $crate::bindings::corral::plugin::types::ToolOutput,
                $crate::bindings::corral::plugin::types::ToolError,
            > {
                $crate::skill::run_script_for::<$skill>(name, args)
            }
        }
        $crate::skill::bindings::__export_skill_plugin!(__CorralSkillExport with_types_in $crate::skill::bindings);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: Embedded = Embedded(&[("references/b.md", "bee"), ("a.md", "a")]);

    #[test]
    fn embedded_files_are_listed_sorted_and_read_by_path() {
        let l = FILES.list();
        assert_eq!(l[0], FileInfo { path: "a.md".into(), size: 1 });
        assert_eq!(l[1].path, "references/b.md");
        assert_eq!(FILES.read("./references/b.md").unwrap(), b"bee");
        let e = FILES.read("nope.md").unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(e.hint.as_deref(), Some("its files are: a.md, references/b.md"));
    }
}
