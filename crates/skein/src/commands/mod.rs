//! One module per subcommand.

use std::process::ExitCode;

use anyhow::Result;

use skein_layout::Env;

use crate::cli::{Cli, Command};

pub(crate) mod archive;
pub(crate) mod catalog;
pub(crate) mod check;
pub(crate) mod config;
mod docs;
pub(crate) mod export;
pub(crate) mod hook;
pub(crate) mod index;
pub(crate) mod passes;
pub(crate) mod records;
pub(crate) mod redaction;
pub(crate) mod search;
pub(crate) mod sessions;
pub(crate) mod show;
pub(crate) mod skills;
mod stats;
pub(crate) mod statusline;
pub(crate) mod tools;
pub(crate) mod tree;
pub(crate) mod usage;

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli, env: &Env) -> Result<ExitCode> {
    let mut command = cli.command;
    config::apply(&mut command, env)?;
    match command {
        Command::Stats(args) => stats::run(&args),
        Command::Usage(args) => usage::run(&args, env),
        Command::Tools(args) => tools::run(&args, env),
        Command::Records(args) => records::run(&args),
        Command::Skills(args) => skills::run(&args, env),
        Command::Tree(args) => tree::run(&args, env),
        Command::Check(args) => check::run(&args, env),
        Command::Show(args) => show::run(&args, env),
        Command::Hook(args) => Ok(hook::run_hook(&args, env)),
        Command::Hooks(args) => hook::run_hooks(&args, env),
        Command::Prune(args) => passes::prune(&args, env),
        Command::Snapshot(args) => passes::snapshot(&args, env),
        Command::Redact(args) => passes::redact(&args, env),
        Command::Archive(args) => archive::run(&args, env),
        Command::Compress(args) => archive::compress(&args),
        Command::Decompress(args) => archive::decompress(&args),
        Command::Cat(args) => archive::cat(&args),
        Command::Index(args) => index::run(&args, env),
        Command::Sessions(args) => sessions::run(&args, env),
        Command::Search(args) => search::run(&args, env),
        Command::Export(args) => export::run(&args, env),
        Command::Statusline(args) => statusline::run(&args, env),
        Command::Config(args) => config::run(&args, env),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man => docs::man(),
    }
}
