//! `skein sessions [PATHS]`: one row per main session, newest first, from the catalog (brought
//! up to date first). See `docs/catalog.md`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args as ClapArgs;
use skein_app::catalog::Scope;
use skein_catalog::{SessionQuery, SessionRow};
use skein_core::time::{Day, Zone};
use skein_layout::Env;
use skein_reports::pricing::PricingTable;

use super::catalog::{CatalogArgs, refresh};
use crate::cli::Format;
use crate::output::{Align, choose_format};
use crate::report::{RowWriter, exit_status};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// Transcript files, directories or archives (default: every catalogued session, after
    /// refreshing the Claude projects directories and the default archive).
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) catalog: CatalogArgs,
    /// Only sessions whose project directory name contains this text.
    #[arg(long)]
    pub(crate) project: Option<String>,
    /// Only sessions active on or after this day (YYYY-MM-DD, in --timezone).
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Only sessions active on or before this day (YYYY-MM-DD, in --timezone).
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// The zone of --since/--until days: an IANA name, a fixed offset, or `local` (default:
    /// `TZ`, else the system zone).
    #[arg(long, value_name = "ZONE")]
    pub(crate) timezone: Option<String>,
    /// At most this many sessions.
    #[arg(long, short = 'n')]
    pub(crate) limit: Option<usize>,
    /// The archive refreshed when no paths are given (default: `<state>/archive`).
    #[arg(long, value_name = "DIR")]
    pub(crate) archive: Option<PathBuf>,
    /// Output format (default: table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<Format>,
    /// Parsing threads for the refresh (default: all cores).
    #[arg(long, short = 'j')]
    pub(crate) threads: Option<usize>,
    /// No progress bar and no warnings.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

const COLUMNS: [(&str, Align); 7] = [
    ("last activity", Align::Left),
    ("project", Align::Left),
    ("session", Align::Left),
    ("prompts", Align::Right),
    ("tools", Align::Right),
    ("cost", Align::Right),
    ("title", Align::Left),
];

fn cells(r: &SessionRow) -> Vec<String> {
    let when = r.last_timestamp.as_deref().map_or_else(
        || "-".into(),
        |t| t.chars().take(16).collect::<String>().replace('T', " "),
    );
    let title: String = r.title.as_deref().unwrap_or("-").chars().take(60).collect();
    vec![
        when,
        r.project.clone(),
        r.session_id.clone(),
        r.prompts.to_string(),
        r.tool_calls.to_string(),
        format!("{:.2}", r.cost_usd),
        title,
    ]
}

/// The bounds in ms of `--since` (start of that day) and `--until` (end of that day) in
/// `zone`.
pub(crate) fn bounds(
    since: Option<&str>,
    until: Option<&str>,
    zone: &Zone,
) -> Result<(Option<i64>, Option<i64>)> {
    let day = |flag: Option<&str>| -> Result<Option<Day>> { Ok(flag.map(Day::parse).transpose()?) };
    let since = day(since)?.map(|d| zone.start_of_day(d));
    let until = day(until)?.map(|d| zone.start_of_day(Day::from_days(d.days_since_epoch() + 1)));
    Ok((since, until))
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let zone = crate::zone::resolve(args.timezone.as_deref())?;
    let (since_ms, until_ms) = bounds(args.since.as_deref(), args.until.as_deref(), &zone)?;
    let query = SessionQuery {
        project: args.project.clone(),
        since_ms,
        until_ms,
        paths: None,
        limit: args.limit,
    };
    let mut catalog = args.catalog.open(env, args.quiet)?;
    let scope = Scope::of(env, &args.paths, args.archive.as_deref());
    let report = refresh(&mut catalog, &scope, args.threads.unwrap_or(0), args.quiet)?;
    let rows = catalog.sessions(
        &SessionQuery {
            paths: scope.explicit.then(|| report.paths.clone()),
            ..query
        },
        &PricingTable::embedded(),
    )?;
    let format = choose_format(args.format);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut w = RowWriter::new(format, &mut out);
    for r in &rows {
        w.row(r, cells)?;
    }
    w.finish(&COLUMNS)?;
    if format == Format::Table
        && let Some(first) = rows.first()
    {
        writeln!(out, "\nresume one: claude --resume {}", first.session_id)?;
    }
    out.flush()?;
    Ok(exit_status(
        report.errors.is_empty() && report.refresh.errors.is_empty(),
    ))
}
