//! Per-session report results remembered in the catalog (`tools --by name`, `skills`).

use anyhow::Result;
use skein_catalog::Catalog;
use skein_layout::Env;

use super::CatalogArgs;
use crate::output::warning_line;

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
