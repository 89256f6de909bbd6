//! A job's settings ceiling from the person's settings, and a job's run narrowed to the meet of
//! the saved ceiling and the settings in force now (`CORRAL_CRON_JOB` names the job).

use crate::config::Settings;
use crate::cron::{Ceiling, Store};
use std::path::{Path, PathBuf};

/// The variable the scheduler sets on a job's run: the job's id.
pub const JOB_VAR: &str = "CORRAL_CRON_JOB";

/// What `s` lets a run reach.
pub fn ceiling_of(s: &Settings) -> Ceiling {
    let c = &s.commands;
    Ceiling {
        network: s.network.mode.clone(),
        commands_mode: c.mode.clone(),
        allowed_commands: c.allowed.clone(),
        yolo: c.yolo,
        command_network: c.network,
        command_env: c.env.clone(),
        command_read: c.read_paths.clone(),
        command_write: c.write_paths.clone(),
        unsandboxed: c.unsandboxed,
        grants: s.grants.clone(),
        extra_roots: s.extra_roots.clone(),
        allow_git_writes: s.allow_git_writes,
        no_read_guard: !s.read_guard,
    }
}

/// Sets what `s` may reach to `c`. A job runs unattended: commands that would ask run only
/// from the allowlist.
pub fn apply(s: &mut Settings, c: &Ceiling) {
    s.network.mode = c.network.clone();
    let m = &mut s.commands;
    m.mode = if c.commands_mode == "ask" { "allowlist".into() } else { c.commands_mode.clone() };
    m.allowed = c.allowed_commands.clone();
    m.yolo = c.yolo;
    m.network = c.command_network;
    m.env = c.command_env.clone();
    m.read_paths = c.command_read.clone();
    m.write_paths = c.command_write.clone();
    m.unsandboxed = c.unsandboxed;
    s.grants = c.grants.clone();
    s.extra_roots = c.extra_roots.clone();
    s.allow_git_writes = c.allow_git_writes;
    s.read_guard = !c.no_read_guard;
}

/// In a job's run (`CORRAL_CRON_JOB` set by the scheduler), narrows `s` to what the job was
/// created with and what the person allows now, whichever is less.
pub fn narrow_for_job(s: &mut Settings, workspace: &Path) -> Result<(), String> {
    let Ok(id) = std::env::var(JOB_VAR) else { return Ok(()) };
    let dir = state_folder(workspace)?;
    let store = Store::open(&dir).map_err(|e| e.to_string())?;
    let job = store.get(id.trim()).map_err(|e| {
        format!("{JOB_VAR}={id}: {e}. This variable is set by `corral cron run` for a job's run; unset it.")
    })?;
    let meet = job.ceiling.meet(&ceiling_of(s));
    apply(s, &meet);
    Ok(())
}

/// The state folder of the workspace `workspace` (as the session would open it).
pub fn state_folder(workspace: &Path) -> Result<PathBuf, String> {
    let state = crate::paths::state_dir()
        .ok_or("corral has no state directory for cron jobs: set HOME or CORRAL_STATE_DIR")?;
    let real = std::fs::canonicalize(workspace)
        .map_err(|e| format!("cannot open the workspace {}: {e}", workspace.display()))?;
    Ok(crate::paths::workspace_state_dir(&state, &real))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_runs_within_both_ceilings() {
        let mut now = Settings::default();
        now.network.mode = "on".into();
        now.commands.mode = "ask".into();
        now.commands.allowed = vec!["git".into(), "make".into()];
        now.read_guard = false;
        let saved = Ceiling {
            network: "llm-only".into(),
            commands_mode: "ask".into(),
            allowed_commands: vec!["git".into()],
            no_read_guard: true,
            ..Ceiling::default()
        };
        let meet = saved.meet(&ceiling_of(&now));
        apply(&mut now, &meet);
        assert_eq!(now.network.mode, "llm-only");
        assert_eq!(now.commands.mode, "allowlist", "nobody answers a job's questions");
        assert_eq!(now.commands.allowed, vec!["git".to_string()]);
        assert!(!now.read_guard);
        assert_eq!(ceiling_of(&now).meet(&saved).network, "llm-only");
    }
}
