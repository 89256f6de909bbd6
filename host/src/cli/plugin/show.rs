//! How `corral plugin` commands print: an inspection as text or JSON, the summary `add`
//! shows before installing, and what `new`, `wit` and `c-bindings` wrote.

use crate::authoring::inspect::Inspection;
use crate::authoring::template::Lang;
use crate::runtime::{CacheStatus, ToolSpec};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 { format!("{ms:.1} ms") } else { format!("{ms:.0} ms") }
}

fn load_word(i: &Inspection) -> String {
    match &i.cache {
        CacheStatus::Hit => format!("loaded from the compile cache in {}", ms(i.load_time)),
        CacheStatus::Compiled => format!("compiled in {} and stored in the compile cache", ms(i.load_time)),
        CacheStatus::Rebuilt(why) => format!("recompiled in {} ({why})", ms(i.load_time)),
        CacheStatus::Disabled => format!("compiled in {} (no compile cache available)", ms(i.load_time)),
        CacheStatus::Precompiled => format!("loaded precompiled from corral in {}", ms(i.load_time)),
        CacheStatus::Deferred => "described from the compile cache".into(),
        CacheStatus::Failed(why) => format!("cannot be loaded: {why}"),
    }
}

fn hints(t: &ToolSpec) -> String {
    let flags = [
        (t.read_only, "read-only"),
        (t.destructive, "destructive"),
        (t.idempotent, "idempotent"),
        (t.open_world, "open-world"),
    ];
    let on: Vec<&str> = flags.iter().filter(|(b, _)| *b).map(|(_, n)| *n).collect();
    if on.is_empty() { "no hints".into() } else { on.join(", ") }
}

fn capabilities(caps: &[&str]) -> String {
    if caps.is_empty() { "none (reads the workspace only)".into() } else { caps.join(", ") }
}

fn list(out: &mut String, label: &str, items: &[String]) {
    if items.is_empty() {
        out.push_str(&format!("  {label:<13} none\n"));
        return;
    }
    for (n, item) in items.iter().enumerate() {
        let label = if n == 0 { label } else { "" };
        out.push_str(&format!("  {label:<13} {item}\n"));
    }
}

/// `corral plugin inspect` as text.
pub fn text(i: &Inspection) -> String {
    let mut out = format!("{} ({})\n", i.name, i.kind.as_str());
    out.push_str(&format!("  file:         {}\n", i.path.display()));
    out.push_str(&format!("  contract:     {}@{}\n", crate::wit::PACKAGE, i.contract));
    out.push_str(&format!("  size:         {} bytes\n", thousands(i.size)));
    out.push_str(&format!("  sha256:       {}\n", i.sha256));
    out.push_str(&format!("  load:         {}\n", load_word(i)));
    out.push_str(&format!("  capabilities: {}\n", capabilities(&i.capabilities)));
    out.push_str(&format!("  tools:        {}\n", i.tools.len()));
    for t in &i.tools {
        out.push_str(&format!("    {}  [{}]\n", t.name, hints(t)));
        for line in t.description.lines() {
            out.push_str(&format!("      {line}\n"));
        }
        if !t.capabilities.is_empty() {
            out.push_str(&format!("      needs: {}\n", t.capabilities));
        }
        out.push_str(&format!("      input schema: {}\n", t.schema));
    }
    list(&mut out, "imports WASI:", &i.imports.wasi);
    list(&mut out, "imports host:", &i.imports.host);
    list(&mut out, "exports:", &i.exports);
    for n in &i.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// `corral plugin inspect --json`.
pub fn json(i: &Inspection) -> String {
    let tools: Vec<serde_json::Value> = i
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.schema,
                "hints": {
                    "read_only": t.read_only,
                    "destructive": t.destructive,
                    "idempotent": t.idempotent,
                    "open_world": t.open_world,
                },
                "capabilities": t.capabilities.names(),
            })
        })
        .collect();
    let v = json!({
        "schema_version": 1,
        "name": i.name,
        "kind": match i.kind { crate::authoring::inspect::Kind::Tool => "tool" },
        "contract": format!("{}@{}", crate::wit::PACKAGE, i.contract),
        "file": i.path.display().to_string(),
        "size": i.size,
        "sha256": i.sha256,
        "cached": i.cache == CacheStatus::Hit,
        "load_ms": i.load_time.as_secs_f64() * 1000.0,
        "capabilities": i.capabilities,
        "tools": tools,
        "imports": { "wasi": i.imports.wasi, "corral": i.imports.host },
        "exports": i.exports,
        "notes": i.notes,
    });
    format!("{v}\n")
}

/// What `corral plugin add` shows about a component before installing it.
pub fn add_summary(i: &Inspection, name: &str, checked_in: Duration) -> String {
    let tools: Vec<&str> = i.tools.iter().map(|t| t.name.as_str()).collect();
    let host: Vec<&str> = i
        .imports
        .host
        .iter()
        .filter_map(|h| crate::wit::parse(h))
        .map(|h| h.interface)
        .filter(|h| *h != "types")
        .collect();
    let mut out = format!("{name}: {} with {} tool(s): {}\n", i.kind.as_str(), tools.len(), tools.join(", "));
    out.push_str(&format!("  size:         {} bytes\n", thousands(i.size)));
    out.push_str(&format!("  sha256:       {}\n", i.sha256));
    out.push_str(&format!("  contract:     {}@{}\n", crate::wit::PACKAGE, i.contract));
    out.push_str(&format!("  capabilities: {}\n", capabilities(&i.capabilities)));
    out.push_str(&format!(
        "  host imports: {}\n",
        if host.is_empty() { "none".into() } else { host.join(", ") }
    ));
    out.push_str(&format!(
        "  checked:      {}; a valid plugin whose tools describe well ({})\n",
        load_word(i),
        ms(checked_in)
    ));
    for n in &i.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// What `corral plugin new` prints.
pub fn created(dir: &Path, name: &str, lang: Lang) -> String {
    let needs = match lang {
        Lang::Rust => "Rust with the wasm32-wasip2 target",
        Lang::Python => "python3 (make installs componentize-py into .venv)",
        Lang::Js => "Node.js and npm (make installs componentize-js into node_modules)",
        Lang::C => "clang, lld, wasi-libc and libclang-rt-dev-wasm32",
    };
    format!(
        "created the {name} plugin project in {}\n\
         next: cd {} && make && make test   (needs {needs}; see README.md)\n",
        dir.display(),
        dir.display()
    )
}

/// The files a command wrote, one per line.
pub fn written(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| format!("wrote {}\n", p.display())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_durations() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(244279), "244,279");
        assert_eq!(thousands(18428031), "18,428,031");
        assert_eq!(ms(Duration::from_micros(250)), "0.2 ms");
        assert_eq!(ms(Duration::from_millis(3900)), "3900 ms");
    }
}
