//! `skein index [PATHS]`: bring the catalog up to date (or `--rebuild` it). See
//! `docs/catalog.md`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use skein_catalog::Catalog;
use skein_layout::Env;

use super::catalog::RefreshArgs;
use crate::report::exit_status;

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// Transcript files, directories or archives (default: the Claude projects directories
    /// and the default archive).
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) refresh: RefreshArgs,
    /// Delete the catalog and index everything again.
    #[arg(long)]
    pub(crate) rebuild: bool,
    /// Exit at once (status 0) when another `skein index --if-idle` is indexing this catalog
    /// (how `skein usage` starts one in the background; also for a cron job).
    #[arg(long)]
    pub(crate) if_idle: bool,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let r = &args.refresh;
    // Held until this command ends (the lock dies with the process).
    let _idle = if args.if_idle {
        let lock = skein_catalog::index_lock_path(&r.catalog.path(env)?);
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
            skein_store::private::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        match skein_store::FileLock::acquire(&lock, std::time::Duration::ZERO) {
            Ok(held) => Some(held),
            Err(skein_store::LockError::Timeout { .. }) => return Ok(ExitCode::SUCCESS),
            Err(e) => return Err(e.into()),
        }
    } else {
        None
    };
    let catalog = if args.rebuild {
        Catalog::recreate(&r.catalog.path(env)?, r.catalog.options(env)?)?
    } else {
        r.catalog.open_to_write(env, r.quiet)?
    };
    let started = std::time::Instant::now();
    let (catalog, _, roots) = r.refreshed(env, catalog, &args.paths)?;
    let report = &roots.refresh;
    if report.bytes > 64 << 20 {
        catalog.checkpoint()?;
    }
    if !r.quiet {
        let stats = catalog.stats()?;
        let secs = started.elapsed().as_secs_f64();
        crate::output::error_line(&format!(
            "{} sources: {} unchanged, {} appended, {} indexed from the start, {} removed, \
             {} skipped; {:.1} MB in {:.2} s. Catalog {}: {} sessions, {} text blocks, {:.1} MB.",
            report.sources,
            report.unchanged,
            report.appended,
            report.reindexed,
            report.removed,
            report.skipped,
            report.bytes as f64 / 1e6,
            secs,
            catalog.path().display(),
            stats.sessions,
            stats.docs,
            stats.file_bytes as f64 / 1e6,
        ));
    }
    Ok(exit_status(
        report.errors.is_empty() && roots.errors.is_empty(),
    ))
}
