//! Timing statistics, the markdown results table, and timed runs of external commands.

use anyhow::{Context, Result, bail};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

/// Order statistics of one measurement (nearest rank, so every figure is a real sample).
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub runs: usize,
    pub median: Duration,
    pub p90: Duration,
    pub min: Duration,
    pub max: Duration,
}

impl Stats {
    /// None when there are no samples.
    pub fn of(mut samples: Vec<Duration>) -> Option<Stats> {
        let last = samples.len().checked_sub(1)?;
        samples.sort_unstable();
        let rank = |q: f64| samples[(last as f64 * q).round() as usize];
        Some(Stats {
            runs: samples.len(),
            median: rank(0.5),
            p90: rank(0.9),
            min: samples[0],
            max: samples[last],
        })
    }
}

/// The unit a row is shown in.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Micros,
    Millis,
    /// A size in megabytes (10^6 bytes); see [`Row::bytes`].
    Megabytes,
}

impl Unit {
    fn show(self, d: Duration) -> String {
        match self {
            Unit::Micros => format!("{:.1} µs", d.as_secs_f64() * 1e6),
            Unit::Millis => format!("{:.1} ms", d.as_secs_f64() * 1e3),
            Unit::Megabytes => format!("{:.1} MB", d.as_nanos() as f64 / 1e6),
        }
    }
}

/// One line of the table: a measurement, or the reason it could not be taken.
pub struct Row {
    pub name: String,
    pub unit: Unit,
    pub result: Result<Stats, String>,
    /// The target and whether it was met (`<= 10 ms / met`), or empty.
    pub target: String,
}

/// A target with whether it was met: `<= 10 ms / met`.
pub fn target(t: &str, ok: bool) -> String {
    format!("{t} / {}", if ok { "met" } else { "NOT met" })
}

/// Whether a row's median is at most `limit`.
pub fn within(r: &Row, limit: Duration) -> bool {
    r.median().is_some_and(|m| m <= limit)
}

impl Row {
    pub fn new(
        name: impl Into<String>,
        unit: Unit,
        samples: Vec<Duration>,
        target: impl Into<String>,
    ) -> Row {
        let result = Stats::of(samples).ok_or_else(|| "no samples".to_string());
        Row { name: name.into(), unit, result, target: target.into() }
    }

    /// A row of sizes in bytes, shown in megabytes. The order statistics work on durations,
    /// so each size rides in one as one nanosecond per byte.
    pub fn bytes(name: impl Into<String>, samples: &[u64], target: impl Into<String>) -> Row {
        let carried = samples.iter().map(|&b| Duration::from_nanos(b)).collect();
        Row::new(name, Unit::Megabytes, carried, target)
    }

    pub fn skipped(name: impl Into<String>, why: impl Into<String>) -> Row {
        Row { name: name.into(), unit: Unit::Millis, result: Err(why.into()), target: String::new() }
    }

    pub fn median(&self) -> Option<Duration> {
        self.result.as_ref().ok().map(|s| s.median)
    }
}

/// The results so far: rows, notes printed under the table, and whether a section failed.
#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
    pub notes: Vec<String>,
    failed: bool,
}

impl Table {
    /// Adds a section's rows, or a row saying why the section failed.
    pub fn add(&mut self, section: &str, result: Result<Vec<Row>>) {
        match result {
            Ok(rows) => self.rows.extend(rows),
            Err(e) => {
                eprintln!("section '{section}' failed: {e:#}");
                let first = format!("{e:#}").lines().next().unwrap_or("").replace('|', "\\|");
                self.rows.push(Row::skipped(format!("section `{section}`"), format!("failed: {first}")));
                self.failed = true;
            }
        }
    }

    /// Prints the markdown table and the notes; fails if any section did.
    pub fn print(&self) -> ExitCode {
        println!("| measurement | runs | median | p90 | min | max | target / met |");
        println!("|---|---:|---:|---:|---:|---:|---|");
        for r in &self.rows {
            let t = &r.target;
            match &r.result {
                Ok(s) => {
                    let [a, b, c, d] = [s.median, s.p90, s.min, s.max].map(|x| r.unit.show(x));
                    println!("| {} | {} | {a} | {b} | {c} | {d} | {t} |", r.name, s.runs);
                }
                Err(why) => println!("| {} | - | {why} | | | | {t} |", r.name),
            }
        }
        if !self.notes.is_empty() {
            println!();
        }
        for n in &self.notes {
            println!("- {n}");
        }
        if self.failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
    }
}

/// Runs `cmd` to completion with its output captured, and times it. An exit code outside
/// `ok_codes` is an error that carries the command's stderr.
pub fn time_command(cmd: &mut Command, ok_codes: &[i32]) -> Result<(Duration, Output)> {
    cmd.stdin(Stdio::null());
    let started = Instant::now();
    let out = cmd.output().with_context(|| format!("cannot run {cmd:?}"))?;
    let took = started.elapsed();
    if !out.status.code().is_some_and(|c| ok_codes.contains(&c)) {
        bail!("{cmd:?} exited with {}:\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok((took, out))
}

/// `warmup` untimed runs of `cmd`, then the durations of `runs` more.
pub fn sample_command(
    mut cmd: impl FnMut() -> Command,
    ok_codes: &[i32],
    warmup: usize,
    runs: usize,
) -> Result<Vec<Duration>> {
    for _ in 0..warmup {
        time_command(&mut cmd(), ok_codes)?;
    }
    (0..runs).map(|_| time_command(&mut cmd(), ok_codes).map(|(d, _)| d)).collect()
}

/// The first line of `bytes`, at most 100 characters, for showing what a tool answered.
pub fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines().next().unwrap_or("").chars().take(100).collect()
}
