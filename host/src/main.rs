//! The `corral` binary: parse the command line and run it.

use clap::Parser;

fn main() {
    corral::redact::harden_process();
    let cli = corral::cli::Cli::parse();
    std::process::exit(corral::cli::run(cli));
}
