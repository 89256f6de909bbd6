//! Tools that do not run as plugins (other MCP servers' tools): the loop hears of them through
//! this trait, passed in by the caller, so `agent` knows nothing of how they are reached.

use crate::llm::ToolDef;
use std::future::Future;
use std::pin::Pin;

/// One tool offered from outside the plugin registry.
#[derive(Debug, Clone)]
pub struct ExternalTool {
    pub def: ToolDef,
    /// Where it comes from, as the schema budget names it (`MCP server docs`): tools are left
    /// out group by group when their schemas do not fit.
    pub group: String,
    pub read_only: bool,
}

/// The result of one external call.
#[derive(Debug, Clone)]
pub struct ExternalResult {
    /// The text the model sees (an error already says which tool and why).
    pub content: String,
    pub is_error: bool,
    /// Who ran it, for the display and the audit log (`mcp:docs`).
    pub source: String,
}

/// A boxed future, so the trait stays object-safe.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = ExternalResult> + Send + 'a>>;

/// A source of tools outside the registry. Its set of tools may grow while a session runs (a
/// server that was still starting joins later): `generation` changes whenever `tools` does.
pub trait ExternalTools: Send + Sync {
    /// The tools on offer now.
    fn tools(&self) -> Vec<ExternalTool>;
    /// Changes whenever `tools` would answer differently.
    fn generation(&self) -> u64;
    /// Whether `name` is one of its tools.
    fn has(&self, name: &str) -> bool;
    /// Runs `name` with `args` (a JSON object). Never fails: problems are error results.
    fn call<'a>(&'a self, name: &'a str, args: serde_json::Value) -> CallFuture<'a>;
    /// What the person should be told since the last time (a server that failed), once.
    fn take_notices(&self) -> Vec<String> {
        Vec::new()
    }
}

use super::{Agent, Observer, Toolbox};
use crate::context::schemas;
use std::collections::BTreeSet;

/// What each offered tool costs and where it comes from, for the schema budget: the plugins'
/// tools, then the external ones (never counted as built in, so they can be left out).
pub(super) fn costs(tools: &Toolbox<'_>) -> Vec<schemas::ToolCost> {
    let mut costs: Vec<schemas::ToolCost> = tools
        .registry
        .tools()
        .map(|(t, p)| schemas::ToolCost {
            name: t.name.clone(),
            plugin: p.info.name.clone(),
            builtin: p.info.origin == crate::runtime::registry::Origin::Builtin,
            def: ToolDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.schema.clone(),
            },
        })
        .collect();
    if let Some(ext) = tools.external {
        for t in ext.tools() {
            if tools.registry.tool(&t.def.name).is_none() {
                costs.push(schemas::ToolCost {
                    name: t.def.name.clone(),
                    plugin: t.group,
                    builtin: false,
                    def: t.def,
                });
            }
        }
    }
    costs
}

impl Agent<'_> {
    /// Plans the catalogue again when external tools joined (a server finished starting) or
    /// went, so they reach the next request within the schema budget; new notes go to `obs`.
    pub(super) fn refresh_external(&mut self, obs: &mut dyn Observer) {
        let Some(ext) = self.tools.external else { return };
        let generation = ext.generation();
        if generation == self.external_generation {
            return;
        }
        self.external_generation = generation;
        for n in ext.take_notices() {
            obs.notice(&n);
        }
        let costs = costs(&self.tools);
        let all = self.tools.defs();
        let plan = schemas::plan(&costs, self.cfg.window);
        for n in plan.notes.iter().filter(|n| !self.notes.contains(n)) {
            obs.notice(n);
        }
        self.notes.extend(plan.notes);
        let hidden: BTreeSet<String> = plan.left_out.into_iter().collect();
        self.small_defs = crate::context::small::compact(&all, 0).into();
        if self.prompt.terse {
            // Terse mode keeps its compact core set; the new tools are not offered.
            self.hidden = all
                .iter()
                .filter(|d| !self.defs.iter().any(|o| o.name == d.name))
                .map(|d| d.name.clone())
                .collect();
        } else {
            self.defs = all.iter().filter(|d| !hidden.contains(&d.name)).cloned().collect();
            self.hidden = hidden;
            self.tool_cost = schemas::cost(&self.defs);
        }
        self.all_defs = all;
    }
}
