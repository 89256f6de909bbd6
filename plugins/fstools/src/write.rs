//! `write_file`: creates or replaces a file with `content`, or moves `move_from` to
//! `file_path`. Both go through the host, which creates parent directories, writes
//! atomically and enforces the read-before-write guard on an existing destination (a move's
//! source is exempt: its content does not change).

use crate::common;
use corral_plugin_sdk::args::{opt_str, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use std::path::Path;

/// A moved file larger than this gets no checksum line (it would have to be read whole).
const MOVE_CHECKSUM_MAX_BYTES: u64 = 16 * 1024 * 1024;

pub fn spec() -> Spec {
    Spec::new(
        "write_file",
        "Create a file or replace its whole content, or move/rename a file. Give file_path and exactly one \
         of: content (the complete new text; missing parent directories are created) or move_from (an \
         existing file or symlink to move to file_path; works for any kind of file, not directories). \
         Replacing an existing file requires having read it in this session. For changes to part of a \
         file prefer edit_file. The result has the file's checksum.",
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file to write (or the move's destination), relative to the workspace root or absolute."},
                "content": {"type": "string", "description": "The complete content to write. Not together with move_from."},
                "move_from": {"type": "string", "description": "A file to move to file_path instead of writing content."}
            },
            "required": ["file_path"]
        }),
    )
    .writes(true, true)
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let file_path = req_str(args, "file_path")?;
    // Weak models fill optional fields with "": an empty move_from is absent, and so is an
    // empty content beside a real move_from (an empty content alone still writes an empty file).
    let move_from = opt_str(args, "move_from")?.filter(|m| !m.is_empty());
    let content = args
        .get("content")
        .filter(|v| !v.is_null())
        .filter(|v| move_from.is_none() || v.as_str() != Some(""));
    let resolver = Resolver::new(ws);
    match (content, move_from) {
        (Some(_), Some(_)) => Err(ToolError::invalid_args(
            "give either 'content' (to write the file) or 'move_from' (to move a file there), not both",
        )),
        (None, None) => Err(ToolError::invalid_args(
            "give 'content' (the text to write) or 'move_from' (a file to move to file_path)",
        )),
        (Some(content), None) => write(ws, &resolver, file_path, content),
        (None, Some(from)) => move_file(ws, &resolver, from, file_path),
    }
}

fn write(
    ws: &dyn Workspace,
    resolver: &Resolver,
    file_path: &str,
    content: &Value,
) -> Result<Output, ToolError> {
    let text = match content {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).map_err(|e| {
            ToolError::new(ErrorKind::Internal, format!("cannot encode content as JSON: {e}"))
        })?,
    };
    let path = resolver.resolve(file_path)?;
    let shown = resolver.display(&path);
    refuse_directory(&path, &shown)?;
    ws.write(&path, text.as_bytes())?;
    Ok(Output::text(format!(
        "Wrote {} bytes to {shown}\n[checksum={}]",
        text.len(),
        common::checksum(text.as_bytes())
    )))
}

fn move_file(ws: &dyn Workspace, resolver: &Resolver, from: &str, to: &str) -> Result<Output, ToolError> {
    let src = resolver.resolve(from)?;
    let dst = resolver.resolve(to)?;
    let (src_shown, dst_shown) = (resolver.display(&src), resolver.display(&dst));
    if src == dst {
        return Err(ToolError::invalid_args(format!(
            "move_from and file_path are the same path ('{src_shown}'); nothing to move"
        )));
    }
    // The source itself, not what a symlink points at: a symlink is moved as a link.
    let meta = std::fs::symlink_metadata(&src).map_err(|e| io_error(&src_shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "'{src_shown}' is a directory; move_from moves single files and symlinks only"
        )));
    }
    refuse_directory(&dst, &dst_shown)?;
    let info = ws.rename(&src, &dst)?;
    let mut text = format!("Moved {src_shown} -> {dst_shown}");
    if info.existed {
        text.push_str(" (replacing the file that was there)");
    }
    if meta.is_file()
        && meta.len() <= MOVE_CHECKSUM_MAX_BYTES
        && let Ok(bytes) = crate::common::fileio::read(&dst)
    {
        text.push_str(&format!("\n[checksum={}]", common::checksum(&bytes)));
    }
    Ok(Output::text(text))
}

fn refuse_directory(path: &Path, shown: &str) -> Result<(), ToolError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Err(ToolError::invalid_args(format!(
            "'{shown}' is a directory; give the path of a file inside it"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use corral_plugin_sdk::host::fake::FakeWorkspace;
    use std::fs;

    fn root(ws: &FakeWorkspace) -> std::path::PathBuf {
        ws.roots()[0].path.clone()
    }

    #[test]
    fn spec_is_a_writing_tool() {
        let s = spec();
        assert_eq!(s.name, "write_file");
        assert!(!s.read_only && s.destructive);
        assert_eq!(s.schema["required"], json!(["file_path"]));
    }

    #[test]
    fn writes_content_and_reports_bytes_and_checksum() {
        let (_d, ws) = setup();
        let out = run(&ws, &json!({"file_path": "hello.txt", "content": "hello\n"})).unwrap();
        assert_eq!(
            out.text,
            format!("Wrote 6 bytes to hello.txt\n[checksum={}]", common::checksum(b"hello\n"))
        );
        assert_eq!(fs::read_to_string(root(&ws).join("hello.txt")).unwrap(), "hello\n");
    }

    #[test]
    fn creates_parent_directories() {
        let (_d, ws) = setup();
        let out = run(&ws, &json!({"file_path": "a/b/c.txt", "content": ""})).unwrap();
        assert_eq!(out.text, format!("Wrote 0 bytes to a/b/c.txt\n[checksum={}]", common::checksum(b"")));
        assert_eq!(fs::read_to_string(root(&ws).join("a/b/c.txt")).unwrap(), "");
    }

    #[test]
    fn non_string_content_is_pretty_json() {
        let (_d, ws) = setup();
        let out = run(&ws, &json!({"file_path": "c.json", "content": {"a": [1, 2], "b": true}})).unwrap();
        let want = "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": true\n}";
        assert_eq!(fs::read_to_string(root(&ws).join("c.json")).unwrap(), want);
        assert!(out.text.starts_with(&format!("Wrote {} bytes to c.json\n", want.len())), "{}", out.text);
        run(&ws, &json!({"file_path": "n.txt", "content": 42})).unwrap();
        assert_eq!(fs::read_to_string(root(&ws).join("n.txt")).unwrap(), "42");
    }

    #[test]
    fn overwriting_needs_a_read_first() {
        let (_d, ws) = setup();
        let p = root(&ws).join("old.txt");
        fs::write(&p, "before").unwrap();
        let e = run(&ws, &json!({"file_path": "old.txt", "content": "after"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert!(e.message.contains("has not been read"), "{}", e.message);
        assert_eq!(fs::read_to_string(&p).unwrap(), "before");
        ws.note_read(&p);
        run(&ws, &json!({"file_path": "old.txt", "content": "after"})).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "after");
    }

    #[test]
    fn empty_optional_fields_count_as_absent() {
        let (_d, ws) = setup();
        run(&ws, &json!({"file_path": "a.txt", "content": "hi\n", "move_from": ""})).unwrap();
        assert_eq!(std::fs::read_to_string(root(&ws).join("a.txt")).unwrap(), "hi\n");
        run(&ws, &json!({"file_path": "e.txt", "content": "", "move_from": ""})).unwrap();
        assert_eq!(std::fs::read_to_string(root(&ws).join("e.txt")).unwrap(), "");
        run(&ws, &json!({"file_path": "b.txt", "content": "", "move_from": "a.txt"})).unwrap();
        assert_eq!(std::fs::read_to_string(root(&ws).join("b.txt")).unwrap(), "hi\n");
        assert!(!root(&ws).join("a.txt").exists(), "moved, not copied");
    }

    #[test]
    fn both_or_neither_mode_is_an_error() {
        let (_d, ws) = setup();
        let e = run(&ws, &json!({"file_path": "x", "content": "a", "move_from": "y"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(e.message.contains("not both"), "{}", e.message);
        let e = run(&ws, &json!({"file_path": "x"})).unwrap_err();
        assert_eq!(
            e.message,
            "give 'content' (the text to write) or 'move_from' (a file to move to file_path)"
        );
        let e = run(&ws, &json!({"file_path": "x", "content": null})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        let e = run(&ws, &json!({"file_path": "x", "move_from": ""})).unwrap_err();
        assert_eq!(
            e.message,
            "give 'content' (the text to write) or 'move_from' (a file to move to file_path)"
        );
        let e = run(&ws, &json!({"content": "a"})).unwrap_err();
        assert_eq!(e.message, "missing required field 'file_path'");
        assert!(!root(&ws).join("x").exists());
    }

    #[test]
    fn writing_onto_a_directory_is_refused() {
        let (_d, ws) = setup();
        fs::create_dir(root(&ws).join("sub")).unwrap();
        let e = run(&ws, &json!({"file_path": "sub", "content": "a"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert_eq!(e.message, "'sub' is a directory; give the path of a file inside it");
    }

    #[test]
    fn paths_outside_the_workspace_are_refused() {
        let (_d, ws) = setup();
        let e = run(&ws, &json!({"file_path": "../escape.txt", "content": "a"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
    }

    #[test]
    fn moves_a_file_with_its_checksum() {
        let (_d, ws) = setup();
        let r = root(&ws);
        fs::write(r.join("a.txt"), "hello\n").unwrap();
        let out = run(&ws, &json!({"file_path": "dir/b.txt", "move_from": "a.txt"})).unwrap();
        assert_eq!(
            out.text,
            format!("Moved a.txt -> dir/b.txt\n[checksum={}]", common::checksum(b"hello\n"))
        );
        assert!(!r.join("a.txt").exists());
        assert_eq!(fs::read_to_string(r.join("dir/b.txt")).unwrap(), "hello\n");
    }

    #[test]
    fn moves_binary_files_byte_for_byte() {
        let (_d, ws) = setup();
        let r = root(&ws);
        let bytes = [0u8, 159, 146, 150, 0, 255];
        fs::write(r.join("img.bin"), bytes).unwrap();
        run(&ws, &json!({"file_path": "img2.bin", "move_from": "img.bin"})).unwrap();
        assert_eq!(fs::read(r.join("img2.bin")).unwrap(), bytes);
    }

    #[test]
    fn moving_onto_an_existing_file_needs_it_read() {
        let (_d, ws) = setup();
        let r = root(&ws);
        fs::write(r.join("a"), "new").unwrap();
        fs::write(r.join("b"), "old").unwrap();
        let e = run(&ws, &json!({"file_path": "b", "move_from": "a"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(fs::read_to_string(r.join("b")).unwrap(), "old");
        ws.note_read(&r.join("b"));
        let out = run(&ws, &json!({"file_path": "b", "move_from": "a"})).unwrap();
        assert!(out.text.starts_with("Moved a -> b (replacing the file that was there)\n"), "{}", out.text);
        assert_eq!(fs::read_to_string(r.join("b")).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn moves_a_symlink_as_a_link() {
        let (_d, ws) = setup();
        let r = root(&ws);
        fs::create_dir(r.join("target_dir")).unwrap();
        std::os::unix::fs::symlink("target_dir", r.join("link")).unwrap();
        let out = run(&ws, &json!({"file_path": "link2", "move_from": "link"})).unwrap();
        assert_eq!(out.text, "Moved link -> link2", "a link gets no checksum");
        assert!(fs::symlink_metadata(r.join("link2")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_link(r.join("link2")).unwrap(), Path::new("target_dir"));
        assert!(r.join("target_dir").is_dir());
    }

    #[test]
    fn move_refusals() {
        let (_d, ws) = setup();
        let r = root(&ws);
        fs::write(r.join("a.txt"), "x").unwrap();
        fs::create_dir(r.join("d")).unwrap();
        let e = run(&ws, &json!({"file_path": "./a.txt", "move_from": "a.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert_eq!(e.message, "move_from and file_path are the same path ('a.txt'); nothing to move");
        let e = run(&ws, &json!({"file_path": "e", "move_from": "d"})).unwrap_err();
        assert_eq!(e.message, "'d' is a directory; move_from moves single files and symlinks only");
        let e = run(&ws, &json!({"file_path": "b.txt", "move_from": "missing.txt"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(e.message, "'missing.txt' does not exist");
        let e = run(&ws, &json!({"file_path": "d", "move_from": "a.txt"})).unwrap_err();
        assert_eq!(e.message, "'d' is a directory; give the path of a file inside it");
        assert!(r.join("a.txt").exists() && r.join("d").is_dir() && !r.join("e").exists());
    }
}
