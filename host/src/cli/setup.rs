//! From flags to a ready environment: settings resolved, roots opened, the session and
//! runtime created, plugins and skills discovered and loaded.

use super::GlobalArgs;
use crate::capabilities::grant::CapSet;
use crate::capabilities::http::{NetMode, NetPolicy};
use crate::capabilities::process::CommandPolicy;
use crate::capabilities::{Policy, Roots, Session, find_workspace_root, log};
use crate::config::{self, ConfigError, Flags, Provenance, Settings};
use crate::runtime::skills::{self, SkillSet};
use crate::runtime::{self, Ahead, LoadRules, Pins, Registry, RegistryError, Runtime, RuntimeError};
use crate::trust;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why corral could not start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}\nCheck --workspace, --add-dir and --add-dir-ro.")]
    Roots(std::io::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Registry(#[from] RegistryError),
    #[error("cannot determine the current directory: {0}")]
    Cwd(std::io::Error),
    #[error("{0}\nFix the [network] settings (see `corral config`).")]
    Network(String),
    #[error("{0}")]
    Commands(String),
    #[error("{0}")]
    SkillPin(String),
    #[error("cannot check whether this workspace is trusted: {0}")]
    Trust(std::io::Error),
    #[error("{0}")]
    Cron(String),
}

/// Everything a command needs.
pub struct Env {
    pub settings: Settings,
    /// The policy file in force, if any.
    pub policy: Option<config::Policy>,
    /// Where each setting came from.
    pub provenance: Provenance,
    pub session: Arc<Session>,
    pub runtime: Runtime,
    pub registry: Registry,
    /// The skills, one per name; clashes and skipped skills are in its warnings.
    pub skills: SkillSet,
}

/// The settings in force and what was consulted to get them.
pub struct Resolved {
    pub workspace: PathBuf,
    pub user_dir: Option<PathBuf>,
    pub settings: Settings,
    pub provenance: Provenance,
    /// The policy file, already applied to `settings`.
    pub policy: Option<config::Policy>,
    /// Whether the project's own files count this run, and why.
    pub trust: trust::Check,
}

/// The command-line flags as a settings layer; relative paths are taken from `cwd`.
pub fn flag_layer(g: &GlobalArgs, cwd: &Path) -> Flags {
    let mut f = Flags::new(cwd);
    f.list("workspace.add_dirs", "--add-dir", &g.add_dir)
        .list("workspace.add_dirs_ro", "--add-dir-ro", &g.add_dir_ro)
        .list("plugins.load", "--plugin", &g.plugin)
        .list("plugins.disabled", "--disable-plugin", &g.disable_plugin)
        .switch("workspace.read_guard", "--no-read-guard", g.no_read_guard, false)
        .switch("workspace.allow_git_writes", "--allow-git-writes", g.allow_git_writes, true)
        .opt("limits.timeout_secs", "--timeout", g.timeout)
        .opt("limits.memory_mib", "--memory-mib", g.memory_mib)
        .opt("limits.max_output_kb", "--max-output-kb", g.max_output_kb)
        .opt("agent.max_output_lines", "--max-output-lines", g.max_output_lines)
        .opt("agent.parallel_calls", "--parallel-calls", g.parallel_calls)
        .opt("network.mode", "--network", g.network.clone())
        .list("plugins.grants", "--grant", &g.grant)
        .opt("plugins.policy", "--policy", g.policy.clone())
        .list("commands.allowed", "--allowed-commands", &g.allowed_commands)
        .opt("commands.mode", "--commands", g.commands.clone())
        .switch("commands.yolo", "--yolo", g.yolo, true)
        .list("commands.env", "--command-env", &g.command_env)
        .switch("commands.network", "--command-network", g.command_network, true)
        .list("commands.read_paths", "--command-read", &g.command_read)
        .list("commands.write_paths", "--command-write", &g.command_write)
        .switch("commands.unsandboxed", "--unsandboxed-commands", g.unsandboxed_commands, true)
        .opt("model.provider", "--provider", g.provider.clone())
        .opt("model.name", "--model", g.model.clone())
        .opt("model.base_url", "--base-url", g.base_url.clone())
        .opt("model.api_key", "--api-key", g.api_key.clone())
        .opt("model.max_context_tokens", "--max-context-tokens", g.max_context_tokens)
        .opt("model.max_output_tokens", "--max-output-tokens", g.max_output_tokens)
        .opt("model.temperature", "--temperature", g.temperature)
        .opt("model.reasoning_effort", "--reasoning-effort", g.reasoning_effort.clone())
        .opt("model.token_param", "--token-param", g.token_param.clone())
        .opt("model.images", "--images", g.images.clone())
        .opt("model.retries", "--retries", g.retries)
        .opt("model.retry_base_ms", "--retry-base-ms", g.retry_base_ms)
        .opt("model.timeout_secs", "--provider-timeout", g.provider_timeout)
        .switch("model.stream", "--no-stream", g.no_stream, false)
        .opt("agent.max_turns", "--max-turns", g.max_turns)
        .switch("agent.history", "--no-history", g.no_history, false)
        .switch("agent.continue", "--no-continue", g.no_continue, false)
        .switch("agent.instructions", "--no-instructions", g.no_instructions, false)
        .opt("agent.system_prompt", "--system-prompt", g.system_prompt.clone())
        .opt("agent.audit_log", "--audit-log", g.audit_log.clone())
        .switch("agent.proactive_summaries", "--proactive-summaries", g.proactive_summaries, true)
        .switch("agent.memory_full", "--memory-full", g.memory_full, true)
        .switch("output.quiet", "--quiet", g.quiet, true)
        .opt("output.format", "--output-format", g.output_format.clone())
        .opt("output.color", "--color", g.color.clone())
        .switch("output.verbose", "--verbose", g.verbose, true);
    f
}

/// Finds the workspace and resolves the settings; prints the loader's warnings. `ci`: a
/// locked-down run (`corral exec`, `--ci`), where the project is never trusted, as under a
/// policy file. `ask`: a person at a terminal may be asked to trust the workspace.
pub fn resolve(g: &GlobalArgs, ci: bool, ask: bool) -> Result<Resolved, SetupError> {
    let cwd = std::env::current_dir().map_err(SetupError::Cwd)?;
    let workspace = match &g.workspace {
        Some(w) => cwd.join(w),
        None => find_workspace_root(&cwd),
    };
    let user_dir = config::user_dir();
    let env = |k: &str| std::env::var(k).ok();
    let flags = flag_layer(g, &cwd);
    let locked = ci.then_some(if g.ci { "--ci" } else { "corral exec" });
    let mut check = trust::check(&workspace, user_dir.as_deref(), locked).map_err(SetupError::Trust)?;
    let load = |trusted: bool| config::load(&workspace, user_dir.as_deref(), &env, &flags, trusted);
    let (mut settings, mut provenance) = load(check.trusted())?;
    if settings.policy.is_some() && locked.is_none() {
        check.standing = trust::Standing::Locked("a policy file");
        (settings, provenance) = load(false)?;
    }
    let asks = trust::Asks::of(&check.workspace, &provenance.ignored);
    if !check.trusted() && !asks.is_empty() {
        let may_ask = ask && !matches!(check.standing, trust::Standing::Locked(_));
        if may_ask && super::trustask::ask(&check, &asks) {
            trust::grant(&check, user_dir.as_deref()).map_err(SetupError::Trust)?;
            check.standing = trust::Standing::Trusted;
            (settings, provenance) = load(true)?;
        } else {
            provenance.warnings.push(asks.summary_line(&check.standing));
        }
    }
    provenance.warnings.extend(trust::never_line(&provenance.ignored));
    for w in &provenance.warnings {
        eprintln!("warning: {w}");
    }
    let policy = match &settings.policy {
        Some(path) => {
            let policy = config::Policy::load(path)?;
            policy.apply(&mut settings, &provenance)?;
            Some(policy)
        }
        None => None,
    };
    Ok(Resolved { workspace, user_dir, settings, provenance, policy, trust: check })
}

/// CI mode never prompts and gives plugins the network only when asked for explicitly (a
/// flag or the policy file): a network mode of `on` from a settings file is lowered.
fn lock_down(s: &mut Settings, p: &Provenance, policy: Option<&config::Policy>) -> Result<(), SetupError> {
    if s.commands.enabled() && s.commands.mode == "ask" {
        return Err(SetupError::Commands(
            "CI mode never prompts, so commands.mode = \"ask\" cannot be used; list the programs with \
             --allowed-commands instead"
                .into(),
        ));
    }
    let explicit = p.source("network.mode").is_some_and(|src| src.starts_with("flag "))
        || policy.is_some_and(|pol| pol.network == "on");
    if s.network.mode == "on" && !explicit {
        eprintln!(
            "warning: CI mode: network.mode = \"on\" from {} is ignored; plugins get no network unless \
             --network on is given",
            p.source("network.mode").unwrap_or_default()
        );
        s.network.mode = "llm-only".into();
    }
    Ok(())
}

/// What may load, from the settings and the policy.
fn load_rules(s: &Settings, policy: Option<&config::Policy>, net: &NetPolicy) -> LoadRules {
    LoadRules {
        disabled: s.disabled_plugins.clone(),
        // Names were checked when the settings were read.
        grants: s
            .grants
            .iter()
            .map(|(p, caps)| (p.clone(), CapSet::parse(caps).unwrap_or_default()))
            .collect(),
        pins: policy.map(|p| Pins { file: p.path.clone(), sha256: p.pins() }),
        network: net.mode == NetMode::On,
        commands: s.commands.enabled(),
    }
}

/// An environment before any plugin is loaded: settings, the session and the runtime.
pub struct Base {
    pub settings: Settings,
    /// The policy file in force, if any.
    pub policy: Option<config::Policy>,
    pub provenance: Provenance,
    pub user_dir: Option<PathBuf>,
    /// Where compiled components (and unpacked shipped skills) are kept; None: no cache.
    pub cache_dir: Option<PathBuf>,
    pub session: Arc<Session>,
    pub runtime: Runtime,
    /// Whether the project's own files count this run.
    pub trust: trust::Check,
}

impl Base {
    /// The workspace root, as opened.
    pub fn workspace(&self) -> &Path {
        &self.session.roots().workspace().path
    }

    /// What may load under these settings and policy.
    pub fn load_rules(&self) -> LoadRules {
        load_rules(&self.settings, self.policy.as_ref(), self.session.net())
    }
}

/// Resolves settings, opens the roots and creates the session and the runtime. In CI mode
/// (`ci`) the settings are locked down first (see [`lock_down`]); `ask` lets a person at a
/// terminal be asked to trust the workspace (see [`resolve`]).
pub fn base(g: &GlobalArgs, ci: bool, ask: bool) -> Result<Base, SetupError> {
    let cache_dir = runtime::default_cache_dir();
    // Made on another core while the settings are read and the workspace is opened.
    let starting = Runtime::start(cache_dir.clone());
    let Resolved { workspace, user_dir, mut settings, provenance, policy, trust } = resolve(g, ci, ask)?;
    // A cron job's run: never wider than the settings the job was created under.
    super::cron_settings::narrow_for_job(&mut settings, &workspace).map_err(SetupError::Cron)?;
    if ci {
        lock_down(&mut settings, &provenance, policy.as_ref())?;
    }
    let verbose = settings.output.verbose;
    let state_dir = config::state_dir();
    let protected: Vec<PathBuf> =
        user_dir.iter().chain(cache_dir.iter()).chain(state_dir.iter()).cloned().collect();
    let mut roots = Roots::open(&workspace, &settings.extra_roots, &protected).map_err(SetupError::Roots)?;
    if settings.allow_git_writes {
        roots.allow_git_writes();
    }
    let policy_ws = Policy { read_guard: settings.read_guard, undo: settings.undo, ..Policy::default() };
    let mut session = Session::new(roots, policy_ws, log::Sink::new(verbose));
    if let Some(state) = &state_dir {
        let ws_real = &session.roots().workspace().path;
        let dir = config::workspace_state_dir(state, ws_real);
        match crate::capabilities::local::Local::open(&dir, ws_real) {
            Ok(local) => session.set_local(local),
            Err(e) => eprintln!(
                "warning: cannot use the state folder {}: {e}; approvals, the continue note and history are not kept",
                dir.display()
            ),
        }
    }
    session.set_net(NetPolicy::from_settings(&settings.network).map_err(SetupError::Network)?);
    let root_paths: Vec<PathBuf> = session.roots().all().iter().map(|r| r.path.clone()).collect();
    let mut commands =
        CommandPolicy::from_settings(&settings.commands, &root_paths, session.local(), &|k: &str| {
            std::env::var_os(k)
        })
        .map_err(SetupError::Commands)?;
    // The command sandbox: corral's own folders stay out of reach, and a locked-down run refuses
    // to run commands unconfined unless the person or the policy accepts it.
    commands.confine.hidden.extend(protected.iter().cloned());
    commands.confine.required = ci || policy.is_some();
    session.set_commands(commands);
    if settings.commands.enabled()
        && let Some(why) = crate::capabilities::sandbox::probe().missing()
    {
        eprintln!(
            "warning: commands cannot be confined on this system ({why}); {}. See `corral doctor`.",
            if settings.commands.unsandboxed {
                "they run unconfined, as commands.unsandboxed accepts"
            } else if ci || policy.is_some() {
                "this locked-down run refuses them unless commands.unsandboxed (--unsandboxed-commands) accepts that"
            } else {
                "they run with your full rights"
            }
        );
    }
    session.set_plugin_settings(settings.plugin_settings.clone());
    // Every secret the run holds is masked in everything it writes or shows.
    let named =
        settings.plugin_settings.values().flat_map(|t| t.iter()).filter(|(k, _)| config::is_secret_name(k));
    for (_, v) in named {
        crate::redact::register(v);
    }
    let env_keys = ["CORRAL_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"];
    for key in
        settings.model.api_key.iter().cloned().chain(env_keys.iter().filter_map(|k| std::env::var(k).ok()))
    {
        crate::redact::register(&key);
    }
    let session = Arc::new(session);
    let runtime = starting.wait()?;
    Ok(Base { settings, policy, provenance, user_dir, cache_dir, session, runtime, trust })
}

/// The built-in plugin offered only in workspaces with a `.beads/` folder.
const BEADS_PLUGIN: &str = "built-in:backlog";

/// Keeps the skills `policy` pins; a pinned skill whose digest differs stops the start.
fn pin_skills(skills: &mut SkillSet, policy: &config::Policy, verbose: bool) -> Result<(), SetupError> {
    for k in skills.all() {
        let Some(pin) = policy.skills.get(&k.name) else {
            if verbose {
                eprintln!(
                    "skill {} not loaded: it is not in the policy file {}",
                    k.name,
                    policy.path.display()
                );
            }
            continue;
        };
        let found = skills.digest(k).unwrap_or_else(|e| format!("unknown ({e})"));
        if found != pin.sha256 {
            return Err(SetupError::SkillPin(format!(
                "skill {} ({}) does not match the policy file {}: it pins sha256 {}, the skill is {found}. \
                 Review the skill, then update the pin (`corral skills --json` shows its sha256).",
                k.name,
                k.location,
                policy.path.display(),
                pin.sha256
            )));
        }
    }
    skills.retain(|k| policy.skills.contains_key(&k.name));
    Ok(())
}

/// Resolves settings and loads every plugin and skill (see [`base`] for `ci`, [`load`] for
/// `ahead`); never asks for trust.
pub async fn prepare(g: &GlobalArgs, ci: bool, ahead: Ahead<'_>) -> Result<Env, SetupError> {
    load(base(g, ci, false)?, ahead).await
}

/// Loads every plugin and skill into `base`, and starts loading the code `ahead` says in the
/// background ([`Registry::warm_up`]).
pub async fn load(base: Base, ahead: Ahead<'_>) -> Result<Env, SetupError> {
    let mut rules = base.load_rules();
    // The beads backlog tool only where the project keeps a beads backlog (`bd init` makes
    // .beads/): elsewhere its schema would cost every request for nothing.
    if !base.workspace().join(".beads").is_dir() {
        rules.disabled.push(BEADS_PLUGIN.to_string());
    }
    let Base { settings, policy, provenance, user_dir, cache_dir, session, runtime, trust } = base;
    let verbose = settings.output.verbose;
    let ws_root = session.roots().workspace().path.clone();
    // An untrusted project's plugins and skills are not even read.
    let project = trust.trusted().then_some(ws_root.as_path());
    let candidates = runtime::registry::discover(project, user_dir.as_deref(), &settings.extra_plugins)?;
    let registry = Registry::load(&runtime, &session, candidates, &rules, &settings.limits).await?;
    // As soon as the plugins are known: the loading thread then has the rest of the setup
    // (skills; in a session, the answer to the window probe and the first request) to get
    // ahead of the first calls.
    registry.warm_up(ahead, runtime.rehearsal(&session));
    // Shipped SKILL.md folders are unpacked beside the compiled components, so they can be
    // preopened; without a cache directory, under the system's temporary directory.
    let unpack_base = cache_dir.unwrap_or_else(|| std::env::temp_dir().join("corral"));
    let mut warnings = Vec::new();
    let mut found = skills::discover(project, user_dir.as_deref(), &unpack_base, &mut warnings);
    if policy.as_ref().is_some_and(|p| p.skills.is_empty()) {
        // Under a policy nothing runs that it does not name, and it names no skill.
        found.clear();
    }
    let mut skills = SkillSet::load(&runtime, &session, found, &settings.limits).await;
    if let Some(p) = &policy {
        pin_skills(&mut skills, p, verbose)?;
    }
    warnings.append(&mut skills.warnings);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    skills.warnings = warnings;
    // A plugin the person did not ship (a project's) that was skipped is always reported.
    for s in registry.skipped().iter().filter(|s| s.origin == runtime::Origin::Project) {
        eprintln!("warning: plugin {} ({}) not loaded: {}", s.name, s.location, s.reason);
    }
    if verbose {
        if let Some(why) = runtime.cache().off_reason() {
            eprintln!("compile cache not used: {why}");
        }
        for p in registry.plugins() {
            eprintln!("plugin {} ({}): {:?}", p.info.name, p.info.location, p.cache_status());
        }
        for s in registry.skipped().iter().filter(|s| s.origin != runtime::Origin::Project) {
            eprintln!("plugin {} not loaded: {}", s.name, s.reason);
        }
        for k in skills.all() {
            eprintln!("skill {} ({}): {:?}", k.name, k.location, skills.cache_status(k));
        }
    }
    Ok(Env { settings, policy, provenance, session, runtime, registry, skills })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn load(args: &[&str], env: &[(&str, &str)]) -> Result<(Settings, Provenance), ConfigError> {
        let cli = Cli::try_parse_from([&["corral"], args, &["tools"]].concat()).unwrap();
        let env = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        config::load(
            Path::new("/nonexistent-ws"),
            None,
            &env,
            &flag_layer(&cli.global, Path::new("/cwd")),
            false,
        )
    }

    #[test]
    fn every_flag_sets_its_key() {
        let args = [
            "--add-dir",
            "a",
            "--add-dir-ro",
            "b",
            "--plugin",
            "p.wasm",
            "--disable-plugin",
            "grep",
            "--no-read-guard",
            "--allow-git-writes",
            "--command-network",
            "--command-read",
            "r",
            "--command-write",
            "w",
            "--unsandboxed-commands",
            "--timeout",
            "5",
            "--memory-mib",
            "64",
            "--max-output-kb",
            "9",
            "--max-output-lines",
            "300",
            "--parallel-calls",
            "2",
            "--network",
            "on",
            "--grant",
            "myplug=http,kv",
            "--policy",
            "ci/policy.toml",
            "--allowed-commands",
            "git,ls",
            "--commands",
            "ask",
            "--yolo",
            "--command-env",
            "CARGO_HOME",
            "--provider",
            "ollama",
            "--model",
            "m",
            "--base-url",
            "http://x",
            "--api-key",
            "k",
            "--max-context-tokens",
            "2048",
            "--max-output-tokens",
            "100",
            "--temperature",
            "0.5",
            "--reasoning-effort",
            "low",
            "--token-param",
            "max_tokens",
            "--images",
            "false",
            "--retries",
            "2",
            "--retry-base-ms",
            "10",
            "--provider-timeout",
            "30",
            "--no-stream",
            "--max-turns",
            "3",
            "--no-history",
            "--no-continue",
            "--no-instructions",
            "--system-prompt",
            "be brief",
            "--audit-log",
            "audit.jsonl",
            "--proactive-summaries",
            "--memory-full",
            "-q",
            "--output-format",
            "json",
            "--color",
            "always",
            "-v",
        ];
        // Tables of entries, the undo bounds and the sessions' retention (rarely changed) are
        // set in files only; every other key has a flag.
        const FILE_ONLY: &[&str] = &[
            "network.allow_hosts",
            "network.allow_private",
            "network.hosts",
            "undo.max_bytes",
            "undo.keep",
            "sessions.save",
            "sessions.keep",
            "sessions.max_mb",
            "sessions.max_file_mb",
        ];
        let (s, p) = load(&args, &[]).unwrap();
        for e in &p.entries {
            let from_flag = e.source().starts_with("flag --");
            assert_eq!(from_flag, !FILE_ONLY.contains(&e.key), "{} came from {}", e.key, e.source());
        }
        assert_eq!(p.source("model.timeout_secs").unwrap(), "flag --provider-timeout");
        assert_eq!(s.extra_roots, vec![(PathBuf::from("/cwd/a"), true), (PathBuf::from("/cwd/b"), false)]);
        assert_eq!(s.extra_plugins, vec![PathBuf::from("/cwd/p.wasm")]);
        assert!(s.allow_git_writes);
        assert!(!s.read_guard && !s.model.stream && !s.agent.history && !s.agent.continue_file);
        assert!(!s.agent.instructions && s.output.quiet && s.output.verbose);
        assert!(s.agent.proactive_summaries && s.agent.memory_full);
        assert_eq!(s.model.temperature, Some(0.5));
        assert_eq!(s.output.format, config::OutputFormat::Json);
        assert_eq!(s.output.color, config::ColorChoice::Always);
        assert_eq!(s.network.mode, "on");
        assert_eq!(s.grants.get("myplug"), Some(&vec!["http".to_string(), "kv".to_string()]));
        assert_eq!(s.policy, Some(PathBuf::from("/cwd/ci/policy.toml")));
        assert_eq!(s.commands.allowed, vec!["git".to_string(), "ls".to_string()]);
        assert_eq!(s.commands.mode, "ask");
        assert!(s.commands.yolo);
        assert_eq!(s.commands.env, vec!["CARGO_HOME".to_string()]);
    }

    #[test]
    fn flags_work_after_the_subcommand_and_switches_only_override_when_given() {
        let cli = Cli::try_parse_from(["corral", "tools", "--max-turns", "7", "--no-history"]).unwrap();
        assert_eq!(cli.global.max_turns, Some(7));
        let env = |_: &str| None;
        let f = flag_layer(&Cli::try_parse_from(["corral", "tools"]).unwrap().global, Path::new("/"));
        let (s, p) = config::load(Path::new("/nonexistent-ws"), None, &env, &f, false).unwrap();
        assert!(s.agent.history && s.read_guard && s.model.stream);
        assert_eq!(p.source("agent.history").unwrap(), "default");
    }

    #[test]
    fn bad_flag_values_name_the_flag() {
        let e = load(&["--max-turns", "0"], &[]).unwrap_err().to_string();
        assert!(e.contains("--max-turns (agent.max_turns): expected an integer ≥ 1, found 0"), "{e}");
        let e = load(&["--temperature", "3"], &[]).unwrap_err().to_string();
        assert!(e.contains("--temperature") && e.contains("from 0 to 2"), "{e}");
        assert!(Cli::try_parse_from(["corral", "--provider", "nope", "tools"]).is_err());
    }
}
