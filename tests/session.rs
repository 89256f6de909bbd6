//! One session across several calls: what read_file reads unlocks changes to it, writes
//! count as reads, and the guard still protects files the session never saw.

use crate::support;

use corral::runtime::{ErrorKind, Limits, LoadRules};
use support::inproc::{load, load_with};

#[test]
fn reading_a_file_unlocks_editing_it() {
    let l = load(&[], &[], &Limits::default()).unwrap();
    let lim = Limits::default();
    let edit = r#"{"file_path": "hello.txt", "old_string": "world", "new_string": "corral"}"#;
    let err = l.call("edit_file", edit, &lim).result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "{err:?}");
    assert!(err.message.contains("has not been read"), "{}", err.message);
    assert_eq!(std::fs::read_to_string(l.sb.ws.join("hello.txt")).unwrap(), "hello\nworld\n");

    l.call("read_file", r#"{"file_path": "hello.txt"}"#, &lim).result.unwrap();
    let out = l.call("edit_file", edit, &lim).result.unwrap();
    assert!(out.text.starts_with("Edited hello.txt"), "{}", out.text);
    assert_eq!(std::fs::read_to_string(l.sb.ws.join("hello.txt")).unwrap(), "hello\ncorral\n");
}

#[test]
fn a_file_the_session_wrote_can_be_changed_again() {
    let l = load(&[], &[], &Limits::default()).unwrap();
    let lim = Limits::default();
    l.call("write_file", r#"{"file_path": "notes.md", "content": "one\n"}"#, &lim).result.unwrap();
    l.call("write_file", r#"{"file_path": "notes.md", "content": "two\n"}"#, &lim).result.unwrap();
    l.call("delete_file", r#"{"file_path": "notes.md"}"#, &lim).result.unwrap();
    assert!(!l.sb.ws.join("notes.md").exists());
}

#[test]
fn a_directory_listing_does_not_unlock_the_files_in_it() {
    let l = load(&[], &[], &Limits::default()).unwrap();
    let lim = Limits::default();
    l.call("read_file", r#"{"file_path": "."}"#, &lim).result.unwrap();
    l.call("list_files", r#"{"pattern": "*"}"#, &lim).result.unwrap();
    l.call("grep", r#"{"pattern": "hello"}"#, &lim).result.unwrap();
    let err = l.call("delete_file", r#"{"file_path": "hello.txt"}"#, &lim).result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "{err:?}");
    assert!(l.sb.ws.join("hello.txt").exists());
}

#[test]
fn read_multiple_files_unlocks_each_file_it_read() {
    let l = load(&[], &[], &Limits::default()).unwrap();
    let lim = Limits::default();
    std::fs::write(l.sb.ws.join("b.txt"), "b\n").unwrap();
    l.call("read_multiple_files", r#"{"files": ["hello.txt", "b.txt"]}"#, &lim).result.unwrap();
    l.call("write_file", r#"{"file_path": "b.txt", "content": "B\n"}"#, &lim).result.unwrap();
    l.call("write_file", r#"{"file_path": "hello.txt", "content": "H\n"}"#, &lim).result.unwrap();
    assert_eq!(std::fs::read_to_string(l.sb.ws.join("b.txt")).unwrap(), "B\n");
}

#[test]
fn every_call_of_a_session_sees_the_folders_the_session_opened() {
    let l = load_with(&["hostile"], &LoadRules::default().trusting("hostile"), &Limits::default()).unwrap();
    let lim = Limits::default();
    let args = serde_json::json!({"path": format!("{}/hello.txt", l.sb.ws.display())}).to_string();
    let read = || l.call("wasi_read", &args, &lim).result.map(|o| o.text);
    assert_eq!(read().unwrap(), "hello\nworld\n");
    // The workspace is moved away and another folder put at its path: the tools go on seeing
    // the folder the session opened, as the host's own handles (which check and do the
    // writes) do, never one the host does not hold.
    let moved = l.sb.ws.with_file_name("ws-moved");
    std::fs::rename(&l.sb.ws, &moved).unwrap();
    std::fs::create_dir(&l.sb.ws).unwrap();
    std::fs::write(l.sb.ws.join("hello.txt"), "impostor\n").unwrap();
    assert_eq!(read().unwrap(), "hello\nworld\n");
    let host_read = l.call("read_file", r#"{"file_path": "hello.txt"}"#, &lim).result.unwrap().text;
    assert!(host_read.starts_with("1: hello\n2: world\n"), "{host_read}");
}
