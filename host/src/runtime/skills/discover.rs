//! Finding skills: `<workspace>/.corral/skills/`, `<user_dir>/skills/`, and the skills
//! shipped inside corral. In each folder a `*.wasm` file is a component skill and a
//! sub-folder holding `SKILL.md` is a folder skill. Shipped folders are unpacked once into
//! the cache directory, so that they can be preopened like any other folder.

use super::{Kind, Source};
use crate::builtins::{BuiltSkill, SHIPPED_FOLDERS, SHIPPED_SKILLS, ShippedFolder};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A skill found but not yet loaded.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub source: Source,
    pub kind: Kind,
    /// The component file, or the folder (its real path); None for a shipped component.
    pub path: Option<PathBuf>,
    /// Where it came from, as shown to people.
    pub location: String,
    /// A component's bytes (empty for folders).
    pub bytes: Cow<'static, [u8]>,
    /// A component's SHA-256 when known in advance (shipped components carry theirs).
    pub sha256: Option<&'static str>,
    /// A shipped skill's answer to `describe`, known since the build (for a folder, only while
    /// its unpacked `SKILL.md` is the one shipped).
    pub built: Option<&'static BuiltSkill>,
}

/// Where a project's skills are, relative to the workspace.
pub const PROJECT_SKILLS: &[&str] = &[".corral/skills", ".claude/skills"];

/// Every skill candidate: the trusted `project`'s (None: the project is not trusted, and its
/// skills are not read) from `.corral/skills/` and `.claude/skills/`, then the user's from
/// `<user_dir>/skills/` and `~/.claude/skills/`, then the shipped ones. Folders and files that
/// cannot be used are skipped with a warning.
pub fn discover(
    project: Option<&Path>,
    user_dir: Option<&Path>,
    unpack_base: &Path,
    warnings: &mut Vec<String>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(ws) = project {
        for rel in PROJECT_SKILLS {
            out.extend(scan_within(ws, &ws.join(rel), Source::Project, warnings));
        }
    }
    if let Some(dir) = user_dir {
        out.extend(scan(&dir.join("skills"), Source::User, warnings));
    }
    if let Some(home) = dirs::home_dir() {
        out.extend(scan(&home.join(".claude").join("skills"), Source::User, warnings));
    }
    out.extend(shipped(unpack_base, warnings));
    out
}

/// [`scan`] for a folder inside a workspace: a skill folder or file whose real path leaves
/// `ws` (through a link) is skipped, and component files are read without following links.
pub fn scan_within(ws: &Path, dir: &Path, source: Source, warnings: &mut Vec<String>) -> Vec<Candidate> {
    let Ok(ws_real) = std::fs::canonicalize(ws) else { return Vec::new() };
    let inside = |p: &Path| std::fs::canonicalize(p).is_ok_and(|r| r.starts_with(&ws_real));
    if !dir.exists() {
        return Vec::new();
    }
    if !inside(dir) {
        warnings.push(format!("skipping {}: it leads outside the workspace", dir.display()));
        return Vec::new();
    }
    let mut out = scan(dir, source, warnings);
    out.retain(|c| {
        let Some(p) = &c.path else { return true };
        let link =
            std::fs::symlink_metadata(Path::new(&c.location)).is_ok_and(|m| m.file_type().is_symlink());
        let ok = inside(p) && !(c.kind == Kind::Component && link);
        if !ok {
            warnings.push(format!("skipping {}: it is a link or leads outside the workspace", c.location));
        }
        ok
    });
    out
}

/// The skills in one folder, sorted by name.
pub fn scan(dir: &Path, source: Source, warnings: &mut Vec<String>) -> Vec<Candidate> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let hidden = path.file_name().is_none_or(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            if !path.join("SKILL.md").is_file() {
                warnings.push(format!("skipping {}: a skill folder needs a SKILL.md file", path.display()));
                continue;
            }
            match std::fs::canonicalize(&path) {
                Ok(real) => out.push(Candidate {
                    source,
                    kind: Kind::Folder,
                    location: path.display().to_string(),
                    path: Some(real),
                    bytes: Cow::Borrowed(&[]),
                    sha256: None,
                    built: None,
                }),
                Err(e) => warnings.push(format!("skipping skill folder {}: {e}", path.display())),
            }
        } else if path.extension().is_some_and(|x| x == "wasm") {
            match read_component(&path) {
                Ok(bytes) => out.push(Candidate {
                    source,
                    kind: Kind::Component,
                    location: path.display().to_string(),
                    path: Some(path),
                    bytes: Cow::Owned(bytes),
                    sha256: None,
                    built: None,
                }),
                Err(e) => warnings.push(format!("skipping skill component {}: {e}", path.display())),
            }
        }
    }
    out
}

/// A component file's bytes: regular files only, opened non-blocking.
fn read_component(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The skills built into corral: its component skills, and its `SKILL.md` folders
/// unpacked under `unpack_base` (or, when that fails, under corral's state dir).
fn shipped(unpack_base: &Path, warnings: &mut Vec<String>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = SHIPPED_SKILLS
        .iter()
        .map(|b| Candidate {
            source: Source::Shipped,
            kind: Kind::Component,
            path: None,
            location: format!("embedded in corral ({}.wasm)", b.name),
            bytes: Cow::Borrowed(b.bytes),
            sha256: Some(b.sha256),
            built: b.skill.as_ref(),
        })
        .collect();
    for folder in SHIPPED_FOLDERS {
        // A cache dir that is read-only or cannot be made: the user's own state dir instead.
        let unpacked = unpack(unpack_base, folder).or_else(|e| {
            crate::paths::state_dir().ok_or(e).and_then(|state| unpack(&state.join("unpacked"), folder))
        });
        match unpacked {
            Ok(path) => out.push(Candidate {
                source: Source::Shipped,
                kind: Kind::Folder,
                location: path.display().to_string(),
                built: as_shipped(&path, folder).then_some(&folder.skill),
                path: Some(path),
                bytes: Cow::Borrowed(&[]),
                sha256: None,
            }),
            Err(e) => warnings.push(format!(
                "the shipped skill '{}' is not available: cannot unpack it under {}: {e}",
                folder.name,
                unpack_base.display()
            )),
        }
    }
    out
}

/// Whether the unpacked folder at `path` still holds the `SKILL.md` shipped (the build's
/// answer for it is the server's answer only then; one changed in the cache is asked again).
fn as_shipped(path: &Path, folder: &ShippedFolder) -> bool {
    folder.skill_md().is_some_and(|shipped| std::fs::read(path.join("SKILL.md")).is_ok_and(|b| b == shipped))
}

/// Unpacks a shipped folder to `<base>/skills/<digest>/<name>` unless it is there already.
/// The digest directory appears whole or not at all (written aside, then renamed), so a
/// crash or a concurrent corral never leaves a partial skill behind.
pub fn unpack(base: &Path, folder: &ShippedFolder) -> std::io::Result<PathBuf> {
    let parent = base.join("skills");
    let digest = &folder.sha256[..16.min(folder.sha256.len())];
    let done = parent.join(digest);
    let target = done.join(folder.name);
    if target.join("SKILL.md").is_file() {
        return std::fs::canonicalize(&target);
    }
    std::fs::create_dir_all(&parent)?;
    let tmp = parent.join(format!(".{digest}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for file in folder.files {
        let path = tmp.join(folder.name).join(file.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, file.bytes)?;
    }
    if let Err(e) = std::fs::rename(&tmp, &done) {
        let _ = std::fs::remove_dir_all(&tmp);
        if !target.join("SKILL.md").is_file() {
            return Err(e);
        }
    }
    std::fs::canonicalize(&target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::ShippedFile;

    #[test]
    fn folders_need_skill_md_and_hidden_entries_are_skipped() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        for sub in ["a-skill", "no-md", ".hidden"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("a-skill/SKILL.md"), "---\n").unwrap();
        std::fs::write(d.join(".hidden/SKILL.md"), "---\n").unwrap();
        std::fs::write(d.join("tool.wasm"), b"\0asm").unwrap();
        std::fs::write(d.join("notes.txt"), "x").unwrap();
        let mut w = Vec::new();
        let c = scan(d, Source::User, &mut w);
        let got: Vec<(Kind, String)> = c
            .iter()
            .map(|c| (c.kind, c.path.as_ref().unwrap().file_name().unwrap().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(got, [(Kind::Folder, "a-skill".to_string()), (Kind::Component, "tool.wasm".to_string())]);
        assert_eq!(c[1].bytes.as_ref(), b"\0asm");
        assert_eq!(
            w,
            [format!("skipping {}: a skill folder needs a SKILL.md file", d.join("no-md").display())]
        );
        assert!(scan(&d.join("missing"), Source::User, &mut w).is_empty());
    }

    static FILES: &[ShippedFile] = &[
        ShippedFile { path: "SKILL.md", bytes: b"---\nname: demo\n---\n" },
        ShippedFile { path: "references/r.md", bytes: b"r" },
    ];
    static DEMO: ShippedFolder = ShippedFolder {
        name: "demo",
        sha256: "0123456789abcdef0123",
        files: FILES,
        skill: crate::builtins::BuiltSkill { name: "demo", description: "A demo." },
    };

    #[test]
    fn shipped_folders_unpack_once_and_whole() {
        let t = tempfile::tempdir().unwrap();
        let p = unpack(t.path(), &DEMO).unwrap();
        assert!(p.ends_with("skills/0123456789abcdef/demo"), "{}", p.display());
        assert_eq!(std::fs::read(p.join("references/r.md")).unwrap(), b"r");
        std::fs::write(p.join("references/r.md"), "changed").unwrap();
        assert_eq!(unpack(t.path(), &DEMO).unwrap(), p, "an unpacked folder is reused");
        let leftovers: Vec<_> = std::fs::read_dir(t.path().join("skills"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary folder is left behind");
    }
}
