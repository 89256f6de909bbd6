//! The approval mode (`--commands ask`): commands are grouped into buckets (`git push`,
//! `cargo test`, `ls`), the person is asked once per bucket (yes / no / always), and buckets
//! answered "always" are kept in the workspace's local state (outside it: a repository cannot ship
//! approvals) for later sessions.

use crate::capabilities::context::AskChannel;
use crate::capabilities::local::Local;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The approvals file, under `.corral/`.
pub const FILE: &str = "approved_commands";

/// Programs whose first plain argument is a subcommand that changes what they do.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "docker", "podman", "kubectl", "pip", "pip3", "uv", "gh",
    "rustup", "apt", "apt-get", "brew", "dotnet", "bundle", "gem", "poetry",
];
/// Interpreters that run code given with `-c` or `-e`.
const INTERPRETERS: &[&str] =
    &["sh", "bash", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "php", "lua"];
/// Options of subcommand tools that take a value before the subcommand (`git -C dir push`).
const VALUE_OPTIONS: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--manifest-path", "--prefix"];

/// `s` with control characters escaped, so a bucket is always one line of the approvals file.
fn one_line(s: &str) -> String {
    s.escape_debug().to_string()
}

/// The bucket a command is approved by: the program's name, plus the subcommand for tools
/// like git and cargo, or `-c`/`-e` for an interpreter running inline code.
pub fn bucket(program: &str, args: &[String]) -> String {
    one_line(&raw_bucket(program, args))
}

fn raw_bucket(program: &str, args: &[String]) -> String {
    let name = program.rsplit('/').next().unwrap_or(program);
    if INTERPRETERS.contains(&name)
        && let Some(flag) = args.iter().find(|a| matches!(a.as_str(), "-c" | "-e" | "--eval"))
    {
        return format!("{name} {flag}");
    }
    if SUBCOMMAND_TOOLS.contains(&name) {
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if VALUE_OPTIONS.contains(&a.as_str()) {
                it.next();
            } else if !a.starts_with('-') && !a.starts_with('+') {
                return format!("{name} {a}");
            }
        }
    }
    name.to_string()
}

/// The bucket of a shell line: the exact line (a shell can do anything, so approving one
/// line approves only that line).
pub fn shell_bucket(line: &str) -> String {
    one_line(&format!("sh -c {}", line.trim()))
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    Always,
    No,
}

/// Reads an answer; anything but yes or always is no.
pub fn parse_answer(text: &str) -> Answer {
    match text.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "once" => Answer::Once,
        "a" | "always" => Answer::Always,
        _ => Answer::No,
    }
}

/// Buckets approved with "always", in memory and in the local state's `approved_commands`.
#[derive(Debug, Default)]
pub struct Approvals(Mutex<BTreeSet<String>>);

impl Approvals {
    /// The buckets saved in the workspace's approvals file.
    pub fn load(local: &Local) -> Approvals {
        let text = local.read(FILE).ok().flatten().unwrap_or_default();
        let set =
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from);
        Approvals(Mutex::new(set.collect()))
    }

    pub fn contains(&self, bucket: &str) -> bool {
        self.0.lock().is_ok_and(|s| s.contains(bucket))
    }

    /// Remembers `bucket` and rewrites the file.
    pub fn add(&self, local: &Local, bucket: &str) -> std::io::Result<()> {
        let text = {
            let mut set = self.0.lock().map_err(|_| std::io::Error::other("approvals unavailable"))?;
            set.insert(bucket.to_string());
            let mut text = String::from(
                "# Commands approved with \"always\" (corral --commands ask), one bucket a line.\n",
            );
            for b in set.iter() {
                text.push_str(b);
                text.push('\n');
            }
            text
        };
        local.write(FILE, text.as_bytes())
    }
}

/// The approval question: the command escaped (no control or hidden character reaches the
/// terminal), alone on its line, with its length, so nothing in it can move the cursor or
/// pose as the question.
pub fn approval_question(shown: &str, bucket: &str, cwd: &str) -> String {
    let chars = shown.chars().count();
    format!(
        "corral: the agent wants to run this command ({chars} characters, control characters shown \
         escaped):\n\n    {}\n\n  in {}\n  Allow it? (\"always\" approves every `{bucket}` command)",
        crate::termtext::escaped(shown),
        crate::termtext::escaped(cwd),
    )
}

/// Asks the person whether `shown` (in bucket `bucket`, run in `cwd`) may run. `Err` is a
/// message for the model (declined, or no one to ask).
pub fn ask(channel: &AskChannel, shown: &str, bucket: &str, cwd: &str) -> Result<Answer, String> {
    let question = approval_question(shown, bucket, cwd);
    let choices = ["yes".to_string(), "no".to_string(), "always".to_string()];
    match channel.ask(&question, &choices) {
        Ok(text) => match parse_answer(&text) {
            Answer::No => Err(format!(
                "the person declined to run `{shown}`; do not retry it, find another way or ask them"
            )),
            a => Ok(a),
        },
        Err(_) => Err(format!(
            "`{bucket}` needs the person's approval (--commands ask), and no one can answer in this run; \
             the user can allow the program without asking with --allowed-commands"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // test fixtures are made with std::fs
mod tests {
    use super::*;
    use crate::capabilities::context::Asker;
    use std::path::Path;
    use std::sync::Arc;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn buckets_group_commands_by_what_they_do() {
        assert_eq!(bucket("/usr/bin/ls", &v(&["-la"])), "ls");
        assert_eq!(bucket("git", &v(&["push", "origin", "main"])), "git push");
        assert_eq!(bucket("git", &v(&["-C", "sub", "--no-pager", "log"])), "git log");
        assert_eq!(bucket("cargo", &v(&["+nightly", "test"])), "cargo test");
        assert_eq!(bucket("cargo", &v(&["--manifest-path", "x/Cargo.toml", "test"])), "cargo test");
        assert_eq!(bucket("python3", &v(&["-c", "print(1)"])), "python3 -c");
        assert_eq!(bucket("python3", &v(&["script.py"])), "python3");
        assert_eq!(bucket("git", &[]), "git");
        assert_eq!(shell_bucket(" ls | wc -l "), "sh -c ls | wc -l");
        // A bucket is one line: a newline cannot smuggle a second approval into the file.
        assert_eq!(shell_bucket("echo hi\nrm -rf x"), "sh -c echo hi\\nrm -rf x");
        assert_eq!(bucket("git", &v(&["push\nrm"])), "git push\\nrm");
    }

    #[test]
    fn the_approval_question_cannot_be_disguised() {
        let sneaky = "rm -rf ~\x1b[1A\x1b[2K\rThe agent wants to run:\n    ls\u{202e}";
        let q = approval_question(sneaky, "sh -c rm", "/w");
        assert!(!q.chars().any(|c| c == '\x1b' || c == '\r' || c == '\u{202e}'), "{q}");
        let lines: Vec<&str> = q.lines().collect();
        assert_eq!(lines[2], "    rm -rf ~\\x1b[1A\\x1b[2K\\rThe agent wants to run:\\n    ls\\u{202e}");
        assert!(lines[0].contains(&format!("({} characters", sneaky.chars().count())), "{q}");
        assert!(q.ends_with("Allow it? (\"always\" approves every `sh -c rm` command)"), "{q}");
    }

    #[test]
    fn answers_are_read_leniently_and_default_to_no() {
        assert_eq!(parse_answer("yes"), Answer::Once);
        assert_eq!(parse_answer(" Always "), Answer::Always);
        assert_eq!(parse_answer("no"), Answer::No);
        assert_eq!(parse_answer("whatever"), Answer::No);
    }

    #[test]
    fn always_is_kept_in_the_local_state_not_the_workspace() {
        let t = tempfile::tempdir().unwrap();
        let d = Local::open(&t.path().join("state"), Path::new("/w")).unwrap();
        let a = Approvals::load(&d);
        assert!(!a.contains("git status"));
        a.add(&d, "git status").unwrap();
        assert!(a.contains("git status"));
        let again = Approvals::load(&d);
        assert!(again.contains("git status") && !again.contains("git push"));
        let text = std::fs::read_to_string(t.path().join("state/approved_commands")).unwrap();
        assert!(text.ends_with("git status\n"), "{text}");
    }

    #[test]
    fn asking_nobody_or_being_declined_is_an_error_for_the_model() {
        let ch = AskChannel::default();
        let e = ask(&ch, "git push", "git push", ".").unwrap_err();
        assert!(e.contains("no one can answer") && e.contains("--allowed-commands"), "{e}");
        struct Says(&'static str);
        impl Asker for Says {
            fn ask(&self, q: &str, c: &[String]) -> Result<String, String> {
                assert!(q.contains("git push origin") && c.len() == 3, "{q}");
                Ok(self.0.to_string())
            }
        }
        ch.set(Some(Arc::new(Says("always"))));
        assert_eq!(ask(&ch, "git push origin", "git push", "."), Ok(Answer::Always));
        ch.set(Some(Arc::new(Says("no"))));
        let e = ask(&ch, "git push origin", "git push", ".").unwrap_err();
        assert!(e.contains("declined"), "{e}");
    }
}
