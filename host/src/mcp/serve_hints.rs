//! The MCP annotations of a served tool, from what its plugin declares: its hints, and the
//! capabilities its tool needs and its plugin was granted (what it can reach wins over what it says).

use crate::capabilities::grant::{CapSet, Capability};
use crate::runtime::ToolSpec;
use rmcp::model::ToolAnnotations;

/// The four MCP hints, always all given: MCP's defaults for a missing hint (destructive,
/// open-world) are the pessimistic ones, and corral knows better for its own tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    /// The hints of `spec`, whose plugin holds `granted`. A tool is read-only only when it says
    /// so and can neither write the workspace, run commands nor reach the network (an MCP
    /// client may run read-only tools without asking, and a network call can carry what was
    /// read away). Running commands counts as destructive and open-world, as does anything
    /// the tool declares so; the network makes it open-world.
    pub fn of(spec: &ToolSpec, granted: CapSet) -> Hints {
        let can = |c: Capability| spec.capabilities.contains(c) || granted.contains(c);
        let (write, process, http) =
            (can(Capability::WorkspaceWrite), can(Capability::Process), can(Capability::Http));
        let read_only = spec.read_only && !write && !process && !http;
        Hints {
            read_only,
            destructive: !read_only && (spec.destructive || process),
            idempotent: read_only || (spec.idempotent && !process),
            open_world: spec.open_world || http || process,
        }
    }

    /// The hints of `use_skill`: skills read the workspace and their own files and run their
    /// scripts in a sandbox with no workspace writes, network or commands.
    pub fn skills() -> Hints {
        Hints { read_only: true, destructive: false, idempotent: true, open_world: false }
    }

    pub fn annotations(self) -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(self.read_only)
            .destructive(self.destructive)
            .idempotent(self.idempotent)
            .open_world(self.open_world)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(
        read_only: bool,
        destructive: bool,
        idempotent: bool,
        open_world: bool,
        caps: &[Capability],
    ) -> ToolSpec {
        ToolSpec {
            name: "t".into(),
            description: "d".into(),
            schema: serde_json::json!({"type": "object"}),
            read_only,
            destructive,
            idempotent,
            open_world,
            capabilities: caps.iter().copied().collect(),
            derive: None,
        }
    }

    fn h(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> Hints {
        Hints { read_only, destructive, idempotent, open_world }
    }

    #[test]
    fn a_reader_with_no_reach_is_read_only_and_closed() {
        // read_file, grep, list_files: the SDK's defaults.
        assert_eq!(
            Hints::of(&spec(true, false, true, false, &[]), CapSet::EMPTY),
            h(true, false, true, false)
        );
        // A plugin-private store does not change the person's world.
        let kv = spec(true, false, true, false, &[Capability::Kv]);
        assert_eq!(Hints::of(&kv, CapSet::EMPTY), h(true, false, true, false));
    }

    #[test]
    fn writers_keep_their_declared_destructiveness() {
        // write_file, delete_file: `writes(true, true)`.
        let w = spec(false, true, true, false, &[Capability::WorkspaceWrite]);
        assert_eq!(Hints::of(&w, CapSet::EMPTY), h(false, true, true, false));
        // An additive writer (an edit that only appends) is not destructive.
        let a = spec(false, false, false, false, &[Capability::WorkspaceWrite]);
        assert_eq!(Hints::of(&a, CapSet::EMPTY), h(false, false, false, false));
    }

    #[test]
    fn what_a_tool_can_reach_beats_what_it_says() {
        // run_command keeps the SDK's read-only default but needs `process`.
        let run = spec(true, false, false, true, &[Capability::Process]);
        assert_eq!(Hints::of(&run, CapSet::EMPTY), h(false, true, false, true));
        // fetch_url says read-only, but the network is open-world and never read-only.
        let fetch = spec(true, false, true, true, &[Capability::Http]);
        assert_eq!(Hints::of(&fetch, CapSet::EMPTY), h(false, false, true, true));
        // A tool that declares nothing but whose plugin was granted writes is no reader.
        let sly = spec(true, false, true, false, &[]);
        let granted: CapSet = [Capability::WorkspaceWrite].into_iter().collect();
        assert_eq!(Hints::of(&sly, granted), h(false, false, true, false));
        let granted: CapSet = [Capability::Http].into_iter().collect();
        assert_eq!(Hints::of(&sly, granted), h(false, false, true, true));
    }

    #[test]
    fn every_hint_is_sent() {
        let a = Hints::of(&spec(true, false, true, false, &[]), CapSet::EMPTY).annotations();
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
        );
        assert_eq!(Hints::skills(), h(true, false, true, false));
    }
}
