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
        ],
    ),
    ("trust", &["config", "runtime", "capabilities", "redact", "paths"]),
    ("config", &["runtime", "capabilities", "redact", "paths"]),
    ("agent", &["context", "llm", "runtime", "capabilities", "redact", "wit", "paths", "cron"]),
    // cron: the job store and schedule rules; a leaf the agent (its tool) and cli (the scheduler) use.
    ("cron", &[]),
    ("authoring", &["runtime", "capabilities", "wit", "builtins", "paths"]),
    ("context", &["llm", "capabilities", "redact", "paths"]),
    ("llm", &["redact", "paths"]),
    ("runtime", &["capabilities", "wit", "builtins", "redact", "paths"]),
    // debt: the network and command policies are built from config's settings types.
    ("capabilities", &["wit", "redact", "termtext", "paths", "config"]),
    ("redact", &[]),
    ("termtext", &[]),
    ("paths", &[]),
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
}
