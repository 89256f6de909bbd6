//! The `corral` binary: parse the command line and run it.

fn main() {
    corral::redact::harden_process();
    let cli = corral::cli::parse();
    std::process::exit(corral::cli::run(cli));
}
