//! The `use_skill` tool, which the host routes to the skills (each of which runs in its own
//! sandbox): `activate` gives the instructions and lists the files and scripts, `load` gives
//! named files, `script` runs a script. Unknown names are answered with the known ones.

pub mod args;

use super::call::{CallOutcome, parse_arguments, tool_error_text};
use crate::capabilities::effects::Effect;
use crate::llm::ToolDef;
use crate::runtime::skills::{Ctx, Skill, SkillSet, closest_first, rules};
use crate::runtime::{ToolError, ToolOutput};
use args::{Action, Request};
use corral_contract::{ErrorKind, error::error_text};
use serde_json::json;
use std::time::Instant;

/// The tool's name.
pub const NAME: &str = "use_skill";

/// The tool as the model sees it; the skill names are its `enum`.
pub fn def(skills: &SkillSet) -> ToolDef {
    let names: Vec<&str> = skills.all().iter().map(|s| s.name.as_str()).collect();
    ToolDef {
        name: NAME.into(),
        description: "Use one of the skills listed under \"Skills\" in the system prompt. A skill is \
                      know-how for a kind of task: `activate` it first to read its instructions and see its \
                      files and scripts; `load` reads some of its files (args: their paths, comma-separated); \
                      `script` runs one of its scripts in a sandbox (args: the script's name or file name, \
                      then its arguments, as a command line)."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill's name."},
                "action": {"type": "string", "enum": args::ACTIONS, "description": "What to do with it (default: activate)."},
                "args": {
                    "description": "For load: the file paths, comma-separated or as an array. For script: \
                                    the script's name then its arguments, as one command line or an array.",
                    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
                }
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    }
}

/// Runs one `use_skill` call. Never fails: every problem is an error message for the model.
pub async fn call(skills: &SkillSet, ctx: Ctx<'_>, raw_args: &str) -> CallOutcome {
    let started = Instant::now();
    let mut effects = Vec::new();
    let (mut content, is_error, plugin) = match run(skills, ctx, raw_args, &mut effects).await {
        Ok((text, skill)) => (text, false, Some(skill)),
        Err((text, skill)) => (text, true, skill),
    };
    crate::agent::call::add_undo_notes(&mut content, &effects);
    CallOutcome { content, is_error, plugin, duration: started.elapsed(), effects, images: Vec::new() }
}

pub use crate::runtime::skills::plugin_label;

type Answer = Result<(String, String), (String, Option<String>)>;

/// `effects`: what a script did that the loop acts on (a skill script may use the context).
async fn run(skills: &SkillSet, ctx: Ctx<'_>, raw_args: &str, effects: &mut Vec<Effect>) -> Answer {
    let invalid = |e: String| (error_text(ErrorKind::InvalidArgs, &e.to_string(), None), None);
    let value = parse_arguments(raw_args).map_err(invalid)?;
    let Request { name, action } = args::parse(&value).map_err(invalid)?;
    let Some(skill) = skills.get(&name) else {
        let shown: String = name.chars().take(80).collect();
        let known = skills.closest(&name);
        return Err((
            error_text(
                ErrorKind::NotFound,
                &format!(
                    "there is no skill named '{shown}'. The skills are, closest first: {}.",
                    known.join(", ")
                ),
                None,
            ),
            None,
        ));
    };
    let label = plugin_label(&skill.name);
    let fail = |text: String| (text, Some(label.clone()));
    let text = match action {
        Action::Activate => activate(skills, ctx, skill).await,
        Action::Load(paths) => load(skills, ctx, skill, &paths).await,
        Action::Script(script, argv) => script_run(skills, ctx, skill, &script, &argv, effects).await,
    }
    .map_err(fail)?;
    Ok((cap(text, ctx.limits.output_bytes), label))
}

/// Cuts the answer to the output limit, as tool output is cut.
fn cap(text: String, limit: usize) -> String {
    let out = crate::wit::types::ToolOutput {
        content: vec![crate::wit::types::ContentPart::Text(text)],
        truncated: false,
    };
    ToolOutput::from_wit(out, limit).text
}

fn err(e: &ToolError) -> String {
    tool_error_text(e)
}

async fn activate(skills: &SkillSet, ctx: Ctx<'_>, skill: &Skill) -> Result<String, String> {
    let body = skills.instructions(ctx, skill).await.result.map_err(|e| err(&e))?;
    let files = skills.resources(ctx, skill).await.result.map_err(|e| err(&e))?;
    let scripts = skills.scripts(ctx, skill).await.result.map_err(|e| err(&e))?;
    let mut out =
        format!("# Skill: {} ({} skill, {})\n\n", skill.name, skill.kind.as_str(), skill.source.as_str());
    out.push_str(rules::cap_chars(body.trim(), rules::INSTRUCTIONS_MAX_CHARS, "the instructions").trim_end());
    out.push_str("\n\n## Files\n");
    if files.is_empty() {
        out.push_str("This skill carries no other files.\n");
    } else {
        out.push_str("Read them with action \"load\", args \"PATH,PATH\":\n");
        for (path, size) in files.iter().take(rules::RESOURCES_LISTED) {
            out.push_str(&format!("- {path} ({})\n", size_text(*size)));
        }
        if files.len() > rules::RESOURCES_LISTED {
            out.push_str(&format!(
                "- ...and {} more, not listed; load them by path if the instructions name them\n",
                files.len() - rules::RESOURCES_LISTED
            ));
        }
    }
    if !scripts.is_empty() {
        out.push_str("\n## Scripts\nRun one with action \"script\", args \"NAME ARG...\":\n");
        for (name, description) in &scripts {
            out.push_str(&format!("- {name}: {}\n", description.trim()));
        }
    }
    Ok(out)
}

fn size_text(bytes: u64) -> String {
    if bytes < 1024 { format!("{bytes} bytes") } else { format!("{:.1} KB", bytes as f64 / 1024.0) }
}

async fn load(skills: &SkillSet, ctx: Ctx<'_>, skill: &Skill, paths: &[String]) -> Result<String, String> {
    let mut checked = Vec::with_capacity(paths.len());
    for p in paths {
        checked.push(
            rules::check_resource_path(p)
                .map_err(|e| error_text(ErrorKind::InvalidArgs, &e.to_string(), None))?
                .to_string(),
        );
    }
    let files = skills.resources(ctx, skill).await.result.map_err(|e| err(&e))?;
    let known: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    if let Some(missing) = checked.iter().find(|p| !known.contains(&p.as_str())) {
        let near = closest_first(missing, known.iter().copied());
        let list = if near.is_empty() {
            "it carries no files".to_string()
        } else {
            format!("its files are, closest first: {}", near.join(", "))
        };
        return Err(error_text(
            ErrorKind::NotFound,
            &format!("skill '{}' has no file '{missing}'; {list}.", skill.name),
            None,
        ));
    }
    let mut out = String::new();
    for path in &checked {
        let bytes = skills.read_resource(ctx, skill, path).await.result.map_err(|e| err(&e))?;
        let text = match String::from_utf8(bytes) {
            Ok(t) if !t.contains('\0') => rules::cap_chars(&t, rules::RESOURCE_MAX_CHARS, path),
            Ok(t) => format!("[binary file of {} bytes, not shown]", t.len()),
            Err(e) => format!("[binary file of {} bytes, not shown]", e.as_bytes().len()),
        };
        out.push_str(&format!(
            "<file skill=\"{}\" path=\"{path}\">\n{}\n</file>\n",
            skill.name,
            text.trim_end()
        ));
    }
    Ok(out)
}

async fn script_run(
    skills: &SkillSet,
    ctx: Ctx<'_>,
    skill: &Skill,
    script: &str,
    argv: &[String],
    effects: &mut Vec<Effect>,
) -> Result<String, String> {
    rules::check_script_name(script).map_err(|e| error_text(ErrorKind::InvalidArgs, &e.to_string(), None))?;
    let scripts = skills.scripts(ctx, skill).await.result.map_err(|e| err(&e))?;
    let names: Vec<&str> = scripts.iter().map(|(n, _)| n.as_str()).collect();
    let Some(name) = resolve_script(script, &names) else {
        let shown: String = script.chars().take(80).collect();
        if names.is_empty() {
            return Err(error_text(
                ErrorKind::NotFound,
                &format!("skill '{}' has no scripts.", skill.name),
                None,
            ));
        }
        return Err(error_text(
            ErrorKind::NotFound,
            &format!(
                "skill '{}' has no script '{shown}'; its scripts are, closest first: {}.",
                skill.name,
                closest_first(script, names.iter().copied()).join(", ")
            ),
            None,
        ));
    };
    let report = skills.run_script(ctx, skill, name, argv).await;
    effects.extend(report.effects);
    let out = report.result.map_err(|e| err(&e))?;
    let mut text = out.text;
    if text.trim().is_empty() {
        text = format!("(the script {name} printed nothing)");
    }
    Ok(text)
}

/// The listed script `want` names: exactly, or by its file name when that is unique
/// (`changed-files.sh` for `scripts/changed-files.sh`).
fn resolve_script<'a>(want: &str, names: &[&'a str]) -> Option<&'a str> {
    let want = want.strip_prefix("./").unwrap_or(want);
    if let Some(n) = names.iter().find(|n| **n == want) {
        return Some(n);
    }
    let by_file: Vec<&&str> = names.iter().filter(|n| n.rsplit('/').next() == Some(want)).collect();
    match by_file.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_found_by_name_or_unique_file_name() {
        let names = ["toc", "scripts/changed-files.sh", "a/run.sh", "b/run.sh"];
        assert_eq!(resolve_script("toc", &names), Some("toc"));
        assert_eq!(resolve_script("./scripts/changed-files.sh", &names), Some("scripts/changed-files.sh"));
        assert_eq!(resolve_script("changed-files.sh", &names), Some("scripts/changed-files.sh"));
        assert_eq!(resolve_script("run.sh", &names), None, "ambiguous");
        assert_eq!(resolve_script("tocc", &names), None);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size_text(12), "12 bytes");
        assert_eq!(size_text(2560), "2.5 KB");
    }
}
