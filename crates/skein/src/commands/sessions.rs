//! `skein sessions [PATHS]`: one row per main session, newest first, from the catalog (brought
//! up to date first). See `docs/catalog.md`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args as ClapArgs;
use skein_catalog::{SessionQuery, SessionRow};
use skein_layout::Env;
use skein_reports::pricing::PricingTable;

use super::catalog::QueryArgs;
use crate::cli::Format;
use crate::output::{Align, choose_format};
use crate::report::{RowWriter, exit_status};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// Transcript files, directories or archives (default: every catalogued session, after
    /// refreshing the Claude projects directories and the default archive).
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) query: QueryArgs,
    /// At most this many sessions.
    #[arg(long, short = 'n')]
    pub(crate) limit: Option<usize>,
}

const COLUMNS: [(&str, Align); 7] = [
    ("last activity", Align::Left),
    ("project", Align::Left),
    ("session", Align::Left),
    ("prompts", Align::Right),
    ("tools", Align::Right),
    ("cost", Align::Right),
    ("title", Align::Text),
];

fn cells(r: &SessionRow) -> Vec<String> {
    let when = r.last_timestamp.as_deref().map_or_else(
        || "-".into(),
        |t| t.chars().take(16).collect::<String>().replace('T', " "),
    );
    let title = crate::table::fit_end(r.title.as_deref().unwrap_or("-"), 60);
    vec![
        when,
        r.project.clone(),
        r.session_id.clone(),
        crate::table::thousands(r.prompts),
        crate::table::thousands(r.tool_calls),
        format!("{:.2}", r.cost_usd),
        title,
    ]
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let q = &args.query;
    let (since_ms, until_ms) = q.bounds()?;
    let (catalog, scope, report) = q.refreshed(env, &args.paths)?;
    let rows = catalog.sessions(
        &SessionQuery {
            project: q.project.clone(),
            since_ms,
            until_ms,
            paths: scope.explicit.then(|| report.paths.clone()),
            limit: args.limit,
        },
        &PricingTable::embedded(),
    )?;
    let format = choose_format(q.format);
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
        writeln!(
            out,
            "\nresume one: {}",
            crate::output::resume_command(
                &first.session_id,
                first.cwd.as_deref(),
                first.archived.then(|| std::path::Path::new(&first.path)),
                env
            )
        )?;
    }
    out.flush()?;
    Ok(exit_status(
        report.errors.is_empty() && report.refresh.errors.is_empty(),
    ))
}
