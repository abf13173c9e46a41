//! One module per subcommand.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub(crate) mod archive;
pub(crate) mod check;
pub(crate) mod hook;
pub(crate) mod passes;
pub(crate) mod show;
pub(crate) mod skills;
mod stats;
pub(crate) mod statusline;
pub(crate) mod tools;
pub(crate) mod tree;
pub(crate) mod usage;

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Stats(args) => stats::run(&args),
        Command::Usage(args) => usage::run(&args),
        Command::Tools(args) => tools::run(&args),
        Command::Skills(args) => skills::run(&args),
        Command::Tree(args) => tree::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Show(args) => show::run(&args),
        Command::Hook(args) => Ok(hook::run_hook(&args)),
        Command::Hooks(args) => hook::run_hooks(&args),
        Command::Prune(args) => passes::prune(&args),
        Command::Snapshot(args) => passes::snapshot(&args),
        Command::Redact(args) => passes::redact(&args),
        Command::Archive(args) => archive::run(&args),
        Command::Compress(args) => archive::compress(&args),
        Command::Decompress(args) => archive::decompress(&args),
        Command::Cat(args) => archive::cat(&args),
        Command::Statusline(args) => statusline::run(&args),
    }
}
