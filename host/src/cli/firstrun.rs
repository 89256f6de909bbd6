//! The first hour: `corral setup` (and the same questions on a first run at a terminal) finds
//! a model server (a local Ollama, LM Studio or llama.cpp on its default port, API keys in the
//! environment), lets the person pick a model and writes the user file; `corral init` writes a
//! project's `corral.toml`. Without a terminal, a first run says everything that is missing at
//! once.

use crate::config::{self, Settings};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A model server corral can use, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// `model.provider`.
    pub provider: &'static str,
    /// Shown to the person.
    pub label: String,
    /// Models the server lists (local servers only).
    pub models: Vec<String>,
}

/// Local servers and where they listen by default: (provider, name, models URL).
const LOCAL: &[(&str, &str, &str)] = &[
    ("ollama", "Ollama", "http://127.0.0.1:11434/v1/models"),
    ("lmstudio", "LM Studio", "http://127.0.0.1:1234/v1/models"),
    ("llamacpp", "llama.cpp server", "http://127.0.0.1:8080/v1/models"),
];

/// Hosted providers and the variable that holds their key.
const HOSTED: &[(&str, &str, &str)] = &[
    ("openai", "OpenAI", "OPENAI_API_KEY"),
    ("anthropic", "Anthropic", "ANTHROPIC_API_KEY"),
    ("openrouter", "OpenRouter", "OPENROUTER_API_KEY"),
];

/// Whether the settings name no model server and no model: a first run.
pub fn nothing_chosen(s: &Settings) -> bool {
    s.model.provider.is_none() && s.model.base_url.is_none()
}

/// The model ids an OpenAI-style `/v1/models` answer lists.
fn model_ids(body: &serde_json::Value) -> Vec<String> {
    let list = body["data"].as_array().or_else(|| body["models"].as_array());
    list.into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().or(m["name"].as_str()))
        .map(String::from)
        .collect()
}

/// Looks for local servers (a short request each, in parallel) and keys in `env`.
pub async fn detect(
    env: &dyn Fn(&str) -> Option<String>,
    local: &[(&'static str, &str, &str)],
) -> Vec<Found> {
    let http = reqwest::Client::builder().timeout(Duration::from_millis(800)).no_proxy().build().ok();
    let probes = local.iter().map(|(provider, name, url)| {
        let http = http.clone();
        async move {
            let resp = http?.get(*url).send().await.ok()?;
            let body: serde_json::Value = serde_json::from_slice(&resp.bytes().await.ok()?).ok()?;
            Some(Found {
                provider,
                label: format!("{name} at {}", url.trim_end_matches("/v1/models")),
                models: model_ids(&body),
            })
        }
    });
    let mut out: Vec<Found> = futures_util::future::join_all(probes).await.into_iter().flatten().collect();
    for (provider, name, var) in HOSTED {
        if env(var).is_some_and(|v| !v.trim().is_empty()) {
            out.push(Found { provider, label: format!("{name} (key in {var})"), models: Vec::new() });
        }
    }
    out
}

/// The user file's text for `provider` and `model`.
fn user_file_text(provider: &str, model: &str) -> String {
    format!(
        "# Written by `corral setup`; `corral config` shows every setting and where it came from.\n\
         [model]\nprovider = {provider:?}\nname = {model:?}\n"
    )
}

/// Writes `[model]` to the user file, keeping a file that exists (refuses to overwrite it).
fn write_user_file(dir: &Path, provider: &str, model: &str) -> Result<PathBuf, String> {
    let path = dir.join(config::USER_FILE);
    if path.exists() {
        return Err(format!(
            "{} exists already; add this to it yourself:\n{}",
            path.display(),
            user_file_text(provider, model)
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(&path, user_file_text(provider, model))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok().filter(|n| *n > 0)?;
    Some(line.trim().to_string())
}

/// Asks the person to pick a server and a model, writes the user file, and returns the
/// (provider, model) chosen. Err says why nothing was chosen.
pub async fn ask(user_dir: Option<&Path>) -> Result<(String, String), String> {
    let env = |k: &str| std::env::var(k).ok();
    let found = detect(&env, LOCAL).await;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "corral needs a model server. Found:");
    if found.is_empty() {
        let _ = writeln!(
            err,
            "  nothing: no Ollama (:11434), LM Studio (:1234) or llama.cpp (:8080) server on this machine, and no \
             OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENROUTER_API_KEY.\nStart a local server, or set a key, then \
             run `corral setup` again (or pass --provider/--base-url and --model)."
        );
        return Err("no model server found".into());
    }
    for (i, f) in found.iter().enumerate() {
        let _ = writeln!(err, "  {}. {}", i + 1, f.label);
    }
    let _ = write!(err, "Use which? [1] ");
    let _ = err.flush();
    let pick = read_line().ok_or("no answer")?;
    let n: usize =
        if pick.is_empty() { 1 } else { pick.parse().map_err(|_| format!("{pick:?} is not a number"))? };
    let f = found.get(n.wrapping_sub(1)).ok_or(format!("there is no choice {n}"))?;
    if !f.models.is_empty() {
        let _ = writeln!(err, "Models on that server:");
        for (i, m) in f.models.iter().enumerate().take(20) {
            let _ = writeln!(err, "  {}. {m}", i + 1);
        }
    }
    let _ = write!(err, "Model (a number or a name){}: ", if f.models.is_empty() { "" } else { " [1]" });
    let _ = err.flush();
    let answer = read_line().ok_or("no answer")?;
    let model = match answer.parse::<usize>() {
        Ok(i) if i >= 1 && i <= f.models.len() => f.models[i - 1].clone(),
        _ if answer.is_empty() => f.models.first().cloned().ok_or("no model named")?,
        _ => answer,
    };
    let dir = user_dir.ok_or("no user directory (set HOME or CORRAL_CONFIG_DIR)")?;
    let path = write_user_file(dir, f.provider, &model)?;
    let _ = writeln!(err, "Wrote {}; from now on `corral \"task\"` is all it takes.", path.display());
    Ok((f.provider.to_string(), model))
}

/// What a first run without a terminal (or a declined set-up) is told: everything missing.
pub fn missing_message(s: &Settings, user_dir: Option<&Path>) -> String {
    let user =
        user_dir.map(|d| d.join(config::USER_FILE).display().to_string()).unwrap_or("the user file".into());
    let mut missing = vec![
        "a model server: --provider (ollama, lmstudio, llamacpp, openai, anthropic, openrouter) or --base-url URL",
    ];
    if s.model.model.is_none() {
        missing.push("a model: --model NAME");
    }
    format!(
        "corral has no model configured. Missing: {}.\nRun `corral setup` in a terminal to find a local server \
         or a key and write your user file ({user}), or put them there yourself:\n  [model]\n  provider = \
         \"ollama\"\n  name = \"qwen2.5-coder:14b\"",
        missing.join("; ")
    )
}

/// `corral setup`.
pub async fn setup_command() -> i32 {
    if !std::io::stdin().is_terminal() {
        eprintln!("error: corral setup asks questions; run it in a terminal");
        return 2;
    }
    match ask(config::user_dir().as_deref()).await {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// The project file `corral init` writes.
const PROJECT_TEMPLATE: &str = "\
# corral settings for this project; `corral config` shows every setting and where it came from.
# Until a person trusts this workspace (`corral trust`), this file may only narrow what corral
# may do; the model endpoint and keys always come from each person's own user file.

[agent]
# max_turns = 50

[limits]
# timeout_secs = 30

# Commands the agent may run here (used once the workspace is trusted):
# [commands]
# allowed = [\"cargo\", \"git\"]
";

/// `corral init`: writes `corral.toml` in `workspace` unless it exists.
pub fn init_command(workspace: &Path) -> i32 {
    let path = workspace.join(config::PROJECT_FILE);
    if path.exists() {
        eprintln!("error: {} exists already; `corral config` shows what it sets", path.display());
        return 2;
    }
    match std::fs::write(&path, PROJECT_TEMPLATE) {
        Ok(()) => {
            eprintln!(
                "Wrote {}. Edit it, then run `corral trust` to let it widen what corral may do here.",
                path.display()
            );
            0
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_of_openai_and_ollama_shapes() {
        let v = serde_json::json!({"data": [{"id": "a"}, {"id": "b"}]});
        assert_eq!(model_ids(&v), ["a", "b"]);
        let v = serde_json::json!({"models": [{"name": "qwen"}]});
        assert_eq!(model_ids(&v), ["qwen"]);
    }

    #[test]
    fn detects_a_local_server_and_keys_in_the_environment() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            if let Ok((mut s, _)) = listener.accept() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let body = r#"{"data":[{"id":"qwen2.5-coder:7b"}]}"#;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let url = format!("http://127.0.0.1:{port}/v1/models");
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dead_url = format!("http://127.0.0.1:{dead}/v1/models");
        let local = [("ollama", "Ollama", url.as_str()), ("lmstudio", "LM Studio", dead_url.as_str())];
        let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_string());
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let found = rt.block_on(detect(&env, &local));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            (found[0].provider, found[0].models.clone()),
            ("ollama", vec!["qwen2.5-coder:7b".to_string()])
        );
        assert_eq!(found[1].provider, "anthropic");
        assert!(found[1].label.contains("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn the_user_file_is_written_once_and_init_never_overwrites() {
        let t = tempfile::tempdir().unwrap();
        let p = write_user_file(&t.path().join("cfg"), "ollama", "qwen").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap().lines().skip(1).collect::<Vec<_>>(),
            ["[model]", "provider = \"ollama\"", "name = \"qwen\""]
        );
        let e = write_user_file(&t.path().join("cfg"), "openai", "gpt").unwrap_err();
        assert!(e.contains("exists already") && e.contains("provider = \"openai\""), "{e}");
        assert_eq!(init_command(t.path()), 0);
        let text = std::fs::read_to_string(t.path().join("corral.toml")).unwrap();
        assert!(toml::from_str::<toml::Table>(&text).is_ok(), "the template is valid TOML");
        assert_eq!(init_command(t.path()), 2);
    }

    #[test]
    fn a_first_run_without_a_terminal_names_everything_missing() {
        let s = Settings::default();
        assert!(nothing_chosen(&s));
        let m = missing_message(&s, Some(Path::new("/u/.config/corral")));
        assert!(
            m.contains("--provider")
                && m.contains("--model NAME")
                && m.contains("/u/.config/corral/config.toml"),
            "{m}"
        );
        assert!(m.contains("corral setup"), "{m}");
    }
}
