//! The `corral` binary: parse the command line and run it.

use clap::Parser;

fn main() {
    let cli = corral::cli::Cli::parse();
    std::process::exit(corral::cli::run(cli));
}
