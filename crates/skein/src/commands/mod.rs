//! One module per subcommand.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Cli, Command};

mod stats;

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Stats(args) => stats::run(&args),
    }
}
