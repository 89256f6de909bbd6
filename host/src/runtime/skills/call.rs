//! Calling a loaded skill: each export in a fresh store, with the skill's view (the roots for
//! a component, its own folder for a `SKILL.md` skill) and the same limits as a tool call.

use super::{Skill, SkillSet};
use crate::capabilities::Session;
use crate::runtime::site::Site;
use crate::runtime::{CallReport, CallState, ErrorKind, Limits, Runtime, ToolError, ToolOutput};
use crate::wit::skill_world::{SkillPlugin, skill as wit};
use std::sync::Arc;
use wasmtime::Store;

/// What every skill call needs besides the skill.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub runtime: &'a Runtime,
    pub session: &'a Arc<Session>,
    pub limits: &'a Limits,
}

/// One export call: instantiate the skill's component and call `$method` with `$args`.
macro_rules! call_skill {
    ($set:expr, $ctx:expr, $skill:expr, $convert:expr, $method:ident $(, $arg:expr)*) => {{
        match $set.components[$skill.component].pre($ctx.runtime) {
            Ok(pre) => {
                let call = async |inst: SkillPlugin, store: &mut Store<CallState>| {
                    inst.corral_plugin_skill().$method(store $(, $arg)*).await
                };
                let plugin = &$skill.plugin_name();
                let site = Site { plugin, session: $ctx.session, limits: $ctx.limits, view: &$skill.view, parallel: None };
                $ctx.runtime.caller.run(&site, pre, call, $convert).await
            }
            Err(why) => CallReport::failed(ToolError::new(
                ErrorKind::Internal,
                format!("skill '{}' cannot be loaded: {why}", $skill.name),
            )),
        }
    }};
}

impl SkillSet {
    /// The skill's instructions.
    pub async fn instructions(&self, ctx: Ctx<'_>, skill: &Skill) -> CallReport<String> {
        call_skill!(self, ctx, skill, |r: Result<String, _>| r.map_err(ToolError::from), call_instructions)
    }

    /// The files the skill carries, as (path, size), sorted by path.
    pub async fn resources(&self, ctx: Ctx<'_>, skill: &Skill) -> CallReport<Vec<(String, u64)>> {
        let convert = |r: Result<Vec<wit::SkillFile>, _>| {
            let mut l: Vec<(String, u64)> =
                r.map_err(ToolError::from)?.into_iter().map(|f| (f.path, f.size)).collect();
            l.sort();
            Ok(l)
        };
        call_skill!(self, ctx, skill, convert, call_resources)
    }

    /// The bytes of one resource.
    pub async fn read_resource(&self, ctx: Ctx<'_>, skill: &Skill, path: &str) -> CallReport<Vec<u8>> {
        call_skill!(
            self,
            ctx,
            skill,
            |r: Result<Vec<u8>, _>| r.map_err(ToolError::from),
            call_read_resource,
            path
        )
    }

    /// The scripts, as (name, description).
    pub async fn scripts(&self, ctx: Ctx<'_>, skill: &Skill) -> CallReport<Vec<(String, String)>> {
        let convert = |r: Result<Vec<wit::Script>, _>| {
            Ok(r.map_err(ToolError::from)?.into_iter().map(|s| (s.name, s.description)).collect())
        };
        call_skill!(self, ctx, skill, convert, call_scripts)
    }

    /// Runs one script; its output is capped like a tool's.
    pub async fn run_script(
        &self,
        ctx: Ctx<'_>,
        skill: &Skill,
        script: &str,
        args: &[String],
    ) -> CallReport<ToolOutput> {
        let limit = ctx.limits.output_bytes;
        let convert = |r: Result<_, _>| match r {
            Ok(out) => Ok(ToolOutput::from_wit(out, limit)),
            Err(e) => Err(ToolError::from(e)),
        };
        call_skill!(self, ctx, skill, convert, call_run_script, script, args)
    }
}
