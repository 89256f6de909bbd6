//! `corral tools`, `corral tool NAME ARGS`, `corral plugins` and `corral config`; `corral plugin`
//! is handed to its own module.

use super::{Command, GlobalArgs, SetupError, setup};
use crate::runtime::{CacheStatus, Plugin};
use std::io::{Read, Write};

/// Runs the command; Ok is the exit code.
pub async fn dispatch(command: Command, global: &GlobalArgs) -> Result<i32, SetupError> {
    if let Command::Plugin { command } = command {
        // Authoring commands load no installed plugins (add checks them itself).
        return Ok(super::plugin::run(command, global).await);
    }
    if let Command::Config { json } = command {
        // Settings only: a broken plugin must not hide the configuration.
        let p = setup::resolve(global)?.provenance;
        return Ok(print(&if json { format!("{}\n", p.to_json()) } else { p.to_text() }));
    }
    let env = setup::prepare(global).await?;
    match command {
        Command::Tools { json } => Ok(tools(&env, json)),
        Command::Plugins { json } => Ok(plugins(&env, json)),
        Command::Tool { name, args } => Ok(tool(&env, &name, &args).await),
        Command::Config { .. } | Command::Exec { .. } | Command::Plugin { .. } => Ok(0),
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

pub(super) fn print(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            2
        }
    }
}

fn tools(env: &setup::Env, json: bool) -> i32 {
    if json {
        let list: Vec<serde_json::Value> = env
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
                    "capabilities": t.capabilities,
                })
            })
            .collect();
        return print(&format!("{}\n", serde_json::Value::Array(list)));
    }
    let width = env.registry.tools().map(|(t, _)| t.name.len()).max().unwrap_or(4).max(4);
    let pwidth = env.registry.tools().map(|(_, p)| p.info.name.len()).max().unwrap_or(6).max(6);
    let mut text = format!("{:width$}  {:pwidth$}  DESCRIPTION\n", "TOOL", "PLUGIN");
    for (t, p) in env.registry.tools() {
        text.push_str(&format!("{:width$}  {:pwidth$}  {}\n", t.name, p.info.name, summary(&t.description)));
    }
    print(&text)
}

fn cache_word(c: &CacheStatus) -> String {
    match c {
        CacheStatus::Hit => "cached".into(),
        CacheStatus::Compiled => "compiled now (stored in cache)".into(),
        CacheStatus::Rebuilt(why) => format!("recompiled ({why})"),
        CacheStatus::Disabled => "compiled now (cache unavailable)".into(),
    }
}

fn capabilities(p: &Plugin) -> Vec<&'static str> {
    let mut caps: Vec<&'static str> =
        p.info.tools.iter().flat_map(|t| t.capabilities.iter().copied()).collect();
    caps.sort();
    caps.dedup();
    caps
}

fn plugins(env: &setup::Env, json: bool) -> i32 {
    if json {
        let list: Vec<serde_json::Value> = env
            .registry
            .plugins()
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.info.name,
                    "origin": p.info.origin.as_str(),
                    "location": p.info.location,
                    "sha256": p.info.sha256,
                    "size": p.info.size,
                    "cached": p.info.cache == CacheStatus::Hit,
                    "cache": cache_word(&p.info.cache),
                    "capabilities": capabilities(p),
                    "imports": p.info.imports,
                    "tools": p.info.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
                })
            })
            .collect();
        return print(&format!("{}\n", serde_json::Value::Array(list)));
    }
    let mut text = String::new();
    for p in env.registry.plugins() {
        let caps = capabilities(p);
        text.push_str(&format!(
            "{}\n  source:       {} ({})\n  sha256:       {}\n  size:         {} bytes\n  tools:        {}\n  \
             capabilities: {}\n  cache:        {}\n",
            p.info.name,
            p.info.origin.as_str(),
            p.info.location,
            p.info.sha256,
            p.info.size,
            p.info.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            if caps.is_empty() { "none".to_string() } else { caps.join(", ") },
            cache_word(&p.info.cache),
        ));
    }
    print(&text)
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
    let Some((_, plugin)) = env.registry.tool(name) else {
        let near = env.registry.closest(name, 3);
        eprintln!(
            "error: no tool named '{name}'. Closest: {}. Run `corral tools` for the list.",
            near.join(", ")
        );
        return 2;
    };
    let report = env
        .runtime
        .invoke(&plugin.pre, &plugin.info.name, &env.session, name, &parsed.to_string(), &env.settings.limits)
        .await;
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
            eprintln!("error ({}): {}", e.kind.as_str(), e.message);
            if let Some(h) = e.hint {
                eprintln!("hint: {h}");
            }
            1
        }
    }
}
