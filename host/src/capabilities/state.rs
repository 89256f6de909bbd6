//! corral's own files under the workspace's `.corral/` folder (memory notes, saved command
//! output, the trash), written by the host alone: plugins can never write there. What is
//! local to this machine inside it is listed in a `.corral/.gitignore` corral writes.

use super::atomic::{atomic_replace, open_parent};
use cap_std::fs::Dir;
use std::io;
use std::path::Path;

/// The state folder, relative to the workspace root.
pub const STATE_DIR: &str = ".corral";

fn rel(name: &str) -> String {
    format!("{STATE_DIR}/{name}")
}

/// What `.corral/.gitignore` holds: the local parts of `.corral/` (the rest, plugins, skills
/// and memory notes, a team may commit).
pub const GITIGNORE: &str =
    "# Written by corral: local files that are not for the repository.\n/out/\n/trash/\n/audit.jsonl\n";

/// Writes `.corral/.gitignore` when it does not exist yet.
pub fn ensure_gitignore(ws: &Dir) -> io::Result<()> {
    let rel = Path::new(STATE_DIR).join(".gitignore");
    if ws.symlink_metadata(&rel).is_ok() {
        return Ok(());
    }
    let parent = open_parent(ws, &rel, true)?;
    atomic_replace(&parent, Path::new(".gitignore"), GITIGNORE.as_bytes(), false)
}

/// Atomically replaces `.corral/<name>` with `contents`, creating folders as needed.
pub fn write(ws: &Dir, name: &str, contents: &[u8]) -> io::Result<()> {
    ensure_gitignore(ws)?;
    let rel = rel(name);
    let path = Path::new(&rel);
    let parent = open_parent(ws, path, true)?;
    let file = path.file_name().ok_or_else(|| io::Error::other("state file has no name"))?;
    let existed = parent.symlink_metadata(file).is_ok();
    atomic_replace(&parent, Path::new(file), contents, existed)
}

/// The largest state file read back.
const MAX_READ: u64 = 8 << 20;

/// The contents of `.corral/<name>`, or `None` when it does not exist. Read through the
/// workspace's handle: never a link, never a FIFO or device, at most 8 MiB.
pub fn read(ws: &Dir, name: &str) -> io::Result<Option<String>> {
    Ok(super::hostread::read_regular(ws, Path::new(&rel(name)), MAX_READ)?
        .map(|c| String::from_utf8_lossy(&c.bytes).into_owned()))
}

/// Removes `.corral/<name>`; a missing file is not an error.
pub fn remove(ws: &Dir, name: &str) -> io::Result<()> {
    match ws.remove_file(rel(name)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Seconds since the file was last changed, if it exists.
pub fn age_secs(ws: &Dir, name: &str) -> Option<u64> {
    let modified = ws.metadata(rel(name)).ok()?.modified().ok()?.into_std();
    std::time::SystemTime::now().duration_since(modified).ok().map(|d| d.as_secs())
}

/// Writes the todo section to `todo.md` in the workspace's local state, so the person can
/// see the plan.
pub fn mirror_todo(local: &super::local::Local, log: &super::log::Sink, body: &str) {
    let text = if body.trim().is_empty() { String::new() } else { format!("# Todo\n\n{body}\n") };
    if let Err(e) = local.write("todo.md", text.as_bytes()) {
        log.push("host", "warn", &format!("cannot write {}: {e}", local.shown("todo.md")));
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    #[test]
    fn write_read_remove_round_trip() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), ambient_authority()).unwrap();
        assert_eq!(read(&d, "x.md").unwrap(), None);
        write(&d, "x.md", b"one").unwrap();
        write(&d, "x.md", b"two").unwrap();
        assert_eq!(read(&d, "x.md").unwrap().as_deref(), Some("two"));
        assert_eq!(std::fs::read_to_string(t.path().join(".corral/x.md")).unwrap(), "two");
        assert!(age_secs(&d, "x.md").is_some());
        remove(&d, "x.md").unwrap();
        remove(&d, "x.md").unwrap();
        assert!(!t.path().join(".corral/x.md").exists());
        assert_eq!(std::fs::read_to_string(t.path().join(".corral/.gitignore")).unwrap(), GITIGNORE);
        // A planted link or FIFO is refused, not followed.
        std::fs::write(t.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), t.path().join(".corral/l.md")).unwrap();
        assert!(read(&d, "l.md").is_err());
    }
}
