//! Layer 1's tool-schema budget: the schemas of every offered tool are sent with every
//! request, so they must leave room for the work. Over 30% of the window is a warning; over
//! 50%, the tools of the most expensive plugin that is not built in are left out, plugin by
//! plugin, until the schemas fit. Built-in tools are never left out (disable them instead).

use super::tokens::{self, Count};
use crate::llm::ToolDef;
use std::collections::BTreeMap;

/// Schemas over this share of the window draw a warning.
pub const WARN_SHARE: f64 = 0.30;
/// Schemas are cut down to this share of the window.
pub const MAX_SHARE: f64 = 0.50;

/// The group prefix of an MCP server's tools (`MCP server docs`).
pub const MCP_GROUP: &str = "MCP server ";

/// One tool and where it comes from.
#[derive(Debug, Clone)]
pub struct ToolCost {
    pub name: String,
    pub plugin: String,
    pub builtin: bool,
    pub def: ToolDef,
}

/// What to offer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Tools not offered in this session.
    pub left_out: Vec<String>,
    /// What the person should be told.
    pub notes: Vec<String>,
}

/// What the schemas of `defs` cost: exactly when the tokenizer is loaded, else the estimate.
pub fn cost(defs: &[ToolDef]) -> Count {
    Estimates::default().cost(defs)
}

/// Each tool's estimated cost, worked out once where the same schemas are summed several
/// ways (a session's start: corral's own tools, then those offered).
#[derive(Default)]
pub struct Estimates(std::collections::HashMap<String, u32>);

impl Estimates {
    pub fn of(defs: &[ToolDef]) -> Estimates {
        Estimates(defs.iter().map(|d| (d.name.clone(), estimate(d))).collect())
    }

    /// What `defs` cost, as [`cost`] says. A tool is looked up by name, so `defs` must be
    /// definitions the estimates were made of, not other versions of them (terse ones); a
    /// name not among the estimates is estimated now.
    pub fn cost<'a>(&self, defs: impl IntoIterator<Item = &'a ToolDef>) -> Count {
        let exact = tokens::ready();
        let mut n: u32 = 0;
        for d in defs {
            let c = if exact {
                tokens::tool(d)
            } else {
                self.0.get(&d.name).copied().unwrap_or_else(|| estimate(d))
            };
            n = n.saturating_add(c);
        }
        Count { n, exact }
    }
}

/// One tool's estimated cost, as [`cost`] counts it without the tokenizer.
fn estimate(d: &ToolDef) -> u32 {
    tokens::approx(&schema_json(d)) + tokens::PER_CALL
}

/// A tool's schema as the text `{"description":..,"name":..,"parameters":..}`: serialized from
/// the definition where it lies (`json!` would first copy the whole schema into a new value).
fn schema_json(d: &ToolDef) -> String {
    // Fields in the order serde_json's maps keep keys (sorted), as `json!` wrote them.
    #[derive(serde::Serialize)]
    struct Schema<'a> {
        description: &'a str,
        name: &'a str,
        parameters: &'a serde_json::Value,
    }
    let schema = Schema { description: &d.description, name: &d.name, parameters: &d.parameters };
    serde_json::to_string(&schema).unwrap_or_default()
}

fn pct(n: u64, w: u64) -> u64 {
    n * 100 / w.max(1)
}

/// Decides which tools to leave out for a window of `window` tokens (nothing when unknown).
/// Counts exactly only when the estimate comes near the thresholds, so start-up does not wait
/// for the tokenizer in the common case.
pub fn plan(tools: &[ToolCost], window: Option<u64>) -> Plan {
    let Some(w) = window else { return Plan::default() };
    let approx: u64 = tools.iter().map(|t| u64::from(tokens::approx(&schema_json(&t.def)))).sum();
    if (approx as f64) < w as f64 * WARN_SHARE * 0.8 {
        return Plan::default();
    }
    let costs: Vec<u64> = tools.iter().map(|t| u64::from(tokens::tool(&t.def))).collect();
    let mut total: u64 = costs.iter().sum();
    let mut plan = Plan::default();
    if (total as f64) <= w as f64 * WARN_SHARE {
        return plan;
    }
    plan.notes.push(format!(
        "the tool schemas take {total} tokens, {}% of the {w}-token context window, leaving less room for the work",
        pct(total, w)
    ));
    let mut by_plugin: BTreeMap<&str, (u64, Vec<&str>)> = BTreeMap::new();
    for (t, c) in tools.iter().zip(&costs).filter(|(t, _)| !t.builtin) {
        let e = by_plugin.entry(&t.plugin).or_default();
        e.0 += c;
        e.1.push(&t.name);
    }
    let mut plugins: Vec<(&str, u64, Vec<&str>)> =
        by_plugin.into_iter().map(|(p, (c, n))| (p, c, n)).collect();
    plugins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let limit = (w as f64 * MAX_SHARE) as u64;
    for (plugin, c, names) in plugins {
        if total <= limit {
            break;
        }
        total -= c;
        plan.left_out.extend(names.iter().map(|n| n.to_string()));
        // MCP servers' tools are grouped as `MCP server <name>`; the rest are plugins.
        let (label, fix) = match plugin.strip_prefix(MCP_GROUP) {
            Some(server) => (
                plugin.to_string(),
                format!(
                    "list the tools you need in mcp_servers.{server}.enabled_tools, disable other servers"
                ),
            ),
            None => (format!("plugin {plugin}"), "disable other plugins (--disable-plugin)".to_string()),
        };
        plan.notes.push(format!(
            "left out the tools of {label} ({}: {c} tokens) so that the tool schemas fit in half of the context \
             window; {fix} or use a model with a larger window to get them back",
            names.join(", ")
        ));
    }
    if total > limit {
        plan.notes.push(format!(
            "the remaining tool schemas still take {}% of the window; disable built-in tools you do not need \
             (--disable-plugin NAME) or use a model with a larger window",
            pct(total, w)
        ));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_text_is_the_one_json_writes() {
        let d = ToolDef {
            name: "grep".into(),
            description: "Search \"files\"\n".into(),
            parameters: json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"enum": [1, "é"]}}}),
        };
        let expected = json!({"name": d.name, "description": d.description, "parameters": d.parameters});
        assert_eq!(schema_json(&d), expected.to_string());
    }

    fn tool(name: &str, plugin: &str, builtin: bool, size: usize) -> ToolCost {
        let def = ToolDef {
            name: name.into(),
            description: "word ".repeat(size),
            parameters: json!({"type": "object"}),
        };
        ToolCost { name: name.into(), plugin: plugin.into(), builtin, def }
    }

    #[test]
    fn small_schemas_pass_quietly() {
        let tools = [tool("a", "core", true, 100), tool("b", "ext", false, 100)];
        assert_eq!(plan(&tools, Some(100_000)), Plan::default());
        assert_eq!(plan(&tools, None), Plan::default());
    }

    #[test]
    fn over_30_percent_warns() {
        let tools = [tool("a", "core", true, 400)];
        let p = plan(&tools, Some(1000));
        assert!(p.left_out.is_empty());
        assert!(p.notes[0].contains("% of the 1000-token context window"), "{p:?}");
    }

    #[test]
    fn over_half_leaves_out_the_most_expensive_plugins_first() {
        let tools = [
            tool("core1", "core", true, 300),
            tool("big1", "big", false, 400),
            tool("big2", "big", false, 400),
            tool("small1", "small", false, 100),
        ];
        let p = plan(&tools, Some(2000));
        assert_eq!(p.left_out, vec!["big1".to_string(), "big2".to_string()], "{p:?}");
        assert!(p.notes.iter().any(|n| n.contains("left out the tools of plugin big (big1, big2")), "{p:?}");
        let core_only = [tool("core1", "core", true, 2000)];
        let p = plan(&core_only, Some(2000));
        assert!(p.left_out.is_empty(), "built-in tools are never left out");
        assert!(p.notes.last().unwrap().contains("disable built-in tools"), "{p:?}");
    }
}
