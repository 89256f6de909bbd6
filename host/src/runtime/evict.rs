//! Keeping the compiled-component cache within its size. Every compile of a plugin that is
//! not built in leaves an entry (`<sha256>-<engine key>-<layout>.cwasm`, its `.seal` and the
//! sidecars kept beside it): a plugin author's every rebuild, every plugin version, and the
//! entries of every corral build used before, tens of megabytes each for an interpreted guest.
//! After each compile, whole entries go until the rest fits [`KEEP`]: first those no corral of
//! this build can load (another engine key or layout, and their compiled-functions folders),
//! then the least recently used. An entry's last use is its newest file's modification time;
//! a load refreshes it on the seal (see [`mark_used`]), whose time no check depends on.
//! Entries used in the last [`RECENT`] are kept even past the size (another corral may be
//! storing or loading them), as are the entry just stored and this build's compiled functions
//! (bounded on their own, `functions.rs`). Best effort: what cannot be removed stays.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The entries kept in all (about thirty compiled CPython or JavaScript plugins).
pub const KEEP: u64 = 1 << 30;
/// Entries used this recently are never removed.
pub const RECENT: Duration = Duration::from_secs(600);
/// A load refreshes its entry's time of last use at most this often.
const REFRESH: Duration = Duration::from_secs(24 * 3600);

/// One entry (or another build's compiled-functions folder), removed whole.
#[derive(Debug)]
struct Group {
    /// Each file or folder with its bytes (a folder's files summed) and whether it is a
    /// folder, as the scan found them.
    parts: Vec<(PathBuf, u64, bool)>,
    bytes: u64,
    used: SystemTime,
    /// Of another build: this corral never loads it.
    foreign: bool,
}

/// Removes entries from the cache folder `dir` until at most `keep` bytes are left, as the
/// module says; `current` is the stem of the entry just stored (never removed), `this_build`
/// the `-<engine key>-<layout>` ending of this build's stems. Returns the bytes removed.
pub fn prune(dir: &Path, this_build: &str, current: &str, keep: u64, now: SystemTime) -> u64 {
    let (mut groups, kept) = scan(dir, this_build, current);
    let mut total: u64 = kept + groups.iter().map(|g| g.bytes).sum::<u64>();
    groups.sort_by_key(|g| (!g.foreign, g.used));
    let mut removed = 0;
    for g in groups {
        if total <= keep {
            break;
        }
        if now.duration_since(g.used).unwrap_or_default() < RECENT {
            continue;
        }
        // A group counts as gone only once all of it is: a file left keeps its bytes.
        let mut freed = 0;
        for (p, len, folder) in &g.parts {
            let gone = if *folder { std::fs::remove_dir_all(p) } else { std::fs::remove_file(p) };
            if gone.is_ok() {
                freed += len;
            }
        }
        total = total.saturating_sub(freed);
        removed += freed;
    }
    removed
}

/// The folder's entries and other builds' compiled-functions folders, grouped, and the bytes
/// of `current`'s files (counted, never removed). A name that is neither (a temporary file
/// being written, anything else) is left alone.
fn scan(dir: &Path, this_build: &str, current: &str) -> (Vec<Group>, u64) {
    let Ok(read) = std::fs::read_dir(dir) else { return (Vec::new(), 0) };
    let mut groups: HashMap<String, Group> = HashMap::new();
    let mut kept = 0;
    for e in read.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(meta) = e.metadata() else { continue };
        let path = e.path();
        let stem = if meta.is_dir() {
            match name.strip_prefix("functions-") {
                Some(key) if is_hex(key) && !this_build.starts_with(&format!("-{key}-")) => name,
                _ => continue,
            }
        } else {
            match name.split_once('.') {
                Some((stem, ext))
                    if is_entry_stem(stem) && !ext.contains(".tmp") && !ext.starts_with("tmp") =>
                {
                    stem
                }
                _ => continue,
            }
        };
        if stem == current {
            kept += meta.len();
            continue;
        }
        let (bytes, used) = if meta.is_dir() { folder(&path) } else { (meta.len(), meta.modified().ok()) };
        let g = groups.entry(stem.to_string()).or_insert_with(|| Group {
            parts: Vec::new(),
            bytes: 0,
            used: SystemTime::UNIX_EPOCH,
            foreign: meta.is_dir() || !stem.ends_with(this_build),
        });
        g.bytes += bytes;
        g.used = g.used.max(used.or_else(|| meta.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH));
        g.parts.push((path, bytes, meta.is_dir()));
    }
    (groups.into_values().collect(), kept)
}

/// `<64 hex>-<hex>-<layout>`: the stem of an entry's files.
fn is_entry_stem(stem: &str) -> bool {
    let mut parts = stem.splitn(3, '-');
    let (Some(sha), Some(key), Some(layout)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    sha.len() == 64 && is_hex(sha) && is_hex(key) && !layout.is_empty()
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A folder's files' lengths summed and the newest of their modification times (None when it
/// has none: the caller takes the folder's own), from one listing.
fn folder(dir: &Path) -> (u64, Option<SystemTime>) {
    let files = std::fs::read_dir(dir).into_iter().flatten().flatten().filter_map(|e| e.metadata().ok());
    files
        .filter(|m| m.is_file())
        .fold((0, None), |(bytes, newest), m| (bytes + m.len(), newest.max(m.modified().ok())))
}

/// Records that the entry whose seal is `seal` was just used, by setting the seal's
/// modification time to now when it is older than [`REFRESH`] (one write a day at most). The
/// seal's checks cover the entry's times, not the seal's own.
pub fn mark_used(seal: &Path, now: SystemTime) {
    let Ok(meta) = std::fs::metadata(seal) else { return };
    let stale = meta.modified().ok().is_none_or(|t| now.duration_since(t).unwrap_or_default() >= REFRESH);
    if stale && let Ok(f) = std::fs::File::options().write(true).open(seal) {
        let _ = f.set_modified(now);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;

    const BUILD: &str = "-00000000000000aa-v3";
    const DAY: Duration = Duration::from_secs(24 * 3600);

    fn stem(n: u8, build: &str) -> String {
        format!("{}{build}", format!("{n:02x}").repeat(32))
    }

    /// An entry of `bytes` (its .cwasm) with a seal and a described sidecar, last used
    /// `age` ago.
    fn entry(dir: &Path, stem: &str, bytes: u64, age: Duration) {
        for (ext, len) in [("cwasm", bytes), ("seal", 10), ("describe.json", 20)] {
            let p = dir.join(format!("{stem}.{ext}"));
            let f = std::fs::File::create(&p).unwrap();
            f.set_len(len).unwrap(); // sparse: sizes without the disk
            f.set_modified(SystemTime::now() - age).unwrap();
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }

    fn has(dir: &Path, stem: &str) -> bool {
        ["cwasm", "seal", "describe.json"].iter().all(|x| dir.join(format!("{stem}.{x}")).exists())
    }

    fn gone(dir: &Path, stem: &str) -> bool {
        names(dir).iter().all(|n| !n.starts_with(stem))
    }

    #[test]
    fn the_least_recently_used_entries_go_whole_until_the_rest_fits() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let (old, mid, new, current) = (stem(1, BUILD), stem(2, BUILD), stem(3, BUILD), stem(4, BUILD));
        entry(d, &old, 400, 30 * DAY);
        entry(d, &mid, 400, 20 * DAY);
        entry(d, &new, 400, 10 * DAY);
        entry(d, &current, 400, 40 * DAY);
        let removed = prune(d, BUILD, &current, 900, SystemTime::now());
        assert!(gone(d, &old) && gone(d, &mid), "{:?}", names(d));
        assert!(has(d, &new), "the most recently used entry stays: {:?}", names(d));
        assert!(has(d, &current), "the entry just stored is never removed, however old");
        assert_eq!(removed, 2 * 430);
    }

    #[test]
    fn nothing_goes_while_the_cache_fits() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        entry(d, &stem(1, BUILD), 400, 300 * DAY);
        entry(d, &stem(2, "-00000000000000bb-v3"), 400, 300 * DAY);
        assert_eq!(prune(d, BUILD, &stem(9, BUILD), 1000, SystemTime::now()), 0);
        assert_eq!(names(d).len(), 6);
    }

    #[test]
    fn other_builds_entries_and_compiled_functions_go_before_any_of_this_build() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let (ours, theirs, layout) =
            (stem(1, BUILD), stem(2, "-00000000000000bb-v3"), stem(3, "-00000000000000aa-v2"));
        entry(d, &ours, 400, 300 * DAY);
        entry(d, &theirs, 400, 2 * DAY);
        entry(d, &layout, 400, 2 * DAY);
        let (their_fns, our_fns) =
            (d.join("functions-00000000000000bb"), d.join("functions-00000000000000aa"));
        for f in [&their_fns, &our_fns] {
            std::fs::create_dir(f).unwrap();
            let pack = std::fs::File::create(f.join("x.pack")).unwrap();
            pack.set_len(300).unwrap();
            pack.set_modified(SystemTime::now() - 5 * DAY).unwrap();
        }
        prune(d, BUILD, &stem(9, BUILD), 800, SystemTime::now());
        assert!(gone(d, &theirs) && gone(d, &layout), "{:?}", names(d));
        assert!(!their_fns.exists(), "another build's compiled functions are removed");
        assert!(has(d, &ours), "this build's entry stays once the rest fits: {:?}", names(d));
        assert!(our_fns.join("x.pack").exists(), "this build's functions are bounded on their own");
    }

    #[test]
    fn recently_used_entries_and_other_files_are_left_even_past_the_size() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let fresh = stem(1, BUILD);
        entry(d, &fresh, 4000, Duration::from_secs(60));
        let tmp = d.join(format!("{}.cwasm.tmp123-0", stem(2, BUILD)));
        std::fs::File::create(&tmp).unwrap().set_len(4000).unwrap();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let folder = d.join("functions-backup");
        std::fs::create_dir(&folder).unwrap();
        let kept = std::fs::File::create(folder.join("x.pack")).unwrap();
        kept.set_len(4000).unwrap();
        kept.set_modified(SystemTime::now() - 9 * DAY).unwrap();
        assert_eq!(prune(d, BUILD, &stem(9, BUILD), 10, SystemTime::now()), 0);
        assert!(has(d, &fresh), "another corral may be using it");
        assert!(tmp.exists() && d.join("notes.txt").exists(), "{:?}", names(d));
        assert!(folder.join("x.pack").exists(), "not a compiled-functions folder of corral's");
    }

    #[test]
    fn a_load_refreshes_the_seals_time_at_most_once_a_day() {
        let t = tempfile::tempdir().unwrap();
        let seal = t.path().join("e.seal");
        std::fs::write(&seal, "tag x\n").unwrap();
        let now = SystemTime::now();
        let set = |age: Duration| {
            std::fs::File::options().write(true).open(&seal).unwrap().set_modified(now - age).unwrap()
        };
        let modified = || std::fs::metadata(&seal).unwrap().modified().unwrap();
        set(2 * DAY);
        mark_used(&seal, now);
        assert_eq!(modified(), now, "a stale time is refreshed");
        set(Duration::from_secs(3600));
        mark_used(&seal, now);
        assert_eq!(modified(), now - Duration::from_secs(3600), "a time within the day is left");
        assert_eq!(std::fs::read_to_string(&seal).unwrap(), "tag x\n", "the seal's content is untouched");
    }
}
