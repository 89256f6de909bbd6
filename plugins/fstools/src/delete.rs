//! `delete_file`: a soft delete. The host moves the file into the session trash
//! (`.corral/trash/<id>/`), keeps it there for a while, and applies the read-before-write
//! guard to regular files. A symlink is trashed as the link itself, wherever it points.

use corral_plugin_sdk::args::req_str;
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{Output, Spec, ToolError, Value, json};

pub fn spec() -> Spec {
    Spec::new(
        "delete_file",
        "Delete one file (or symlink) by moving it to the workspace trash, from where it can be restored. \
         Directories cannot be deleted. A file must have been read in this session before it can be deleted.",
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file to delete, relative to the workspace root or absolute."}
            },
            "required": ["file_path"]
        }),
    )
    .writes(true, true)
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let file_path = req_str(args, "file_path")?;
    let resolver = Resolver::new(ws);
    let path = resolver.resolve(file_path)?;
    let shown = resolver.display(&path);
    // symlink_metadata: a symlink to a directory is a symlink, and is trashed as one.
    let meta = std::fs::symlink_metadata(&path).map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "'{shown}' is a directory; delete_file deletes single files and symlinks only"
        ))
        .with_hint("delete the files inside it one by one"));
    }
    let info = ws.trash(&path)?;
    Ok(Output::text(format!(
        "Trashed {shown} -> {}\nIt can be restored from there (trash id {}).",
        info.location, info.id
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::ErrorKind;
    use corral_plugin_sdk::host::fake::FakeWorkspace;
    use std::fs;
    use std::path::PathBuf;

    fn setup() -> (tempfile::TempDir, FakeWorkspace, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = FakeWorkspace::new(dir.path());
        let root = ws.roots()[0].path.clone();
        (dir, ws, root)
    }

    #[test]
    fn spec_is_a_writing_tool() {
        let s = spec();
        assert_eq!(s.name, "delete_file");
        assert!(!s.read_only && s.destructive);
        assert_eq!(s.schema["required"], json!(["file_path"]));
    }

    #[test]
    fn trashes_a_read_file() {
        let (_d, ws, root) = setup();
        fs::create_dir(root.join("src")).unwrap();
        fs::write(root.join("src/old.rs"), "fn main() {}\n").unwrap();
        ws.note_read(&root.join("src/old.rs"));
        let out = run(&ws, &json!({"file_path": "src/old.rs"})).unwrap();
        assert_eq!(
            out.text,
            "Trashed src/old.rs -> .corral/trash/fake0001\nIt can be restored from there (trash id fake0001)."
        );
        assert!(!root.join("src/old.rs").exists());
        assert_eq!(fs::read_to_string(root.join(".corral/trash/fake0001/old.rs")).unwrap(), "fn main() {}\n");
    }

    #[test]
    fn an_unread_file_is_refused_by_the_host() {
        let (_d, ws, root) = setup();
        fs::write(root.join("a.txt"), "x").unwrap();
        let e = run(&ws, &json!({"file_path": "a.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert!(e.message.contains("has not been read"), "{}", e.message);
        assert!(root.join("a.txt").exists());
    }

    #[test]
    fn directories_are_refused() {
        let (_d, ws, root) = setup();
        fs::create_dir(root.join("d")).unwrap();
        let e = run(&ws, &json!({"file_path": "d"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert_eq!(e.message, "'d' is a directory; delete_file deletes single files and symlinks only");
        let e = run(&ws, &json!({"file_path": "."})).unwrap_err();
        assert_eq!(e.message, "'.' is a directory; delete_file deletes single files and symlinks only");
        assert!(root.join("d").is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_directory_is_trashed_as_a_link() {
        let (_d, ws, root) = setup();
        fs::create_dir(root.join("d")).unwrap();
        fs::write(root.join("d/keep.txt"), "k").unwrap();
        std::os::unix::fs::symlink("d", root.join("link")).unwrap();
        let out = run(&ws, &json!({"file_path": "link"})).unwrap();
        assert!(out.text.starts_with("Trashed link -> .corral/trash/fake0001\n"), "{}", out.text);
        assert!(fs::symlink_metadata(root.join("link")).is_err());
        assert_eq!(fs::read_to_string(root.join("d/keep.txt")).unwrap(), "k");
        let trashed = root.join(".corral/trash/fake0001/link");
        assert!(fs::symlink_metadata(trashed).unwrap().file_type().is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_can_be_trashed() {
        let (_d, ws, root) = setup();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        run(&ws, &json!({"file_path": "dangling"})).unwrap();
        assert!(fs::symlink_metadata(root.join("dangling")).is_err());
    }

    #[test]
    fn missing_and_outside_paths() {
        let (_d, ws, _root) = setup();
        let e = run(&ws, &json!({"file_path": "nope.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(e.message, "'nope.txt' does not exist");
        let e = run(&ws, &json!({"file_path": "../x"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        let e = run(&ws, &json!({})).unwrap_err();
        assert_eq!(e.message, "missing required field 'file_path'");
    }
}
