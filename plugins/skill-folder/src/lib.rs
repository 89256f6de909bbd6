//! corral's server for `SKILL.md` folders: one component, instantiated per call with a
//! read-only preopen of one skill's folder (named by `CORRAL_SKILL_DIR`), serving it as a skill.

pub mod folder;
pub mod run;

/// `SKILL.md`'s front matter: the contract's reader, shared with corral's build.
pub use corral_plugin_sdk::contract::frontmatter;

use corral_plugin_sdk::host::Host;
use corral_plugin_sdk::skill::{FileInfo, Info, Script, Skill};
use corral_plugin_sdk::{ErrorKind, Output, ToolError};
use std::path::PathBuf;

/// The environment variable naming the folder this call serves (also its preopen path).
pub const DIR_VAR: &str = "CORRAL_SKILL_DIR";

/// The folder, from the environment the host set.
fn dir() -> Result<PathBuf, ToolError> {
    std::env::var_os(DIR_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| ToolError::new(ErrorKind::Internal, format!("the host did not set {DIR_VAR}")))
}

/// Reads and parses the folder's `SKILL.md`.
fn doc() -> Result<frontmatter::SkillDoc, ToolError> {
    let dir = dir()?;
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let text = std::fs::read(dir.join("SKILL.md")).map_err(|e| {
        ToolError::new(ErrorKind::Io, format!("cannot read {}: {e}", dir.join("SKILL.md").display()))
    })?;
    let text = String::from_utf8(text)
        .map_err(|_| ToolError::new(ErrorKind::Unsupported, "SKILL.md is not UTF-8 text"))?;
    frontmatter::parse(&text, &dir_name).map_err(ToolError::invalid_args)
}

struct FolderSkill;

impl Skill for FolderSkill {
    fn describe() -> Result<Info, ToolError> {
        let d = doc()?;
        Ok(Info { name: d.name, description: d.description })
    }

    fn instructions() -> Result<String, ToolError> {
        Ok(doc()?.body)
    }

    fn resources() -> Result<Vec<FileInfo>, ToolError> {
        folder::list(&dir()?)
    }

    fn read_resource(path: &str) -> Result<Vec<u8>, ToolError> {
        folder::read(&dir()?, path)
    }

    fn scripts() -> Result<Vec<Script>, ToolError> {
        let dir = dir()?;
        Ok(folder::scripts(&dir, &folder::list(&dir)?))
    }

    fn run_script(name: &str, args: &[String]) -> Result<Output, ToolError> {
        let skill = doc()?.name;
        run::run(&Host, &skill, &dir()?, name, args)
    }
}

corral_plugin_sdk::export_skill!(FolderSkill);
