//! Running a folder skill's script. A plain script is not a component, so it cannot run in
//! the skill's sandbox: it runs as a command through the host's `process` interface, under
//! run_command's policy, or it is refused with what to do instead.

use crate::folder;
use corral_plugin_sdk::host::{Command, Proc, ProcErrorCode, ProcOutput};
use corral_plugin_sdk::{ErrorKind, Output, ToolError};
use std::path::Path;

/// Why a script name found no single script.
enum Resolve {
    /// None matched; the scripts there are.
    Missing(Vec<String>),
    /// Several files share the stem.
    Ambiguous(Vec<String>),
}

/// The script a name means: its path under `scripts/` (`scripts/toc.py`), its file name
/// (`toc.py`) or its stem (`toc`) when one script alone has it.
fn resolve(dir: &Path, rel: &str) -> Result<String, Resolve> {
    let scripts_dir = folder::SCRIPTS_DIR;
    let direct: Vec<String> = std::fs::read_dir(dir.join(scripts_dir))
        .map(|entries| {
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect();
            names.sort();
            names
        })
        .unwrap_or_default();
    let is_file = |p: &str| dir.join(p).is_file();
    if rel.starts_with(&format!("{scripts_dir}/")) {
        return if is_file(rel) { Ok(rel.to_string()) } else { Err(Resolve::Missing(named(&direct))) };
    }
    if !rel.contains('/') {
        if direct.iter().any(|n| n == rel) {
            return Ok(format!("{scripts_dir}/{rel}"));
        }
        let stem = |n: &str| Path::new(n).file_stem().and_then(|s| s.to_str()).map(str::to_string);
        let same: Vec<&String> = direct.iter().filter(|n| stem(n).as_deref() == Some(rel)).collect();
        match same.as_slice() {
            [one] => return Ok(format!("{scripts_dir}/{one}")),
            [] => {}
            many => {
                return Err(Resolve::Ambiguous(many.iter().map(|n| format!("{scripts_dir}/{n}")).collect()));
            }
        }
    }
    Err(Resolve::Missing(named(&direct)))
}

fn named(files: &[String]) -> Vec<String> {
    files.iter().map(|n| format!("{}/{n}", folder::SCRIPTS_DIR)).collect()
}

/// Runs script `name` (its path under `scripts/`, its file name or its stem) of skill `skill` in folder `dir`.
pub fn run(
    commands: &dyn Proc,
    skill: &str,
    dir: &Path,
    name: &str,
    args: &[String],
) -> Result<Output, ToolError> {
    let rel = resolve(dir, folder::check_path(name)?).map_err(|known| {
        let e = ToolError::new(ErrorKind::NotFound, format!("skill '{skill}' has no script '{name}'"));
        match known {
            Resolve::Ambiguous(both) => ToolError::invalid_args(format!(
                "skill '{skill}' has several scripts named '{name}': {}; name one with its extension",
                both.join(", ")
            )),
            Resolve::Missing(known) if known.is_empty() => e.with_hint("this skill has no scripts"),
            Resolve::Missing(known) => e.with_hint(format!("its scripts: {}", known.join(", "))),
        }
    })?;
    let rel = rel.as_str();
    let full = dir.join(rel);
    let head = folder::read_head(&full);
    let Some(program) = folder::program_for(rel, &head) else {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!("cannot tell which program runs the script '{rel}' of skill '{skill}'"),
        )
        .with_hint("it has no '#!' line and its extension is not one of .sh .bash .py .js .mjs .rb .pl"));
    };
    let mut argv = vec![full.to_string_lossy().into_owned()];
    argv.extend(args.iter().cloned());
    let cmd = Command { program: program.clone(), args: argv, ..Command::default() };
    match commands.run(&cmd) {
        Ok(out) => Ok(report(rel, &out)),
        Err(e) if e.code == ProcErrorCode::Denied => Err(ToolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "the script '{rel}' of skill '{skill}' was not run: scripts in a SKILL.md folder run as \
                 commands, under the same policy as run_command, and the host refused to run '{program}': {}",
                e.message
            ),
        )
        .with_hint(format!(
            "commands are off unless corral is started with them enabled and '{program}' allowed (for \
             example `--allowed-commands {program}`); until then, do what the script does with the other \
             tools (read it with use_skill action \"load\")"
        ))),
        Err(e) => {
            let kind = match e.code {
                ProcErrorCode::NotFound => ErrorKind::NotFound,
                ProcErrorCode::Invalid => ErrorKind::InvalidArgs,
                _ => ErrorKind::Io,
            };
            Err(ToolError::new(
                kind,
                format!("the script '{rel}' could not be run with '{program}': {}", e.message),
            ))
        }
    }
}

/// The model's view of a finished script: exit status, then its output.
fn report(rel: &str, out: &ProcOutput) -> Output {
    let status = match (out.timed_out, out.exit_code) {
        (true, _) => "timed out and was stopped".to_string(),
        (false, Some(0)) => "exited with 0".to_string(),
        (false, Some(c)) => format!("failed with exit code {c}"),
        (false, None) => "was killed by a signal".to_string(),
    };
    let mut text = format!("{rel} {status}\n");
    if !out.stdout.trim().is_empty() {
        text.push_str(out.stdout.trim_end());
        text.push('\n');
    }
    if !out.stderr.trim().is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(out.stderr.trim_end());
        text.push('\n');
    }
    if let Some(p) = &out.spilled {
        text.push_str(&format!("[the whole output is in {p}; page through it with read_file]\n"));
    }
    Output::text(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::host::{Call, FakeProc, ProcError};

    fn skill() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("scripts")).unwrap();
        std::fs::write(t.path().join("scripts/stat.sh"), "#!/bin/sh\ngit diff --stat\n").unwrap();
        std::fs::write(t.path().join("scripts/blob"), "data").unwrap();
        std::fs::write(t.path().join("notes.md"), "n").unwrap();
        t
    }

    #[test]
    fn a_refused_command_says_commands_are_off_and_how_to_enable_them() {
        let t = skill();
        let fake = FakeProc::new()
            .answer(Err(ProcError { code: ProcErrorCode::Denied, message: "commands are off".into() }));
        let e = run(&fake, "review", t.path(), "scripts/stat.sh", &["main".into()]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert_eq!(
            e.message,
            "the script 'scripts/stat.sh' of skill 'review' was not run: scripts in a SKILL.md folder run as \
             commands, under the same policy as run_command, and the host refused to run 'sh': commands are off"
        );
        assert!(e.hint.unwrap().starts_with("commands are off unless corral is started with them enabled"));
        let calls = fake.calls.borrow();
        let Call::Run(cmd) = &calls[0] else { panic!("not a plain run: {calls:?}") };
        assert_eq!(cmd.program, "sh");
        assert_eq!(
            cmd.args,
            [t.path().join("scripts/stat.sh").to_string_lossy().into_owned(), "main".into()]
        );
    }

    #[test]
    fn an_allowed_command_reports_its_status_and_output() {
        let t = skill();
        let fake = FakeProc::new().exits(3, " a | 2 +-\n");
        let out = run(&fake, "review", t.path(), "./scripts/stat.sh", &[]).unwrap();
        assert_eq!(out.text, "scripts/stat.sh failed with exit code 3\n a | 2 +-\n");
    }

    #[test]
    fn a_script_is_found_by_its_file_name_or_stem() {
        let t = skill();
        let fake = FakeProc::new().exits(0, "ok\n").exits(0, "ok\n");
        run(&fake, "review", t.path(), "stat", &["main".into()]).unwrap();
        run(&fake, "review", t.path(), "stat.sh", &[]).unwrap();
        let calls = fake.calls.borrow();
        assert_eq!(calls.len(), 2);
        assert!(
            calls.iter().all(|c| matches!(c, Call::Run(cmd) if cmd.args[0].ends_with("scripts/stat.sh"))),
            "{calls:?}"
        );
    }

    #[test]
    fn a_stem_two_scripts_share_is_refused_and_a_missing_one_lists_the_scripts() {
        let t = skill();
        std::fs::write(t.path().join("scripts/stat.py"), "print(1)\n").unwrap();
        let fake = FakeProc::new().exits(0, "");
        let e = run(&fake, "review", t.path(), "stat", &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(e.message.contains("scripts/stat.py, scripts/stat.sh"), "{}", e.message);
        let e = run(&fake, "review", t.path(), "nope", &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(e.hint.as_deref().unwrap_or("").contains("scripts/stat.sh"), "{e:?}");
        assert!(fake.calls.borrow().is_empty(), "nothing was run");
    }

    #[test]
    fn only_runnable_files_under_scripts_are_scripts() {
        let t = skill();
        let fake = FakeProc::new().exits(0, "");
        let e = run(&fake, "review", t.path(), "notes.md", &[]).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::NotFound, "skill 'review' has no script 'notes.md'")
        );
        let e = run(&fake, "review", t.path(), "scripts/../notes.md", &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        let e = run(&fake, "review", t.path(), "scripts/blob", &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(fake.calls.borrow().is_empty(), "nothing was run");
    }
}
