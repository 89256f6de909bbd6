//! The Linux sandbox: built in the parent (Landlock ruleset file, seccomp program, namespace
//! maps, mount list), entered in the child between fork and exec with system calls only.

use super::{SandboxError, SandboxSpec, paths, seccomp, support};
use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The ABI the rules are written for; the crate drops what an older kernel lacks.
const TARGET: ABI = ABI::V6;

#[derive(Debug)]
pub struct Prepared {
    ruleset: OwnedFd,
    filter: Option<Vec<seccompiler::sock_filter>>,
    pub namespaces: bool,
    network: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Protected paths to remount read-only, with the mount flags that must be kept.
    read_only: Vec<(CString, libc::c_ulong)>,
}

fn cstring(p: &Path) -> Result<CString, SandboxError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Prepare(format!("{} has a NUL byte", p.display())))
}

/// The flags of the mount holding `p` that a remount inside a user namespace must keep.
fn locked_flags(p: &CString) -> libc::c_ulong {
    // SAFETY: statvfs writes into the zeroed struct we own; `p` is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(p.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs.iter().filter(|(st_flag, _)| st.f_flag & st_flag != 0).fold(0, |acc, (_, ms)| acc | ms)
}

/// Adds one rule; paths that do not exist (optional defaults) are skipped.
fn add(
    rs: landlock::RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, SandboxError> {
    let Ok(fd) = PathFd::new(path) else { return Ok(rs) };
    let access = if path.is_dir() { access } else { access & AccessFs::from_file(TARGET) };
    rs.add_rule(PathBeneath::new(fd, access))
        .map_err(|e| SandboxError::Prepare(format!("{}: {e}", path.display())))
}

impl Prepared {
    pub fn new(spec: &SandboxSpec) -> Result<Prepared, SandboxError> {
        let support = support::probe();
        if let Some(why) = support.missing() {
            return Err(SandboxError::Unavailable(why));
        }
        let namespaces = support.namespaces;
        let prep = |e: landlock::RulesetError| SandboxError::Prepare(e.to_string());
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(TARGET)).map_err(prep)?;
        if !spec.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(TARGET)).map_err(prep)?;
        }
        let mut rs = ruleset.scope(Scope::from_all(TARGET)).map_err(prep)?.create().map_err(prep)?;
        let mut read = Vec::new();
        for p in &spec.read {
            paths::around(p, &spec.hidden, &mut read);
        }
        for p in &read {
            rs = add(rs, p, AccessFs::from_read(TARGET))?;
        }
        for d in paths::DEVICES {
            rs = add(rs, Path::new(d), AccessFs::from_all(TARGET))?;
        }
        // With namespaces the protected paths are remounted read-only, so the writable roots are
        // granted whole; without, the rules are built around them.
        let mut write = Vec::new();
        let holes: Vec<PathBuf> = if namespaces {
            spec.hidden.clone()
        } else {
            spec.hidden.iter().chain(&spec.protected).cloned().collect()
        };
        for p in &spec.write {
            paths::around(p, &holes, &mut write);
        }
        for p in &write {
            rs = add(rs, p, AccessFs::from_all(TARGET))?;
        }
        if !namespaces {
            // Still readable.
            for p in &spec.protected {
                rs = add(rs, p, AccessFs::from_read(TARGET))?;
            }
        }
        let fd: Option<OwnedFd> = rs.into();
        let ruleset = fd.ok_or_else(|| SandboxError::Unavailable("Landlock refused the ruleset".into()))?;
        let filter = if support.seccomp {
            Some(seccomp::program(spec.network).map_err(SandboxError::Prepare)?)
        } else {
            None
        };
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut read_only = Vec::new();
        if namespaces {
            for p in &spec.protected {
                let c = cstring(p)?;
                let flags = locked_flags(&c);
                read_only.push((c, flags));
            }
        }
        Ok(Prepared {
            ruleset,
            filter,
            namespaces,
            network: spec.network,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            read_only,
        })
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Writes `data` to the file at `path` (async-signal-safe: open, write, close).
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: plain system calls on a valid C string and a borrowed buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n < 0 || n as usize != data.len() {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs in the child after fork: system calls only, no allocation.
fn enter(p: &Prepared) -> io::Result<()> {
    // SAFETY: every call below is a raw system call on memory `p` owns for the whole spawn.
    unsafe {
        check(libc::setsid())?;
        if p.namespaces {
            let net = if p.network { 0 } else { libc::CLONE_NEWNET };
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | net))?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &p.uid_map)?;
            write_file(c"/proc/self/gid_map", &p.gid_map)?;
            let none = std::ptr::null::<libc::c_char>();
            check(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_SLAVE, std::ptr::null()))?;
            for (path, flags) in &p.read_only {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags;
                check(libc::mount(none, path.as_ptr(), none, ro, std::ptr::null()))?;
            }
        }
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        let r = libc::syscall(libc::SYS_landlock_restrict_self, p.ruleset.as_raw_fd(), 0u32);
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(f) = &p.filter {
            let prog = libc::sock_fprog {
                len: u16::try_from(f.len()).unwrap_or(u16::MAX),
                filter: f.as_ptr() as *mut libc::sock_filter,
            };
            check(libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ))?;
        }
    }
    Ok(())
}

/// The closure to run between fork and exec. It must only be given to `pre_exec`: `enter`
/// makes only async-signal-safe system calls and allocates nothing, and the prepared data
/// lives in the Arc the closure owns.
pub fn hook(sandbox: Arc<super::Sandbox>) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    move || enter(&sandbox.inner)
}
