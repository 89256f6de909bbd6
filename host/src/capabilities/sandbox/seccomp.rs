//! The seccomp filter of a sandboxed process: no sockets of any family when the network is off
//! (Landlock only sees TCP), no io_uring (its socket and file operations bypass seccomp), and no
//! typing into a terminal (TIOCSTI, TIOCLINUX). Other architectures' system calls kill it.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};
use std::collections::BTreeMap;

fn ioctl_is(request: u64) -> Result<SeccompRule, seccompiler::BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)?])
}

/// The filter for a process that may (`network`) or may not open sockets.
pub fn program(network: bool) -> Result<BpfProgram, String> {
    let fail = |e: &dyn std::fmt::Display| format!("seccomp filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| fail(&e))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if !network {
        // An empty rule list matches every call.
        rules.insert(libc::SYS_socket, Vec::new());
    }
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    let tiocsti = ioctl_is(libc::TIOCSTI).map_err(|e| fail(&e))?;
    let tioclinux = ioctl_is(libc::TIOCLINUX).map_err(|e| fail(&e))?;
    rules.insert(libc::SYS_ioctl, vec![tiocsti, tioclinux]);
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
            .map_err(|e| fail(&e))?;
    filter.try_into().map_err(|e: seccompiler::BackendError| fail(&e))
}
