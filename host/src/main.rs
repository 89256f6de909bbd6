//! The `corral` binary: parse the command line and run it.

fn main() {
    let cli = corral::cli::parse();
    std::process::exit(corral::cli::run(cli));
}
