//! `skein check PATH...`: diagnostics per file, exit status 1 when an error-level one is found.
//! See `docs/reports/check.md`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args as ClapArgs, ValueEnum};
use skein_reports::check::{Diagnostic, Level, LevelCounts, check_session, codes};

use skein_layout::Env;

use crate::output::{Align, error_line};
use crate::report::{ReportArgs, RowWriter};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// List only diagnostics of this level or worse (the summary and the exit status count
    /// all of them).
    #[arg(long, value_enum, default_value = "info", value_name = "LEVEL")]
    pub(crate) severity: MinLevel,
}

/// The `--severity` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MinLevel {
    Info,
    Warning,
    Error,
}

impl MinLevel {
    fn level(self) -> Level {
        match self {
            MinLevel::Info => Level::Info,
            MinLevel::Warning => Level::Warning,
            MinLevel::Error => Level::Error,
        }
    }
}

fn location(d: &Diagnostic) -> String {
    match d.line {
        Some(l) => format!("{}:{l}", d.path),
        None => d.path.clone(),
    }
}

/// All columns left-aligned (messages read badly right-aligned).
const COLUMNS: [(&str, Align); 4] = [
    ("level", Align::Left),
    ("code", Align::Left),
    ("location", Align::Left),
    ("message", Align::Left),
];

fn cells(d: &Diagnostic) -> Vec<String> {
    vec![
        d.level.name().to_owned(),
        d.code.to_owned(),
        location(d),
        d.message.clone(),
    ]
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    if args.report.since.is_some() || args.report.until.is_some() {
        bail!("--since and --until do not apply to skein check");
    }
    if args.report.timezone.is_some() {
        bail!("--timezone does not apply to skein check");
    }
    let format = args.report.format();
    let min = args.severity.level();
    let (sessions, errors) = args.report.sessions_and_errors(env)?;
    let mut counts = LevelCounts::default();
    // An input that could not be read is an error of the run (exit 2), not a finding (exit 1),
    // as in every other command; it is still reported as a diagnostic row.
    let mut unreadable = false;
    let stdout = std::io::stdout();
    let mut w = RowWriter::new(format, std::io::BufWriter::new(stdout.lock()));
    let mut write = |d: Diagnostic| {
        counts.add(d.level);
        if d.code == codes::UNREADABLE.0 {
            unreadable = true;
            error_line(&format!("{}: {}", d.path, d.message));
        }
        if d.level < min {
            return Ok(());
        }
        w.row(&d, cells)
    };
    // Paths given on the command line that could not be listed (already named on stderr) are
    // diagnostics too.
    if !args.report.paths.is_empty() {
        for e in errors {
            write(Diagnostic {
                path: e.path.display().to_string(),
                line: None,
                offset: None,
                level: codes::UNREADABLE.1,
                code: codes::UNREADABLE.0,
                message: e.source.to_string(),
                session_id: String::new(),
                agent_id: None,
                uuid: None,
            })?;
        }
    }
    let files: usize = sessions.iter().map(|s| s.files().count()).sum();
    let jobs_ok = args.report.for_each_row(
        &sessions,
        |s, parser| Ok(check_session(s, parser, args.report.mmap)),
        &mut write,
    )?;
    w.finish(&COLUMNS)?;
    if !args.report.quiet {
        error_line(&format!(
            "checked {files} files in {} sessions: {} errors, {} warnings, {} info",
            sessions.len(),
            counts.error,
            counts.warning,
            counts.info
        ));
    }
    Ok(if !jobs_ok || unreadable {
        ExitCode::from(2)
    } else if counts.error > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
