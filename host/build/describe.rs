//! Describes a built-in at build time: its imports (with their functions) and the tools its
//! `describe` returns, run once here in a store whose every import traps (describe needs
//! none), written as Rust for `builtins.rs`; and a shipped component skill's answer to its
//! own `describe`. A start then lists the built-ins' tools and the shipped skills without
//! loading any of their code, cache or no cache.

use std::fmt::Write as _;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, Val};
use wasmtime::{Engine, Store};

/// `Some(BuiltDescription { .. })` as Rust source for the precompiled component `cwasm`, or
/// why it could not be described.
pub fn describe(engine: &Engine, cwasm: &[u8], tool_interface: &str) -> Result<String, String> {
    let component = deserialize(engine, cwasm)?;
    let mut imports = String::new();
    for (name, item) in component.component_type().imports(engine) {
        let mut functions = Vec::new();
        if let ComponentItem::ComponentInstance(instance) = item.ty {
            for (function, ty) in instance.exports(engine) {
                if matches!(ty.ty, ComponentItem::ComponentFunc(_)) {
                    functions.push(format!("{function:?}"));
                }
            }
        }
        let _ = write!(imports, "({name:?}, &[{}]), ", functions.join(", "));
    }
    let Val::List(specs) = call_describe(engine, &component, tool_interface)? else {
        return Err("describe did not return a list".into());
    };
    let mut tools = String::new();
    for spec in &specs {
        tools.push_str(&tool(spec)?);
    }
    Ok(format!("Some(BuiltDescription {{ imports: &[{imports}], tools: &[{tools}] }})"))
}

/// `Some(BuiltSkill { .. })` as Rust source for the precompiled component skill `cwasm`: its
/// answer to `describe` (exported by `skill_interface`), or why it could not be had.
pub fn describe_skill(engine: &Engine, cwasm: &[u8], skill_interface: &str) -> Result<String, String> {
    let component = deserialize(engine, cwasm)?;
    let info = match call_describe(engine, &component, skill_interface)? {
        Val::Result(Ok(Some(info))) => info,
        Val::Result(Err(e)) => return Err(format!("describe failed: {e:?}")),
        other => return Err(format!("describe returned {other:?}, not a skill-info")),
    };
    let Val::Record(fields) = *info else { return Err("skill-info is not a record".into()) };
    let text = |name: &str| match fields.iter().find(|(n, _)| n == name) {
        Some((_, Val::String(s))) => Ok(format!("{s:?}")),
        _ => Err(format!("skill-info.{name} is not a string")),
    };
    Ok(format!("Some(BuiltSkill {{ name: {}, description: {} }})", text("name")?, text("description")?))
}

fn deserialize(engine: &Engine, cwasm: &[u8]) -> Result<Component, String> {
    // SAFETY: `cwasm` was produced by `engine.precompile_component` a moment ago, in this
    // process, with this engine's configuration.
    unsafe { Component::deserialize(engine, cwasm) }.map_err(|e| format!("{e:#}"))
}

/// Calls `describe` of `interface` in a fresh instance whose every import traps.
fn call_describe(engine: &Engine, component: &Component, interface: &str) -> Result<Val, String> {
    let mut linker: Linker<()> = Linker::new(engine);
    linker.define_unknown_imports_as_traps(component).map_err(|e| format!("{e:#}"))?;
    let mut store = Store::new(engine, ());
    // The runtime's engine interrupts on epochs; describing is short and never interrupted.
    store.set_epoch_deadline(u64::MAX);
    let instance = linker.instantiate(&mut store, component).map_err(|e| format!("instantiate: {e:#}"))?;
    let exported = instance
        .get_export_index(&mut store, None, interface)
        .ok_or_else(|| format!("it does not export {interface}"))?;
    let index = instance
        .get_export_index(&mut store, Some(&exported), "describe")
        .ok_or_else(|| format!("{interface} has no describe"))?;
    let func = instance.get_func(&mut store, index).ok_or("describe is not a function")?;
    let mut results = [Val::Bool(false)];
    func.call(&mut store, &[], &mut results).map_err(|e| format!("describe: {e:#}"))?;
    let [result] = results;
    Ok(result)
}

/// One `tool-spec` record as a `BuiltTool` literal.
fn tool(spec: &Val) -> Result<String, String> {
    let Val::Record(fields) = spec else { return Err("a tool-spec is not a record".into()) };
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let text = |name: &str| match field(name) {
        Some(Val::String(s)) => Ok(format!("{s:?}")),
        _ => Err(format!("tool-spec.{name} is not a string")),
    };
    let Some(Val::Record(hints)) = field("hints") else {
        return Err("tool-spec.hints is not a record".into());
    };
    let hint = |name: &str| match hints.iter().find(|(n, _)| n == name) {
        Some((_, Val::Bool(b))) => Ok(*b),
        _ => Err(format!("tool-hints.{name} is not a bool")),
    };
    let Some(Val::List(caps)) = field("capabilities") else {
        return Err("tool-spec.capabilities is not a list".into());
    };
    let mut capabilities = Vec::new();
    for c in caps {
        let Val::Enum(case) = c else { return Err("a capability is not an enum case".into()) };
        capabilities.push(format!("{case:?}"));
    }
    Ok(format!(
        "BuiltTool {{ name: {}, description: {}, input_schema: {}, read_only: {}, destructive: {}, \
         idempotent: {}, open_world: {}, capabilities: &[{}] }}, ",
        text("name")?,
        text("description")?,
        text("input-schema")?,
        hint("read-only")?,
        hint("destructive")?,
        hint("idempotent")?,
        hint("open-world")?,
        capabilities.join(", ")
    ))
}
