//! The `corral:builtin/listing` import: a directory's entries with their kinds as the listing
//! gives them (`d_type`), for the walks of list_files and grep. `wasi:filesystem`'s
//! `read-directory` looks every entry up with a `stat` of its own, so a walk of a tree made one
//! system call (and its path lookup) per file before reading anything.
//!
//! It works on a descriptor the plugin already holds and lists only that directory: the same
//! authority as `read-directory`, and nothing is followed. An entry the listing does not type
//! is looked up by its name in that directory, symlinks not followed.

use crate::wit::builtin::listing::{self, Entry};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorType, ErrorCode};

impl listing::Host for ResourceTable {
    async fn entries(&mut self, dir: Resource<Descriptor>) -> Result<Vec<Entry>, ErrorCode> {
        match self.get(&dir) {
            Ok(Descriptor::Dir(d)) => entries(&d.dir).map_err(ErrorCode::from),
            Ok(Descriptor::File(_)) => Err(ErrorCode::NotDirectory),
            Err(_) => Err(ErrorCode::BadDescriptor),
        }
    }
}

/// The entries of the open directory `dir`, without `.` and `..`.
fn entries(dir: &std::fs::File) -> std::io::Result<Vec<Entry>> {
    // A description of its own, so the listing's position is not the descriptor's.
    let own =
        rustix::fs::openat(dir, c".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let mut stream = rustix::fs::Dir::new(own)?;
    let mut out = Vec::new();
    while let Some(entry) = stream.read() {
        let entry = entry?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            // Some file systems leave the type out of the listing: asked by name, not followed.
            FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            known => known,
        };
        let (name, undecodable) = match std::str::from_utf8(bytes) {
            Ok(text) => (text.to_string(), false),
            Err(_) => (crate::termtext::os_name(OsStr::from_bytes(bytes)), true),
        };
        out.push(Entry { name, kind: descriptor_type(kind), undecodable });
    }
    Ok(out)
}

fn descriptor_type(kind: FileType) -> DescriptorType {
    match kind {
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::Fifo => DescriptorType::Fifo,
        FileType::Socket => DescriptorType::Socket,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::Unknown => DescriptorType::Unknown,
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use wasmtime_wasi::{FsPerms, OpenMode};

    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    /// A table holding `path` opened the way a preopen is, and the descriptor's handle.
    fn table_with(path: &std::path::Path) -> (ResourceTable, Resource<Descriptor>) {
        let file = std::fs::File::open(path).unwrap();
        let d = if file.metadata().unwrap().is_dir() {
            Descriptor::Dir(wasmtime_wasi::filesystem::Dir::new(
                file,
                FsPerms::ReadOnly,
                OpenMode::READ,
                true,
            ))
        } else {
            Descriptor::File(wasmtime_wasi::filesystem::File::new(
                file,
                FsPerms::ReadOnly,
                OpenMode::READ,
                true,
            ))
        };
        let mut table = ResourceTable::new();
        let handle = table.push(d).unwrap();
        (table, handle)
    }

    fn listed(
        table: &mut ResourceTable,
        handle: &Resource<Descriptor>,
    ) -> Vec<(String, DescriptorType, bool)> {
        let got = block(listing::Host::entries(table, Resource::new_borrow(handle.rep()))).unwrap();
        let mut got: Vec<_> = got.into_iter().map(|e| (e.name, e.kind, e.undecodable)).collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        got
    }

    #[test]
    fn each_entry_comes_with_its_kind_and_symlinks_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.txt"), "x").unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        std::fs::write(tmp.path().join("sub/inner"), "x").unwrap();
        std::os::unix::fs::symlink("sub", tmp.path().join("to-dir")).unwrap();
        std::os::unix::fs::symlink("missing", tmp.path().join("dangling")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            tmp.path().join("pipe"),
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .unwrap();
        let (mut table, handle) = table_with(tmp.path());
        assert_eq!(
            listed(&mut table, &handle),
            vec![
                ("a.txt".to_string(), DescriptorType::RegularFile, false),
                ("dangling".to_string(), DescriptorType::SymbolicLink, false),
                ("pipe".to_string(), DescriptorType::Fifo, false),
                ("sub".to_string(), DescriptorType::Directory, false),
                ("to-dir".to_string(), DescriptorType::SymbolicLink, false),
            ],
            "only this directory's own entries, `.` and `..` left out"
        );
        // A second listing of the same descriptor starts from the beginning again.
        assert_eq!(listed(&mut table, &handle).len(), 5);
    }

    #[test]
    fn a_name_that_is_not_utf8_is_escaped_and_marked() {
        let tmp = tempfile::tempdir().unwrap();
        let name = OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(tmp.path().join(name), "x").unwrap();
        std::fs::write(tmp.path().join("ok.txt"), "x").unwrap();
        let (mut table, handle) = table_with(tmp.path());
        assert_eq!(
            listed(&mut table, &handle),
            vec![
                ("caf\\xe9.txt".to_string(), DescriptorType::RegularFile, true),
                ("ok.txt".to_string(), DescriptorType::RegularFile, false),
            ]
        );
    }

    #[test]
    fn a_file_or_unknown_descriptor_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), "x").unwrap();
        let (mut table, handle) = table_with(&tmp.path().join("f"));
        let got = block(listing::Host::entries(&mut table, Resource::new_borrow(handle.rep())));
        assert!(matches!(got, Err(ErrorCode::NotDirectory)), "{got:?}");
        let got = block(listing::Host::entries(&mut table, Resource::new_borrow(handle.rep() + 7)));
        assert!(matches!(got, Err(ErrorCode::BadDescriptor)), "{got:?}");
    }
}
