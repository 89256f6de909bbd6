//! Reading whole files. Inside the sandbox a file is opened through the innermost preopen
//! that holds it and read with large positioned reads on its descriptor: std's reads go
//! through a stream and a poll that the host serves on a blocking thread, 64 KiB at a time.

use std::io;
use std::path::Path;

/// The bytes of the file at absolute `path` (symlinks followed; the sandbox confines them).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    sys::read(path)
}

#[cfg(target_os = "wasi")]
pub(crate) mod sys {
    use std::io;
    use std::path::{Path, PathBuf};
    use wasip2::filesystem::preopens::get_directories;
    use wasip2::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorStat, ErrorCode, OpenFlags, PathFlags,
    };

    /// One positioned read; large enough that most files take one or two.
    const CHUNK: u64 = 4 << 20;

    /// The preopened directories and their guest paths, asked for once: each
    /// `get-directories` makes a new descriptor of every preopen (and dropping them is a host
    /// call each).
    pub struct Preopens(Vec<(Descriptor, PathBuf)>);

    impl Preopens {
        pub fn new() -> Self {
            Preopens(get_directories().into_iter().map(|(d, p)| (d, PathBuf::from(p))).collect())
        }

        /// The innermost preopen holding absolute `path`, and `path` relative to it ("." for
        /// itself); None outside them all, or when the path is not UTF-8.
        pub fn locate<'a>(&'a self, path: &'a Path) -> Option<(&'a Descriptor, &'a str)> {
            let (dir, rel) = self
                .0
                .iter()
                .filter_map(|(d, root)| Some((d, path.strip_prefix(root).ok()?.to_str()?)))
                .min_by_key(|(_, rel)| rel.len())?;
            Some((dir, if rel.is_empty() { "." } else { rel }))
        }
    }

    /// A stat's modification time in nanoseconds since the epoch (0 when it has none), as
    /// `common::mtime_key` gives it outside the sandbox.
    pub fn mtime(stat: &DescriptorStat) -> u128 {
        stat.data_modification_timestamp
            .map_or(0, |t| u128::from(t.seconds) * 1_000_000_000 + u128::from(t.nanoseconds))
    }

    pub fn to_io(e: ErrorCode) -> io::Error {
        let kind = match e {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::NotPermitted | ErrorCode::Access => io::ErrorKind::PermissionDenied,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            ErrorCode::NameTooLong => io::ErrorKind::InvalidFilename,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, format!("{e:?}"))
    }

    pub fn read(path: &Path) -> io::Result<Vec<u8>> {
        let preopens = Preopens::new();
        let (dir, rel) = preopens
            .locate(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::PermissionDenied, "outside the roots"))?;
        let file = dir
            .open_at(PathFlags::SYMLINK_FOLLOW, rel, OpenFlags::empty(), DescriptorFlags::READ)
            .map_err(to_io)?;
        let size = file.stat().map_err(to_io)?.size;
        let mut out = Vec::with_capacity(size as usize);
        loop {
            let (chunk, eof) = file.read(CHUNK, out.len() as u64).map_err(to_io)?;
            if chunk.is_empty() && !eof && out.len() as u64 >= size {
                break;
            }
            out.extend_from_slice(&chunk);
            if eof || chunk.is_empty() {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(not(target_os = "wasi"))]
mod sys {
    use std::io;
    use std::path::Path;

    pub fn read(path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}
