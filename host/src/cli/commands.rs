//! `corral tools`, `corral tool NAME ARGS`, `corral plugins`, `corral skills` and `corral config`;
//! `corral plugin` is handed to its own module.

use super::report::print;
use super::{Command, GlobalArgs, SetupError, setup};
use crate::agent::use_skill;
use crate::capabilities::effects::Effect;
use crate::runtime::Ahead;
use crate::runtime::skills::Ctx;
use crate::runtime::{CacheStatus, Origin};
use corral_contract::error::error_text;
use std::io::Read;

/// Runs the command; Ok is the exit code.
pub async fn dispatch(command: Command, global: &GlobalArgs) -> Result<i32, SetupError> {
    if let Command::Plugin { command } = command {
        // Authoring commands load no installed plugins (add checks them itself).
        return Ok(super::plugin::run(command, global).await);
    }
    if let Command::Mcp(mcp) = command {
        return Ok(super::mcp::run(mcp.command, global).await);
    }
    if let Command::Trust { show, revoke } = command {
        return super::trust::run(global, show, revoke);
    }
    if let Command::Cron { command } = command {
        return Ok(super::cron::run(command, global).await);
    }
    if let Command::Sessions { json, command } = command {
        return Ok(super::sessions::run(global, json, command));
    }
    if let Command::Doctor { json } = command {
        return super::doctor::run(global, json);
    }
    if let Command::Undo { list, to, force } = command {
        // No plugin is needed to put files back.
        return Ok(super::undo::run(list, to, force, global));
    }
    if let Command::Setup = command {
        return Ok(super::firstrun::setup_command().await);
    }
    if let Command::Init = command {
        let cwd = std::env::current_dir().map_err(SetupError::Cwd)?;
        let ws = global.workspace.as_ref().map(|w| cwd.join(w)).unwrap_or(cwd);
        return Ok(super::firstrun::init_command(&ws));
    }
    if let Command::Config { json } = command {
        // Settings only: a broken plugin must not hide the configuration.
        let p = setup::resolve(global, global.ci, false)?.provenance;
        return Ok(print(&if json { format!("{}\n", p.to_json()) } else { p.to_text() }));
    }
    let env = setup::prepare(global, global.ci, Ahead::Nothing).await?;
    match command {
        Command::Tools { json } => Ok(tools(&env, json)),
        Command::Plugins { json } => Ok(plugins(&env, json)),
        Command::Skills { json } => Ok(skills(&env, json)),
        // No prompt runs here (no one is asked during `corral tool`), so SIGTERM is caught too.
        Command::Tool { name, args } => Ok(tokio::select! {
            code = tool(&env, &name, &args) => code,
            () = crate::signals::stop() => {
                eprintln!("interrupted: the call was stopped, and the commands it started with it");
                crate::signals::STOPPED
            }
        }),
        Command::Config { .. }
        | Command::Exec { .. }
        | Command::Plugin { .. }
        | Command::Trust { .. }
        | Command::Mcp(_)
        | Command::Setup
        | Command::Init
        | Command::Cron { .. }
        | Command::Undo { .. }
        | Command::Sessions { .. }
        | Command::Doctor { .. } => Ok(0),
    }
}

/// The first sentence or line of a description, at most 100 characters.
fn summary(description: &str) -> String {
    let s = crate::agent::prompt::first_sentence(description);
    if s.chars().count() > 100 {
        format!("{}...", s.chars().take(97).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Whether `use_skill` is offered (there are skills and no plugin tool took its name).
fn offers_skills(env: &setup::Env) -> bool {
    !env.skills.is_empty() && env.registry.tool(use_skill::NAME).is_none()
}

/// The plugin column shown for `use_skill`, which the host routes to the skills.
const SKILLS_PLUGIN: &str = "(skills)";

fn tools(env: &setup::Env, json: bool) -> i32 {
    let skill_def = offers_skills(env).then(|| use_skill::def(&env.skills));
    if json {
        let mut list: Vec<serde_json::Value> = env
            .registry
            .tools()
            .map(|(t, p)| {
                serde_json::json!({
                    "name": t.name,
                    "plugin": p.info.name,
                    "description": t.description,
                    "input_schema": t.schema,
                    "read_only": t.read_only,
                    "destructive": t.destructive,
                    "idempotent": t.idempotent,
                    "capabilities": t.capabilities.names(),
                })
            })
            .collect();
        if let Some(d) = &skill_def {
            list.push(serde_json::json!({
                "name": d.name,
                "plugin": SKILLS_PLUGIN,
                "description": d.description,
                "input_schema": d.parameters,
                "read_only": false,
                "destructive": false,
                "idempotent": false,
                "capabilities": [],
            }));
        }
        return print(&format!("{}\n", serde_json::Value::Array(list)));
    }
    let mut rows: Vec<(String, String, String)> = env
        .registry
        .tools()
        .map(|(t, p)| (t.name.clone(), p.info.name.clone(), summary(&t.description)))
        .collect();
    if let Some(d) = &skill_def {
        rows.push((d.name.clone(), SKILLS_PLUGIN.into(), summary(&d.description)));
        rows.sort();
    }
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    let pwidth = rows.iter().map(|r| r.1.len()).max().unwrap_or(6).max(6);
    let mut text = format!("{:width$}  {:pwidth$}  DESCRIPTION\n", "TOOL", "PLUGIN");
    for (name, plugin, description) in rows {
        text.push_str(&format!("{name:width$}  {plugin:pwidth$}  {description}\n"));
    }
    print(&text)
}

fn skills(env: &setup::Env, json: bool) -> i32 {
    let set = &env.skills;
    if json {
        let list: Vec<serde_json::Value> = set
            .all()
            .iter()
            .map(|k| {
                serde_json::json!({
                    "name": k.name,
                    "description": k.description,
                    "source": k.source.as_str(),
                    "kind": k.kind.as_str(),
                    "path": k.location,
                    "sha256": set.digest(k).ok(),
                })
            })
            .collect();
        let hidden: Vec<serde_json::Value> = set
            .shadowed
            .iter()
            .map(|h| {
                serde_json::json!({
                    "name": h.name,
                    "source": h.source.as_str(),
                    "path": h.location,
                    "hidden_by": {"source": h.by_source.as_str(), "path": h.by_location},
                })
            })
            .collect();
        let doc = serde_json::json!({"skills": list, "hidden": hidden, "warnings": set.warnings});
        return print(&format!("{doc}\n"));
    }
    if set.is_empty() {
        return print(
            "No skills. Add SKILL.md folders or skill components to .corral/skills/ in the project or to \
             skills/ in corral's user folder.\n",
        );
    }
    let mut text = String::new();
    for k in set.all() {
        text.push_str(&format!(
            "{} ({}, {})\n  {}\n  path: {}\n",
            k.name,
            k.source.as_str(),
            k.kind.as_str(),
            k.description.split_whitespace().collect::<Vec<_>>().join(" "),
            k.location
        ));
    }
    if !set.shadowed.is_empty() {
        text.push_str("\nHidden by a skill of the same name:\n");
        for h in &set.shadowed {
            text.push_str(&format!(
                "{} ({}) {}\n  hidden by the {} skill at {}\n",
                h.name,
                h.source.as_str(),
                h.location,
                h.by_source.as_str(),
                h.by_location
            ));
        }
    }
    print(&text)
}

fn cache_word(c: &CacheStatus) -> String {
    match c {
        CacheStatus::Hit => "cached".into(),
        CacheStatus::Compiled => "compiled now (stored in cache)".into(),
        CacheStatus::Rebuilt(why) => format!("recompiled ({why})"),
        CacheStatus::Disabled => "compiled now (cache unavailable)".into(),
        CacheStatus::Precompiled => "precompiled in corral".into(),
        CacheStatus::Deferred => "described from the cache (code loads on first use)".into(),
        CacheStatus::Failed(why) => format!("cannot be loaded: {why}"),
    }
}

fn plugins(env: &setup::Env, json: bool) -> i32 {
    // Report on the code itself, not only on the descriptions kept in the cache.
    env.registry.load_all();
    if json {
        let loaded = env.registry.plugins().iter().map(|p| {
            serde_json::json!({
                "name": p.info.name,
                "loaded": true,
                "origin": p.info.origin.as_str(),
                "location": p.info.location,
                "sha256": p.info.sha256,
                "size": p.info.size,
                "cached": p.cache_status() == CacheStatus::Hit,
                "cache": cache_word(&p.cache_status()),
                "capabilities": p.info.asks.names(),
                "granted": p.info.granted.names(),
                "imports": p.info.imports,
                "tools": p.info.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            })
        });
        let skipped = env.registry.skipped().iter().map(|s| {
            serde_json::json!({
                "name": s.name,
                "loaded": false,
                "origin": s.origin.as_str(),
                "location": s.location,
                "sha256": s.sha256,
                "capabilities": s.asks.names(),
                "granted": [],
                "reason": s.reason,
            })
        });
        return print(&format!("{}\n", serde_json::Value::Array(loaded.chain(skipped).collect())));
    }
    let mut text = String::new();
    for p in env.registry.plugins() {
        text.push_str(&format!(
            "{}\n  source:       {} ({})\n  sha256:       {}\n  size:         {} bytes\n  tools:        {}\n  \
             asks for:     {}\n  granted:      {}\n  cache:        {}\n",
            p.info.name,
            p.info.origin.as_str(),
            p.info.location,
            p.info.sha256,
            p.info.size,
            p.info.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            p.info.asks,
            p.info.granted,
            cache_word(&p.cache_status()),
        ));
    }
    if !env.registry.skipped().is_empty() {
        text.push_str("\nnot loaded:\n");
        for s in env.registry.skipped() {
            let from = match s.origin {
                Origin::Builtin => "built-in".to_string(),
                o => format!("{} {}", o.as_str(), s.location),
            };
            text.push_str(&format!("  {} ({from}, sha256 {}): {}\n", s.name, s.sha256, s.reason));
        }
    }
    print(&text)
}

/// Whether the read guard refused a change the call asked for (recorded by the host as the
/// call's effect, whatever the plugin made of the refusal).
fn unread_refusal(effects: &[Effect]) -> bool {
    effects.contains(&Effect::Unread)
}

/// The way out of the read guard for `corral tool`: each call is a session of its own, so no
/// file has been read in it, and reading first cannot help.
fn unread_hint(tool: &str) -> String {
    format!(
        "each `corral tool` call is a session of its own, so a file read by an earlier call does not \
         count. To change an existing file from the command line, turn the read guard off for this \
         call: corral --no-read-guard tool {tool} '...'"
    )
}

async fn tool(env: &setup::Env, name: &str, args: &str) -> i32 {
    let args = if args == "-" {
        let mut buf = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
            eprintln!("error: cannot read arguments from stdin: {e}");
            return 2;
        }
        buf
    } else {
        args.to_string()
    };
    let parsed: serde_json::Value = match serde_json::from_str(&args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "error: the arguments are not valid JSON: {e}\nPass a JSON object, for example '{{\"file_path\": \"a.txt\"}}'."
            );
            return 2;
        }
    };
    if !parsed.is_object() {
        eprintln!("error: the arguments must be a JSON object, for example '{{\"file_path\": \"a.txt\"}}'");
        return 2;
    }
    if name == use_skill::NAME && offers_skills(env) {
        let ctx = Ctx { runtime: &env.runtime, session: &env.session, limits: &env.settings.limits };
        let outcome = use_skill::call(&env.skills, ctx, &parsed.to_string()).await;
        if outcome.is_error {
            eprintln!("{}", crate::termtext::clean(&outcome.content));
            return 1;
        }
        let mut text = outcome.content;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        return print(&text);
    }
    let Some((_, plugin)) = env.registry.tool(name) else {
        if let Some(s) = env.registry.skipped().iter().find(|s| s.name == name && s.origin == Origin::Builtin)
        {
            eprintln!("error: the built-in tool '{name}' is not loaded: {}", s.reason);
            return 2;
        }
        let near = env.registry.closest(name, 3);
        eprintln!(
            "error: no tool named '{name}'. Closest: {}. Run `corral tools` for the list.",
            near.join(", ")
        );
        return 2;
    };
    let report =
        env.runtime.invoke(plugin, &env.session, name, &parsed.to_string(), &env.settings.limits).await;
    if report.stderr.dropped > 0 || report.stdout.dropped > 0 {
        eprintln!(
            "note: the plugin's output streams were cut ({} bytes of stdout and {} of stderr dropped)",
            report.stdout.dropped, report.stderr.dropped
        );
    }
    match report.result {
        Ok(out) => {
            let mut text = out.text;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            print(&text)
        }
        Err(e) => {
            let clean = crate::termtext::clean;
            let hint = match e.hint {
                _ if unread_refusal(&report.effects) => Some(unread_hint(name)),
                Some(h) => Some(clean(&h)),
                None => None,
            };
            eprintln!("{}", error_text(e.kind, &clean(&e.message), hint.as_deref()));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unread_hint_follows_the_guard_s_effect_not_the_wording() {
        assert!(unread_refusal(&[Effect::TodoChanged, Effect::Unread]));
        assert!(!unread_refusal(&[Effect::NotUndoable("has not been read in this session".into())]));
        let h = unread_hint("edit_file");
        assert!(h.contains("corral --no-read-guard tool edit_file '...'"), "{h}");
    }
}
