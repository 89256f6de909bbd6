//! What all calls of one session share, behind private fields: each host interface borrows
//! only its own narrow view of it (`workspace::View`, `process::View`, ...), as wasmtime-wasi's
//! `WasiView` does, and code outside `capabilities/` uses the named accessors below.

use super::guard::ReadGuard;
use super::{Policy, Roots, context, grant, http, kv, local, log, process, snapshot, trash, undo, workspace};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime_wasi::filesystem::WasiFilesystemCtx;

/// Each plugin's own settings (`[plugin-settings.<name>]`), by plugin name.
pub type PluginSettings = BTreeMap<String, BTreeMap<String, String>>;

/// What all calls of one session share: the roots, the read guard, plugin state and logs.
#[derive(Debug)]
pub struct Session {
    roots: Roots,
    policy: Policy,
    guard: Mutex<ReadGuard>,
    kv: kv::Store,
    log: log::Sink,
    /// Durable sections for the system prompt (todo list, thinking notes).
    sections: context::Sections,
    /// Where `context.ask` goes.
    ask: context::AskChannel,
    /// Snapshot checkpoints and summaries (`context.snapshot-*`).
    snapshot: snapshot::Desk,
    plugin_settings: PluginSettings,
    /// What plugins may reach over the network (`--network`, `[network]`); off by default.
    /// Shared with the fetch tasks, which outlive the borrow of one call.
    net: Arc<http::NetPolicy>,
    /// What each loaded plugin was granted; every host function checks it.
    granted: grant::Granted,
    /// Which programs plugins granted `process` may run (`[commands]`); none by default.
    commands: process::CommandPolicy,
    /// The workspace's local state outside it (approvals, continue note, history, trash index).
    local: local::Local,
    /// The undo checkpoint of the model turn in progress (`capabilities/undo/`).
    undo: undo::Journal,
    /// The roots as every tool call sees them, opened at the first call.
    preopens: Preopens,
}

/// The session's roots as WASI preopens, read-only: opened once, by the runtime at the first
/// call that sees them, and shared by every later call (a call's context holds a clone, which
/// shares the open directories: a directory's handle has no state a call could change, and
/// listing one opens it anew). Opening each root again for each call cost ~5 µs of a call's
/// ~25. The same directories for the whole session, as the host's own handles are.
#[derive(Default)]
pub struct Preopens(OnceLock<WasiFilesystemCtx>);

impl Preopens {
    /// The preopens, made by `open` the first time (when it fails, the next call tries again).
    pub fn get_or_open<E>(
        &self,
        open: impl FnOnce() -> Result<WasiFilesystemCtx, E>,
    ) -> Result<WasiFilesystemCtx, E> {
        if let Some(made) = self.0.get() {
            return Ok(made.clone());
        }
        let made = open()?;
        // Two first calls side by side may both open them; one set is kept.
        Ok(self.0.get_or_init(|| made).clone())
    }
}

impl std::fmt::Debug for Preopens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "Preopens(open)" } else { "Preopens(not yet)" })
    }
}

impl Session {
    pub fn new(roots: Roots, policy: Policy, log: log::Sink) -> Self {
        Session {
            roots,
            policy,
            guard: Mutex::new(ReadGuard::default()),
            kv: kv::Store::default(),
            log,
            sections: context::Sections::default(),
            ask: context::AskChannel::default(),
            snapshot: snapshot::Desk::default(),
            plugin_settings: PluginSettings::default(),
            net: Arc::new(http::NetPolicy::default()),
            granted: grant::Granted::default(),
            commands: process::CommandPolicy::default(),
            local: local::Local::default(),
            undo: undo::Journal::default(),
            preopens: Preopens::default(),
        }
    }

    // Set-up, before the session is shared.

    /// The workspace's local state folder (none: nothing is remembered or undoable).
    pub fn set_local(&mut self, local: local::Local) {
        self.local = local;
    }

    pub fn set_net(&mut self, net: http::NetPolicy) {
        self.net = Arc::new(net);
    }

    pub fn set_commands(&mut self, commands: process::CommandPolicy) {
        self.commands = commands;
    }

    pub fn set_plugin_settings(&mut self, settings: PluginSettings) {
        self.plugin_settings = settings;
    }

    // The narrow views, one per host interface.

    /// What the `workspace` interface's writes and moves may touch.
    pub fn workspace(&self) -> workspace::View<'_> {
        workspace::View {
            roots: &self.roots,
            read_guard: self.policy.read_guard,
            guard: &self.guard,
            undo: self.undo(),
        }
    }

    /// What `workspace.trash` may touch: the workspace view, the trash index and retention.
    pub fn trash(&self) -> trash::View<'_> {
        trash::View {
            workspace: self.workspace(),
            retention: &self.policy.trash,
            local: &self.local,
            log: &self.log,
        }
    }

    /// What the undo checkpoints may touch (recording in a turn, listing, restoring).
    pub fn undo(&self) -> undo::View<'_> {
        undo::View {
            roots: &self.roots,
            bounds: self.policy.undo,
            journal: &self.undo,
            local: &self.local,
            log: &self.log,
        }
    }

    /// What the `process` interface may touch.
    pub fn process(&self) -> process::View<'_> {
        process::View {
            roots: &self.roots,
            commands: &self.commands,
            granted: &self.granted,
            ask: &self.ask,
            local: &self.local,
            log: &self.log,
        }
    }

    /// What `plugin`'s fetches may use: the network policy and its own `allow_hosts`.
    pub fn http(&self, plugin: &str) -> http::View {
        http::View { net: self.net.clone(), allow_hosts: self.plugin_setting(plugin, "allow_hosts") }
    }

    /// What the `context` interface may touch.
    pub fn context(&self) -> context::View<'_> {
        context::View {
            sections: &self.sections,
            ask: &self.ask,
            snapshot: &self.snapshot,
            workspace: &self.roots.workspace().dir,
            local: &self.local,
            log: &self.log,
        }
    }

    // Single concerns, for the loop, the front ends and the interfaces that need one thing.

    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The roots as tool calls see them (made by the runtime, `runtime/invoke.rs`).
    pub fn preopens(&self) -> &Preopens {
        &self.preopens
    }

    pub fn local(&self) -> &local::Local {
        &self.local
    }

    pub fn log(&self) -> &log::Sink {
        &self.log
    }

    pub fn kv(&self) -> &kv::Store {
        &self.kv
    }

    pub fn sections(&self) -> &context::Sections {
        &self.sections
    }

    /// Where `context.ask` and command approvals go.
    pub fn ask(&self) -> &context::AskChannel {
        &self.ask
    }

    pub fn snapshot(&self) -> &snapshot::Desk {
        &self.snapshot
    }

    pub fn granted(&self) -> &grant::Granted {
        &self.granted
    }

    pub fn net(&self) -> &http::NetPolicy {
        &self.net
    }

    pub fn commands(&self) -> &process::CommandPolicy {
        &self.commands
    }

    /// The undo checkpoint of the turn in progress.
    pub fn journal(&self) -> &undo::Journal {
        &self.undo
    }

    /// `plugin`'s own setting `key` (`[plugin-settings.<plugin>]`).
    pub fn plugin_setting(&self, plugin: &str, key: &str) -> Option<String> {
        self.plugin_settings.get(plugin)?.get(key).cloned()
    }

    /// Forgets everything the conversation built up: plugin state, sections, snapshots, the
    /// read guard.
    pub fn reset(&self) {
        self.kv.clear();
        self.sections.clear();
        self.snapshot.reset();
        if let Ok(mut g) = self.guard.lock() {
            *g = ReadGuard::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Preopens;
    use std::cell::Cell;
    use wasmtime_wasi::filesystem::WasiFilesystemCtx;

    #[test]
    fn the_preopens_are_opened_once_and_a_failure_is_not_kept() {
        let preopens = Preopens::default();
        let opened = Cell::new(0);
        let fail = || -> Result<WasiFilesystemCtx, &str> {
            opened.set(opened.get() + 1);
            Err("the folder is gone")
        };
        assert_eq!(preopens.get_or_open(fail).err(), Some("the folder is gone"));
        assert_eq!(format!("{preopens:?}"), "Preopens(not yet)");
        let open = || -> Result<WasiFilesystemCtx, &str> {
            opened.set(opened.get() + 1);
            Ok(WasiFilesystemCtx::default())
        };
        assert!(preopens.get_or_open(open).is_ok());
        assert!(preopens.get_or_open(open).is_ok());
        assert!(preopens.get_or_open(fail).is_ok(), "once open, nothing is opened again");
        assert_eq!(opened.get(), 2, "tried, opened after the failure, then never again");
        assert_eq!(format!("{preopens:?}"), "Preopens(open)");
    }
}
