use super::paths::{around, protected_in};
use super::{Support, support::MIN_LANDLOCK_ABI};
use std::path::PathBuf;

#[test]
fn around_grants_everything_but_the_holes_and_never_links() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    for d in ["a/secret", "a/open", "b"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("a/file"), "x").unwrap();
    std::os::unix::fs::symlink("/etc", root.join("a/link")).unwrap();
    let mut out = Vec::new();
    around(&root, &[root.join("a/secret")], &mut out);
    out.sort();
    assert_eq!(out, vec![root.join("a/file"), root.join("a/open"), root.join("b")]);
    let mut out = Vec::new();
    around(&root, &[PathBuf::from("/elsewhere")], &mut out);
    assert_eq!(out, vec![root.clone()], "no hole under it: the folder itself");
    let mut out = Vec::new();
    around(&root.join("a/secret/x"), &[root.join("a/secret")], &mut out);
    assert!(out.is_empty(), "inside a hole: nothing");
}

#[test]
fn protected_paths_are_found_at_any_depth_without_entering_them() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    for d in [".git/hooks", "deep/er/.corral", "vendor/x/.git", "src"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("deep/corral.toml"), "").unwrap();
    std::fs::write(root.join("src/corral.toml.bak"), "").unwrap();
    let mut found = protected_in(&root, true).unwrap();
    found.sort();
    let want: Vec<PathBuf> = [".git", "deep/corral.toml", "deep/er/.corral", "vendor/x/.git"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    assert_eq!(found, want);
    let found = protected_in(&root, false).unwrap();
    assert_eq!(found.len(), 2, "with .git writes allowed only corral's own: {found:?}");
}

#[test]
fn missing_support_says_why() {
    let none = Support::default();
    let why = none.missing().unwrap();
    assert!(why.contains("Landlock") || why.contains("not Linux"), "{why}");
    let old = Support { landlock_abi: MIN_LANDLOCK_ABI - 1, namespaces: true, seccomp: true };
    if cfg!(target_os = "linux") {
        assert!(old.missing().unwrap().contains("needs 2 or later"), "{:?}", old.missing());
        let ok = Support { landlock_abi: 7, namespaces: false, seccomp: true };
        assert_eq!(ok.missing(), None);
        assert_eq!(ok.network_method(), "seccomp (no sockets) + Landlock TCP rules");
        let no_net = Support { landlock_abi: 3, namespaces: false, seccomp: false };
        assert!(no_net.missing().unwrap().contains("cut the network"));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_seccomp_program_builds_for_this_machine() {
    let off = super::seccomp::program(false).unwrap();
    let on = super::seccomp::program(true).unwrap();
    assert!(off.len() > on.len(), "network off adds the socket rule");
}
