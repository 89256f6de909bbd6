//! `corral plugin ...`: commands for plugin authors and installers. `new`, `wit`,
//! `c-bindings` and `componentize` build plugins; `inspect` and `add` check and install them.

use super::{GlobalArgs, SetupError, setup};
use crate::authoring::inspect::{InspectError, inspect_bytes};
use crate::authoring::template::Lang;
use crate::authoring::{self, AuthoringError, cbind, componentize, template, valid_plugin_name, wit};
use crate::capabilities::grant::{CapSet, Capability};
use crate::runtime::{self, Candidate, Origin, Registry};
use clap::Subcommand;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod show;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Create a ready-to-build plugin project with one starter tool, a test and a README
    #[command(
        after_help = "Example:\n  corral plugin new line-stats --lang python && cd line-stats && make && make test"
    )]
    New {
        /// The plugin's name (lowercase letters, digits, '-' and '_'); also its folder and tool name
        name: String,
        /// The language of the project
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Lang::NAMES.iter().copied()))]
        lang: String,
        /// Where to create it [default: ./NAME]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The capabilities its WIT offers (comma-separated, or "none"); Python and JavaScript
        /// projects get none by default, Rust and C the whole contract
        #[arg(long, value_name = "LIST")]
        capabilities: Option<String>,
    },
    /// Check a component, show what it asks for, compile and cache it, and install it
    ///
    /// The component must load under corral's checks (its imports, describe() and its tool
    /// specs), and its tools must not clash with the tools already installed. It is copied to
    /// .corral/plugins/ in the workspace, or with --user to the user's plugins folder.
    Add {
        /// The component (.wasm)
        file: PathBuf,
        /// Install for the user (~/.config/corral/plugins/) instead of this project
        #[arg(long)]
        user: bool,
        /// Install under this name [default: the file's name]
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Show a component's tools, schemas, hints, capabilities, imports, exports, size and sha256
    Inspect {
        /// The component (.wasm)
        file: PathBuf,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Write the WIT contract this corral was built with (plugin.wit) into a folder
    Wit {
        /// The folder to write into
        #[arg(long, value_name = "DIR", default_value = "wit")]
        out: PathBuf,
        /// Also write the tool-plugin-js world and the WASI WIT it imports (for componentize-js)
        #[arg(long)]
        js: bool,
        /// Narrow the contract to these capabilities (comma-separated: workspace-write, kv,
        /// context, http, process; or "none"), for guests that import every function their
        /// world names (Python, JavaScript)
        #[arg(long, value_name = "LIST")]
        capabilities: Option<String>,
    },
    /// Write C bindings of the tool-plugin world (tool_plugin.h, .c, _component_type.o)
    CBindings {
        /// The folder to write into
        #[arg(long, value_name = "DIR", default_value = "gen")]
        out: PathBuf,
    },
    /// Make a component of a core module built by clang with wasi-libc (WASI preview 1)
    Componentize {
        /// The core module, linked with the bindings' tool_plugin_component_type.o
        core: PathBuf,
        /// The component to write
        #[arg(short, long, value_name = "FILE")]
        out: PathBuf,
    },
}

/// Why a `plugin` command failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Authoring(#[from] AuthoringError),
    #[error(transparent)]
    Inspect(#[from] InspectError),
    #[error("cannot add {file}: {why}")]
    Clash { file: PathBuf, why: String },
    #[error(
        "no user configuration folder: set CORRAL_CONFIG_DIR or HOME, or install for the project without --user"
    )]
    NoUserDir,
    #[error("cannot use '{0}' as a plugin name: {1}")]
    BadInstallName(String, &'static str),
}

/// Runs a `plugin` command; returns the exit code (0 done, 2 failed).
pub async fn run(command: PluginCommand, global: &GlobalArgs) -> i32 {
    match dispatch(command, global).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", crate::redact::text(&e.to_string()));
            2
        }
    }
}

async fn dispatch(command: PluginCommand, global: &GlobalArgs) -> Result<i32, PluginError> {
    match command {
        PluginCommand::New { name, lang, dir, capabilities } => {
            let lang = Lang::parse(&lang).unwrap_or(Lang::Rust);
            let dir = dir.unwrap_or_else(|| PathBuf::from(&name));
            template::create(&dir, &name, lang, capabilities.as_deref().map(parse_caps).transpose()?)?;
            Ok(super::report::print(&show::created(&dir, &name, lang)))
        }
        PluginCommand::Wit { out, js, capabilities } => {
            let written = wit::write(&out, js, capabilities.as_deref().map(parse_caps).transpose()?)?;
            Ok(super::report::print(&show::written(&written)))
        }
        PluginCommand::CBindings { out } => {
            let written = cbind::write(&out)?;
            Ok(super::report::print(&show::written(&written)))
        }
        PluginCommand::Componentize { core, out } => {
            let bytes =
                std::fs::read(&core).map_err(|source| AuthoringError::Read { path: core.clone(), source })?;
            let component = componentize::componentize(&core, &bytes)?;
            authoring::write_atomic(&out, &component)?;
            Ok(super::report::print(&format!("wrote {} ({} bytes)\n", out.display(), component.len())))
        }
        PluginCommand::Inspect { file, json } => {
            let base = setup::base(global, false, false)?;
            let bytes = read(&file)?;
            let i = inspect_bytes(&base.runtime, &base.session, &file, bytes, &base.settings.limits).await?;
            Ok(super::report::print(&if json { show::json(&i) } else { show::text(&i) }))
        }
        PluginCommand::Add { file, user, name } => add(global, &file, user, name).await,
    }
}

/// A `--capabilities` list: names separated by commas, or `none`.
fn parse_caps(list: &str) -> Result<CapSet, AuthoringError> {
    let names: Vec<&str> = list.split(',').map(str::trim).filter(|n| !n.is_empty() && *n != "none").collect();
    CapSet::parse(&names).map_err(|bad| {
        AuthoringError::Capabilities(format!(
            "unknown capability '{bad}' in --capabilities; use {} or none",
            Capability::ALL.map(|c| c.as_str()).join(", ")
        ))
    })
}

fn read(file: &Path) -> Result<Vec<u8>, InspectError> {
    std::fs::read(file).map_err(|source| InspectError::Read { path: file.to_path_buf(), source })
}

/// Discovery order of origins, for placing the new plugin among the installed ones.
fn rank(o: Origin) -> u8 {
    match o {
        Origin::Builtin => 0,
        Origin::Project => 1,
        Origin::User => 2,
        Origin::Flag => 3,
    }
}

async fn add(global: &GlobalArgs, file: &Path, user: bool, name: Option<String>) -> Result<i32, PluginError> {
    let base = setup::base(global, false, false)?;
    let name = match name {
        Some(n) => n,
        None => file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    if !valid_plugin_name(&name) {
        return Err(PluginError::BadInstallName(
            name,
            "use lowercase letters, digits, '-' and '_', starting with a letter (rename the file or pass --name)",
        ));
    }
    let (dir, origin) = if user {
        (base.user_dir.clone().ok_or(PluginError::NoUserDir)?.join("plugins"), Origin::User)
    } else {
        (base.workspace().join(".corral").join("plugins"), Origin::Project)
    };
    let dest = dir.join(format!("{name}.wasm"));
    let bytes = read(file)?;

    // The component on its own: a valid plugin whose tools describe well.
    let started = Instant::now();
    let i = inspect_bytes(&base.runtime, &base.session, file, bytes.clone(), &base.settings.limits).await?;
    let checked_in = started.elapsed();

    // With everything already installed: the registry refuses clashing tool names.
    let mut candidates = runtime::registry::discover(
        base.trust.trusted().then_some(base.workspace()),
        base.user_dir.as_deref(),
        &base.settings.extra_plugins,
    )
    .map_err(InspectError::from)?;
    candidates.retain(|c| c.path.as_deref() != Some(dest.as_path()));
    candidates.push(Candidate {
        name: name.clone(),
        origin,
        path: Some(dest.clone()),
        bytes: Cow::Owned(bytes.clone()),
        sha256: None,
        built: None,
    });
    candidates.sort_by_key(|c| rank(c.origin));
    let as_set = candidates.clone();
    let rules = base.load_rules().trusting(&name);
    let registry = Registry::load(&base.runtime, &base.session, candidates, &rules, &base.settings.limits)
        .await
        .map_err(|e| PluginError::Clash { file: file.to_path_buf(), why: e.to_string() })?;
    let shown = dest.display().to_string();
    // A project plugin that would be skipped (its tool taken, say) is not installed.
    if let Some(s) = registry.skipped().iter().find(|s| s.location == shown) {
        return Err(PluginError::Clash { file: file.to_path_buf(), why: s.reason.clone() });
    }
    let loads = registry.plugins().iter().any(|p| p.info.location == shown);

    let previous = std::fs::read(&dest).ok().map(|b| authoring::sha256_hex(&b));
    let mut text = show::add_summary(&i, &name, checked_in);
    match previous {
        Some(sha) if sha == i.sha256 => {
            text.push_str(&format!("already installed with the same sha256: {}\n", dest.display()));
        }
        previous => {
            authoring::write_atomic(&dest, &bytes)?;
            let scope = if user { "for the user" } else { "for this project" };
            text.push_str(&format!("installed {scope}: {}\n", dest.display()));
            if let Some(old) = previous {
                text.push_str(&format!("(it replaced an earlier {name}.wasm with sha256 {old})\n"));
            }
        }
    }
    if !loads {
        text.push_str(&format!(
            "note: plugins.disabled names '{name}', so it will not load until that entry is removed\n"
        ));
    }
    // As the person's settings stand (grants, network, commands), will it load?
    let limits = &base.settings.limits;
    if let Err(e) = Registry::load(&base.runtime, &base.session, as_set, &base.load_rules(), limits).await {
        text.push_str(&format!("note: as your settings stand, it will not load yet:\n{e}\n"));
    }
    if !user {
        text.push_str(
            "note: a project's plugins load only in a workspace you trust; after reviewing .corral/, run \
             `corral trust`\n",
        );
    }
    text.push_str("Run `corral tools` to see its tools; delete the file to uninstall it.\n");
    Ok(super::report::print(&text))
}
