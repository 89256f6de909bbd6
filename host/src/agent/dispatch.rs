//! Runs the tools the model asked for: parse and check the arguments, invoke the plugin in
//! its sandbox, and turn every outcome, the model's mistakes included, into a tool message.

use super::call::{CallOutcome, add_undo_notes, parse_arguments, tool_error_text};
use super::{cron_tool, schema, undo_tool, use_skill};
use crate::capabilities::Session;
use crate::capabilities::effects::{Effect, FileChange};
use crate::llm::{ToolCall, ToolDef};
use crate::runtime::skills::{Ctx, SkillSet};
use crate::runtime::{Limits, Registry, Runtime};
use corral_contract::{ErrorKind, error::error_text};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// The largest file whose before/after text is kept to show an edit as a diff.
const DIFF_MAX_BYTES: u64 = 1 << 20;

/// What the agent needs to run tools: the runtime, the loaded plugins and skills, and the
/// session.
pub struct Toolbox<'a> {
    pub runtime: &'a Runtime,
    pub registry: &'a Registry,
    pub skills: &'a SkillSet,
    pub session: &'a Arc<Session>,
    pub limits: Limits,
    /// Tools from outside the registry (other MCP servers), when there are any.
    pub external: Option<&'a dyn super::external::ExternalTools>,
    /// The host's `cron` tool, when the workspace has a state folder.
    pub cron: Option<&'a cron_tool::CronHost>,
    /// Whether to offer the host's `undo` tool (not in CI unless a tool may write; it also
    /// needs a state folder).
    pub undo: bool,
}

impl Toolbox<'_> {
    /// The tool catalogue as sent to the model, sorted by name: the plugins' tools, and
    /// `use_skill` when there are skills.
    pub fn defs(&self) -> Vec<ToolDef> {
        let mut defs: Vec<ToolDef> = self
            .registry
            .tools()
            .map(|(t, _)| ToolDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.schema.clone(),
            })
            .collect();
        if self.offers_skills() {
            defs.push(use_skill::def(self.skills));
        }
        if let Some(ext) = self.external {
            // A plugin's tool keeps its name: an external one never shadows it.
            let taken = |n: &str| defs.iter().any(|d: &ToolDef| d.name == n);
            let more: Vec<ToolDef> =
                ext.tools().into_iter().map(|t| t.def).filter(|d| !taken(&d.name)).collect();
            defs.extend(more);
        }
        if self.offers_cron() {
            defs.push(cron_tool::def());
        }
        if self.offers_undo() {
            defs.push(undo_tool::def());
        }
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        defs
    }

    /// Whether `use_skill` is offered: there are skills, and no plugin took the name.
    pub fn offers_skills(&self) -> bool {
        !self.skills.is_empty() && self.registry.tool(use_skill::NAME).is_none()
    }

    /// Whether `cron` is offered: there is a state folder, and no plugin took the name.
    pub fn offers_cron(&self) -> bool {
        self.cron.is_some() && self.registry.tool(cron_tool::NAME).is_none()
    }

    /// Whether `undo` is offered: asked for, there is a state folder, and no plugin took the name.
    pub fn offers_undo(&self) -> bool {
        self.undo && self.session.local().path().is_some() && self.registry.tool(undo_tool::NAME).is_none()
    }

    /// Whether `name` is a tool that never changes anything.
    pub fn is_read_only(&self, name: &str) -> bool {
        self.registry.tool(name).is_some_and(|(t, _)| t.read_only)
            || self.registry.tool(name).is_none()
                && self.external.is_some_and(|e| e.tools().iter().any(|t| t.def.name == name && t.read_only))
    }

    /// Runs one call. Never fails: every problem becomes an error message for the model.
    pub async fn call(&self, call: &ToolCall) -> CallOutcome {
        if call.name == use_skill::NAME && self.offers_skills() {
            let ctx = Ctx { runtime: self.runtime, session: self.session, limits: &self.limits };
            return use_skill::call(self.skills, ctx, &call.arguments).await;
        }
        if let Some(host) = self.cron.filter(|_| call.name == cron_tool::NAME && self.offers_cron()) {
            return cron_tool::call(host, &call.arguments);
        }
        if call.name == undo_tool::NAME && self.offers_undo() {
            return undo_tool::call(self.session, &call.arguments);
        }
        let Some((spec, plugin)) = self.registry.tool(&call.name) else {
            if let Some(ext) = self.external.filter(|e| e.has(&call.name)) {
                return external_call(ext, call).await;
            }
            return CallOutcome::refused(self.unknown_tool(&call.name));
        };
        let args = match parse_arguments(&call.arguments) {
            Ok(a) => a,
            Err(e) => return CallOutcome::refused(error_text(ErrorKind::InvalidArgs, &e.to_string(), None)),
        };
        let problems = schema::validate(&spec.schema, &args);
        if !problems.is_empty() {
            return CallOutcome::refused(error_text(
                ErrorKind::InvalidArgs,
                &format!(
                    "the arguments for {} do not match its schema: {}. Fix them and call \
                 it again",
                    call.name,
                    problems.join("; ")
                ),
                None,
            ));
        }
        let watched = if spec.read_only { None } else { self.watched_file(&args) };
        let before = watched.as_ref().map(|(_, abs)| read_small(abs));
        let started = Instant::now();
        let report =
            self.runtime.invoke(plugin, self.session, &call.name, &args.to_string(), &self.limits).await;
        let duration = started.elapsed();
        let plugin_name = Some(plugin.info.name.clone());
        let mut effects = report.effects;
        match report.result {
            Ok(out) => {
                let mut content = out.text;
                if content.trim().is_empty() && out.images.is_empty() {
                    content = "(the tool returned no output)".to_string();
                }
                add_undo_notes(&mut content, &effects);
                if let Some((path, abs)) = watched {
                    let after = read_small(&abs);
                    effects.push(Effect::FileChanged(FileChange { path, before: before.flatten(), after }));
                }
                CallOutcome {
                    content,
                    is_error: false,
                    plugin: plugin_name,
                    duration,
                    effects,
                    images: out.images,
                }
            }
            Err(e) => CallOutcome {
                content: {
                    let mut t = tool_error_text(&e);
                    add_undo_notes(&mut t, &effects);
                    t
                },
                is_error: true,
                plugin: plugin_name,
                duration,
                effects,
                images: Vec::new(),
            },
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        let shown: String = name.chars().take(80).collect();
        let near = self.registry.closest(name, 3);
        let all: Vec<String> = self.defs().into_iter().map(|d| d.name).collect();
        let mut s = error_text(ErrorKind::NotFound, &format!("there is no tool named '{shown}'."), None);
        if !near.is_empty() {
            s.push_str(&format!(" Did you mean {}?", near.join(" or ")));
        }
        s.push_str(&format!(" The available tools are: {}.", all.join(", ")));
        s
    }

    /// The file a mutating call names in `file_path`, shown and absolute, if it resolves.
    fn watched_file(&self, args: &Value) -> Option<(String, std::path::PathBuf)> {
        let p = args.get("file_path")?.as_str()?;
        let loc = self.session.roots().resolve(p, true).ok()?;
        Some((self.session.roots().display(&loc), self.session.roots().absolute(&loc)))
    }
}

/// Runs a call of a tool from outside the registry (an MCP server's).
async fn external_call(ext: &dyn super::external::ExternalTools, call: &ToolCall) -> CallOutcome {
    let args = match parse_arguments(&call.arguments) {
        Ok(a) => a,
        Err(e) => return CallOutcome::refused(error_text(ErrorKind::InvalidArgs, &e.to_string(), None)),
    };
    let started = Instant::now();
    let r = ext.call(&call.name, args).await;
    CallOutcome {
        content: r.content,
        is_error: r.is_error,
        plugin: Some(r.source),
        duration: started.elapsed(),
        effects: Vec::new(),
        images: Vec::new(),
    }
}

fn read_small(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > DIFF_MAX_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}
