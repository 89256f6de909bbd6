//! From the process's arguments to a `Cli`: subcommand help without the top-level options,
//! and a command line that names no subcommand parsed without building the subcommands.

use super::{Cli, Command, GlobalArgs};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;

/// Parses the command line. A subcommand's help lists its own options and the sandbox's (the
/// options without a heading); the others stay accepted there but are listed by `corral --help`
/// and `corral exec --help` only.
pub fn parse() -> Cli {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // Building the command line's description costs about a millisecond: only for help.
    if let Some(code) = subcommand_help(Cli::command, &argv) {
        std::process::exit(code);
    }
    if let Some(cli) = without_subcommands(&argv) {
        return cli;
    }
    Cli::parse_from(argv)
}

/// The top-level command line without its subcommands: `corral [OPTIONS] [TASK]`. It must
/// declare what `Cli` declares but the subcommand (a unit test holds the two together).
#[derive(Debug, Parser)]
#[command(name = "corral", version)]
struct TopLevel {
    #[command(flatten)]
    global: GlobalArgs,
    task: Option<String>,
}

/// Parses a command line that names no subcommand without building the subcommands: clap
/// copies every global option into every subcommand when it builds a command (53 options into
/// 15 subcommands, 1.3 ms of a 12 ms warm start). When no word is a subcommand's name, none
/// can be chosen and the result is the one `Cli` gives. `None` for anything else and for any
/// error, which the whole command line then reports in its own words (`--version` is answered
/// here: its text does not depend on the subcommands).
fn without_subcommands(argv: &[OsString]) -> Option<Cli> {
    let names_one = |a: &OsString| a.to_str().is_none_or(|w| w == "help" || Command::has_subcommand(w));
    if argv.iter().skip(1).any(names_one) {
        return None;
    }
    match TopLevel::command().try_get_matches_from(argv) {
        Ok(m) => {
            TopLevel::from_arg_matches(&m).ok().map(|t| Cli { global: t.global, task: t.task, command: None })
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => e.exit(),
        Err(_) => None,
    }
}

/// Prints the help of the subcommand `argv` asks it of (`corral tool --help`, `corral plugin
/// add -h`), without the options listed by `corral --help`; `None` when it asks no such help.
fn subcommand_help(cmd: impl FnOnce() -> clap::Command, argv: &[OsString]) -> Option<i32> {
    let args: Vec<&str> = argv.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let long = args.contains(&"--help");
    if !long && !args.contains(&"-h") {
        return None;
    }
    let mut cmd = cmd();
    if subcommand_path(&cmd, &args).is_empty() && !args.contains(&"help") {
        // `corral --help` (or the error that comes before it). Its text needs no subcommand
        // built: with the options made local, none is copied into them.
        let mut top = cmd.mut_args(|a| a.global(false));
        return match top.try_get_matches_from_mut(argv) {
            Ok(_) => None,
            Err(e) => e.exit(),
        };
    }
    cmd.build();
    let path = subcommand_path(&cmd, &args);
    if path.first().is_none_or(|p| p == "exec") {
        return None;
    }
    let headed: Vec<clap::Id> =
        cmd.get_arguments().filter(|a| a.get_help_heading().is_some()).map(|a| a.get_id().clone()).collect();
    let mut sc = cmd.find_subcommand(&path[0])?.clone();
    for name in &path[1..] {
        sc = sc.find_subcommand(name)?.clone();
    }
    let mut sc = hide_args(sc, &headed).bin_name(format!("corral {}", path.join(" ")));
    let shown = if long { sc.print_long_help() } else { sc.print_help() };
    Some(if shown.is_ok() { 0 } else { 1 })
}

/// The words of `args` naming subcommands of `cmd`, in order.
fn subcommand_path(cmd: &clap::Command, args: &[&str]) -> Vec<String> {
    let mut path = Vec::new();
    let mut at = cmd;
    for word in args {
        if let Some(sc) = at.find_subcommand(word) {
            path.push(sc.get_name().to_string());
            at = sc;
        }
    }
    path
}

/// `cmd` and its subcommands with the arguments `ids` hidden from their help.
fn hide_args(mut cmd: clap::Command, ids: &[clap::Id]) -> clap::Command {
    for id in ids {
        if cmd.get_arguments().any(|a| a.get_id() == id) {
            cmd = cmd.mut_arg(id, |a| a.hide(true));
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("corral").chain(words.iter().copied()).map(OsString::from).collect()
    }

    /// What decides a parse: each argument's id, kind, names and arity.
    fn shape(cmd: &clap::Command) -> Vec<String> {
        let mut args: Vec<String> = cmd
            .get_arguments()
            .map(|a| {
                format!(
                    "{} positional={} global={} long={:?} short={:?} num_args={:?} action={:?} values={:?}",
                    a.get_id(),
                    a.is_positional(),
                    a.is_global_set(),
                    a.get_long(),
                    a.get_short(),
                    a.get_num_args(),
                    a.get_action(),
                    a.get_value_names()
                )
            })
            .collect();
        args.sort();
        args
    }

    #[test]
    fn the_top_level_declares_what_cli_declares_but_the_subcommands() {
        let (top, cli) = (TopLevel::command(), Cli::command());
        assert_eq!(shape(&top), shape(&cli));
        assert!(!shape(&cli).is_empty());
        assert_eq!((top.get_name(), top.get_version()), (cli.get_name(), cli.get_version()));
    }

    #[test]
    fn a_command_line_naming_no_subcommand_parses_as_the_whole_one_does() {
        for words in [
            &[][..],
            &["fix the tests"],
            &["--model", "m", "--max-turns", "3", "-v", "task"],
            &["--add-dir", "/a", "--add-dir=/b", "--color", "never", "t"],
            &["-", "--ci"],
            &["--", "--model"],
            &["serve"],
        ] {
            let fast =
                without_subcommands(&argv(words)).unwrap_or_else(|| panic!("{words:?} took the whole parse"));
            let whole = Cli::try_parse_from(argv(words)).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{whole:?}"), "{words:?}");
        }
    }

    #[test]
    fn a_word_naming_a_subcommand_or_an_error_is_left_to_the_whole_command_line() {
        for words in [
            &["tools"][..],
            &["help"],
            &["--model", "tools", "task"],
            &["t", "exec"],
            &["--bogus"],
            &["a", "b"],
            &["--max-turns", "x"],
        ] {
            assert!(without_subcommands(&argv(words)).is_none(), "{words:?}");
        }
        // The whole parse then chooses the subcommand or words the error.
        let whole = Cli::try_parse_from(argv(&["--model", "tools", "task"])).unwrap();
        assert!(whole.command.is_none() && whole.task.as_deref() == Some("task"));
        let err = Cli::try_parse_from(argv(&["a", "b"])).unwrap_err().to_string();
        assert!(err.contains("[COMMAND]"), "{err}");
    }
}
