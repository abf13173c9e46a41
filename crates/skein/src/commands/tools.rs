//! `skein tools` (being written).

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args as ClapArgs;

use crate::report::ReportArgs;

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let _ = args;
    bail!("skein tools is not available yet")
}
