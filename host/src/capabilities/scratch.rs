//! Scratch files for results too long to return whole (long command output, fetched
//! pages): written by the host under `.corral/out/`, paged with read_file, removed after
//! about ten minutes.

use super::state;
use cap_std::fs::Dir;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The folder, relative to the workspace root.
pub const OUT_DIR: &str = ".corral/out";
/// How long a scratch file is kept.
pub const KEEP: Duration = Duration::from_secs(600);
/// The largest scratch file, in bytes.
pub const MAX_BYTES: usize = 10 * 1024 * 1024;
/// The most all scratch files together may hold, in bytes: past it the oldest are removed.
pub const TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// Saves `contents` as `.corral/out/<kind>_<stamp>.txt` and returns that workspace path.
/// Old scratch files are removed first.
pub fn save(ws: &Dir, kind: &str, contents: &str) -> Result<String, String> {
    let kind_ok = !kind.is_empty()
        && kind.len() <= 32
        && kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !kind_ok {
        return Err(format!("invalid kind '{kind}': use 1 to 32 letters, digits, '_' or '-'"));
    }
    if contents.len() > MAX_BYTES {
        return Err(format!("{} bytes is over the {MAX_BYTES}-byte limit for saved output", contents.len()));
    }
    let _ = clean(ws, SystemTime::now());
    make_room(ws, contents.len() as u64, TOTAL_BYTES)
        .map_err(|e| format!("cannot make room for the output under {OUT_DIR}: {e}"))?;
    static N: AtomicU64 = AtomicU64::new(0);
    let stamp = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let name = format!("out/{kind}_{stamp}_{}_{}.txt", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    state::write(ws, &name, contents.as_bytes()).map_err(|e| format!("cannot save the output: {e}"))?;
    Ok(format!("{}/{name}", state::STATE_DIR))
}

/// Removes the oldest scratch files until `incoming` more bytes fit in `budget`; returns how
/// many went.
pub fn make_room(ws: &Dir, incoming: u64, budget: u64) -> io::Result<usize> {
    let dir = match ws.open_dir(OUT_DIR) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in dir.entries()? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_file() {
            let when = meta.modified().map(|m| m.into_std()).unwrap_or(SystemTime::UNIX_EPOCH);
            files.push((when, entry.file_name(), meta.len()));
        }
    }
    files.sort();
    let mut total: u64 = files.iter().map(|f| f.2).sum();
    let mut removed = 0;
    for (_, name, len) in files {
        if total + incoming <= budget {
            break;
        }
        dir.remove_file(&name)?;
        total -= len;
        removed += 1;
    }
    Ok(removed)
}

/// Removes scratch files older than [`KEEP`]; returns how many went.
pub fn clean(ws: &Dir, now: SystemTime) -> io::Result<usize> {
    remove_old(ws, OUT_DIR, now, |_| true)
}

/// Removes the files of `dir` (relative to the workspace root) older than [`KEEP`] at `now`
/// whose names pass `pick`; returns how many went. A missing `dir` is nothing to do.
pub fn remove_old(ws: &Dir, dir: &str, now: SystemTime, pick: impl Fn(&str) -> bool) -> io::Result<usize> {
    let dir = match ws.open_dir(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in dir.entries()? {
        let entry = entry?;
        if !pick(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let meta = entry.metadata()?;
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m.into_std()).ok())
            .is_some_and(|age| age > KEEP);
        if meta.is_file() && old {
            dir.remove_file(entry.file_name())?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    #[test]
    fn saves_and_cleans_up() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), ambient_authority()).unwrap();
        let p = save(&d, "cmd_output", "hello").unwrap();
        assert!(p.starts_with(".corral/out/cmd_output_"), "{p}");
        assert_eq!(std::fs::read_to_string(t.path().join(&p)).unwrap(), "hello");
        assert!(save(&d, "../x", "a").is_err());
        assert_eq!(clean(&d, SystemTime::now()).unwrap(), 0);
        assert_eq!(clean(&d, SystemTime::now() + KEEP + Duration::from_secs(1)).unwrap(), 1);
        assert!(!t.path().join(&p).exists());
    }

    #[test]
    fn the_oldest_files_go_when_the_total_budget_is_reached() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), ambient_authority()).unwrap();
        let out = t.path().join(OUT_DIR);
        std::fs::create_dir_all(&out).unwrap();
        let old = std::fs::File::create(out.join("a_old.txt")).unwrap();
        std::io::Write::write_all(&mut &old, &[b'a'; 600]).unwrap();
        old.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
        std::fs::write(out.join("b_new.txt"), [b'b'; 300]).unwrap();
        assert_eq!(make_room(&d, 100, 1000).unwrap(), 0, "it fits");
        assert_eq!(make_room(&d, 200, 1000).unwrap(), 1);
        assert!(!out.join("a_old.txt").exists() && out.join("b_new.txt").exists());
    }
}
