//! Stopping corral from outside: a command that holds on until killed, reporting its pid and
//! temp folder, and the checks that a signal stopped it and what it started.

use super::Sandbox;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Waits (at most 5 s) until process `pid` no longer runs: gone, or a zombie waiting for a
/// reaper. Fails naming its state if it still runs then.
pub fn assert_stops(pid: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let running = state.as_deref().is_some_and(|s| {
            let after = s.rsplit(')').next().unwrap_or("");
            !after.trim_start().starts_with('Z')
        });
        if !running {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "process {pid} still runs: {state:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A command that records its temp folder and its pid (once both are written), then waits.
pub fn holder(sb: &Sandbox) -> String {
    let path = sb.outside.join("hold.sh");
    super::script(
        &path,
        "echo \"$TMPDIR\" > tmpdir.txt\necho $$ > held.tmp && mv held.tmp held.pid\nexec sleep 300",
    );
    path.to_str().unwrap().to_string()
}

/// Waits (at most 20 s) for the holder to have started; its pid and temp folder.
pub fn held(sb: &Sandbox, corral: &mut std::process::Child) -> (String, PathBuf) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !sb.ws.join("held.pid").exists() {
        if let Ok(Some(status)) = corral.try_wait() {
            panic!("corral ended ({status}) before the command started");
        }
        assert!(std::time::Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(sb.ws.join("held.pid")).unwrap().trim().to_string();
    let tmp = std::fs::read_to_string(sb.ws.join("tmpdir.txt")).unwrap().trim().to_string();
    assert!(Path::new(&tmp).is_dir(), "the command's temp folder {tmp} exists while it runs");
    (pid, PathBuf::from(tmp))
}

pub fn signal(child: &std::process::Child, sig: &str) {
    let status = std::process::Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap();
    assert!(status.success(), "kill {sig}");
}

/// Waits (at most 30 s) for `corral` to end after it was signalled; fails, killing it, if it
/// still runs then (what it waits on holds on far longer, so an ignored signal shows here).
pub fn ends(corral: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = corral.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = corral.kill();
            panic!("corral did not stop within 30 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
