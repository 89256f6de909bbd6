//! Stand-ins for the host in native unit tests of tool logic. [`FakeWorkspace`] keeps the
//! real host's file contract (roots, read guard, protected `.corral/` and `corral.toml`,
//! trash) with std::fs on a test directory; it does not model symlink confinement (the
//! host's own tests and corral's end-to-end suite cover that). [`FakeState`] keeps kv
//! values and sections in memory with the host's section rules; [`FakeAsker`] answers
//! questions from a script.

use super::{Asker, FsError, FsErrorCode, Root, State, TrashInfo, Workspace, WriteInfo};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// An in-process workspace rooted at a real directory.
pub struct FakeWorkspace {
    root: PathBuf,
    read: RefCell<HashSet<PathBuf>>,
    /// Whether the read-before-write guard is on (it is by default).
    pub read_guard: bool,
    trashed: Cell<u32>,
}

impl FakeWorkspace {
    /// A workspace whose only root is `root` (made absolute).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        FakeWorkspace { root, read: RefCell::new(HashSet::new()), read_guard: true, trashed: Cell::new(0) }
    }

    /// Whether `path` has been noted as read or written.
    pub fn was_read(&self, path: &Path) -> bool {
        self.read.borrow().contains(&self.abs(path))
    }

    fn abs(&self, path: &Path) -> PathBuf {
        let p = if path.is_absolute() { path.to_path_buf() } else { self.root.join(path) };
        crate::paths::normalize(&p)
    }

    fn check(&self, path: &Path) -> Result<PathBuf, FsError> {
        let abs = self.abs(path);
        let rel = abs.strip_prefix(&self.root).map_err(|_| FsError {
            code: FsErrorCode::OutsideRoots,
            message: format!("'{}' is outside the workspace", path.display()),
        })?;
        let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().to_lowercase());
        if first.as_deref() == Some(".corral") || rel == Path::new("corral.toml") {
            return Err(FsError {
                code: FsErrorCode::Protected,
                message: format!("'{}' is one of corral's own files", rel.display()),
            });
        }
        Ok(abs)
    }

    fn guard(&self, abs: &Path) -> Result<bool, FsError> {
        let existed = abs.symlink_metadata().is_ok();
        if existed && self.read_guard && !self.read.borrow().contains(abs) {
            return Err(FsError {
                code: FsErrorCode::NotRead,
                message: format!("'{}' exists and has not been read in this session", abs.display()),
            });
        }
        Ok(existed)
    }

    fn rel(&self, abs: &Path) -> String {
        abs.strip_prefix(&self.root).unwrap_or(abs).to_string_lossy().into_owned()
    }
}

fn io(e: std::io::Error) -> FsError {
    FsError { code: FsErrorCode::Io, message: e.to_string() }
}

impl Workspace for FakeWorkspace {
    fn roots(&self) -> Vec<Root> {
        vec![Root { path: self.root.clone(), writable: true }]
    }

    fn note_read(&self, path: &Path) {
        self.read.borrow_mut().insert(self.abs(path));
    }

    fn write(&self, path: &Path, contents: &[u8]) -> Result<WriteInfo, FsError> {
        let abs = self.check(path)?;
        if abs.is_dir() {
            return Err(FsError {
                code: FsErrorCode::IsDirectory,
                message: format!("'{}' is a directory", self.rel(&abs)),
            });
        }
        let existed = self.guard(&abs)?;
        if let Some(parent) = abs.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&abs, contents).map_err(io)?;
        self.read.borrow_mut().insert(abs.clone());
        Ok(WriteInfo { path: self.rel(&abs), bytes: contents.len() as u64, existed })
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<WriteInfo, FsError> {
        let src = self.check(from)?;
        let dst = self.check(to)?;
        let meta = src.symlink_metadata().map_err(|_| FsError {
            code: FsErrorCode::NotFound,
            message: format!("'{}' does not exist", self.rel(&src)),
        })?;
        let existed = self.guard(&dst)?;
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::rename(&src, &dst).map_err(io)?;
        self.read.borrow_mut().insert(dst.clone());
        Ok(WriteInfo { path: self.rel(&dst), bytes: meta.len(), existed })
    }

    fn trash(&self, path: &Path) -> Result<TrashInfo, FsError> {
        let abs = self.check(path)?;
        let meta = abs.symlink_metadata().map_err(|_| FsError {
            code: FsErrorCode::NotFound,
            message: format!("'{}' does not exist", self.rel(&abs)),
        })?;
        if meta.is_dir() {
            return Err(FsError {
                code: FsErrorCode::IsDirectory,
                message: format!("'{}' is a directory", self.rel(&abs)),
            });
        }
        if !meta.file_type().is_symlink() {
            self.guard(&abs)?;
        }
        let n = self.trashed.get() + 1;
        self.trashed.set(n);
        let id = format!("fake{n:04}");
        let dir = self.root.join(".corral/trash").join(&id);
        std::fs::create_dir_all(&dir).map_err(io)?;
        let name = abs.file_name().map(|n| n.to_owned()).unwrap_or_default();
        std::fs::rename(&abs, dir.join(name)).map_err(io)?;
        Ok(TrashInfo { id: id.clone(), location: format!(".corral/trash/{id}") })
    }
}

/// In-memory session state: kv values and context sections, checked like the host does.
#[derive(Debug, Default)]
pub struct FakeState {
    kv: RefCell<BTreeMap<String, String>>,
    sections: RefCell<BTreeMap<String, String>>,
    /// When set, `set` fails with this message (as the host does over its size limit).
    pub fail_set: RefCell<Option<String>>,
    /// Every `set_section` call, in order, with its name and body.
    pub section_log: RefCell<Vec<(String, String)>>,
}

impl FakeState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every section that is set, in name order.
    pub fn sections(&self) -> BTreeMap<String, String> {
        self.sections.borrow().clone()
    }

    /// Every kv key, sorted.
    pub fn keys(&self) -> Vec<String> {
        self.kv.borrow().keys().cloned().collect()
    }
}

impl State for FakeState {
    fn get(&self, key: &str) -> Option<String> {
        self.kv.borrow().get(key).cloned()
    }
    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        if let Some(msg) = self.fail_set.borrow().as_ref() {
            return Err(msg.clone());
        }
        self.kv.borrow_mut().insert(key.to_string(), value.to_string());
        Ok(())
    }
    fn delete(&self, key: &str) {
        self.kv.borrow_mut().remove(key);
    }
    fn set_section(&self, name: &str, body: &str) -> Result<(), String> {
        super::context::check_section(name, body)?;
        self.section_log.borrow_mut().push((name.to_string(), body.to_string()));
        if body.trim().is_empty() {
            self.sections.borrow_mut().remove(name);
        } else {
            self.sections.borrow_mut().insert(name.to_string(), body.to_string());
        }
        Ok(())
    }
    fn section(&self, name: &str) -> Option<String> {
        self.sections.borrow().get(name).cloned()
    }
}

/// A scripted person: gives one fixed reply (an answer or the host's refusal) and records
/// every question it was asked with its choices.
#[derive(Debug)]
pub struct FakeAsker {
    reply: Result<String, String>,
    /// The questions asked so far, with their choices.
    pub asked: RefCell<Vec<(String, Vec<String>)>>,
}

impl FakeAsker {
    /// Someone who always answers `answer`.
    pub fn answering(answer: &str) -> Self {
        FakeAsker { reply: Ok(answer.to_string()), asked: RefCell::new(Vec::new()) }
    }

    /// Nobody there: every question fails with `message`.
    pub fn nobody(message: &str) -> Self {
        FakeAsker { reply: Err(message.to_string()), asked: RefCell::new(Vec::new()) }
    }
}

impl Asker for FakeAsker {
    fn ask(&self, question: &str, choices: &[String]) -> Result<String, String> {
        self.asked.borrow_mut().push((question.to_string(), choices.to_vec()));
        self.reply.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_state_follows_the_section_rules() {
        let s = FakeState::new();
        assert!(s.set_section("Bad Name", "x").unwrap_err().contains("invalid section name"));
        s.set_section("todo", "- [ ] a").unwrap();
        assert_eq!(s.section("todo").as_deref(), Some("- [ ] a"));
        s.set_section("todo", "").unwrap();
        assert_eq!(s.section("todo"), None);
        let big = "x".repeat(super::super::context::MAX_SECTION_BYTES + 1);
        assert!(s.set_section("todo", &big).unwrap_err().contains("limit"));
        assert_eq!(s.section_log.borrow().len(), 2);
    }

    #[test]
    fn fake_state_kv_round_trip_and_failure() {
        let s = FakeState::new();
        super::super::save_json(&s, "k", &vec![1, 2]).unwrap();
        assert_eq!(super::super::load_json::<Vec<u32>>(&s, "k").unwrap(), Some(vec![1, 2]));
        assert_eq!(super::super::load_json::<Vec<u32>>(&s, "missing").unwrap(), None);
        s.set("bad", "{").unwrap();
        assert!(super::super::load_json::<Vec<u32>>(&s, "bad").unwrap_err().contains("'bad'"));
        *s.fail_set.borrow_mut() = Some("over the limit".into());
        assert_eq!(s.set("k", "v").unwrap_err(), "over the limit");
        s.delete("k");
        assert_eq!(s.keys(), vec!["bad".to_string()]);
    }

    #[test]
    fn fake_asker_records_questions() {
        let a = FakeAsker::answering("yes");
        assert_eq!(a.ask("ok?", &["yes".into(), "no".into()]).unwrap(), "yes");
        assert_eq!(a.asked.borrow()[0], ("ok?".to_string(), vec!["yes".to_string(), "no".to_string()]));
        assert_eq!(FakeAsker::nobody("no one").ask("q", &[]).unwrap_err(), "no one");
    }
}
