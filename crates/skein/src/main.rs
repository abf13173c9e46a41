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
mod table;
mod term;
mod zone;

fn main() -> ExitCode {
    // The one place the environment is read; everything below takes it as a value.
    let env = skein_layout::Env::from_vars(|k| std::env::var_os(k));
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // `skein hook` fails open on its own arguments too (exit 2 on UserPromptSubmit would
        // erase the user's prompt): the error is logged and the hook runs with its defaults.
        Err(e) if commands::hook::is_hook_call(std::env::args_os().skip(1)) && e.use_stderr() => {
            return commands::hook::run_hook_after_bad_arguments(&e.to_string(), &env);
        }
        Err(e) => e.exit(),
    };
    skein_core::lines::set_default_max_line(cli.max_line);
    term::init(
        cli.color,
        cli.compact,
        &term::TermVars::read(|k| std::env::var_os(k)),
    );
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
