//! What the catalog-backed commands share: `--catalog PATH`, opening the catalog (from the
//! flag, the config's `[catalog] path`, else `<state>/catalog.db`), and refreshing it for
//! the command's scope with a progress bar on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use skein_app::catalog::Scope;
use skein_catalog::{Catalog, CatalogOptions, Opened, RootsReport};
use skein_layout::Env;

use crate::output::{error_line, warning_line};

mod remembered;
mod report;

pub(crate) use remembered::Remembered;
pub(crate) use report::for_report;

/// The catalog flags.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CatalogArgs {
    /// The catalog file (default: the config's `[catalog] path`, else
    /// `$XDG_STATE_HOME/skein/catalog.db`).
    #[arg(long, value_name = "PATH")]
    pub(crate) catalog: Option<PathBuf>,
    /// Bytes of text indexed per tool result or tool input block.
    #[arg(long, value_name = "BYTES", default_value_t = skein_catalog::DEFAULT_RESULT_CAP)]
    pub(crate) result_cap: usize,
}

/// What the commands that refresh a scope share (`index`, `sessions`, `search`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct RefreshArgs {
    #[command(flatten)]
    pub(crate) catalog: CatalogArgs,
    /// The archive refreshed when no paths are given (default: the config's `[archive] dir`,
    /// else `<state>/archive`).
    #[arg(long, value_name = "DIR")]
    pub(crate) archive: Option<PathBuf>,
    /// Parsing threads for the refresh (default: all cores).
    #[arg(long, short = 'j')]
    pub(crate) threads: Option<usize>,
    /// No progress bar and no warnings.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

impl RefreshArgs {
    /// The catalog, brought up to date for `paths` (else the default roots and archive).
    pub(crate) fn refreshed(
        &self,
        env: &Env,
        catalog: Catalog,
        paths: &[PathBuf],
    ) -> Result<(Catalog, Scope, RootsReport)> {
        let mut catalog = catalog;
        let archive = super::config::archive_dir_or_none(env, self.archive.as_deref())?;
        let scope = Scope::of(env, paths, archive.as_deref());
        let report = refresh(
            &mut catalog,
            &scope,
            self.threads.unwrap_or(0),
            self.quiet,
            None,
        )?;
        Ok((catalog, scope, report))
    }
}

/// The filters and the output format of `sessions` and `search`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct QueryArgs {
    #[command(flatten)]
    pub(crate) refresh: RefreshArgs,
    /// Only sessions whose project directory name contains this text.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) project: Option<String>,
    /// From this day (YYYY-MM-DD, in --timezone), time (RFC 3339) or duration ago (7d, 12h)
    /// on: sessions active, records written.
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Up to this day (inclusive), time or duration ago: sessions active, records written.
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// The zone of --since/--until days: an IANA name, a fixed offset, or `local` (default:
    /// `TZ`, else the system zone).
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub(crate) timezone: Option<String>,
    /// Output format (default: a table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<crate::cli::Format>,
}

impl QueryArgs {
    /// `--since` (start of that day) and `--until` (end of that day) in ms, in the zone.
    pub(crate) fn bounds(&self) -> Result<(Option<i64>, Option<i64>)> {
        let zone = crate::zone::resolve(self.timezone.as_deref())?;
        let range = crate::zone::date_range(
            self.since.as_deref(),
            self.until.as_deref(),
            crate::zone::now_ms(),
        )?;
        Ok(range.bounds_ms(&zone))
    }

    /// The catalog opened and brought up to date for `paths`.
    pub(crate) fn refreshed(
        &self,
        env: &Env,
        paths: &[PathBuf],
    ) -> Result<(Catalog, Scope, RootsReport)> {
        let r = &self.refresh;
        r.refreshed(env, r.catalog.open(env, r.quiet)?, paths)
    }
}

impl CatalogArgs {
    /// The catalog file.
    pub(crate) fn path(&self, env: &Env) -> Result<PathBuf> {
        if let Some(p) = &self.catalog {
            return Ok(p.clone());
        }
        if let Some(p) = &super::config::load(env)?.catalog_path {
            return Ok(p.clone());
        }
        skein_catalog::default_path(env)
            .context("no catalog path: give --catalog, or set HOME or XDG_STATE_HOME")
    }

    /// How to open the catalog: the cap, and redaction as the config says (`redact`,
    /// `[redaction]`: the rules the hook's `index` pass uses, so both build one catalog alike).
    pub(crate) fn options(&self, env: &Env) -> Result<CatalogOptions> {
        let config = super::config::load(env)?;
        Ok(CatalogOptions {
            result_cap: self.result_cap,
            redact: config.redact.then(|| config.redaction.clone()),
            ..CatalogOptions::default()
        })
    }

    /// Opens the catalog, saying on stderr when an unusable one was rebuilt.
    pub(crate) fn open(&self, env: &Env, quiet: bool) -> Result<Catalog> {
        self.open_with(env, quiet, self.options(env)?)
    }

    /// [`CatalogArgs::open`] for `skein index`, whose whole job is to write: it waits up to a
    /// minute for another writer (a cold index of a large tree holds the write lock for seconds
    /// at a time) where the reports wait 5 s and then scan the transcripts instead.
    pub(crate) fn open_to_write(&self, env: &Env, quiet: bool) -> Result<Catalog> {
        let options = CatalogOptions {
            busy_timeout: std::time::Duration::from_secs(60),
            ..self.options(env)?
        };
        self.open_with(env, quiet, options)
    }

    fn open_with(&self, env: &Env, quiet: bool, options: CatalogOptions) -> Result<Catalog> {
        let path = self.path(env)?;
        let c = Catalog::open(&path, options)
            .with_context(|| format!("cannot open the catalog {}", path.display()))?;
        if let Opened::Rebuilt(reason) = c.opened()
            && !quiet
        {
            warning_line(&format!(
                "catalog {} was unusable ({reason}); rebuilding it",
                path.display()
            ));
        }
        Ok(c)
    }
}

/// Refreshes `catalog` for `scope`, with a byte progress bar on a terminal.
pub(crate) fn refresh(
    catalog: &mut Catalog,
    scope: &Scope,
    threads: usize,
    quiet: bool,
    defer_above: Option<u64>,
) -> Result<RootsReport> {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} indexing {bytes}/{total_bytes} {wide_bar} {bytes_per_sec} {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok());
    let report = skein_app::catalog::refresh(catalog, scope, threads, now, defer_above, &mut |p| {
        bar.set_length(p.bytes_total.max(p.bytes_done));
        bar.set_position(p.bytes_done);
    });
    bar.finish_and_clear();
    let report = report
        .with_context(|| format!("cannot refresh the catalog {}", catalog.path().display()))?;
    if !quiet {
        for e in &report.errors {
            error_line(&e.to_string());
        }
        for e in &report.refresh.errors {
            error_line(&e.to_string());
        }
    }
    Ok(report)
}
