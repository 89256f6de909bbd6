//! What the kernel lets the command sandbox enforce here (Landlock ABI, namespaces, seccomp),
//! probed once per run; `corral doctor` prints it and start-up decides from it.

use std::sync::OnceLock;

/// The lowest Landlock ABI the sandbox relies on (2: renames and links across folders are
/// checked; 1 would let a file be linked out of a protected folder).
pub const MIN_LANDLOCK_ABI: i32 = 2;

/// What this machine supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Support {
    /// The Landlock ABI version, 0 when Landlock is missing or disabled.
    pub landlock_abi: i32,
    /// Whether an unprivileged user namespace with mount and network namespaces can be made.
    pub namespaces: bool,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
}

impl Support {
    /// Why commands cannot be confined here, or `None` when they can.
    pub fn missing(&self) -> Option<String> {
        if !cfg!(target_os = "linux") {
            return Some("not Linux: the macOS sandbox is designed but not built".into());
        }
        if self.landlock_abi == 0 {
            return Some("the kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list)".into());
        }
        if self.landlock_abi < MIN_LANDLOCK_ABI {
            return Some(format!(
                "the kernel's Landlock ABI is {}, the sandbox needs {MIN_LANDLOCK_ABI} or later (Linux 5.19+)",
                self.landlock_abi
            ));
        }
        if !self.namespaces && !self.seccomp {
            return Some("neither a network namespace nor seccomp is available to cut the network".into());
        }
        None
    }

    /// How the network is cut when it is off.
    pub fn network_method(&self) -> &'static str {
        match (self.namespaces, self.seccomp, self.landlock_abi >= 4) {
            (true, true, _) => "network namespace (no interfaces) + seccomp (no sockets)",
            (true, false, _) => "network namespace (no interfaces)",
            (false, true, true) => "seccomp (no sockets) + Landlock TCP rules",
            (false, true, false) => "seccomp (no sockets)",
            (false, false, true) => "Landlock TCP rules only (UDP is not blocked)",
            (false, false, false) => "none",
        }
    }
}

/// Probes the kernel once and remembers the answer.
pub fn probe() -> Support {
    static CACHED: OnceLock<Support> = OnceLock::new();
    *CACHED.get_or_init(probe_now)
}

#[cfg(target_os = "linux")]
fn probe_now() -> Support {
    Support { landlock_abi: landlock_abi(), namespaces: namespaces(), seccomp: seccomp() }
}

#[cfg(not(target_os = "linux"))]
fn probe_now() -> Support {
    Support::default()
}

#[cfg(target_os = "linux")]
fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI version (or -1).
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

#[cfg(target_os = "linux")]
fn seccomp() -> bool {
    // SAFETY: PR_GET_SECCOMP reads the calling thread's seccomp mode; it fails with EINVAL
    // when the kernel has no seccomp.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Starts `true` in new user, mount and network namespaces: some systems forbid them to
/// unprivileged users (sysctls, AppArmor), and only trying tells.
#[cfg(target_os = "linux")]
fn namespaces() -> bool {
    use std::os::unix::process::CommandExt;
    let Some(prog) = ["/usr/bin/true", "/bin/true"].into_iter().find(|p| std::path::Path::new(p).exists())
    else {
        return false;
    };
    let mut cmd = std::process::Command::new(prog);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: unshare(2) is async-signal-safe; nothing else runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    cmd.status().is_ok_and(|s| s.success())
}
