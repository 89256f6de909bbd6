//! The names MCP tools get in corral: `server__tool`, cut down to what every provider accepts
//! (`[A-Za-z0-9_-]`, at most 64 characters), with clashes resolved the same way every run.

use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// The longest tool name the providers accept (OpenAI's limit; Anthropic's is larger).
pub const MAX_LEN: usize = 64;
/// Between the server's name and the tool's.
pub const SEPARATOR: &str = "__";

/// `server__tool` with every character outside `[A-Za-z0-9_-]` made `_`; past [`MAX_LEN`],
/// the head and 8 hex digits of the full name's digest, so long names stay apart.
pub fn exposed(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
    };
    let full = format!("{}{SEPARATOR}{}", clean(server), clean(tool));
    if full.len() <= MAX_LEN {
        return full;
    }
    let digest: String = Sha256::digest(format!("{server}\0{tool}").as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{}_{digest}", &full[..MAX_LEN - 9])
}

/// Names for one server's `tools` (in the server's order) that are not in `taken`: a clash
/// gets `_2`, `_3`, ... in the order of the original names, so the result does not depend on
/// the order the server listed them in.
pub fn assign(server: &str, tools: &[String], taken: &BTreeSet<String>) -> Vec<String> {
    let mut order: Vec<usize> = (0..tools.len()).collect();
    order.sort_by(|a, b| tools[*a].cmp(&tools[*b]));
    let mut used = taken.clone();
    let mut out = vec![String::new(); tools.len()];
    for i in order {
        let base = exposed(server, &tools[i]);
        let mut name = base.clone();
        let mut n = 2;
        while used.contains(&name) {
            let suffix = format!("_{n}");
            let head: String = base.chars().take(MAX_LEN - suffix.len()).collect();
            name = format!("{head}{suffix}");
            n += 1;
        }
        used.insert(name.clone());
        out[i] = name;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_capped_and_kept_apart() {
        assert_eq!(exposed("everything", "echo"), "everything__echo");
        assert_eq!(exposed("fs", "read.file/v2"), "fs__read_file_v2");
        let long = exposed("server", &"x".repeat(100));
        assert_eq!(long.len(), MAX_LEN);
        assert_ne!(long, exposed("server", &"x".repeat(101)));
        let tools = vec!["a.b".to_string(), "a/b".to_string(), "c".to_string()];
        let names = assign("s", &tools, &BTreeSet::new());
        assert_eq!(names, ["s__a_b", "s__a_b_2", "s__c"]);
        let swapped = vec!["a/b".to_string(), "a.b".to_string()];
        assert_eq!(
            assign("s", &swapped, &BTreeSet::new()),
            ["s__a_b_2", "s__a_b"],
            "same names either order"
        );
        let taken: BTreeSet<String> = ["s__c".to_string()].into();
        assert_eq!(assign("s", &["c".to_string()], &taken), ["s__c_2"]);
    }
}
