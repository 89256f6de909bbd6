//! The layering rule, checked: each top-level module may use only the modules listed for it
//! here (the ones below it in docs/architecture.md); a new upward `crate::` use fails the test.

/// Module -> the crate modules it may use. `debt` marks an edge to be removed, kept so that no
/// new one joins it.
const ALLOWED: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "trust",
            "config",
            "agent",
            "cron",
            "authoring",
            "llm",
            "context",
            "runtime",
            "capabilities",
            "redact",
            "termtext",
            "paths",
            "wit",
            "builtins",
            "mcp",
            "signals",
        ],
    ),
    // The MCP client sits beside cli's wiring: it offers tools to the loop through
    // `agent::external` and runs servers through the capabilities.
    ("mcp", &["config", "agent", "llm", "context", "runtime", "capabilities", "redact", "termtext", "paths"]),
    ("trust", &["config", "runtime", "capabilities", "redact", "paths"]),
    ("config", &["runtime", "capabilities", "redact", "paths"]),
    ("agent", &["context", "llm", "runtime", "capabilities", "redact", "wit", "paths", "cron", "signals"]),
    // cron: the job store and schedule rules; a leaf the agent (its tool) and cli (the scheduler) use.
    ("cron", &[]),
    ("authoring", &["runtime", "capabilities", "wit", "builtins", "paths"]),
    ("context", &["llm", "capabilities", "redact", "paths"]),
    ("llm", &["redact", "termtext", "paths"]),
    ("runtime", &["capabilities", "wit", "builtins", "redact", "paths"]),
    // debt: the network and command policies are built from config's settings types.
    ("capabilities", &["wit", "redact", "termtext", "paths", "config"]),
    // wit: the contract's bindings, version and interface names; a leaf below capabilities.
    ("wit", &[]),
    ("redact", &[]),
    ("termtext", &[]),
    ("paths", &[]),
    // signals: the signals that stop a run from outside; the agent's parallel calls listen too.
    ("signals", &[]),
];

#[cfg(test)]
mod tests {
    use super::ALLOWED;
    use std::path::Path;

    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn no_module_uses_one_above_it() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bad = Vec::new();
        for (module, allowed) in ALLOWED {
            let mut files = Vec::new();
            sources(&src.join(module), &mut files);
            files.push(src.join(format!("{module}.rs")));
            for f in files.iter().filter(|f| f.exists()) {
                #[allow(clippy::disallowed_methods)]
                let text = std::fs::read_to_string(f).unwrap();
                for (i, line) in text.lines().enumerate() {
                    for (at, _) in line.match_indices("crate::") {
                        let used: String = line[at + 7..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if used != *module && !allowed.contains(&used.as_str()) {
                            bad.push(format!("{}:{}: {module} uses {used}", f.display(), i + 1));
                        }
                    }
                }
            }
        }
        assert!(bad.is_empty(), "upward uses (see docs/architecture.md, Layers):\n{}", bad.join("\n"));
    }

    /// The names a file uses as `super::name` or `crate::<module>::name`: each brace group
    /// opened right after the prefix counts every first name in it.
    fn sibling_uses(text: &str, module: &str) -> Vec<String> {
        // Comments (a doc link to a sibling) are no use of it.
        let code: String =
            text.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect();
        let text = code.as_str();
        let ident = |s: &str| -> String {
            s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
        };
        let mut out = Vec::new();
        let crate_prefix = format!("crate::{module}::");
        for prefix in ["super::", crate_prefix.as_str()] {
            for (at, _) in text.match_indices(prefix) {
                let rest = &text[at + prefix.len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let inner = &group[..group.find('}').unwrap_or(group.len())];
                    out.extend(inner.split(',').map(ident));
                } else {
                    out.push(ident(rest));
                }
            }
        }
        out.retain(|n| !n.is_empty());
        out
    }

    /// Within each module, the files (and folders) beside each other form no cycle either:
    /// `cli/session` may use `cli/repl`, but then `cli/repl` may not use `cli/session`.
    /// Sibling cycles still to break (debt): none may join them.
    const CYCLE_DEBT: &[&str] = &[];

    #[test]
    fn no_cycles_between_sibling_files() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut cycles = Vec::new();
        for (module, _) in ALLOWED {
            let dir = src.join(module);
            let mut names: Vec<String> = Vec::new();
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                let name = p.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if name != "mod" && (p.is_dir() || p.extension().is_some_and(|x| x == "rs")) {
                    names.push(name);
                }
            }
            let mut edges = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
            for name in &names {
                let file = if dir.join(name).is_dir() {
                    dir.join(name).join("mod.rs")
                } else {
                    dir.join(format!("{name}.rs"))
                };
                #[allow(clippy::disallowed_methods)]
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                let used = sibling_uses(&text, module).into_iter().filter(|u| u != name && names.contains(u));
                edges.entry(name.clone()).or_default().extend(used);
            }
            let reaches = |from: &String, to: &String| {
                let mut seen = std::collections::BTreeSet::new();
                let mut todo = vec![from.clone()];
                while let Some(n) = todo.pop() {
                    if &n == to {
                        return true;
                    }
                    if seen.insert(n.clone()) {
                        todo.extend(edges.get(&n).into_iter().flatten().cloned());
                    }
                }
                false
            };
            for (a, outs) in &edges {
                for b in outs {
                    // Every edge that closes a cycle (direct or through other files).
                    let cycle = format!("{module}/{a} <-> {module}/{b}");
                    if a < b && reaches(b, a) && !CYCLE_DEBT.contains(&cycle.as_str()) {
                        cycles.push(cycle);
                    }
                }
            }
        }
        assert!(
            cycles.is_empty(),
            "files that use each other (move the shared part into a third file):\n{}",
            cycles.join("\n")
        );
    }

    #[test]
    fn sibling_uses_reads_groups_and_paths() {
        let text = "use super::{report::print, setup, GlobalArgs};\nlet x = crate::cli::repl::run();";
        assert_eq!(sibling_uses(text, "cli"), ["report", "setup", "GlobalArgs", "repl"]);
    }
}
