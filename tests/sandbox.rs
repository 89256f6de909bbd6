//! Commands inside the operating-system sandbox, through the real binary and real programs:
//! writes outside the roots, secrets in the home folder, .git/ and corral.toml, the network
//! (a loopback TCP and UDP listener), the argument rules, the model key kept out of the
//! environment, `corral doctor`, and real work (git, cargo, python3, make) still working.

use crate::support;

use serde_json::json;
use std::io::{ErrorKind, Read};
use std::path::Path;
use support::Sandbox;

fn run(sb: &Sandbox, flags: &[&str], command: serde_json::Value) -> support::Run {
    sb.tool(flags, "run_command", &json!({ "command": command }))
}

/// Whether this machine can sandbox (the tests of confinement need it; `doctor` says why not).
fn confined(sb: &Sandbox) -> bool {
    let out = sb.run(&["doctor", "--json"]).ok().stdout;
    let v: serde_json::Value = serde_json::from_str(&out).expect("doctor --json");
    v["commands"] == "confined"
}

#[test]
fn doctor_reports_what_the_sandbox_enforces() {
    let sb = Sandbox::new();
    let text = sb.run(&["doctor"]).ok().stdout;
    assert!(text.contains("Landlock ABI:") && text.contains("network when off:"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&sb.run(&["doctor", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["os"], std::env::consts::OS);
    if cfg!(target_os = "linux") && v["landlock_abi"].as_i64().unwrap_or(0) >= 2 {
        assert_eq!(v["commands"], "confined", "{v}");
    } else {
        assert_ne!(v["commands"], "confined", "{v}");
    }
}

#[test]
fn a_write_outside_the_roots_fails_and_leaves_nothing() {
    let sb = Sandbox::new();
    if !confined(&sb) {
        return;
    }
    let before = sb.outside_state();
    let target = sb.outside.join("planted.txt");
    let home_file = sb.tmp.path().join("home/.bashrc");
    for t in [&target, &home_file] {
        let r = run(&sb, &["--allowed-commands", "touch"], json!(["touch", t.to_str().unwrap()])).ok();
        assert!(r.stdout.contains("Permission denied"), "{}", r.stdout);
        assert!(!t.exists(), "{} was created", t.display());
    }
    let r = run(&sb, &["--allowed-commands", "cp"], json!(["cp", "hello.txt", sb.outside.to_str().unwrap()]))
        .ok();
    assert!(r.stdout.starts_with("Exit code: 1"), "{}", r.stdout);
    assert_eq!(sb.outside_state(), before, "nothing outside the roots changed");
    // Inside the workspace, new files and folders at the top level work.
    let r = run(&sb, &["--allowed-commands", "mkdir"], json!(["mkdir", "-p", "made/deep"])).ok();
    assert_eq!(r.stdout.trim(), "(no output)", "{}", r.stdout);
    assert!(sb.ws.join("made/deep").is_dir());
}

#[test]
fn a_planted_secret_in_home_cannot_be_read_even_when_home_is_granted() {
    let sb = Sandbox::new();
    if !confined(&sb) {
        return;
    }
    let home = sb.tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY-MATERIAL\n").unwrap();
    std::fs::write(home.join("notes.txt"), "plain notes\n").unwrap();
    let key = home.join(".ssh/id_rsa");
    let key = key.to_str().unwrap();
    let r = run(&sb, &["--allowed-commands", "cat"], json!(["cat", key])).ok();
    assert!(!r.stdout.contains("PRIVATE-KEY") && r.stdout.contains("Permission denied"), "{}", r.stdout);
    let secret = sb.outside.join("secret.txt");
    let r = run(&sb, &["--allowed-commands", "cat"], json!(["cat", secret.to_str().unwrap()])).ok();
    assert!(!r.stdout.contains("top secret"), "{}", r.stdout);
    // The person may add the home folder; its secrets stay out.
    let flags = ["--allowed-commands", "cat", "--command-read", home.to_str().unwrap()];
    let notes = home.join("notes.txt");
    let r = run(&sb, &flags, json!(["cat", notes.to_str().unwrap()])).ok();
    assert_eq!(r.stdout, "plain notes\n");
    let r = run(&sb, &flags, json!(["cat", key])).ok();
    assert!(!r.stdout.contains("PRIVATE-KEY") && r.stdout.contains("Permission denied"), "{}", r.stdout);
}

#[test]
fn git_folders_and_corral_files_stay_read_only() {
    let sb = Sandbox::new();
    if !confined(&sb) {
        return;
    }
    std::fs::create_dir_all(sb.ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(sb.ws.join("sub/.corral")).unwrap();
    std::fs::write(sb.ws.join("sub/corral.toml"), "# the project's\n").unwrap();
    for target in [".git/hooks/pre-commit", "sub/.corral/evil.wasm", ".git/config"] {
        let r = run(&sb, &["--allowed-commands", "touch"], json!(["touch", target])).ok();
        assert!(
            r.stdout.contains("Read-only file system") || r.stdout.contains("Permission denied"),
            "{}",
            r.stdout
        );
        assert!(!sb.ws.join(target).exists(), "{target} was created");
    }
    let r = run(&sb, &["--allowed-commands", "cp"], json!(["cp", "hello.txt", "sub/corral.toml"])).ok();
    assert!(r.stdout.starts_with("Exit code: 1"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(sb.ws.join("sub/corral.toml")).unwrap(), "# the project's\n");
    let r = run(&sb, &["--allowed-commands", "rm"], json!(["rm", "-rf", ".git"])).ok();
    assert!(r.stdout.starts_with("Exit code: 1"), "{}", r.stdout);
    assert!(sb.ws.join(".git/hooks").is_dir());
    // The person can lift the rule for .git/.
    let r =
        run(&sb, &["--allowed-commands", "touch", "--allow-git-writes"], json!(["touch", ".git/hooks/x"]))
            .ok();
    assert_eq!(r.stdout.trim(), "(no output)", "{}", r.stdout);
    assert!(sb.ws.join(".git/hooks/x").exists());
}

const CONNECT: &str = "import socket, sys
port = int(sys.argv[1])
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    try:
        s = socket.socket(socket.AF_INET, kind)
        if kind == socket.SOCK_STREAM:
            s.connect(('127.0.0.1', port))
        else:
            s.sendto(b'ping', ('127.0.0.1', int(sys.argv[2])))
        print('sent', kind)
    except OSError as e:
        print('refused', kind, e)
";

#[test]
fn the_network_is_off_for_commands_unless_the_person_turns_it_on() {
    let sb = Sandbox::new();
    if !confined(&sb) {
        return;
    }
    std::fs::write(sb.ws.join("connect.py"), CONNECT).unwrap();
    let python = "/usr/bin/python3";
    if !Path::new(python).exists() {
        return;
    }
    for network in [false, true] {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        udp.set_nonblocking(true).unwrap();
        let (tp, up) =
            (tcp.local_addr().unwrap().port().to_string(), udp.local_addr().unwrap().port().to_string());
        let mut flags = vec!["--allowed-commands", python];
        if network {
            flags.push("--command-network");
        }
        let r = run(&sb, &flags, json!([python, "connect.py", tp, up])).ok();
        // The run is over: a connection or datagram it made is already queued.
        let accepted = match tcp.accept() {
            Ok((mut c, _)) => {
                let mut b = Vec::new();
                let _ = c.read_to_end(&mut b);
                true
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        };
        let mut buf = [0u8; 16];
        let got = match udp.recv(&mut buf) {
            Ok(n) => &buf[..n] == b"ping",
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        };
        assert_eq!((accepted, got), (network, network), "network {network}: {}", r.stdout);
        if !network {
            assert_eq!(r.stdout.matches("refused").count(), 2, "{}", r.stdout);
        }
    }
}

#[test]
fn argument_rules_refuse_programs_that_run_programs() {
    let sb = Sandbox::new();
    // The file git would make if it ran the upload-pack program: outside the workspace, in
    // this test's own folder (a fixed path would be any other program's file too).
    let ran = sb.outside.join("upload-pack-ran");
    let upload_pack = format!("--upload-pack=touch {}", ran.display());
    let cases: &[&[&str]] = &[
        &["git", "-c", "core.pager=sh -c id", "log"],
        &["git", "--config-env=core.pager=X", "log"],
        &["git", "my-alias"],
        &["git", "fetch", &upload_pack, "origin"],
        &["git", "clone", "-u", "sh", "a", "b"],
        &["git", "rebase", "--exec", "make"],
        &["git", "grep", "-O", "x"],
        &["git", "config", "core.fsmonitor", "touch x"],
        &["find", ".", "-exec", "id", ";"],
        &["find", ".", "-execdir", "id", ";"],
        &["find", ".", "-ok", "id", ";"],
        &["find", ".", "-delete"],
        &["env", "sh"],
        &["nice", "id"],
        &["timeout", "5", "id"],
        &["xargs", "id"],
        &["python3", "-c", "print(1)"],
        &["perl", "-e", "print 1"],
        &["node", "-e", "1"],
    ];
    let mut programs: Vec<&str> = cases.iter().map(|c| c[0]).collect();
    programs.dedup();
    let on_path =
        |p: &&str| std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join(p).is_file());
    let programs: Vec<&str> = programs.into_iter().filter(on_path).collect();
    let list = programs.join(",");
    for case in cases.iter().filter(|c| programs.contains(&c[0])) {
        let r = run(&sb, &["--allowed-commands", &list], json!(case)).tool_err();
        assert!(
            r.stderr.contains("error (permission-denied): refused: `")
                && r.stderr.contains("(a command-argument rule)"),
            "{case:?}: {}",
            r.stderr
        );
    }
    assert!(!ran.exists(), "git ran the upload-pack program");
    // Harmless forms still run.
    let r = run(&sb, &["--allowed-commands", &list], json!(["find", ".", "-name", "hello.txt"])).ok();
    assert_eq!(r.stdout, "./hello.txt\n");
}

#[test]
fn the_model_key_is_never_passed_to_commands() {
    let sb = Sandbox::new();
    let r = sb.run_with_env(
        &["--allowed-commands", "env", "--command-env", "OPENAI_API_KEY", "tools"],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("commands.env: 'OPENAI_API_KEY' holds a model credential"), "{}", r.stderr);
    let r = sb.run_with_env(
        &["--allowed-commands", "env", "tool", "run_command", r#"{"command":["env"]}"#],
        &[("CORRAL_API_KEY", "sk-corral-secret")],
    );
    assert!(!r.stdout.contains("sk-corral") && r.stdout.contains("TMPDIR="), "{}", r.stdout);
}

fn git(ws: &Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(ws)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn real_work_runs_inside_git_python_make() {
    let sb = Sandbox::new();
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    git(&sb.ws, &["init", "-q"]);
    git(&sb.ws, &["add", "hello.txt"]);
    git(&sb.ws, &["commit", "-qm", "one"]);
    std::fs::write(sb.ws.join("hello.txt"), "hello\nthere\n").unwrap();
    let r = run(&sb, &["--allowed-commands", "git"], json!(["git", "status", "--short"])).ok();
    assert_eq!(r.stdout, " M hello.txt\n");
    let r = run(&sb, &["--allowed-commands", "git"], json!(["git", "diff"])).ok();
    assert!(r.stdout.contains("-world\n+there\n"), "{}", r.stdout);
    std::fs::write(sb.ws.join("Makefile"), "out.txt: hello.txt\n\ttr a-z A-Z < hello.txt > out.txt\n")
        .unwrap();
    let r = run(&sb, &["--allowed-commands", "make"], json!(["make"])).ok();
    assert!(!r.stdout.starts_with("Exit code"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(sb.ws.join("out.txt")).unwrap(), "HELLO\nTHERE\n");
    if Path::new("/usr/bin/python3").exists() {
        std::fs::write(
            sb.ws.join("job.py"),
            "import tempfile, pathlib\nwith tempfile.NamedTemporaryFile() as t: pass\n\
             pathlib.Path('py.txt').write_text(str(sum(range(10))))\n",
        )
        .unwrap();
        let r =
            run(&sb, &["--allowed-commands", "/usr/bin/python3"], json!(["/usr/bin/python3", "job.py"])).ok();
        assert_eq!(r.stdout.trim(), "(no output)", "{}", r.stdout);
        assert_eq!(std::fs::read_to_string(sb.ws.join("py.txt")).unwrap(), "45");
    }
}

#[test]
fn cargo_builds_a_small_crate_inside() {
    let sb = Sandbox::new();
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
    let cargo = Path::new(&cargo_home).join("bin/cargo");
    if !cargo.exists() {
        return;
    }
    std::fs::create_dir_all(sb.ws.join("tiny/src")).unwrap();
    std::fs::write(
        sb.ws.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(sb.ws.join("tiny/src/main.rs"), "fn main() { println!(\"tiny ran\"); }\n").unwrap();
    let cargo = cargo.to_str().unwrap();
    let flags = [
        "--allowed-commands",
        cargo,
        "--command-env",
        "CARGO_HOME",
        "--command-env",
        "RUSTUP_HOME",
        "--command-env",
        "RUSTUP_TOOLCHAIN",
    ];
    let mut envs = vec![("CARGO_HOME", cargo_home.as_str()), ("RUSTUP_HOME", rustup_home.as_str())];
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").unwrap_or_default();
    if !toolchain.is_empty() {
        envs.push(("RUSTUP_TOOLCHAIN", &toolchain));
    }
    let args = json!({"command": [cargo, "run", "--offline", "-q"], "cwd": "tiny", "timeout": 120});
    let mut all: Vec<&str> = flags.to_vec();
    let a = args.to_string();
    all.extend(["tool", "run_command", &a]);
    let r = sb.run_with_env(&all, &envs).ok();
    assert!(r.stdout.contains("tiny ran"), "{}", r.stdout);
    assert!(sb.ws.join("tiny/target/debug/tiny").is_file());
}
