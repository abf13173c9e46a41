//! The catalog behind a report (`skein usage`): refreshed for the report's inputs, or, when
//! it is far behind them, left to a background `skein index` while the report scans.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skein_app::catalog::Scope;
use skein_catalog::{Catalog, RootsReport};
use skein_layout::Env;

use super::{CatalogArgs, refresh};
use crate::output::warning_line;

/// The catalog brought up to date for a report's inputs (its paths, else the Claude projects
/// directories) with what the refresh found, or `None` when it cannot be used: then the report
/// scans, and says why on stderr. Unreadable paths are the scan's to report. With it, what the
/// refresh left for later (`Some` when it deferred).
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
        let config = crate::commands::config::load(env)?;
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
        // Behind, the catalog still names the sessions (no second listing) and answers for
        // the files it holds whole; the report scans the rest.
        Ok((c, refreshed, scope, background)) => {
            let bytes = refreshed.refresh.deferred_bytes;
            let behind = (bytes > 0).then(|| Behind {
                db: c.path().to_path_buf(),
                roots: scope.roots,
                bytes,
                background,
            });
            (Some((c, refreshed)), behind)
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
