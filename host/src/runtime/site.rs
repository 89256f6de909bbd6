//! What one call's sandbox is made from: who is called, for which session, within which
//! limits, seeing what, and whether it may start calls side by side. Shared by the call itself
//! (`invoke.rs`) and the calls a built-in starts (`parallel.rs`).

use super::Limits;
use crate::capabilities::{Session, SubCalls};
use std::path::PathBuf;
use std::sync::Arc;

/// What one call's sandbox shows the component, always read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// The session's roots, each at its real absolute path (tool plugins).
    Roots,
    /// The roots, and `CORRAL_WORKSPACE` set to the workspace root (skill components).
    SkillRoots,
    /// One folder only, at its real absolute path, named by `CORRAL_SKILL_DIR` (the server
    /// of a `SKILL.md` folder).
    Folder(PathBuf),
}

/// The environment variable that tells a skill component where the workspace root is.
pub const WORKSPACE_VAR: &str = "CORRAL_WORKSPACE";
/// The environment variable that tells the folder-skill server which folder it serves.
pub const SKILL_DIR_VAR: &str = "CORRAL_SKILL_DIR";

/// Who is called, for which session, within which limits, seeing what: what one call's
/// sandbox is made from.
pub(crate) struct Site<'a> {
    pub plugin: &'a str,
    pub session: &'a Arc<Session>,
    pub limits: &'a Limits,
    pub view: &'a View,
    /// What the call's `parallel` import starts; `None`: it starts nothing (a call `parallel`
    /// started, `describe`, a skill).
    pub parallel: Option<Arc<dyn SubCalls>>,
}
