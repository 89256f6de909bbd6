//! Which paths a sandboxed process reads and writes by default: the system and toolchain folders,
//! the person's secrets held back, the protected paths found in the writable roots, and how a
//! folder is granted "around" paths that must stay out (Landlock can only allow).

use std::path::{Path, PathBuf};

/// System folders every program needs to read (those that exist are used).
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/etc",
    "/nix/store",
    "/snap",
    "/proc",
    "/sys",
    "/run/systemd/resolve",
];
/// Device files programs read and write.
pub const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/// Files under the system folders that hold secrets (read by root only, but corral may run as root).
pub const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
];
/// Toolchain folders in the home folder, read (with their secrets held back, see [`HOME_SECRETS`]).
pub const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".pyenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".npm",
    "go/pkg/mod",
    ".cache/pip",
    ".m2/repository",
    ".gradle/caches",
];
/// The person's secrets under the home folder: never granted, even when a granted folder holds them.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/corral",
    ".cache/corral",
    ".local/state/corral",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".vault-token",
    ".terraform.d",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
];
/// Names that stay read-only wherever they are in a writable root (when they exist at start).
pub const PROTECTED_NAMES: &[&str] = &["corral.toml", ".corral"];
/// How many entries the walk for protected names looks at before it gives up (and refuses).
pub const WALK_LIMIT: usize = 200_000;

/// The default read paths: system folders, devices, toolchain homes (from `CARGO_HOME`,
/// `RUSTUP_HOME` and the home folder `home`).
pub fn default_read(home: Option<&Path>, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
    for var in ["CARGO_HOME", "RUSTUP_HOME"] {
        if let Some(v) = env(var).filter(|v| Path::new(v).is_absolute()) {
            out.push(PathBuf::from(v));
        }
    }
    if let Some(home) = home {
        out.extend(HOME_TOOLCHAINS.iter().map(|t| home.join(t)));
    }
    out
}

/// The secrets held back: the system's and those under `home`, plus `extra` (corral's own folders).
pub fn secrets(home: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_SECRETS.iter().map(PathBuf::from).collect();
    if let Some(home) = home {
        out.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
    }
    out.extend(extra.iter().cloned());
    out
}

/// Adds to `out` the rules that grant `path` except the `holes`: `path` itself when no hole
/// is at or under it, else each entry of it (recursively), leaving the holes out. Symbolic
/// links are never granted here (a rule would grant their target). The limit: an ancestor of a
/// hole is not itself granted, so entries created in it later are not covered.
pub fn around(path: &Path, holes: &[PathBuf], out: &mut Vec<PathBuf>) {
    if holes.iter().any(|h| path.starts_with(h)) {
        return;
    }
    if !holes.iter().any(|h| h.starts_with(path)) {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| !t.is_symlink()) {
            around(&e.path(), holes, out);
        }
    }
}

/// The protected paths that exist in `root` now: `.git` (when `git`), `corral.toml` and
/// `.corral` at any depth. Symbolic links are not followed; protected folders are not entered.
/// Errs when the tree is larger than [`WALK_LIMIT`] entries.
pub fn protected_in(root: &Path, git: bool) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return Err(format!(
                    "{} has more than {WALK_LIMIT} entries; the sandbox cannot list its protected paths",
                    root.display()
                ));
            }
            let name = e.file_name();
            let Ok(kind) = e.file_type() else { continue };
            if (git && name == ".git") || PROTECTED_NAMES.iter().any(|p| name == *p) {
                found.push(e.path());
            } else if kind.is_dir() {
                stack.push(e.path());
            }
        }
    }
    Ok(found)
}
