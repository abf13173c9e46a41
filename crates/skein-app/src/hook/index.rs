//! The `index` pass: the event's transcript's new bytes into the catalog, bounded per run so
//! the hook stays within its latency budget (a long backlog is caught up over later runs or
//! by any catalog-backed command). A catalog locked by another writer is skipped: the next
//! run catches up.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use skein_catalog::{Catalog, CatalogOptions};
use skein_hook::{ChangeKind, PassInput, PassReport};
use skein_layout::Source;

use super::{Passes, pass_options, summary};
use crate::error::Error;

/// New bytes indexed per run by default.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 20;

/// `[pass.index]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct IndexPassOptions {
    /// The catalog file (default: `<state>/catalog.db`).
    catalog: Option<PathBuf>,
    /// New bytes indexed per run (default 4 MiB).
    max_bytes: Option<u64>,
    /// How long to wait for another writer (default 50 ms), then skip.
    busy_timeout_ms: Option<u64>,
    /// Bytes of text indexed per tool result or input block (default 16 KiB).
    result_cap: Option<usize>,
}

pub(super) fn run(passes: &mut Passes, input: &PassInput<'_>) -> Result<PassReport, Error> {
    let Some(path) = input.transcript else {
        return Ok(summary("no transcript in the event"));
    };
    if matches!(input.change, None | Some(ChangeKind::Unchanged)) {
        return Ok(PassReport::default());
    }
    let opts: IndexPassOptions = pass_options(input)?;
    let Some(db) = opts
        .catalog
        .clone()
        .or_else(|| input.config.catalog_path.clone())
        .or_else(|| passes.catalog.clone())
    else {
        return Ok(summary("no catalog path (no state directory)"));
    };
    let Some(source) = Source::live(path) else {
        return Ok(summary("not a transcript path"));
    };
    let options = CatalogOptions {
        result_cap: opts.result_cap.unwrap_or(skein_catalog::DEFAULT_RESULT_CAP),
        busy_timeout: Duration::from_millis(opts.busy_timeout_ms.unwrap_or(50)),
        // As everything else the hook writes: redacted unless `redact = false`.
        redact: input.config.redact.then(|| input.config.redaction.clone()),
    };
    let result = Catalog::open(&db, options)
        .and_then(|mut c| c.refresh_file(&source, opts.max_bytes.unwrap_or(DEFAULT_MAX_BYTES)));
    match result {
        Ok(r) => Ok(summary(&format!(
            "indexed {} bytes, {} text blocks",
            r.bytes, r.docs
        ))),
        Err(e) if e.is_busy() => Ok(summary("catalog busy: skipped, the next run catches up")),
        Err(e) => Err(Error::Pass(skein_catalog_chain(&e))),
    }
}

fn skein_catalog_chain(e: &skein_catalog::Error) -> String {
    crate::error::chain(e)
}
