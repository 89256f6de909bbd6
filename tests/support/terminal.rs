//! Typing into corral in a pseudo-terminal: each line is typed once the screen shows the prompt
//! that waits for it (never after a fixed pause), and the whole screen is returned.

use std::io::{Read, Write};
use std::process::Child;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long one prompt may take to appear before the test fails with the screen so far.
const PROMPT_WAIT: Duration = Duration::from_secs(90);

/// The prompts corral reads a typed line at: the REPL's and an answer's (`›`), and the
/// workspace-trust question (`[y/N]`).
const PROMPTS: [&str; 2] = ["› ", "[y/N] "];

/// How many prompts the screen has shown.
pub fn prompts(screen: &str) -> usize {
    PROMPTS.iter().map(|p| screen.matches(p).count()).sum()
}

/// The default readiness rule: line `i` is typed at the `i + 1`-th prompt.
pub fn at_prompt(i: usize, screen: &str) -> bool {
    prompts(screen) > i
}

#[derive(Default)]
struct Screen {
    bytes: Mutex<(Vec<u8>, bool)>,
    grew: Condvar,
}

/// Types `lines` into `child` (a `script` process with piped stdio), line `i` once
/// `ready(i, screen)` holds, then closes its input and returns the screen.
pub fn drive(mut child: Child, lines: &[&str], ready: impl Fn(usize, &str) -> bool) -> String {
    let screen = Arc::new(Screen::default());
    let mut out = child.stdout.take().expect("stdout");
    let reader = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = out.read(&mut buf).unwrap_or(0);
                let mut s = screen.bytes.lock().unwrap();
                if n == 0 {
                    s.1 = true;
                } else {
                    s.0.extend_from_slice(&buf[..n]);
                }
                screen.grew.notify_all();
                if n == 0 {
                    return;
                }
            }
        })
    };
    let mut stdin = child.stdin.take().expect("stdin");
    for (i, l) in lines.iter().enumerate() {
        wait_until(&screen, |text| ready(i, text), &format!("the prompt for line {i} ({l:?})"));
        stdin.write_all(l.as_bytes()).expect("type");
        if !l.starts_with('\x03') {
            stdin.write_all(b"\r").expect("type");
        }
        stdin.flush().expect("type");
    }
    drop(stdin);
    let _ = child.wait();
    reader.join().expect("the reader thread");
    let s = screen.bytes.lock().unwrap();
    String::from_utf8_lossy(&s.0).into_owned()
}

fn wait_until(screen: &Screen, ready: impl Fn(&str) -> bool, what: &str) {
    let deadline = Instant::now() + PROMPT_WAIT;
    let mut s = screen.bytes.lock().unwrap();
    loop {
        let text = String::from_utf8_lossy(&s.0);
        if ready(&text) {
            return;
        }
        assert!(!s.1, "corral ended before {what}:\n{text}");
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "{what} did not appear:\n{text}");
        s = screen.grew.wait_timeout(s, left).unwrap().0;
    }
}
