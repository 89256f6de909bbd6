//! `corral doctor`: what the command sandbox can enforce on this machine (Landlock ABI,
//! namespaces, seccomp, how the network is cut) and whether commands would run confined.

use super::{GlobalArgs, SetupError, report::print, setup};
use crate::capabilities::sandbox::{self, Support};

/// Whether commands would run confined, run unconfined, or be refused, and why.
pub fn verdict(support: &Support, unsandboxed: bool, locked: bool) -> (&'static str, String) {
    match support.missing() {
        None => ("confined", "commands run inside the sandbox".into()),
        Some(why) if unsandboxed => {
            ("unconfined", format!("{why}; commands.unsandboxed accepts running them unconfined"))
        }
        Some(why) if locked => (
            "refused",
            format!(
                "{why}; this locked-down run (CI or a policy) refuses commands unless commands.unsandboxed is set"
            ),
        ),
        Some(why) => {
            ("unconfined", format!("{why}; commands run with your full rights (a warning is shown)"))
        }
    }
}

pub fn run(g: &GlobalArgs, json: bool) -> Result<i32, SetupError> {
    let resolved = setup::resolve(g, g.ci, false)?;
    let c = &resolved.settings.commands;
    let s = sandbox::probe();
    let (state, why) = verdict(&s, c.unsandboxed, g.ci || resolved.policy.is_some());
    let network = if c.network { "on (commands.network)" } else { "off" };
    let text = if json {
        let v = serde_json::json!({
            "os": std::env::consts::OS,
            "landlock_abi": s.landlock_abi,
            "namespaces": s.namespaces,
            "seccomp": s.seccomp,
            "network_method": s.network_method(),
            "command_network": c.network,
            "commands": state,
            "why": why,
        });
        format!("{v}\n")
    } else {
        let yes = |b: bool| if b { "yes" } else { "no" };
        format!(
            "Command sandbox on {os}\n  Landlock ABI:        {abi} (files: {files}; TCP rules: {tcp}; socket and signal scoping: {scope})\n  \
             namespaces:          {ns} (protected paths remounted read-only, network namespace)\n  \
             seccomp:             {sc}\n  network when off:    {method}\n  command network:     {network}\n  \
             commands:            {state}: {why}\n",
            os = std::env::consts::OS,
            abi = s.landlock_abi,
            files = yes(s.landlock_abi >= sandbox::support_min_abi()),
            tcp = yes(s.landlock_abi >= 4),
            scope = yes(s.landlock_abi >= 6),
            ns = if s.namespaces { "available" } else { "unavailable" },
            sc = if s.seccomp { "available" } else { "unavailable" },
            method = s.network_method(),
        )
    };
    print(&text);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::verdict;
    use crate::capabilities::sandbox::Support;

    #[test]
    fn the_verdict_follows_support_acceptance_and_lock_down() {
        let good = Support { landlock_abi: 7, namespaces: true, seccomp: true };
        let none = Support::default();
        assert_eq!(
            verdict(&good, false, true).0,
            if cfg!(target_os = "linux") { "confined" } else { "refused" }
        );
        assert_eq!(verdict(&none, false, true).0, "refused");
        assert!(verdict(&none, false, true).1.contains("commands.unsandboxed"));
        assert_eq!(verdict(&none, true, true).0, "unconfined");
        assert_eq!(verdict(&none, false, false).0, "unconfined");
    }
}
