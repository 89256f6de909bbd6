//! Unit tests of the command policy: start-up resolution and the environment, every
//! authorization rule (grant, off, allowlist, yolo, ask with its answers), and runs (output,
//! exit codes, working directories, timeouts, spills).

use super::*;
use crate::capabilities::context::Asker;
use crate::capabilities::grant::CapSet;
use crate::capabilities::{Policy, Roots, Session, log};
use crate::config::CommandSettings;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    bin: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (ws, bin) = (base.join("ws"), base.join("bin"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [("hello", "echo hello \"$@\""), ("fail", "echo oops >&2; exit 7")] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Fixture { _tmp: tmp, ws, bin }
}

impl Fixture {
    fn path_var(&self) -> OsString {
        OsString::from(format!("{}:/usr/bin:/bin", self.bin.display()))
    }

    /// A session whose plugin `p` is granted `process`, under `settings`.
    fn session(&self, settings: &CommandSettings) -> Result<Session, String> {
        let roots = Roots::open(&self.ws, &[], &[]).unwrap();
        let mut s = Session::new(roots, Policy::default(), log::Sink::new(false));
        s.set_local(
            crate::capabilities::local::Local::open(&self.ws.with_file_name("state"), &self.ws).unwrap(),
        );
        let path = self.path_var();
        let env = move |k: &str| match k {
            "PATH" => Some(path.clone()),
            "HOME" => Some(OsString::from("/home/x")),
            "SECRET_TOKEN" => Some(OsString::from("hunter2")),
            _ => None,
        };
        let commands =
            CommandPolicy::from_settings(settings, std::slice::from_ref(&self.ws), s.local(), &env)?;
        s.set_commands(commands);
        s.granted().set("p", CapSet::parse(&["process"]).unwrap());
        Ok(s)
    }
}

fn settings(mode: &str, allowed: &[&str], yolo: bool) -> CommandSettings {
    CommandSettings {
        mode: mode.into(),
        allowed: allowed.iter().map(|s| s.to_string()).collect(),
        yolo,
        ..CommandSettings::default()
    }
}

fn req(program: &str, args: &[&str]) -> Request {
    Request {
        program: program.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..Request::default()
    }
}

/// Answers every question with `answer` and counts them.
struct Person(&'static str, Mutex<usize>);

impl Asker for Person {
    fn ask(&self, _q: &str, _c: &[String]) -> Result<String, String> {
        *self.1.lock().unwrap() += 1;
        Ok(self.0.to_string())
    }
}

#[test]
fn start_up_resolves_the_allowlist_and_keeps_only_allowed_variables() {
    let f = fixture();
    let s = f.session(&settings("allowlist", &["hello"], false)).unwrap();
    assert_eq!(s.commands().mode, Mode::Allowlist);
    assert_eq!(s.commands().allowed["hello"], f.bin.join("hello"));
    let names: Vec<_> = s.commands().env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["HOME", "PATH"], "the secret is not passed on");
    let mut with_env = settings("allowlist", &["hello"], false);
    with_env.env = vec!["SECRET_TOKEN".into()];
    let s = f.session(&with_env).unwrap();
    assert!(s.commands().env.iter().any(|(k, v)| k == "SECRET_TOKEN" && v == "hunter2"));
    with_env.env = vec!["A=B".into()];
    assert_eq!(f.session(&with_env).unwrap_err(), "commands.env: 'A=B' is not an environment variable name");
    let e = f.session(&settings("allowlist", &["nope-xyz"], false)).unwrap_err();
    assert!(e.starts_with("allowed command 'nope-xyz' was not found on PATH"), "{e}");
    let e = f.session(&settings("allowlist", &["./hello"], false)).unwrap_err();
    assert!(e.contains("is a relative path"), "{e}");
    assert_eq!(f.session(&settings("off", &["hello"], false)).unwrap().commands().mode, Mode::Off);
    assert_eq!(f.session(&settings("allowlist", &[], false)).unwrap().commands().mode, Mode::Off);
}

#[test]
fn authorization_follows_the_grant_the_mode_and_the_allowlist() {
    let f = fixture();
    let s = f.session(&settings("allowlist", &["hello"], false)).unwrap();
    assert_eq!(authorize(&s.process(), "p", &req("hello", &[])).unwrap(), f.bin.join("hello"));
    let by_path = f.bin.join("hello").display().to_string();
    assert_eq!(authorize(&s.process(), "p", &req(&by_path, &[])).unwrap(), f.bin.join("hello"));
    let e = authorize(&s.process(), "other", &req("hello", &[])).unwrap_err();
    assert_eq!(e.code, Code::Denied);
    assert!(e.message.contains("'other' was not granted the 'process' capability"), "{}", e.message);
    let e = authorize(&s.process(), "p", &req("fail", &[])).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            Code::Denied,
            "'fail' is not an allowed command (allowed: hello); the user can add it with --allowed-commands"
        )
    );
    let e = authorize_shell(&s.process(), "p", "hello | cat", None).unwrap_err();
    assert!(e.message.starts_with("shell command lines are refused"), "{}", e.message);
    let off = f.session(&settings("off", &[], false)).unwrap();
    let e = authorize(&off.process(), "p", &req("hello", &[])).unwrap_err();
    assert!(e.message.starts_with("running commands is off"), "{}", e.message);
    let yolo = f.session(&settings("allowlist", &[], true)).unwrap();
    assert_eq!(authorize(&yolo.process(), "p", &req("fail", &[])).unwrap(), f.bin.join("fail"));
    assert!(authorize_shell(&yolo.process(), "p", "hello | cat", None).is_ok());
    assert_eq!(authorize(&yolo.process(), "p", &req("nope-xyz", &[])).unwrap_err().code, Code::NotFound);
}

#[test]
fn ask_mode_asks_per_bucket_and_refuses_programs_inside_the_roots() {
    let f = fixture();
    let s = f.session(&settings("ask", &["hello"], false)).unwrap();
    assert!(authorize(&s.process(), "p", &req("hello", &[])).is_ok(), "allow-listed: no question");
    let e = authorize(&s.process(), "p", &req("fail", &[])).unwrap_err();
    assert!(e.message.contains("no one can answer in this run"), "{}", e.message);
    let once = Arc::new(Person("yes", Mutex::new(0)));
    s.ask().set(Some(once.clone()));
    authorize(&s.process(), "p", &req("fail", &["a"])).unwrap();
    authorize(&s.process(), "p", &req("fail", &["b"])).unwrap();
    assert_eq!(*once.1.lock().unwrap(), 2, "yes approves one run");
    let always = Arc::new(Person("always", Mutex::new(0)));
    s.ask().set(Some(always.clone()));
    authorize(&s.process(), "p", &req("fail", &[])).unwrap();
    authorize(&s.process(), "p", &req("fail", &["again"])).unwrap();
    assert_eq!(*always.1.lock().unwrap(), 1, "always approves the bucket");
    assert!(!f.ws.join(".corral/approved_commands").exists(), "approvals are not kept in the workspace");
    assert!(s.commands().approvals.contains("fail"));
    s.ask().set(Some(Arc::new(Person("no", Mutex::new(0)))));
    let e = authorize(&s.process(), "p", &req("ls", &[])).unwrap_err();
    assert!(e.message.starts_with("the person declined to run `ls`"), "{}", e.message);
    // A program inside the workspace is refused before anyone is asked.
    let inside = f.ws.join("sub/tool");
    std::fs::copy(f.bin.join("hello"), &inside).unwrap();
    let e = authorize(&s.process(), "p", &req(&inside.display().to_string(), &[])).unwrap_err();
    assert!(e.message.contains("inside the workspace roots"), "{}", e.message);
    // A later session reads the approvals back.
    let again = f.session(&settings("ask", &[], false)).unwrap();
    assert!(authorize(&again.process(), "p", &req("fail", &[])).is_ok());
}

fn block<T>(f: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

fn run_in(s: Session, r: Request) -> Result<Output, ProcError> {
    let program = authorize(&s.process(), "p", &r)?;
    block(run(&s.process(), program, r))
}

#[test]
fn runs_report_output_exit_codes_and_working_directories() {
    let f = fixture();
    let s = || f.session(&settings("allowlist", &["hello", "fail", "pwd", "sleep", "seq"], false)).unwrap();
    let out = run_in(s(), req("hello", &["\u{1b}[31mred\u{1b}[0m"])).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.timed_out), (Some(0), "hello red\n", false));
    let out = run_in(s(), req("fail", &[])).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.stderr.as_str()), (Some(7), "", "oops\n"));
    let out = run_in(s(), Request { cwd: Some("sub".into()), ..req("pwd", &[]) }).unwrap();
    assert_eq!(out.stdout, format!("{}\n", f.ws.join("sub").display()));
    for (cwd, code) in [("..", Code::Denied), ("missing", Code::NotFound), ("/", Code::Denied)] {
        let e = run_in(s(), Request { cwd: Some(cwd.into()), ..req("pwd", &[]) }).unwrap_err();
        assert_eq!(e.code, code, "{cwd}: {}", e.message);
        assert!(e.message.starts_with("working directory: "), "{}", e.message);
    }
    let started = std::time::Instant::now();
    let out =
        run_in(s(), Request { timeout: Some(Duration::from_millis(300)), ..req("sleep", &["30"]) }).unwrap();
    assert!(out.timed_out && out.exit_code.is_none());
    assert!(started.elapsed() < Duration::from_secs(10));
    let out = run_in(s(), req("seq", &["20000"])).unwrap();
    let spilled = out.spilled.expect("long output is saved");
    assert!(out.stdout.len() <= clean::INLINE_BYTES + 200, "{}", out.stdout.len());
    let whole = std::fs::read_to_string(f.ws.join(&spilled)).unwrap();
    assert!(
        whole.starts_with("$ seq 20000\n[exit code 0]\n--- stdout ---\n1\n") && whole.contains("\n20000\n")
    );
}

#[test]
fn argument_rules_refuse_in_allowlist_ask_in_ask_mode_and_yield_to_yolo() {
    let f = fixture();
    let s = f.session(&settings("allowlist", &["hello"], false)).unwrap();
    // Only programs named like the known ones are checked; `sh -c` is one.
    let mut sh = settings("allowlist", &["sh"], false);
    let e = authorize(&f.session(&sh).unwrap().process(), "p", &req("sh", &["-c", "id"])).unwrap_err();
    assert_eq!(e.code, Code::Denied);
    assert!(e.message.contains("sh -c runs a shell command line (a command-argument rule)"), "{}", e.message);
    assert!(e.message.contains("--commands ask"), "{}", e.message);
    assert!(
        authorize(&s.process(), "p", &req("hello", &["-c", "x"])).is_ok(),
        "other programs are not checked"
    );
    sh.yolo = true;
    assert!(
        authorize(&f.session(&sh).unwrap().process(), "p", &req("sh", &["-c", "id"])).is_ok(),
        "yolo skips the rules"
    );
    sh = settings("ask", &["sh"], false);
    let s = f.session(&sh).unwrap();
    let person = Arc::new(Person("always", Mutex::new(0)));
    s.ask().set(Some(person.clone()));
    assert!(authorize(&s.process(), "p", &req("sh", &["-c", "id"])).is_ok());
    assert!(authorize(&s.process(), "p", &req("sh", &["-c", "id"])).is_ok());
    assert_eq!(*person.1.lock().unwrap(), 1, "asked once for this exact line, then remembered");
    assert!(authorize(&s.process(), "p", &req("sh", &["-c", "whoami"])).is_ok());
    assert_eq!(*person.1.lock().unwrap(), 2, "another line is asked again");
    assert!(authorize(&s.process(), "p", &req("sh", &["script.sh"])).is_ok());
    assert_eq!(*person.1.lock().unwrap(), 2, "a listed program without a rule is not asked");
}

#[test]
fn a_model_credential_is_refused_in_commands_env() {
    let f = fixture();
    for name in ["OPENAI_API_KEY", "CORRAL_API_KEY", "anthropic_api_key", "MY_SERVICE_API_KEY"] {
        let mut s = settings("allowlist", &["hello"], false);
        s.env = vec![name.into()];
        let e = f.session(&s).unwrap_err();
        assert!(e.contains("holds a model credential") && e.contains(name), "{e}");
    }
}
