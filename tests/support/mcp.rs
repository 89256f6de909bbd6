//! The official MCP Python SDK as a client of `corral mcp serve`: installed once per user by
//! tests/tools/mcp-python.sh (pinned), and run on a plan by tests/data/mcp/client.py.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The venv's python with the SDK, installed on first use; `None` (and the reason printed)
/// only when this system has no python3.
pub fn python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        if Command::new("python3").arg("--version").output().is_err() {
            eprintln!("skipped: python3 is not installed, so the MCP Python SDK cannot run");
            return None;
        }
        let out = Command::new("bash")
            .arg(super::repo().join("tests/tools/mcp-python.sh"))
            .output()
            .expect("run tests/tools/mcp-python.sh");
        assert!(
            out.status.success(),
            "tests/tools/mcp-python.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

/// Runs the client on `plan` (see client.py) and returns what it printed, parsed.
pub fn client(python: &Path, plan: &serde_json::Value) -> serde_json::Value {
    // Outside the sandbox, whose disk the tests compare before and after.
    let file = tempfile::NamedTempFile::new().expect("a file for the plan");
    std::fs::write(file.path(), plan.to_string()).expect("write the plan");
    let out = Command::new(python)
        .arg(super::repo().join("tests/data/mcp/client.py"))
        .arg(file.path())
        .output()
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("client output is not JSON ({e}):\n{stdout}\n{stderr}"))
}
