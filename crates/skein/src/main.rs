//! The `skein` binary: argument parsing and wiring; the work lives in the library crates.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the binary is where files, the environment and the clock are read"
)]

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod inputs;
mod output;
mod report;
mod zone;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    skein_core::lines::set_default_max_line(cli.max_line);
    // The one place the environment is read; everything below takes it as a value.
    let env = skein_layout::Env::from_vars(|k| std::env::var_os(k));
    match commands::run(cli, &env) {
        Ok(code) => code,
        Err(err) => {
            if output::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            output::error_line(&output::error_text(&err));
            ExitCode::from(2)
        }
    }
}
