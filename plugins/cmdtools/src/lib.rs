//! `run_command`: runs a program the user allowed, with an argument list, through the host's
//! `process` interface, and reports its exit code and output. Shell lines go to the host's
//! `run-shell`, which refuses them unless the user started corral with `--yolo`.

pub mod words;

use corral_plugin_sdk::args::opt_str;
use corral_plugin_sdk::host::{Command as HostCommand, Proc, ProcErrorCode, ProcOutput};
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};
use words::Command;

/// The longest timeout, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 120;
/// The timeout when none is given, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

pub fn spec() -> Spec {
    let mut spec = Spec::new(
        "run_command",
        "Run a program in the workspace and return its exit code and output. Give `command` as an \
         array: the program, then each argument, e.g. [\"cargo\", \"test\", \"-p\", \"core\"]. Only \
         programs the user allowed can run; there is no shell, so pipes, redirections, `&&`, variables \
         and globs do not work unless the user enabled shell commands. Output over 10 KB is saved to a \
         file under .corral/ and a preview is returned; read the rest with read_file. A non-zero exit \
         code is reported on the first line. Prefer read_file, grep and list_files for reading code.",
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": ["array", "string"],
                    "items": {"type": "string"},
                    "description": "The program and its arguments, e.g. [\"git\", \"status\", \"--short\"]"
                },
                "cwd": {
                    "type": "string",
                    "description": "Working directory, inside the workspace (default: the workspace root)"
                },
                "timeout": {
                    "type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS,
                    "description": "Seconds before the command and everything it started are killed (default 30)"
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    )
    .needs(Capability::Process)
    .open_world(true)
    .idempotent(false);
    // Commands can change anything the user's programs can, but not through the workspace
    // interface: the only capability is `process`.
    spec.read_only = false;
    spec.destructive = true;
    spec
}

/// The `timeout` argument in milliseconds, checked.
fn timeout_ms(args: &Value) -> Result<u32, ToolError> {
    let bad = || {
        ToolError::invalid_args(format!(
            "'timeout' must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"
        ))
    };
    let secs = match args.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_SECS,
        Some(Value::Number(n)) => {
            n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 1.0).ok_or_else(bad)? as u64
        }
        Some(Value::String(s)) => s.trim().parse::<u64>().map_err(|_| bad())?,
        Some(_) => return Err(bad()),
    };
    if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
        return Err(bad());
    }
    Ok((secs * 1000) as u32)
}

/// The text the model sees for a finished command.
pub fn render(out: &ProcOutput) -> String {
    let mut text = String::new();
    match out.exit_code {
        _ if out.timed_out => {}
        Some(0) => {}
        Some(code) => text.push_str(&format!("Exit code: {code}\n")),
        None => text.push_str("Killed by a signal\n"),
    }
    text.push_str(&out.stdout);
    if !out.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&out.stderr);
    }
    if out.stdout.is_empty() && out.stderr.is_empty() {
        text.push_str("(no output)");
    }
    if let Some(path) = &out.spilled {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[the output was long; all of it is in {path} for the next ten minutes: page through it with read_file]"
        ));
    }
    text
}

/// Runs the tool.
pub fn run(proc: &dyn Proc, args: &Value) -> Result<Output, ToolError> {
    let command =
        args.get("command").ok_or_else(|| ToolError::invalid_args("missing required field 'command'"))?;
    let command = words::parse(command)?;
    let cwd = opt_str(args, "cwd")?.map(str::trim).filter(|c| !c.is_empty()).map(String::from);
    let timeout = timeout_ms(args)?;
    let result = match &command {
        Command::Argv(argv) => {
            let cmd = HostCommand {
                program: argv[0].clone(),
                args: argv[1..].to_vec(),
                cwd: cwd.clone(),
                timeout_ms: Some(timeout),
                stdin: None,
            };
            proc.run(&cmd).map_err(ToolError::from)
        }
        Command::Shell { line, syntax } => proc.run_shell(line, cwd.as_deref(), Some(timeout)).map_err(|e| {
            if e.code == ProcErrorCode::Denied {
                ToolError::new(
                    ErrorKind::PermissionDenied,
                    format!("the command uses shell syntax ({syntax}), and shell commands are not allowed here"),
                )
                .with_hint(
                    "pass the program and its arguments as an array, e.g. [\"grep\", \"-rn\", \"TODO\", \"src\"]; \
                     run one program per call and filter output with the other tools",
                )
            } else {
                ToolError::from(e)
            }
        }),
    }?;
    if result.timed_out {
        return Err(ToolError::new(
            ErrorKind::Timeout,
            format!(
                "the command did not finish within {} s; it and everything it started were stopped. Output so far:\n{}",
                timeout / 1000,
                render(&result)
            ),
        )
        .with_hint("raise 'timeout' (at most 120), or run something shorter"));
    }
    Ok(Output::text(render(&result)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::host::process::Call;
    use corral_plugin_sdk::host::{FakeProc, ProcError};

    #[test]
    fn spec_declares_process_and_open_world() {
        let s = spec();
        assert_eq!(s.name, "run_command");
        assert_eq!(s.capabilities, vec![Capability::Process]);
        assert!(!s.read_only && s.open_world && !s.idempotent);
        assert_eq!(s.schema["required"], json!(["command"]));
        assert_eq!(s.schema["properties"]["timeout"]["maximum"], 120);
    }

    #[test]
    fn arrays_run_as_argument_lists_with_cwd_and_timeout() {
        let p = FakeProc::new().exits(0, "ok\n");
        let out = run(&p, &json!({"command": ["git", "status"], "cwd": "sub", "timeout": 5})).unwrap();
        assert_eq!(out.text, "ok\n");
        let calls = p.calls.borrow();
        let Call::Run(c) = &calls[0] else { panic!("{calls:?}") };
        assert_eq!((c.program.as_str(), c.args.clone()), ("git", vec!["status".to_string()]));
        assert_eq!((c.cwd.as_deref(), c.timeout_ms), (Some("sub"), Some(5000)));
        assert_eq!(c.stdin, None);
    }

    #[test]
    fn plain_strings_are_split_and_shell_lines_go_to_the_shell() {
        let p = FakeProc::new().exits(0, "").exits(0, "3\n");
        run(&p, &json!({"command": "ls -la src"})).unwrap();
        let out = run(&p, &json!({"command": "ls | wc -l"})).unwrap();
        assert_eq!(out.text, "3\n");
        let calls = p.calls.borrow();
        assert!(matches!(&calls[0], Call::Run(c) if c.program == "ls" && c.args == ["-la", "src"]));
        assert_eq!(calls[1], Call::Shell { line: "ls | wc -l".into(), cwd: None, timeout_ms: Some(30_000) });
    }

    #[test]
    fn a_refused_shell_line_says_how_to_run_it_instead() {
        let denied = ProcError { code: ProcErrorCode::Denied, message: "shell lines are refused".into() };
        let p = FakeProc::new().answer(Err(denied));
        let e = run(&p, &json!({"command": "cat a.txt | grep x"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PermissionDenied);
        assert_eq!(e.message, "the command uses shell syntax (|), and shell commands are not allowed here");
        assert!(e.hint.unwrap().contains("as an array"));
    }

    #[test]
    fn output_names_the_exit_code_stderr_and_the_spill_file() {
        let out = ProcOutput {
            exit_code: Some(101),
            stdout: "running 3 tests".into(),
            stderr: "test failed\n".into(),
            timed_out: false,
            spilled: Some(".corral/cmd_output_abc.txt".into()),
        };
        assert_eq!(
            render(&out),
            "Exit code: 101\nrunning 3 tests\n[stderr]\ntest failed\n[the output was long; all of it is in \
             .corral/cmd_output_abc.txt for the next ten minutes: page through it with read_file]"
        );
        assert_eq!(render(&ProcOutput { exit_code: Some(0), ..ProcOutput::default() }), "(no output)");
        assert!(render(&ProcOutput::default()).starts_with("Killed by a signal\n"));
    }

    #[test]
    fn timeouts_are_checked_and_reported() {
        for bad in [json!(0), json!(121), json!(1.5), json!("x"), json!(true)] {
            let e = run(&FakeProc::new(), &json!({"command": ["true"], "timeout": bad})).unwrap_err();
            assert!(e.message.contains("from 1 to 120"), "{bad}: {}", e.message);
        }
        let p = FakeProc::new().answer(Ok(ProcOutput {
            timed_out: true,
            stdout: "partial".into(),
            ..Default::default()
        }));
        let e = run(&p, &json!({"command": ["sleep", "9"], "timeout": 2})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Timeout);
        assert!(
            e.message.starts_with("the command did not finish within 2 s") && e.message.contains("partial")
        );
    }

    #[test]
    fn host_errors_become_tool_errors() {
        let p = FakeProc::new().answer(Err(ProcError {
            code: ProcErrorCode::Denied,
            message: "'rm' is not an allowed command (allowed: ls)".into(),
        }));
        let e = run(&p, &json!({"command": ["rm", "-rf", "x"]})).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::PermissionDenied, "'rm' is not an allowed command (allowed: ls)")
        );
        let e = run(&FakeProc::new(), &json!({})).unwrap_err();
        assert!(e.message.contains("'command'"));
    }
}
