//! The host's own reads of files inside a root (instructions, memory, skills, state): through
//! the root's cap-std handle, regular files only, never through a final link, never blocking.

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use std::io::{self, Read};
use std::path::Path;

/// What [`read_regular`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// At most the cap's bytes.
    pub bytes: Vec<u8>,
    /// The file's whole size.
    pub size: u64,
}

impl Capped {
    /// Whether the file is larger than what was read.
    pub fn truncated(&self) -> bool {
        self.size > self.bytes.len() as u64
    }
}

/// Reads at most `max` bytes of `rel` under `dir`. `Ok(None)` when it does not exist. A path
/// whose last component is a link, or that is a FIFO, socket, device or directory, is an
/// error (the kind is `InvalidInput`); cap-std refuses any path that leaves `dir`. The file
/// is opened non-blocking, so a FIFO planted under the name never stalls the host.
pub fn read_regular(dir: &Dir, rel: &Path, max: u64) -> io::Result<Option<Capped>> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = match dir.open_with(rel, &opts) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW on a link answers ELOOP.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a symbolic link; corral reads only regular files here", rel.display()),
            ));
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file (a folder, FIFO, socket or device)", rel.display()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max).read_to_end(&mut bytes)?;
    Ok(Some(Capped { bytes, size: meta.len() }))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    fn open(p: &Path) -> Dir {
        Dir::open_ambient_dir(p, ambient_authority()).unwrap()
    }

    #[test]
    fn reads_regular_files_capped_and_refuses_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join("a.md"), "hello world").unwrap();
        std::fs::write(t.path().join("secret"), "s3cret").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), ws.join("out.md")).unwrap();
        std::os::unix::fs::symlink("a.md", ws.join("in.md")).unwrap();
        std::fs::create_dir(ws.join("d")).unwrap();
        let fifo = std::ffi::CString::new(ws.join("pipe.md").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let dir = open(&ws);

        let c = read_regular(&dir, Path::new("a.md"), 5).unwrap().unwrap();
        assert_eq!((c.bytes.as_slice(), c.size, c.truncated()), (&b"hello"[..], 11, true));
        assert_eq!(read_regular(&dir, Path::new("a.md"), 100).unwrap().unwrap().bytes, b"hello world");
        assert_eq!(read_regular(&dir, Path::new("none.md"), 5).unwrap(), None);
        for name in ["out.md", "in.md", "d", "pipe.md", "../secret"] {
            let e = read_regular(&dir, Path::new(name), 100).unwrap_err();
            assert!(
                matches!(e.kind(), io::ErrorKind::InvalidInput | io::ErrorKind::PermissionDenied),
                "{name}: {e}"
            );
        }
    }
}
