//! `skein completions SHELL` and `skein man`: generated from the same clap definition as the
//! parser, so they can never describe flags that do not exist.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory as _;

use crate::cli::Cli;

pub(crate) fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "skein", &mut out);
    write_stdout(&out)
}

/// The man page of `skein` with one section per subcommand, so `man skein` documents every
/// flag (clap_mangen renders one command per page; the subcommands' pages are appended).
pub(crate) fn man() -> Result<ExitCode> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        writeln!(out, ".SH \"SKEIN {}\"", sub.get_name().to_uppercase())?;
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
    }
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}
