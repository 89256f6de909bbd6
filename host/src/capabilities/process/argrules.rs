//! Argument rules for programs that run other programs from their arguments (git's config and
//! hooks, find -exec, rg --pre, wrappers, interpreters' -c/-e): allow-listing `git` must not
//! mean allow-listing whatever `git -c core.pager=...` runs. In allowlist mode these are
//! refused, in ask mode the person is asked; `--yolo` skips them.

/// Why `program args` may run something else than `program`, or `None`.
pub fn check(program: &str, args: &[String]) -> Option<String> {
    let name = std::path::Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let has = |flags: &[&str]| {
        args.iter().find(|a| {
            flags.iter().any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    match base {
        "git" => git(args),
        "find" => {
            has(&["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"])
                .map(|f| format!("find {f} runs programs or changes files from find's arguments"))
        }
        "rg" => has(&["--pre"]).map(|_| "rg --pre runs a program on every file searched".into()),
        "env" | "nice" | "timeout" | "xargs" | "sudo" | "doas" | "su" | "runuser" | "nohup" | "setsid"
        | "stdbuf" | "chroot" | "unshare" | "nsenter" | "strace" | "ltrace" | "flock" | "ionice"
        | "taskset" | "chrt" | "script" | "watch" | "time" | "busybox" | "systemd-run" | "firejail"
        | "bwrap" | "parallel"
            if !args.is_empty() =>
        {
            Some(format!("{name} runs the program named in its arguments; ask for that program directly"))
        }
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "fish" | "csh" | "tcsh" => {
            has(&["-c"]).map(|_| format!("{name} -c runs a shell command line"))
        }
        "python" | "pypy" => has(&["-c"]).map(|_| format!("{name} -c runs code from the arguments")),
        "perl" | "ruby" | "lua" | "luajit" => {
            has(&["-e", "-E"]).map(|f| format!("{name} {f} runs code from the arguments"))
        }
        "node" | "nodejs" | "bun" | "deno" => has(&["-e", "--eval", "-p", "--print", "eval"])
            .map(|f| format!("{name} {f} runs code from the arguments")),
        "php" => has(&["-r"]).map(|_| "php -r runs code from the arguments".into()),
        _ => None,
    }
    .map(|why| format!("{why} (a command-argument rule)"))
}

/// git subcommands that run no program named by the command line or by repository config
/// beyond what the sandbox contains (hooks and filters still run: the sandbox holds them).
const GIT_SUBCOMMANDS: &[&str] = &[
    "status",
    "ls-remote",
    "diff",
    "log",
    "show",
    "add",
    "rm",
    "mv",
    "restore",
    "reset",
    "commit",
    "branch",
    "switch",
    "checkout",
    "merge",
    "stash",
    "tag",
    "init",
    "clone",
    "fetch",
    "pull",
    "push",
    "remote",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "shortlog",
    "describe",
    "grep",
    "apply",
    "am",
    "format-patch",
    "cherry-pick",
    "revert",
    "rebase",
    "bisect",
    "worktree",
    "clean",
    "notes",
    "reflog",
    "config",
    "version",
    "help",
    "range-diff",
    "merge-base",
    "name-rev",
    "show-ref",
    "symbolic-ref",
    "for-each-ref",
    "count-objects",
    "fsck",
    "gc",
    "hash-object",
    "update-index",
    "write-tree",
    "diff-tree",
    "diff-files",
    "diff-index",
    "check-ignore",
    "check-attr",
    "sparse-checkout",
    "submodule",
    "whatchanged",
];

/// Options of git (before the subcommand) that take a value as the next argument.
const GIT_VALUE_OPTS: &[&str] = &["-C", "--git-dir", "--work-tree", "--namespace"];

fn git(args: &[String]) -> Option<String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "-c" || a.starts_with("-c") && a.len() > 2 || a.starts_with("--config-env") {
            return Some(format!(
                "git {a} sets git config from the arguments, which can name programs to run"
            ));
        }
        if a.starts_with("--exec-path") {
            return Some("git --exec-path picks where git finds the programs it runs".into());
        }
        if GIT_VALUE_OPTS.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let sub = args.get(i)?;
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Some(format!(
            "git {sub} is not a known git command: it may be an alias, which can run any program"
        ));
    }
    let rest = &args[i + 1..];
    let bad = |flags: &[&str]| {
        rest.iter().find(|a| {
            flags
                .iter()
                .any(|f| a == f || a.starts_with(&format!("{f}=")) || (f.len() == 2 && a.starts_with(f)))
        })
    };
    let found = match sub.as_str() {
        "clone" => bad(&["--upload-pack", "-u", "--config", "-c", "--template"]),
        "fetch" | "pull" | "ls-remote" => bad(&["--upload-pack"]),
        "push" => bad(&["--receive-pack", "--exec"]),
        "rebase" => bad(&["--exec", "-x"]),
        "grep" => bad(&["--open-files-in-pager", "-O"]),
        "diff" | "log" | "show" | "whatchanged" => bad(&["--ext-diff"]),
        "config" => {
            let edits = [
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--edit",
                "-e",
                "--rename-section",
                "--remove-section",
                "set",
                "unset",
                "edit",
                "rename-section",
                "remove-section",
            ];
            let positional: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            let reads = positional.first().is_some_and(|a| *a == "get" || *a == "list");
            rest.iter().find(|a| edits.contains(&a.as_str())).or(if positional.len() >= 2 && !reads {
                positional.last().copied()
            } else {
                None
            })
        }
        _ => None,
    };
    if let Some(f) = found {
        return Some(format!(
            "git {sub} {f} makes git run a program named in the arguments or writes git config"
        ));
    }
    match (sub.as_str(), rest.first().map(String::as_str)) {
        ("bisect", Some("run")) => Some("git bisect run runs the program named in its arguments".into()),
        ("submodule", Some("foreach")) => Some("git submodule foreach runs a shell command".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_rule_refuses_its_forms() {
        let refused: &[&[&str]] = &[
            &["git", "-c", "core.pager=x", "log"],
            &["git", "-ccore.pager=x", "log"],
            &["git", "--config-env=core.pager=X", "log"],
            &["git", "--exec-path=/tmp", "status"],
            &["git", "-C", "sub", "lg"],
            &["git", "fetch", "--upload-pack", "x"],
            &["git", "clone", "-u", "x", "a"],
            &["git", "clone", "--config", "core.hooksPath=x", "a"],
            &["git", "push", "--receive-pack=x"],
            &["git", "rebase", "-x", "make"],
            &["git", "rebase", "--exec=make"],
            &["git", "grep", "--open-files-in-pager", "x"],
            &["git", "diff", "--ext-diff"],
            &["git", "config", "alias.x", "!sh"],
            &["git", "config", "--add", "a.b", "c"],
            &["git", "bisect", "run", "make"],
            &["git", "submodule", "foreach", "id"],
            &["/usr/bin/find", ".", "-exec", "id", ";"],
            &["find", ".", "-execdir", "id", "+"],
            &["find", ".", "-ok", "id", ";"],
            &["find", ".", "-okdir", "id", ";"],
            &["find", ".", "-delete"],
            &["find", ".", "-fprint", "/tmp/x"],
            &["rg", "--pre", "sh", "x"],
            &["rg", "--pre=sh", "x"],
            &["env", "sh"],
            &["nice", "id"],
            &["timeout", "5", "id"],
            &["xargs", "id"],
            &["sudo", "id"],
            &["bash", "-c", "id"],
            &["python3", "-c", "1"],
            &["python3.12", "-c", "1"],
            &["perl", "-e", "1"],
            &["ruby", "-e", "1"],
            &["node", "--eval", "1"],
            &["node", "-e", "1"],
            &["php", "-r", "1"],
        ];
        for c in refused {
            let why = check(c[0], &args(&c[1..]));
            assert!(
                why.as_deref().is_some_and(|w| w.ends_with("(a command-argument rule)")),
                "{c:?}: {why:?}"
            );
        }
    }

    #[test]
    fn ordinary_uses_pass() {
        let fine: &[&[&str]] = &[
            &["git", "status"],
            &["git", "-C", "sub", "diff", "--stat"],
            &["git", "--no-pager", "log", "-p"],
            &["git", "config", "user.name"],
            &["git", "config", "--get", "user.name"],
            &["git", "fetch", "-u", "origin"],
            &["find", ".", "-name", "*.rs"],
            &["rg", "-n", "pattern"],
            &["env"],
            &["python3", "-m", "pytest"],
            &["python3", "script.py"],
            &["node", "app.js"],
            &["cargo", "build"],
            &["make", "-j2"],
        ];
        for c in fine {
            assert_eq!(check(c[0], &args(&c[1..])), None, "{c:?}");
        }
    }
}
