//! corral's own files under the workspace's `.corral/` folder (todo list, history,
//! continue-here notes), written by the host alone: plugins can never write there.

use super::workspace::{atomic_replace, open_parent};
use cap_std::fs::Dir;
use std::io::{self, Read};
use std::path::Path;

/// The state folder, relative to the workspace root.
pub const STATE_DIR: &str = ".corral";

fn rel(name: &str) -> String {
    format!("{STATE_DIR}/{name}")
}

/// Atomically replaces `.corral/<name>` with `contents`, creating folders as needed.
pub fn write(ws: &Dir, name: &str, contents: &[u8]) -> io::Result<()> {
    let rel = rel(name);
    let path = Path::new(&rel);
    let parent = open_parent(ws, path, true)?;
    let file = path.file_name().ok_or_else(|| io::Error::other("state file has no name"))?;
    let existed = parent.symlink_metadata(file).is_ok();
    atomic_replace(&parent, Path::new(file), contents, existed)
}

/// The contents of `.corral/<name>`, or `None` when it does not exist.
pub fn read(ws: &Dir, name: &str) -> io::Result<Option<String>> {
    match ws.open(rel(name)) {
        Ok(mut f) => {
            let mut s = String::new();
            f.read_to_string(&mut s)?;
            Ok(Some(s))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
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

/// Writes the todo section to `.corral/todo.md` so the person can see the plan.
pub fn mirror_todo(s: &super::Session, body: &str) {
    let text = if body.trim().is_empty() { String::new() } else { format!("# Todo\n\n{body}\n") };
    if let Err(e) = write(&s.roots.workspace().dir, "todo.md", text.as_bytes()) {
        s.log.push("host", "warn", &format!("cannot write {STATE_DIR}/todo.md: {e}"));
    }
}

#[cfg(test)]
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
    }
}
