//! ClientConfig::resolve: presets, URL normalisation, the order keys are looked up in, and
//! the errors for what is missing.

use super::super::config::{ClientConfig, ProviderKind, normalize_url, preset, preset_names, strip_version};
use super::super::error::LlmError;

fn resolve(
    provider: Option<&str>,
    url: Option<&str>,
    model: Option<&str>,
    key: Option<&str>,
    env: &[(&str, &str)],
) -> Result<ClientConfig, LlmError> {
    let lookup = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
    ClientConfig::resolve(provider, url, model, key, &lookup)
}

fn config_error(r: Result<ClientConfig, LlmError>) -> String {
    match r {
        Err(LlmError::Config(m)) => m,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn presets_are_all_there() {
    assert_eq!(preset_names(), ["openai", "anthropic", "ollama", "llamacpp", "lmstudio", "openrouter"]);
    assert_eq!(preset("Ollama").unwrap().base_url, "http://127.0.0.1:11434");
    assert_eq!(preset("anthropic").unwrap().kind, ProviderKind::Anthropic);
    assert!(preset("gemini").is_none());
}

#[test]
fn a_local_preset_needs_no_key_and_reads_openai_api_key() {
    let c = resolve(Some("ollama"), None, Some("qwen3"), None, &[]).unwrap();
    assert_eq!(
        (c.kind, c.base_url.as_str(), c.model.as_str()),
        (ProviderKind::Ollama, "http://127.0.0.1:11434", "qwen3")
    );
    assert!(!c.truncates_silently, "its own API is told the context size");
    assert_eq!(c.api_key, None);
    // Its OpenAI-compatible endpoint, when named, is used as given and cuts silently.
    let c = resolve(Some("ollama"), Some("http://127.0.0.1:11434/v1"), Some("qwen3"), None, &[]).unwrap();
    assert_eq!((c.kind, c.base_url.as_str()), (ProviderKind::OpenAi, "http://127.0.0.1:11434/v1"));
    assert!(c.truncates_silently);
    let c = resolve(Some("ollama"), Some("http://gpu-box:11434/"), Some("qwen3"), None, &[]).unwrap();
    assert_eq!((c.kind, c.base_url.as_str()), (ProviderKind::Ollama, "http://gpu-box:11434"));
    assert!(c.stream);
    assert!(c.user_agent.starts_with("corral/"));
    let c = resolve(Some("llamacpp"), None, Some("m"), None, &[("OPENAI_API_KEY", "sk-o")]).unwrap();
    assert_eq!(c.api_key.as_deref(), Some("sk-o"));
}

#[test]
fn keys_come_from_the_flag_then_corral_then_the_preset() {
    let env = [("CORRAL_API_KEY", "corral"), ("OPENROUTER_API_KEY", "router"), ("OPENAI_API_KEY", "openai")];
    let key = |k: Option<&str>, env: &[(&str, &str)]| {
        resolve(Some("openrouter"), None, Some("m"), k, env).unwrap().api_key
    };
    assert_eq!(key(Some("flag"), &env).as_deref(), Some("flag"));
    assert_eq!(key(None, &env).as_deref(), Some("corral"));
    assert_eq!(key(None, &env[1..]).as_deref(), Some("router"));
    assert_eq!(
        key(Some("  "), &[("CORRAL_API_KEY", ""), ("OPENROUTER_API_KEY", "router")]).as_deref(),
        Some("router"),
        "empty values are unset"
    );
    let anth = resolve(Some("anthropic"), None, Some("c"), None, &[("ANTHROPIC_API_KEY", "sk-ant")]).unwrap();
    assert_eq!(anth.api_key.as_deref(), Some("sk-ant"));
}

#[test]
fn a_bare_base_url_never_sends_a_provider_key() {
    let env = [("OPENAI_API_KEY", "sk-secret")];
    let c = resolve(None, Some("https://models.example.com"), Some("m"), None, &env).unwrap();
    assert_eq!(c.api_key, None);
    let c = resolve(None, Some("https://models.example.com"), Some("m"), None, &[("CORRAL_API_KEY", "k")])
        .unwrap();
    assert_eq!(c.api_key.as_deref(), Some("k"));
}

#[test]
fn openai_compatible_urls_get_a_version() {
    let url = |u: &str| resolve(None, Some(u), Some("m"), None, &[]).unwrap().base_url;
    assert_eq!(url("http://127.0.0.1:8080"), "http://127.0.0.1:8080/v1");
    assert_eq!(url("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/v1");
    assert_eq!(url("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080/v1");
    assert_eq!(url("https://api.z.ai/api/paas/v4"), "https://api.z.ai/api/paas/v4");
    assert_eq!(url("https://api.groq.com/openai"), "https://api.groq.com/openai/v1");
    assert_eq!(
        url("https://generativelanguage.googleapis.com/v1beta/openai"),
        "https://generativelanguage.googleapis.com/v1beta/openai"
    );
    assert_eq!(url("http://host/vision"), "http://host/vision/v1", "a word starting with v is no version");
}

#[test]
fn anthropic_urls_are_origins() {
    assert_eq!(
        normalize_url(ProviderKind::Anthropic, "https://api.anthropic.com/v1/"),
        "https://api.anthropic.com"
    );
    let c = resolve(Some("anthropic"), Some("http://127.0.0.1:9/"), Some("c"), Some("k"), &[]).unwrap();
    assert_eq!((c.kind, c.base_url.as_str()), (ProviderKind::Anthropic, "http://127.0.0.1:9"));
    let c = resolve(None, Some("https://api.anthropic.com"), Some("c"), None, &[("ANTHROPIC_API_KEY", "a")])
        .unwrap();
    assert_eq!(c.kind, ProviderKind::Anthropic, "known from its URL");
    assert_eq!(c.api_key.as_deref(), Some("a"));
}

#[test]
fn what_is_missing_is_named() {
    let m = config_error(resolve(None, None, Some("m"), None, &[]));
    assert!(m.contains("--provider") && m.contains("--base-url") && m.contains("ollama"), "{m}");
    let m = config_error(resolve(Some("ollama"), None, None, None, &[]));
    assert!(m.contains("--model"), "{m}");
    let m = config_error(resolve(Some("ollama"), None, Some(" "), None, &[]));
    assert!(m.contains("--model"), "{m}");
    let m = config_error(resolve(Some("anthropic"), Some("http://127.0.0.1:1"), Some("c"), None, &[]));
    assert!(m.contains("ANTHROPIC_API_KEY") && m.contains("--api-key"), "{m}");
    let m = config_error(resolve(Some("openai"), None, Some("gpt"), None, &[]));
    assert!(m.contains("OPENAI_API_KEY"), "{m}");
    let m = config_error(resolve(Some("gemini"), None, Some("g"), None, &[]));
    assert!(m.contains("gemini") && m.contains("openrouter"), "{m}");
    // The openai preset pointed elsewhere (a proxy, a test server) may go without a key.
    assert!(resolve(Some("openai"), Some("http://127.0.0.1:1"), Some("gpt"), None, &[]).is_ok());
}

#[test]
fn key_advice_names_the_right_variables() {
    let c = resolve(Some("openrouter"), None, Some("m"), Some("k"), &[]).unwrap();
    assert_eq!(c.key_sources(), "--api-key, CORRAL_API_KEY or OPENROUTER_API_KEY");
    let c = resolve(Some("anthropic"), None, Some("m"), Some("k"), &[]).unwrap();
    assert!(c.key_sources().ends_with("ANTHROPIC_API_KEY"));
    let c = resolve(None, Some("http://x"), Some("m"), None, &[]).unwrap();
    assert_eq!(c.key_sources(), "--api-key, CORRAL_API_KEY");
}

#[test]
fn the_key_is_not_in_debug_output() {
    let c = resolve(Some("openai"), None, Some("m"), Some("sk-very-secret"), &[]).unwrap();
    assert!(!format!("{c:?}").contains("sk-very-secret"));
}

#[test]
fn versions_are_stripped_for_the_server_root() {
    assert_eq!(strip_version("http://h:8080/v1"), "http://h:8080");
    assert_eq!(strip_version("http://h/api/v4"), "http://h/api");
    assert_eq!(strip_version("http://h/openai"), "http://h/openai");
}
