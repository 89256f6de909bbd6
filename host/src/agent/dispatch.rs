//! Runs the tools the model asked for: parse and check the arguments, invoke the plugin in
//! its sandbox, and turn every outcome, the model's mistakes included, into a tool message.

use super::{cron_tool, schema, use_skill};
use crate::capabilities::Session;
use crate::llm::{ToolCall, ToolDef};
use crate::runtime::skills::{Ctx, SkillSet};
use crate::runtime::{Limits, Registry, Runtime, ToolError};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The host's `cron` tool, when the workspace has a state folder.
    pub cron: Option<&'a cron_tool::CronHost>,
}

/// A file a tool changed, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The result of one tool call, ready for the transcript.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The text the model sees.
    pub content: String,
    pub is_error: bool,
    /// The plugin that ran the call, when one did.
    pub plugin: Option<String>,
    pub duration: Duration,
    pub change: Option<FileChange>,
    /// Images the tool returned, before the provider's rules are applied.
    pub images: Vec<crate::runtime::Image>,
}

impl CallOutcome {
    fn refused(content: String) -> Self {
        CallOutcome {
            content,
            is_error: true,
            plugin: None,
            duration: Duration::ZERO,
            change: None,
            images: Vec::new(),
        }
    }
}

/// Parses the model's argument text. Empty means `{}`; a JSON object encoded as a string is
/// unwrapped. Anything else that is not an object is refused with a correction.
pub fn parse_arguments(raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        format!(
            "the arguments are not valid JSON ({e}). Send them again as one JSON object that matches \
             the tool's schema, with strings quoted and escaped"
        )
    })?;
    match value {
        Value::Object(_) => Ok(value),
        Value::String(inner) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err("the arguments must be a JSON object, not a string".to_string()),
        },
        other => Err(format!("the arguments must be a JSON object, not {}", kind_of(&other))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The text the model sees for a failed call.
pub fn error_text(e: &ToolError) -> String {
    let mut s = format!("error ({}): {}", e.kind.as_str(), e.message);
    if let Some(h) = &e.hint {
        s.push_str("\nhint: ");
        s.push_str(h);
    }
    s
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
        if self.offers_cron() {
            defs.push(cron_tool::def());
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

    /// Whether `name` is a tool that never changes anything.
    pub fn is_read_only(&self, name: &str) -> bool {
        self.registry.tool(name).is_some_and(|(t, _)| t.read_only)
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
        let Some((spec, plugin)) = self.registry.tool(&call.name) else {
            return CallOutcome::refused(self.unknown_tool(&call.name));
        };
        let args = match parse_arguments(&call.arguments) {
            Ok(a) => a,
            Err(e) => return CallOutcome::refused(format!("error (invalid-args): {e}")),
        };
        let problems = schema::validate(&spec.schema, &args);
        if !problems.is_empty() {
            return CallOutcome::refused(format!(
                "error (invalid-args): the arguments for {} do not match its schema: {}. Fix them and call \
                 it again",
                call.name,
                problems.join("; ")
            ));
        }
        let watched = if spec.read_only { None } else { self.watched_file(&args) };
        let before = watched.as_ref().map(|(_, abs)| read_small(abs));
        let started = Instant::now();
        let report =
            self.runtime.invoke(plugin, self.session, &call.name, &args.to_string(), &self.limits).await;
        let duration = started.elapsed();
        let plugin_name = Some(plugin.info.name.clone());
        match report.result {
            Ok(out) => {
                let mut content = out.text;
                if content.trim().is_empty() && out.images.is_empty() {
                    content = "(the tool returned no output)".to_string();
                }
                let change = watched.map(|(path, abs)| FileChange {
                    path,
                    before: before.flatten(),
                    after: read_small(&abs),
                });
                CallOutcome {
                    content,
                    is_error: false,
                    plugin: plugin_name,
                    duration,
                    change,
                    images: out.images,
                }
            }
            Err(e) => CallOutcome {
                content: error_text(&e),
                is_error: true,
                plugin: plugin_name,
                duration,
                change: None,
                images: Vec::new(),
            },
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        let shown: String = name.chars().take(80).collect();
        let near = self.registry.closest(name, 3);
        let all: Vec<String> = self.defs().into_iter().map(|d| d.name).collect();
        let mut s = format!("error (not-found): there is no tool named '{shown}'.");
        if !near.is_empty() {
            s.push_str(&format!(" Did you mean {}?", near.join(" or ")));
        }
        s.push_str(&format!(" The available tools are: {}.", all.join(", ")));
        s
    }

    /// The file a mutating call names in `file_path`, shown and absolute, if it resolves.
    fn watched_file(&self, args: &Value) -> Option<(String, std::path::PathBuf)> {
        let p = args.get("file_path")?.as_str()?;
        let loc = self.session.roots.resolve(p, true).ok()?;
        Some((self.session.roots.display(&loc), self.session.roots.absolute(&loc)))
    }
}

fn read_small(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > DIFF_MAX_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_parsed_leniently_but_must_be_objects() {
        assert_eq!(parse_arguments("  ").unwrap(), serde_json::json!({}));
        assert_eq!(parse_arguments(r#"{"a":1}"#).unwrap(), serde_json::json!({"a": 1}));
        assert_eq!(parse_arguments(r#""{\"a\":1}""#).unwrap(), serde_json::json!({"a": 1}));
        let e = parse_arguments(r#"{"a":"#).unwrap_err();
        assert!(e.contains("not valid JSON") && e.contains("Send them again"), "{e}");
        assert!(parse_arguments("[1]").unwrap_err().contains("not an array"));
        assert!(parse_arguments(r#""text""#).unwrap_err().contains("not a string"));
    }
}
