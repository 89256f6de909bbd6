//! `corral trust [--show|--revoke]`: shows, grants or revokes the person's trust in a
//! workspace (the question asked at start-up is in `trustask`).

use super::GlobalArgs;
use super::setup::{self, SetupError};
use super::trustask::{clean, describe};
use crate::trust::{self, Asks, Standing};

/// `corral trust`: shows, grants or revokes trust for the workspace.
pub fn run(g: &GlobalArgs, show: bool, revoke: bool) -> Result<i32, SetupError> {
    let user_dir = crate::config::user_dir();
    let r = setup::resolve(g, false, false)?;
    if revoke {
        let was = trust::revoke(&r.trust.workspace, user_dir.as_deref()).map_err(SetupError::Trust)?;
        let ws = clean(&r.trust.workspace.display().to_string());
        eprintln!(
            "{}",
            if was { format!("{ws} is no longer trusted") } else { format!("{ws} was not trusted") }
        );
        return Ok(0);
    }
    // What the project asks for, whatever the current standing: load it as if untrusted.
    let untrusted = crate::config::load(
        &r.workspace,
        user_dir.as_deref(),
        &|k: &str| std::env::var(k).ok(),
        &setup::flag_layer(g, &std::env::current_dir().map_err(SetupError::Cwd)?),
        false,
    )?;
    let asks = Asks::of(&r.trust.workspace, &untrusted.1.ignored);
    let mut out = describe(&r.trust, &asks);
    let standing = match &r.trust.standing {
        Standing::Trusted => "trusted",
        Standing::Untrusted => "not trusted",
        Standing::Changed => "not trusted: its files changed since you trusted it",
        Standing::Locked(_) => "not trusted (a policy file is in force)",
    };
    if show {
        out.push_str(&format!("  Status: {standing}\n"));
        print!("{out}");
        return Ok(0);
    }
    trust::grant(&r.trust, user_dir.as_deref()).map_err(SetupError::Trust)?;
    out.push_str("  Status: trusted (for these exact files; you are asked again if they change)\n");
    print!("{out}");
    Ok(0)
}
