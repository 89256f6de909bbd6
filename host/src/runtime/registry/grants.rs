//! Grants at load time: which host functions a component imports and the capability each
//! needs, the rules that say what each plugin is granted, and the verdict: load it with its
//! grant, leave a built-in out (a feature that is switched off), or refuse the plugin.

use super::RegistryError;
use crate::capabilities::grant::{self, CapSet, Capability};
use crate::wit;
use std::collections::BTreeMap;
use std::path::PathBuf;
use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

/// Plugins pinned by a policy file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    pub file: PathBuf,
    /// Plugin name -> sha256.
    pub sha256: BTreeMap<String, String>,
}

/// What may load and what each plugin gets.
#[derive(Debug, Clone, Default)]
pub struct LoadRules {
    /// `plugins.disabled`: names, `origin:name` or paths.
    pub disabled: Vec<String>,
    /// Plugin name -> exactly what it is granted (`[plugins.grants]`, `--grant`, the policy).
    /// Built-ins not named get what their specs declare; other plugins get nothing.
    pub grants: BTreeMap<String, CapSet>,
    /// The policy file's pins, when there is one.
    pub pins: Option<Pins>,
    /// Plugins may use the network (`network.mode = on`).
    pub network: bool,
    /// Commands can run (`[commands]` enabled).
    pub commands: bool,
}

impl LoadRules {
    /// These rules, except that `plugin` gets everything it asks for and network and commands
    /// count as on: for looking at a plugin (inspect, the clash check of `plugin add`), where
    /// what it asks for is shown rather than enforced.
    pub fn trusting(mut self, plugin: &str) -> LoadRules {
        self.grants.insert(plugin.to_string(), CapSet::all());
        self.network = true;
        self.commands = true;
        self
    }
}

/// A plugin imports a host function its grant does not cover.
#[derive(Debug, thiserror::Error)]
#[error(
    "plugin {plugin} ({location}) imports {import} ({functions}), which needs the '{capability}' capability, \
     and it was not granted.\n{how}"
)]
pub struct NotGranted {
    pub plugin: String,
    pub location: String,
    pub import: String,
    pub functions: String,
    pub capability: &'static str,
    /// The setting that grants it.
    pub how: String,
}

/// A plugin's sha256 differs from its pin.
#[derive(Debug, thiserror::Error)]
#[error(
    "plugin {plugin} ({location}) has sha256 {actual}, but the policy file {} pins {pinned}; it is refused. \
     If this component is trusted, update the pin.",
    file.display()
)]
pub struct PinMismatch {
    pub plugin: String,
    pub location: String,
    pub actual: String,
    pub pinned: String,
    pub file: PathBuf,
}

/// A plugin that is not built in is missing from the policy file.
#[derive(Debug, thiserror::Error)]
#[error(
    "plugin {plugin} ({location}, sha256 {sha256}) is not in the policy file {}, so it is refused. To allow \
     it, add:\n  [plugins.{plugin}]\n  sha256 = \"{sha256}\"",
    file.display()
)]
pub struct NotInPolicy {
    pub plugin: String,
    pub location: String,
    pub sha256: String,
    pub file: PathBuf,
}

/// One imported host function that needs a capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub cap: Capability,
    /// `corral:plugin/http@0.1.0` (see [`crate::wit::interface`]).
    pub import: String,
    pub function: String,
}

/// The contract's interfaces a tool plugin may import.
pub const TOOL_IMPORTS: &[&str] =
    &["log", "workspace", "kv", "context", "http", "process", "host-info", "types"];

/// The contract's interfaces a skill component may import; corral's folder-skill server
/// may also import `process`.
pub const SKILL_IMPORTS: &[&str] = &["log", "kv", "host-info", "types"];

/// Whether `name` is WASI, or one of `interfaces` of a contract version corral implements.
fn provided(name: &str, interfaces: &[&str]) -> bool {
    name.starts_with("wasi:")
        || wit::parse(name).is_some_and(|n| n.known() && interfaces.contains(&n.interface))
}

/// Whether a component import is something the host provides to it: the contract's, and for
/// corral's own built-ins (`builtin`) also the `corral:builtin` package, which is built with
/// the host and promised to no one else.
pub fn import_allowed(name: &str, builtin: bool) -> bool {
    provided(name, TOOL_IMPORTS)
        || (builtin && name.strip_prefix(wit::builtin::PACKAGE).is_some_and(|rest| rest.starts_with('/')))
}

/// Whether a skill component may import `name`: WASI, and corral's log, kv, host-info and
/// types. `process` only for corral's own folder-skill server (`server`), which runs the
/// scripts of `SKILL.md` folders under run_command's policy; other skills have no more.
pub fn skill_import_allowed(name: &str, server: bool) -> bool {
    provided(name, SKILL_IMPORTS) || (server && provided(name, &["process"]))
}

/// A component's imports and exports checked for the contract version they were built
/// against, before anything else, so a plugin of another version is told so rather than
/// that its imports are unknown.
pub fn version(engine: &Engine, component: &Component) -> Result<(), wit::UnknownVersion> {
    let ty = component.component_type();
    let imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
    let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    wit::unknown_version(imports.iter().chain(&exports).map(String::as_str)).map_or(Ok(()), Err)
}

/// The component's import names, and the imported host functions that need a capability.
/// `Err` names an import outside the contract.
pub fn imports(
    engine: &Engine,
    component: &Component,
    builtin: bool,
) -> Result<(Vec<String>, Vec<Need>), String> {
    let mut names = Vec::new();
    let mut needs = Vec::new();
    for (name, item) in component.component_type().imports(engine) {
        if !import_allowed(name, builtin) {
            return Err(name.to_string());
        }
        names.push(name.to_string());
        let Some(wit::PluginName { interface, .. }) = wit::parse(name) else { continue };
        let ComponentItem::ComponentInstance(instance) = item.ty else { continue };
        for (function, ty) in instance.exports(engine) {
            if let (ComponentItem::ComponentFunc(_), Some(cap)) =
                (ty.ty, grant::needed_by(interface, function))
            {
                needs.push(Need { cap, import: name.to_string(), function: function.to_string() });
            }
        }
    }
    Ok((names, needs))
}

/// The capabilities `needs` call for.
pub fn caps(needs: &[Need]) -> CapSet {
    needs.iter().map(|n| n.cap).collect()
}

/// The grant of a plugin that is not built in; `Err` when it imports something not granted.
pub fn external(
    name: &str,
    location: &str,
    needs: &[Need],
    rules: &LoadRules,
) -> Result<CapSet, RegistryError> {
    let granted = rules.grants.get(name).copied().unwrap_or_default();
    let Some(need) = needs.iter().find(|n| !granted.contains(n.cap)) else { return Ok(granted) };
    let functions: Vec<&str> =
        needs.iter().filter(|n| n.import == need.import).map(|n| n.function.as_str()).collect();
    let wanted = granted.union(caps(needs));
    let how = match &rules.pins {
        Some(p) => format!(
            "The policy file {} fixes the grants: to allow it, add \"{}\" to plugins.{name}.grants there.",
            p.file.display(),
            need.cap
        ),
        None => format!(
            "To grant it, add to your user config (~/.config/corral/config.toml, or a trusted workspace's corral.toml):\n  [plugins.grants]\n  {name} = [{}]\nor pass --grant {name}={}",
            wanted.names().iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "),
            wanted.names().join(",")
        ),
    };
    Err(RegistryError::NotGranted(Box::new(NotGranted {
        plugin: name.to_string(),
        location: location.to_string(),
        import: need.import.clone(),
        functions: functions.join(", "),
        capability: need.cap.as_str(),
        how,
    })))
}

/// A built-in's verdict: `Ok` with its grant, or `Err` with why it is left out. Built-ins get
/// what they need (`needs`: declared and imported), except the network and commands, which
/// must be switched on, and except what their `[plugins.grants]` entry leaves out.
pub fn builtin(name: &str, needs: CapSet, rules: &LoadRules) -> Result<CapSet, String> {
    if needs.contains(Capability::Http) && !rules.network {
        return Err("it uses the network: start corral with --network on".into());
    }
    if needs.contains(Capability::Process) && !rules.commands {
        return Err(
            "it runs commands: enable them with --allowed-commands LIST, --commands ask or --yolo".into()
        );
    }
    let granted = rules.grants.get(name).copied().unwrap_or(needs);
    let missing = needs.minus(granted);
    if missing.is_empty() {
        return Ok(granted);
    }
    Err(match &rules.pins {
        Some(p) => {
            format!("it needs {missing}, which the policy file {} does not grant it", p.file.display())
        }
        None => format!("it needs {missing}, which its entry in plugins.grants leaves out"),
    })
}

/// Checks `name`'s sha256 against the pins. `Ok(false)`: a built-in the policy does not
/// list, left out; `Err`: refused.
pub fn pinned(
    name: &str,
    builtin: bool,
    location: &str,
    sha256: &str,
    pins: &Pins,
) -> Result<bool, RegistryError> {
    match pins.sha256.get(name) {
        Some(p) if p == sha256 => Ok(true),
        Some(p) => Err(RegistryError::PinMismatch(Box::new(PinMismatch {
            plugin: name.to_string(),
            location: location.to_string(),
            actual: sha256.to_string(),
            pinned: p.clone(),
            file: pins.file.clone(),
        }))),
        None if builtin => Ok(false),
        None => Err(RegistryError::NotInPolicy(Box::new(NotInPolicy {
            plugin: name.to_string(),
            location: location.to_string(),
            sha256: sha256.to_string(),
            file: pins.file.clone(),
        }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(cap: Capability, iface: &str, f: &str) -> Need {
        Need { cap, import: wit::interface(iface), function: f.into() }
    }

    fn set(names: &[&str]) -> CapSet {
        CapSet::parse(names).unwrap()
    }

    #[test]
    fn skills_import_less_than_tools() {
        assert!(skill_import_allowed("wasi:filesystem/preopens@0.2.6", false));
        assert!(skill_import_allowed("corral:plugin/kv@0.1.0", false));
        for denied in ["workspace", "context", "http", "process"] {
            assert!(!skill_import_allowed(&format!("corral:plugin/{denied}@0.1.0"), false), "{denied}");
        }
        assert!(skill_import_allowed("corral:plugin/process@0.1.0", true), "the folder server runs commands");
        assert!(!skill_import_allowed("corral:plugin/workspace@0.1.0", true));
    }

    #[test]
    fn imports_outside_the_contract_are_refused() {
        for builtin in [false, true] {
            assert!(import_allowed("wasi:filesystem/types@0.2.6", builtin));
            assert!(import_allowed("corral:plugin/workspace@0.1.0", builtin));
            assert!(!import_allowed("corral:plugin/workspace@0.2.0", builtin));
            assert!(!import_allowed("evil:host/escape", builtin));
            assert!(!import_allowed("corral:builtinx/parallel@0.1.0", builtin));
        }
        // The built-ins' own package is theirs alone.
        assert!(import_allowed("corral:builtin/parallel@0.1.0", true));
        assert!(!import_allowed("corral:builtin/parallel@0.1.0", false));
    }

    #[test]
    fn an_external_plugin_gets_exactly_its_grant() {
        let needs = vec![need(Capability::Http, "http", "fetch"), need(Capability::Kv, "kv", "get")];
        let mut rules = LoadRules::default();
        let e = external("net", "/p/net.wasm", &needs, &rules).unwrap_err().to_string();
        assert_eq!(
            e,
            "plugin net (/p/net.wasm) imports corral:plugin/http@0.1.0 (fetch), which needs the 'http' \
             capability, and it was not granted.\nTo grant it, add to your user config (~/.config/corral/config.toml, or a \
             trusted workspace's corral.toml):\n  [plugins.grants]\n  \
             net = [\"kv\", \"http\"]\nor pass --grant net=kv,http"
        );
        rules.grants.insert("net".into(), set(&["http", "kv", "context"]));
        assert_eq!(external("net", "/p/net.wasm", &needs, &rules).unwrap(), set(&["http", "kv", "context"]));
        assert_eq!(external("other", "/p/o.wasm", &[], &rules).unwrap(), CapSet::EMPTY);
        rules.grants.insert("net".into(), set(&["http"]));
        rules.pins = Some(Pins { file: "/ci/policy.toml".into(), sha256: BTreeMap::new() });
        let e = external("net", "/p/net.wasm", &needs, &rules).unwrap_err().to_string();
        assert!(e.contains("'kv' capability") && e.contains("add \"kv\" to plugins.net.grants there"), "{e}");
    }

    #[test]
    fn built_ins_get_what_they_need_unless_switched_off_or_narrowed() {
        let mut rules = LoadRules::default();
        assert_eq!(builtin("write_file", set(&["workspace-write"]), &rules), Ok(set(&["workspace-write"])));
        let e = builtin("fetch_url", set(&["http"]), &rules).unwrap_err();
        assert!(e.contains("--network on"), "{e}");
        let e = builtin("run_command", set(&["process"]), &rules).unwrap_err();
        assert!(e.contains("--allowed-commands"), "{e}");
        rules.commands = true;
        assert_eq!(builtin("run_command", set(&["process"]), &rules), Ok(set(&["process"])));
        rules.grants.insert("write_file".into(), CapSet::EMPTY);
        let e = builtin("write_file", set(&["workspace-write"]), &rules).unwrap_err();
        assert!(e.contains("needs workspace-write") && e.contains("plugins.grants"), "{e}");
    }

    #[test]
    fn pins_refuse_unknown_and_changed_plugins() {
        let pins = Pins {
            file: "/ci/p.toml".into(),
            sha256: [("a".to_string(), "11".to_string())].into_iter().collect(),
        };
        assert!(pinned("a", false, "/a.wasm", "11", &pins).unwrap());
        assert!(!pinned("read_file", true, "embedded", "22", &pins).unwrap());
        let e = pinned("a", false, "/a.wasm", "22", &pins).unwrap_err().to_string();
        assert_eq!(
            e,
            "plugin a (/a.wasm) has sha256 22, but the policy file /ci/p.toml pins 11; it is refused. \
             If this component is trusted, update the pin."
        );
        let e = pinned("b", false, "/b.wasm", "33", &pins).unwrap_err().to_string();
        assert_eq!(
            e,
            "plugin b (/b.wasm, sha256 33) is not in the policy file /ci/p.toml, so it is refused. To allow \
             it, add:\n  [plugins.b]\n  sha256 = \"33\""
        );
    }
}
