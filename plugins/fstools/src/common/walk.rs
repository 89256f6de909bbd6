//! The directory walk list_files and grep share, with ripgrep's ignore rules.
//!
//! Rules: `.gitignore`, `.ignore` and `.git/info/exclude` are honoured, including those
//! of the directories above the starting point and also outside a git repository; a
//! `.ignore` rule wins over a `.gitignore` rule, which wins over `.git/info/exclude`, and
//! within one kind the deepest directory's rule wins. The user's global git excludes are
//! not read. Hidden files are walked, `.git` never is. Symlinks are reported, never
//! followed. Entries a directory listing or the sandbox refuses are skipped silently, except
//! those whose names are not UTF-8: they are reported with the name escaped (Kind::Undecodable).
//! Within a directory, entries come in byte order of their names.
//!
//! Inside the sandbox the walk works on `wasi:filesystem` descriptors: each directory is
//! opened relative to its parent and ignore files are only opened when the listing shows
//! them, which saves several host calls per directory over std::fs. Directories are listed
//! through the built-ins' `listing` import, which types each entry from the listing itself
//! where `read-directory` makes a `stat` per entry.

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::{Path, PathBuf};

/// What a directory entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// FIFOs, sockets, devices and anything unknown.
    Other,
    /// An entry whose name is not UTF-8: its path holds the name escaped (`\xNN` for each
    /// bad byte), so it cannot be opened; it is reported, never entered or read.
    Undecodable,
}

/// One entry below the walk's root.
#[derive(Debug)]
pub struct Entry {
    pub path: PathBuf,
    /// 1 for the root's own entries.
    pub depth: usize,
    pub kind: Kind,
}

/// Whether the walk goes on after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Walks the tree under the directory `root` depth first, calling `visit` for every entry
/// that is not ignored (a directory before its contents), down to `max_depth` levels.
/// Returns false when `root` could not be opened as a directory.
pub fn walk(root: &Path, max_depth: Option<usize>, visit: &mut dyn FnMut(&Entry) -> Flow) -> bool {
    let Some(dir) = sys::Roots::new().open_dir(root) else { return false };
    let mut rules = ancestor_rules(root);
    let mut walker = Walker { max_depth: max_depth.unwrap_or(usize::MAX), visit };
    walker.dir(&dir, root, 1, &mut rules);
    true
}

/// A file's kind and modification time (nanoseconds since the epoch; 0 when unknown), with
/// symlinks followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: Kind,
    pub mtime: u128,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Stat {
        let t = meta.file_type();
        let kind = if t.is_file() {
            Kind::File
        } else if t.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        };
        Stat { kind, mtime: crate::common::mtime_key(meta) }
    }
}

/// The [`Stat`] of each of `paths` (or why it cannot be read), in order. Each path
/// is looked up by name in its directory, opened once for a run of paths that share it (as
/// a walk lists them): one host call per file, where a lookup by whole path costs the
/// sandbox three (it opens the path beneath its root, stats the descriptor, closes it). A
/// symlink is followed by its whole path, so the sandbox still judges where it leads.
pub fn stat_all(paths: &[PathBuf]) -> Vec<std::io::Result<Stat>> {
    let roots = sys::Roots::new();
    let mut out = Vec::with_capacity(paths.len());
    let mut current: Option<(&Path, Option<sys::Dir>)> = None;
    for path in paths {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
            out.push(Err(std::io::Error::from(std::io::ErrorKind::InvalidFilename)));
            continue;
        };
        if current.as_ref().is_none_or(|(open, _)| *open != parent) {
            current = Some((parent, roots.open_dir(parent)));
        }
        let dir = current.as_ref().and_then(|(_, d)| d.as_ref());
        let stat = match dir.map(|d| d.stat(name)) {
            Some(Ok(Some(stat))) => Ok(stat),
            Some(Err(e)) => Err(e),
            // A symlink, or a directory that could not be opened: by whole path.
            Some(Ok(None)) | None => std::fs::metadata(path).map(|m| Stat::of(&m)),
        };
        out.push(stat);
    }
    out
}

/// The ignore rules a directory adds.
struct Rules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl Rules {
    fn is_empty(&self) -> bool {
        self.ignore.is_none() && self.gitignore.is_none() && self.exclude.is_none()
    }
}

/// Whether the rules in `stack` (outermost first) ignore `path`.
fn ignored(stack: &[Rules], path: &Path, is_dir: bool) -> bool {
    let pick = |get: fn(&Rules) -> Option<&Gitignore>| {
        stack
            .iter()
            .rev()
            .filter_map(get)
            .map(|g| g.matched(path, is_dir))
            .find(|m| !m.is_none())
            .unwrap_or(Match::None)
    };
    let decision = pick(|r| r.ignore.as_ref());
    let decision = if decision.is_none() { pick(|r| r.gitignore.as_ref()) } else { decision };
    let decision = if decision.is_none() { pick(|r| r.exclude.as_ref()) } else { decision };
    decision.is_ignore()
}

/// Builds a matcher rooted at `dir` from ignore-file text.
fn matcher(dir: &Path, file: &Path, text: &[u8]) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let text = String::from_utf8_lossy(text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for line in text.lines() {
        // A malformed line is left out, as git does.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

/// The rules of the directories above `root` (outermost first) and of `root` itself is
/// left to the walk. Read through std::fs: a handful of calls, once.
fn ancestor_rules(root: &Path) -> Vec<Rules> {
    let mut stack: Vec<Rules> = Vec::new();
    let mut dir = root.parent();
    while let Some(d) = dir {
        let read = |name: &str| {
            let p = d.join(name);
            std::fs::read(&p).ok().and_then(|t| matcher(d, &p, &t))
        };
        let exclude = if std::fs::symlink_metadata(d.join(".git")).is_ok_and(|m| m.is_dir()) {
            read(".git/info/exclude")
        } else {
            None
        };
        let rules = Rules { ignore: read(".ignore"), gitignore: read(".gitignore"), exclude };
        if !rules.is_empty() {
            stack.push(rules);
        }
        dir = d.parent();
    }
    stack.reverse();
    stack
}

struct Walker<'v> {
    max_depth: usize,
    visit: &'v mut dyn FnMut(&Entry) -> Flow,
}

impl Walker<'_> {
    /// Walks the contents of `dir` (at `path`), whose entries are at `depth`. Returns
    /// false when the walk is to stop.
    fn dir(&mut self, dir: &sys::Dir, path: &Path, depth: usize, stack: &mut Vec<Rules>) -> bool {
        if depth > self.max_depth {
            return true;
        }
        let mut entries = dir.entries();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let has = |name: &str| entries.iter().any(|(n, _)| n == name);
        let read = |name: &str| {
            let text = dir.read_file(name)?;
            matcher(path, &path.join(name), &text)
        };
        let exclude = if entries.iter().any(|(n, k)| n == ".git" && *k == Kind::Dir) {
            dir.open_dir(".git")
                .and_then(|git| git.open_dir("info"))
                .and_then(|info| info.read_file("exclude"))
                .and_then(|text| matcher(path, &path.join(".git/info/exclude"), &text))
        } else {
            None
        };
        let rules = Rules {
            ignore: if has(".ignore") { read(".ignore") } else { None },
            gitignore: if has(".gitignore") { read(".gitignore") } else { None },
            exclude,
        };
        let pushed = !rules.is_empty();
        if pushed {
            stack.push(rules);
        }
        let mut go_on = true;
        for (name, kind) in entries {
            if name == ".git" {
                continue;
            }
            let child = path.join(&name);
            if ignored(stack, &child, kind == Kind::Dir) {
                continue;
            }
            let entry = Entry { path: child, depth, kind };
            if (self.visit)(&entry) == Flow::Stop {
                go_on = false;
                break;
            }
            if kind == Kind::Dir
                && depth < self.max_depth
                && let Some(sub) = dir.open_dir(&name)
                && !self.dir(&sub, &entry.path, depth + 1, stack)
            {
                go_on = false;
                break;
            }
        }
        if pushed {
            stack.pop();
        }
        go_on
    }
}

#[cfg(target_os = "wasi")]
mod sys {
    //! Directories as `wasi:filesystem` descriptors.
    use super::{Kind, Stat};
    use crate::builtin::corral::builtin::listing;
    use crate::common::fileio::sys::Preopens;
    use std::path::Path;
    use wasip2::filesystem::types::{Descriptor, DescriptorFlags, DescriptorType, OpenFlags, PathFlags};

    /// Where directories are opened from: the preopens.
    pub struct Roots(Preopens);

    impl Roots {
        pub fn new() -> Self {
            Roots(Preopens::new())
        }

        /// Opens the directory at absolute `path` through the innermost preopen holding it.
        pub fn open_dir(&self, path: &Path) -> Option<Dir> {
            let (dir, rel) = self.0.locate(path)?;
            dir.open_at(PathFlags::SYMLINK_FOLLOW, rel, OpenFlags::DIRECTORY, DescriptorFlags::READ)
                .ok()
                .map(Dir)
        }
    }

    pub struct Dir(Descriptor);

    impl Dir {
        /// The entries (name and kind) of this directory, empty when it cannot be listed; a
        /// name that is not UTF-8 comes escaped, as [`Kind::Undecodable`].
        pub fn entries(&self) -> Vec<(String, Kind)> {
            let Ok(list) = listing::entries(&self.0) else { return Vec::new() };
            let kind = |e: &listing::Entry| match e.kind {
                _ if e.undecodable => Kind::Undecodable,
                DescriptorType::RegularFile => Kind::File,
                DescriptorType::Directory => Kind::Dir,
                DescriptorType::SymbolicLink => Kind::Symlink,
                _ => Kind::Other,
            };
            list.into_iter()
                .map(|e| {
                    let k = kind(&e);
                    (e.name, k)
                })
                .collect()
        }

        /// The subdirectory `name` (not through a symlink).
        pub fn open_dir(&self, name: &str) -> Option<Dir> {
            self.0
                .open_at(PathFlags::empty(), name, OpenFlags::DIRECTORY, DescriptorFlags::READ)
                .ok()
                .map(Dir)
        }

        /// The entry `name`, not followed (None for a symlink).
        pub fn stat(&self, name: &str) -> std::io::Result<Option<Stat>> {
            use crate::common::fileio::sys::{mtime, to_io};
            let stat = self.0.stat_at(PathFlags::empty(), name).map_err(to_io)?;
            let kind = match stat.type_ {
                DescriptorType::SymbolicLink => return Ok(None),
                DescriptorType::RegularFile => Kind::File,
                DescriptorType::Directory => Kind::Dir,
                _ => Kind::Other,
            };
            Ok(Some(Stat { kind, mtime: mtime(&stat) }))
        }

        /// The contents of the small file `name` (ignore files; at most 1 MB is read).
        pub fn read_file(&self, name: &str) -> Option<Vec<u8>> {
            let file =
                self.0.open_at(PathFlags::empty(), name, OpenFlags::empty(), DescriptorFlags::READ).ok()?;
            let mut out = Vec::new();
            while out.len() < 1 << 20 {
                let (chunk, eof) = file.read(64 * 1024, out.len() as u64).ok()?;
                if chunk.is_empty() {
                    break;
                }
                out.extend_from_slice(&chunk);
                if eof {
                    break;
                }
            }
            Some(out)
        }
    }
}

#[cfg(not(target_os = "wasi"))]
mod sys {
    //! Directories as paths, through std::fs.
    use super::{Kind, Stat};
    use std::path::{Path, PathBuf};

    /// Where directories are opened from: anywhere, by path.
    pub struct Roots;

    impl Roots {
        pub fn new() -> Self {
            Roots
        }

        pub fn open_dir(&self, path: &Path) -> Option<Dir> {
            std::fs::metadata(path).ok().filter(|m| m.is_dir()).map(|_| Dir(path.to_path_buf()))
        }
    }

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn entries(&self) -> Vec<(String, Kind)> {
            let Ok(reader) = std::fs::read_dir(&self.0) else { return Vec::new() };
            reader
                .filter_map(|e| {
                    let e = e.ok()?;
                    let t = e.file_type().ok()?;
                    let name = e.file_name();
                    if name.to_str().is_none() {
                        let escaped = corral_plugin_sdk::paths::escape_name(name.as_encoded_bytes());
                        return Some((escaped, Kind::Undecodable));
                    }
                    let kind = if t.is_symlink() {
                        Kind::Symlink
                    } else if t.is_dir() {
                        Kind::Dir
                    } else if t.is_file() {
                        Kind::File
                    } else {
                        Kind::Other
                    };
                    Some((name.into_string().ok()?, kind))
                })
                .collect()
        }

        pub fn open_dir(&self, name: &str) -> Option<Dir> {
            let p = self.0.join(name);
            std::fs::symlink_metadata(&p).ok().filter(|m| m.is_dir()).map(|_| Dir(p))
        }

        pub fn stat(&self, name: &str) -> std::io::Result<Option<Stat>> {
            let meta = std::fs::symlink_metadata(self.0.join(name))?;
            Ok((!meta.file_type().is_symlink()).then(|| Stat::of(&meta)))
        }

        pub fn read_file(&self, name: &str) -> Option<Vec<u8>> {
            use std::io::Read as _;
            let file = std::fs::File::open(self.0.join(name)).ok()?;
            let mut out = Vec::new();
            file.take(1 << 20).read_to_end(&mut out).ok()?;
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(root: &Path, max_depth: Option<usize>) -> Vec<String> {
        let mut out = Vec::new();
        walk(root, max_depth, &mut |e| {
            let mut s = e.path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if e.kind == Kind::Dir {
                s.push('/');
            }
            out.push(s);
            Flow::Continue
        });
        out
    }

    #[test]
    fn names_that_are_not_utf8_are_reported_escaped_and_never_entered() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"bad\xffname.txt");
        fs::write(t.path().join(bad), "x").unwrap();
        fs::create_dir(t.path().join(std::ffi::OsStr::from_bytes(b"dir\xfe"))).unwrap();
        fs::write(t.path().join("a.txt"), "x").unwrap();
        let mut seen = Vec::new();
        walk(t.path(), None, &mut |e| {
            seen.push((e.path.strip_prefix(t.path()).unwrap().to_string_lossy().into_owned(), e.kind));
            Flow::Continue
        });
        assert_eq!(
            seen,
            [
                ("a.txt".to_string(), Kind::File),
                ("bad\\xffname.txt".to_string(), Kind::Undecodable),
                ("dir\\xfe".to_string(), Kind::Undecodable),
            ]
        );
    }

    /// What ignore's WalkBuilder (ripgrep's walker) yields with the same settings.
    fn reference(root: &Path) -> Vec<String> {
        let mut builder = ignore::WalkBuilder::new(root);
        builder
            .hidden(false)
            .git_global(false)
            .require_git(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(|e| e.file_name() != ".git");
        builder
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| {
                let mut s = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
                if e.file_type().is_some_and(|t| t.is_dir()) {
                    s.push('/');
                }
                s
            })
            .collect()
    }

    #[test]
    fn agrees_with_the_ignore_crate_on_nested_rules() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, ".gitignore", "/target\n*.o\ndocs/*.md\n!docs/keep.md\nnode_modules/\n");
        put(r, "target/a", "");
        put(r, "src/target/b", "");
        put(r, "x.o", "");
        put(r, "src/y.o", "");
        put(r, "docs/a.md", "");
        put(r, "docs/keep.md", "");
        put(r, "docs/sub/c.md", "");
        put(r, "web/node_modules/p/index.js", "");
        put(r, "web/.ignore", "*.js\n!keep.js\n");
        put(r, "web/app.js", "");
        put(r, "web/keep.js", "");
        put(r, "web/app.ts", "");
        put(r, "a/.gitignore", "*\n!*.rs\n!*/\n");
        put(r, "a/b/c.rs", "");
        put(r, "a/b/c.txt", "");
        assert_eq!(names(r, None), reference(r));
        assert_eq!(names(&r.join("web"), None), reference(&r.join("web")));
        assert_eq!(names(&r.join("a/b"), None), reference(&r.join("a/b")));
    }

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn sorted_depth_first_without_git() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, "b/x.txt", "");
        put(r, "a.txt", "");
        put(r, ".git/HEAD", "");
        put(r, ".hidden/y", "");
        assert_eq!(names(r, None), [".hidden/", ".hidden/y", "a.txt", "b/", "b/x.txt"]);
        assert_eq!(names(r, Some(1)), [".hidden/", "a.txt", "b/"]);
    }

    #[test]
    fn ignore_files_and_their_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, ".gitignore", "*.log\nbuild/\n!keep.log\n");
        put(r, ".ignore", "secret.txt\n!special.log\n");
        put(r, ".git/info/exclude", "local.txt\nexcluded-but-kept.txt\n");
        put(r, "a.log", "");
        put(r, "keep.log", "");
        put(r, "special.log", "");
        put(r, "secret.txt", "");
        put(r, "local.txt", "");
        put(r, "build/out", "");
        put(r, "sub/.gitignore", "!b.log\n!excluded-but-kept.txt\n");
        put(r, "sub/b.log", "");
        put(r, "sub/c.log", "");
        put(r, "sub/excluded-but-kept.txt", "");
        let all = names(r, None);
        assert_eq!(
            all,
            [
                ".gitignore",
                ".ignore",
                "keep.log",
                "special.log",
                "sub/",
                "sub/.gitignore",
                "sub/b.log",
                "sub/excluded-but-kept.txt"
            ]
        );
        assert_eq!(all, reference(r), "the same as the ignore crate's own walker");
        // Rules from above the starting point apply too.
        assert_eq!(names(&r.join("sub"), None), [".gitignore", "b.log", "excluded-but-kept.txt"]);
        assert_eq!(names(&r.join("sub"), None), reference(&r.join("sub")));
        // Starting inside an ignored directory lists it.
        assert_eq!(names(&r.join("build"), None), ["out"]);
    }

    #[test]
    fn stop_ends_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for n in ["a/1", "a/2", "b/3"] {
            put(r, n, "");
        }
        let mut seen = 0;
        walk(r, None, &mut |_| {
            seen += 1;
            if seen == 2 { Flow::Stop } else { Flow::Continue }
        });
        assert_eq!(seen, 2);
        assert!(!walk(&r.join("a/1"), None, &mut |_| Flow::Continue), "a file is not a directory");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_reported_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, "real/f", "");
        std::os::unix::fs::symlink(r.join("real"), r.join("link")).unwrap();
        let mut kinds = Vec::new();
        walk(r, None, &mut |e| {
            kinds.push((e.path.strip_prefix(r).unwrap().to_string_lossy().into_owned(), e.kind));
            Flow::Continue
        });
        assert_eq!(
            kinds,
            [("link".into(), Kind::Symlink), ("real".into(), Kind::Dir), ("real/f".into(), Kind::File)]
        );
    }

    #[test]
    fn stat_all_follows_symlinks_and_keeps_the_order() {
        use crate::testutil::put;
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        put(root, "a/old.txt", "x", 1000);
        put(root, "a/new.txt", "x", 10);
        put(root, "b/mid.txt", "x", 500);
        std::os::unix::fs::symlink(root.join("a/old.txt"), root.join("b/to_old")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("b/dangling")).unwrap();
        let paths: Vec<PathBuf> =
            ["a/old.txt", "a/new.txt", "b/mid.txt", "b/to_old", "b/dangling", "b/missing", "a"]
                .iter()
                .map(|r| root.join(r))
                .collect();
        let stats: Vec<Option<Stat>> = stat_all(&paths).into_iter().map(Result::ok).collect();
        let mtime = |r: &str| crate::common::mtime_key(&fs::metadata(root.join(r)).unwrap());
        let file = |r: &str| Some(Stat { kind: Kind::File, mtime: mtime(r) });
        assert_eq!(
            stats,
            [
                file("a/old.txt"),
                file("a/new.txt"),
                file("b/mid.txt"),
                // The symlink's target, not the link.
                file("a/old.txt"),
                None,
                None,
                Some(Stat { kind: Kind::Dir, mtime: mtime("a") }),
            ]
        );
        assert!(mtime("a/new.txt") > mtime("b/mid.txt") && mtime("b/mid.txt") > mtime("a/old.txt"));
    }
}
