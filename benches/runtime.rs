//! Runtime benchmarks: `cargo bench --bench runtime [-- SECTION...]`, where a SECTION is
//! `inproc`, `tools`, `read`, `grep`, `agent`, `parallel`, `skills`, `context`, `windows`, `spawn`, `mcp`
//! (default: these eleven) or `examples`. Prints a markdown table of the
//! median, p90, min and max of repeated runs; BENCHMARKS.md has the figures and their reading.
//!
//! Cargo builds the release `corral` binary before it runs a bench (CARGO_BIN_EXE_corral);
//! the `faulty` test plugin is built with cargo if it is missing. The grep comparison wants
//! `rg` (ripgrep) and GNU grep on PATH; without rg its row says so instead of failing. The
//! agent section runs scripted sessions against the test model server (tests/support).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout, clippy::print_stderr)]

#[path = "runtime/agent.rs"]
mod agent;
#[path = "runtime/cli.rs"]
mod cli;
#[path = "runtime/context.rs"]
mod context;
#[path = "runtime/examples.rs"]
mod examples;
#[path = "runtime/fixtures.rs"]
mod fixtures;
#[path = "runtime/inproc.rs"]
mod inproc;
#[path = "runtime/mcp.rs"]
mod mcp;
#[path = "runtime/parallel.rs"]
mod parallel;
#[path = "runtime/report.rs"]
mod report;
#[path = "runtime/skills.rs"]
mod skills;
#[path = "../tests/support/small_window.rs"]
mod small_window;
#[path = "runtime/spawn.rs"]
mod spawn;
#[path = "../tests/support/mod.rs"]
mod support;
#[path = "runtime/windows.rs"]
mod windows;

use std::process::ExitCode;

const SECTIONS: [&str; 12] = [
    "inproc", "tools", "read", "grep", "agent", "parallel", "skills", "context", "windows", "spawn", "mcp",
    "examples",
];

fn main() -> ExitCode {
    // cargo passes `--bench`; other arguments choose sections.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if let Some(bad) = only.iter().find(|o| !SECTIONS.contains(&o.as_str())) {
        eprintln!("unknown section '{bad}': choose among {}", SECTIONS.join(", "));
        return ExitCode::from(2);
    }
    // The examples section builds four guest toolchains' components: only when asked for.
    let wanted = |s: &str| (only.is_empty() && s != "examples") || only.iter().any(|o| o == s);
    let mut table = report::Table::default();
    // The sections that run the corral binary go first: a child's peak RSS as the kernel
    // reports it (wait4's ru_maxrss) starts from the spawning process's own peak (the child
    // shares its memory until exec), so the agent figures must be taken while this process
    // is still small, before the in-process sections grow it.
    match cli::Corral::new() {
        Err(e) => table.add("binary", Err(e)),
        Ok(c) => {
            if wanted("tools") {
                eprintln!("corral tools, cold and warm...");
                table.add("tools", c.tools_rows());
            }
            if wanted("read") {
                eprintln!("corral tool read_file...");
                table.add("read", c.read_rows());
            }
            if wanted("grep") {
                eprintln!("grep over a source tree (copied first)...");
                let grep = fixtures::grep_tree().and_then(|tree| c.grep(&tree)).map(|(rows, notes)| {
                    table.notes.extend(notes);
                    rows
                });
                table.add("grep", grep);
            }
            if wanted("agent") {
                eprintln!("scripted agent sessions (read_file, grep, edit_file, answer)...");
                let agent = agent::rows(&c).map(|(rows, notes)| {
                    table.notes.extend(notes);
                    rows
                });
                table.add("agent", agent);
            }
            if wanted("parallel") {
                eprintln!("one reply of read-only calls, side by side and one at a time...");
                table.add("parallel", parallel::rows(&c));
            }
            if wanted("mcp") {
                eprintln!("corral mcp serve: start to tools/list, and calls over stdio...");
                table.add("mcp", mcp::rows(&c));
            }
            if wanted("windows") {
                eprintln!("the small-window task at 4K, 8K and 16K...");
                let rows = windows::rows(&c).map(|(rows, notes)| {
                    table.notes.extend(notes);
                    rows
                });
                table.add("windows", rows);
            }
        }
    }
    if wanted("inproc") {
        eprintln!("in-process calls...");
        table.add("inproc", inproc::rows());
    }
    if wanted("skills") {
        eprintln!("skills: loads and calls in-process...");
        let skills = skills::rows().map(|(rows, notes)| {
            table.notes.extend(notes);
            rows
        });
        table.add("skills", skills);
    }
    if wanted("examples") {
        eprintln!("example plugins (Rust, Python, JavaScript, C)...");
        table.add("examples", examples::rows());
    }
    if wanted("spawn") {
        eprintln!("spawn: a command with and without the sandbox...");
        table.add("spawn", spawn::rows());
    }
    if wanted("context") {
        eprintln!("context: estimate and compact a 200,000-token transcript...");
        let ctx = context::rows().map(|(rows, notes)| {
            table.notes.extend(notes);
            rows
        });
        table.add("context", ctx);
    }
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("\n## corral runtime benchmarks ({cpus} CPUs)\n");
    table.print()
}
