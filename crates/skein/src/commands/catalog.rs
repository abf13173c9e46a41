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
use skein_core::time::Day;
use skein_hook::{Config, ConfigFiles, ProjectLookup};
use skein_layout::Env;

use crate::output::error_line;

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
    /// The archive refreshed when no paths are given (default: `<state>/archive`).
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
        let scope = Scope::of(env, paths, self.archive.as_deref());
        let report = refresh(&mut catalog, &scope, self.threads.unwrap_or(0), self.quiet)?;
        Ok((catalog, scope, report))
    }
}

/// The filters and the output format of `sessions` and `search`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct QueryArgs {
    #[command(flatten)]
    pub(crate) refresh: RefreshArgs,
    /// Only sessions whose project directory name contains this text.
    #[arg(long)]
    pub(crate) project: Option<String>,
    /// From this day on (YYYY-MM-DD, in --timezone): sessions active, records written.
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Up to this day (YYYY-MM-DD, in --timezone): sessions active, records written.
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// The zone of --since/--until days: an IANA name, a fixed offset, or `local` (default:
    /// `TZ`, else the system zone).
    #[arg(long, value_name = "ZONE")]
    pub(crate) timezone: Option<String>,
    /// Output format (default: a table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<crate::cli::Format>,
}

impl QueryArgs {
    /// `--since` (start of that day) and `--until` (end of that day) in ms, in the zone.
    pub(crate) fn bounds(&self) -> Result<(Option<i64>, Option<i64>)> {
        let zone = crate::zone::resolve(self.timezone.as_deref())?;
        let day = |flag: &Option<String>| -> Result<Option<Day>> {
            Ok(flag.as_deref().map(Day::parse).transpose()?)
        };
        let since = day(&self.since)?.map(|d| zone.start_of_day(d));
        let until =
            day(&self.until)?.map(|d| zone.start_of_day(Day::from_days(d.days_since_epoch() + 1)));
        Ok((since, until))
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

/// The user config file the hook reads (no project layer: the commands are not run from
/// inside a session).
fn user_config(env: &Env) -> Result<Config> {
    let files = ConfigFiles {
        user: env.user_config(),
        project: ProjectLookup::Disabled,
        explicit: None,
    };
    let (config, _) = Config::default()
        .load(&files, None, env.home.as_deref())
        .context("cannot read the config")?;
    Ok(config)
}

/// `[catalog] path` and the redaction the catalog applies (`redact`, `[redaction]`), from the
/// config file the hook reads, so that the hook and the commands build one catalog alike.
fn configured(env: &Env) -> Result<(Option<PathBuf>, Option<skein_redact::RedactOptions>)> {
    let config = user_config(env)?;
    let redact = config.redact.then_some(config.redaction);
    Ok((config.catalog_path, redact))
}

/// The config's redaction rules (`[redaction]`), whether or not `redact` is on: what a
/// command's own `--redact` applies, so that it redacts as the hook and the catalog do.
pub(crate) fn redaction_rules(env: &Env) -> Result<skein_redact::RedactOptions> {
    Ok(user_config(env)?.redaction)
}

impl CatalogArgs {
    /// The catalog file.
    pub(crate) fn path(&self, env: &Env) -> Result<PathBuf> {
        if let Some(p) = &self.catalog {
            return Ok(p.clone());
        }
        if let (Some(p), _) = configured(env)? {
            return Ok(p);
        }
        skein_catalog::default_path(env)
            .context("no catalog path: give --catalog, or set HOME or XDG_STATE_HOME")
    }

    /// How to open the catalog: the cap, and redaction as the config says.
    pub(crate) fn options(&self, env: &Env) -> Result<CatalogOptions> {
        Ok(CatalogOptions {
            result_cap: self.result_cap,
            redact: configured(env)?.1,
            ..CatalogOptions::default()
        })
    }

    /// Opens the catalog, saying on stderr when an unusable one was rebuilt.
    pub(crate) fn open(&self, env: &Env, quiet: bool) -> Result<Catalog> {
        let path = self.path(env)?;
        let c = Catalog::open(&path, self.options(env)?)
            .with_context(|| format!("cannot open the catalog {}", path.display()))?;
        if let Opened::Rebuilt(reason) = c.opened()
            && !quiet
        {
            error_line(&format!(
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
    let report = skein_app::catalog::refresh(catalog, scope, threads, now, &mut |p| {
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

/// The catalog brought up to date for a report's inputs (its paths, else the Claude projects
/// directories), or `None` when it cannot be used: then the report scans, and says why on
/// stderr. Unreadable paths are the scan's to report.
pub(crate) fn for_report(
    args: &CatalogArgs,
    env: &Env,
    report: &crate::report::ReportArgs,
) -> Option<Catalog> {
    let roots = if report.paths.is_empty() {
        env.projects_roots()
    } else {
        report.paths.clone()
    };
    let attempt = || -> Result<Catalog> {
        let mut c = args.open(env, report.quiet)?;
        let scope = Scope::of_roots(roots, !report.paths.is_empty());
        refresh(&mut c, &scope, report.threads.unwrap_or(0), true)?;
        Ok(c)
    };
    match attempt() {
        Ok(c) => Some(c),
        Err(e) => {
            if !report.quiet {
                error_line(&format!("{e:#}; scanning the transcripts instead"));
            }
            None
        }
    }
}
