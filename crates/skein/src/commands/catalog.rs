//! What the catalog-backed commands share: `--catalog PATH`, opening the catalog (from the
//! flag, the config's `[catalog] path`, else `<state>/catalog.db`), and refreshing it for
//! the command's scope with a progress bar on a terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use skein_app::catalog::Scope;
use skein_catalog::{Catalog, CatalogOptions, Opened, RootsReport};
use skein_layout::Env;

use crate::output::{error_line, warning_line};

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

/// The catalog brought up to date for a report's inputs (its paths, else the Claude projects
/// directories) with what the refresh found, or `None` when it cannot be used: then the report
/// scans, and says why on stderr. Unreadable paths are the scan's to report.
/// With `read_usage`, a refresh that indexes nothing also reads the usage groups
/// ([`Catalog::read_usage_ahead`]).
///
/// A catalog far behind its input (more new bytes than `[catalog] inline_max_bytes`: a first
/// run over a large history, or after a rebuild) is not brought up to date first: indexing
/// costs ~10x a scan of the same bytes, so the report scans, and [`Behind::catch_up`] (called
/// once the report is written) has `skein index` catch the catalog up in the background.
pub(crate) fn for_report(
    args: &CatalogArgs,
    env: &Env,
    report: &crate::report::ReportArgs,
    read_usage: bool,
) -> (Option<(Catalog, RootsReport)>, Option<Behind>) {
    let roots = if report.paths.is_empty() {
        env.projects_roots()
    } else {
        report.paths.clone()
    };
    let attempt = || -> Result<(Catalog, RootsReport, Scope, bool)> {
        let config = super::config::load(env)?;
        let mut c = args.open(env, report.quiet)?;
        if read_usage {
            c.read_usage_ahead();
        }
        let scope = Scope::of_roots(roots, !report.paths.is_empty());
        let threads = report.threads.unwrap_or(0);
        let defer = Some(config.catalog_inline_max_bytes);
        let refreshed = refresh(&mut c, &scope, threads, true, defer)?;
        Ok((c, refreshed, scope, config.catalog_background))
    };
    match attempt() {
        Ok((c, refreshed, _, _)) if refreshed.refresh.deferred_bytes == 0 => {
            (Some((c, refreshed)), None)
        }
        // Behind: the catalog still names the sessions (no second listing), and answers no
        // usage query, so every session is scanned.
        Ok((c, refreshed, scope, background)) => {
            let behind = Behind {
                db: c.path().to_path_buf(),
                roots: scope.roots.clone(),
                bytes: refreshed.refresh.deferred_bytes,
                background,
            };
            (Some((c, refreshed)), Some(behind))
        }
        Err(e) => {
            if !report.quiet {
                warning_line(&format!("{e:#}; scanning the transcripts instead"));
            }
            (None, None)
        }
    }
}

/// A catalog that [`for_report`] found too far behind to catch up before answering.
#[derive(Debug)]
pub(crate) struct Behind {
    db: PathBuf,
    roots: Vec<PathBuf>,
    /// New bytes not indexed.
    bytes: u64,
    /// `[catalog] background`.
    background: bool,
}

impl Behind {
    /// Starts the background index (unless `[catalog] background = false`) and says so on
    /// stderr unless `quiet`. Call it once the report is written: the index would otherwise
    /// compete for the cores with the scan.
    pub(crate) fn catch_up(self, quiet: bool) {
        let started = self
            .background
            .then(|| background_index(&self.db, &self.roots))
            .transpose();
        if quiet {
            return;
        }
        let then = match started {
            Ok(Some(())) => "; indexing them in the background".to_owned(),
            Ok(None) => "; `skein index` catches the catalog up".to_owned(),
            Err(e) => format!("; cannot index them in the background ({e:#})"),
        };
        warning_line(&format!(
            "{:.1} MB of transcripts were not in the catalog yet: scanned them{then}",
            self.bytes as f64 / 1e6
        ));
    }
}

/// Starts `skein index --if-idle` for `roots` into the catalog at `db`, detached (its own
/// process group, no terminal streams): it outlives this command, and a second one started
/// while it runs exits at once.
#[allow(
    clippy::zombie_processes,
    reason = "detached on purpose: this command exits without waiting, and the child outlives it"
)]
fn background_index(db: &Path, roots: &[PathBuf]) -> Result<()> {
    let exe = std::env::current_exe().context("cannot find the skein executable")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["index", "-q", "--if-idle", "--catalog"])
        .arg(db)
        .arg("--")
        .args(roots)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group: a Ctrl-C meant for this command does not stop it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn().context("cannot start `skein index`")?;
    Ok(())
}

/// Per-session results of a report remembered in the catalog
/// ([`skein_catalog::report_cache`]): a session whose files are unchanged is not read again.
/// Shared by the worker threads; the catalog itself stays with the caller for [`save`].
pub(crate) struct Remembered {
    report: &'static str,
    /// `None`: no catalog (`--no-catalog`, or it could not be opened): nothing is
    /// fingerprinted or kept.
    cached: Option<skein_catalog::report_cache::CachedResults>,
    fresh: std::sync::Mutex<Vec<skein_catalog::report_cache::SessionResult>>,
}

/// The version of what the remembering reports keep: a fingerprint made by another skein
/// version never matches, so a change of a report's rows cannot be answered from old ones.
const REMEMBERED_VERSION: &str = concat!("skein ", env!("CARGO_PKG_VERSION"), " report cache 1");

impl Remembered {
    /// The catalog and what it remembers for `report`; `(None, nothing)` when `enabled` is
    /// false or the catalog cannot be opened (said on stderr unless `quiet`).
    pub(crate) fn open(
        args: &CatalogArgs,
        env: &Env,
        report: &'static str,
        enabled: bool,
        quiet: bool,
    ) -> (Option<Catalog>, Self) {
        let mut memo = Self {
            report,
            cached: None,
            fresh: std::sync::Mutex::new(Vec::new()),
        };
        if !enabled {
            return (None, memo);
        }
        let opened = args
            .open(env, quiet)
            .and_then(|c| Ok((c.cached_results(report)?, c)));
        match opened {
            Ok((cached, c)) => {
                memo.cached = Some(cached);
                (Some(c), memo)
            }
            Err(e) => {
                if !quiet {
                    warning_line(&format!("{e:#}; reading every session"));
                }
                (None, memo)
            }
        }
    }

    /// The result for session `s`: remembered when its files are unchanged, else computed by
    /// `compute` (and remembered by [`Remembered::save`]).
    pub(crate) fn get_or<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        s: &skein_layout::SessionFiles,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let Some(cached) = &self.cached else {
            return compute();
        };
        let fp = skein_catalog::report_cache::session_fingerprint(s, REMEMBERED_VERSION);
        let key = skein_catalog::report_cache::session_key(s);
        if let (Some(fp), Some((held, packed))) = (fp, cached.get(&key))
            && *held == fp
            && let Some(body) = skein_catalog::report_cache::unpack(packed)
            && let Ok(v) = serde_json::from_slice(&body)
        {
            return Ok(v);
        }
        let v = compute()?;
        if let Some(fp) = fp
            && let Ok(body) = serde_json::to_vec(&v)
        {
            let mut fresh = self
                .fresh
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            fresh.push(skein_catalog::report_cache::SessionResult::new(s, fp, body));
        }
        Ok(v)
    }

    /// Writes what was computed into `catalog` (skipped, with a warning unless `quiet`, when
    /// it cannot be written now: the next run computes it again).
    pub(crate) fn save(self, catalog: Option<&Catalog>, quiet: bool) {
        let fresh = self
            .fresh
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(c) = catalog.filter(|_| !fresh.is_empty()) else {
            return;
        };
        if let Err(e) = c.store_results(self.report, &fresh)
            && !quiet
        {
            warning_line(&format!("{e:#}; the results are not remembered"));
        }
    }
}
