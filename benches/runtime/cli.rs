//! Wall-clock measurements of the release binary: `corral tools` with a cold and a warm
//! component cache, `read_file` on a 1 MB file, and `grep` against ripgrep and GNU grep.

use crate::fixtures::{self, BIG_FILE, Tree};
use crate::report::{Row, Unit, first_line, sample_command, time_command};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

const COLD_RUNS: usize = 5;
const WARM_RUNS: usize = 30;
const READ_RUNS: usize = 20;
const GREP_RUNS: usize = 9;
/// Matches nothing, so every tool reads every file (corral's grep stops at 100 matches).
pub const NEVER: &str = "zqxjkvbw_never_matches";

/// The release binary with a private config dir, an empty workspace and a warm cache.
pub struct Corral {
    pub bin: PathBuf,
    pub config: TempDir,
    workspace: TempDir,
    pub warm_cache: TempDir,
}

impl Corral {
    pub fn new() -> Result<Corral> {
        // Cargo builds the package's binaries (same profile, target/release) for benches.
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_corral"));
        if !bin.is_file() {
            anyhow::bail!("{} is missing; run `cargo build --release` first", bin.display());
        }
        let tmp = || tempfile::tempdir().context("cannot create a temporary directory");
        Ok(Corral { bin, config: tmp()?, workspace: tmp()?, warm_cache: tmp()? })
    }

    /// `corral ARGS` with `cache` as its cache, run in the empty workspace.
    fn command(&self, cache: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .current_dir(self.workspace.path())
            .env("CORRAL_CACHE_DIR", cache)
            .env("CORRAL_CONFIG_DIR", self.config.path());
        for var in
            ["CORRAL_TIMEOUT_SECS", "CORRAL_MEMORY_MIB", "CORRAL_MAX_OUTPUT_KB", "CORRAL_NO_READ_GUARD"]
        {
            cmd.env_remove(var);
        }
        cmd
    }

    fn warm(&self, args: &[&str]) -> Command {
        self.command(self.warm_cache.path(), args)
    }

    /// `corral tools`, cold (a fresh cache directory per run) and warm.
    pub fn tools_rows(&self) -> Result<Vec<Row>> {
        let mut cold = Vec::with_capacity(COLD_RUNS);
        for _ in 0..COLD_RUNS {
            let cache = tempfile::tempdir().context("cannot create a cache directory")?;
            cold.push(time_command(&mut self.command(cache.path(), &["tools"]), &[0])?.0);
        }
        // The first warm-cache run compiles and stores every built-in; it is not counted.
        let (_, out) = time_command(&mut self.warm(&["tools"]), &[0])?;
        if !String::from_utf8_lossy(&out.stdout).contains("read_file") {
            anyhow::bail!("`corral tools` did not list read_file:\n{}", String::from_utf8_lossy(&out.stdout));
        }
        let warm = sample_command(|| self.warm(&["tools"]), &[0], 0, WARM_RUNS)?;
        let help = sample_command(|| self.warm(&["--help"]), &[0], 1, WARM_RUNS)?;
        let mut help = Row::new("`corral --help`", Unit::Millis, help, "");
        help.target =
            crate::report::target("<= 5 ms", crate::report::within(&help, Duration::from_millis(5)));
        Ok(vec![
            Row::new(
                "`corral tools`, cold cache (empty cache dir; built-ins precompiled)",
                Unit::Millis,
                cold,
                "",
            ),
            Row::new("`corral tools`, warm cache", Unit::Millis, warm, ""),
            help,
        ])
    }

    /// `corral tool read_file` on `big.txt` in the workspace.
    pub fn read_rows(&self) -> Result<Vec<Row>> {
        fixtures::write_big_file(self.workspace.path())?;
        let args = format!(r#"{{"file_path": "{BIG_FILE}"}}"#);
        let read = sample_command(|| self.warm(&["tool", "read_file", &args]), &[0], 1, READ_RUNS)?;
        Ok(vec![Row::new("`corral tool read_file` 1 MB (process wall time)", Unit::Millis, read, "")])
    }

    /// corral's grep, ripgrep and GNU grep over `tree` with a pattern that never matches:
    /// the rows, and notes on the tree, corral's answer and the corral/rg ratio. The tools
    /// take turns within each round, so a change in machine load hits them all alike.
    pub fn grep(&self, tree: &Tree) -> Result<(Vec<Row>, Vec<String>)> {
        let ws = tree.root.to_string_lossy().into_owned();
        let args = format!(r#"{{"pattern": "{NEVER}"}}"#);
        let corral_args = ["--workspace", ws.as_str(), "tool", "grep", args.as_str()];
        let external = |prog: &str, flags: &[&str]| {
            let mut c = Command::new(prog);
            c.args(flags).arg(NEVER).arg(&tree.root);
            c
        };
        let rg = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());
        // (name, target, command, the exit code that means "no match": 1 for rg and grep).
        let mut contenders =
            vec![("`corral tool grep` (warm cache)", "< 2x rg -j1", self.warm(&corral_args), 0)];
        if rg {
            let same_rules = external("rg", &["-j1", "--hidden", "--no-require-git"]);
            contenders.push(("`rg -j1`", "", external("rg", &["-j1"]), 1));
            contenders.push(("`rg -j1 --hidden --no-require-git` (corral's file rules)", "", same_rules, 1));
            contenders.push(("`rg` (all cores)", "", external("rg", &[]), 1));
        }
        contenders.push(("`grep -rn`", "", external("grep", &["-rn"]), 1));

        // Round 0 is untimed and warms the page cache; corral's answer is kept for the notes.
        let (_, out) = time_command(&mut contenders[0].2, &[0])?;
        let mut samples = vec![Vec::with_capacity(GREP_RUNS); contenders.len()];
        for round in 0..=GREP_RUNS {
            for ((_, _, cmd, code), s) in contenders.iter_mut().zip(&mut samples) {
                let (took, _) = time_command(cmd, &[*code])?;
                if round > 0 {
                    s.push(took);
                }
            }
        }
        let mut rows: Vec<Row> = contenders
            .iter()
            .zip(samples)
            .map(|((name, target, _, _), s)| Row::new(*name, Unit::Millis, s, *target))
            .collect();
        let mut ratio = "not measured: rg not installed".to_string();
        if rg && let (Some(c), Some(r)) = (rows[0].median(), rows[1].median()) {
            let x = c.as_secs_f64() / r.as_secs_f64();
            ratio = format!("{x:.2}x");
            rows[0].target = crate::report::target("<= 1.5x `rg -j1`", x <= 1.5);
        }
        if !rg {
            rows.insert(1, Row::skipped("`rg -j1`", "rg not installed (apt-get install ripgrep)"));
        }
        let notes = vec![
            format!(
                "grep tree: {}: {} files, {:.1} MB; pattern `{NEVER}`; corral answered {:?}",
                tree.origin,
                tree.files,
                tree.bytes as f64 / 1e6,
                first_line(&out.stdout)
            ),
            format!("corral grep / rg -j1 (medians): {ratio} (target: at most 1.5x)"),
        ];
        Ok((rows, notes))
    }
}
