//! Where the status line's figures come from: the catalog, brought up to date for the
//! current session's files (only their new bytes) and then asked a few indexed questions:
//! the copies of today and of the latest run of activity, deduplicated and priced as every
//! usage report does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use skein_catalog::{Catalog, CatalogOptions};
use skein_core::time::Zone;
use skein_layout::{Env, Source};
use skein_reports::pricing::PricingTable;
use skein_reports::statusline::{StatusFigures, StatusInput, session_cost, usage_figures};
use skein_reports::usage::blocks::{DEFAULT_BLOCK_MS, MS_PER_HOUR};
use skein_reports::usage::{SessionScan, UsageBuilder};

use crate::output::error_line;

/// How long a refresh waits for another writer before answering from what is catalogued.
const BUSY: Duration = Duration::from_millis(50);

/// New bytes indexed per status line (a session the catalog has never seen is caught up over
/// a few lines rather than stalling one).
const MAX_NEW_BYTES: u64 = 8 << 20;

/// Copies of one request are written within seconds of each other (two minutes apart at most
/// in the corpus): reading this much more on both sides of a window lets deduplication see
/// every copy of the requests inside it.
const MARGIN_MS: i64 = MS_PER_HOUR;

/// The catalog file: `--catalog`, else the config's `[catalog] path`, else the default.
fn catalog_path(env: &Env, flag: Option<&Path>, configured: Option<&Path>) -> Result<PathBuf> {
    flag.or(configured)
        .map(Path::to_path_buf)
        .or_else(|| skein_catalog::default_path(env))
        .context("no catalog path: set HOME or XDG_STATE_HOME, or give --catalog")
}

/// The main transcript and the session's agent files under `<session>/subagents/` (legacy
/// sibling agent files are not looked for: they predate this status line by far).
fn session_sources(transcript: &Path) -> Vec<Source> {
    let mut out: Vec<Source> = Source::live(transcript).into_iter().collect();
    if let Some(stem) = transcript
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".jsonl"))
    {
        let agents = transcript.with_file_name(stem).join("subagents");
        if agents.is_dir() {
            out.extend(skein_layout::sources(&[agents]).sources);
        }
    }
    out
}

/// The usage figures for `input` at `now`.
pub(super) fn figures(
    env: &Env,
    flag: Option<&Path>,
    configured: Option<&Path>,
    redact: Option<skein_redact::RedactOptions>,
    input: &StatusInput,
    now_ms: i64,
    zone: &Zone,
) -> Result<StatusFigures> {
    let path = catalog_path(env, flag, configured)?;
    let mut catalog = Catalog::open(
        &path,
        CatalogOptions {
            busy_timeout: BUSY,
            redact,
            ..CatalogOptions::default()
        },
    )
    .with_context(|| format!("cannot open the catalog {}", path.display()))?;
    let transcript = input.transcript_path.as_deref().map(PathBuf::from);
    if let Some(t) = &transcript {
        let sources = session_sources(t);
        let options = skein_catalog::RefreshOptions {
            threads: 1,
            limit_per_source: MAX_NEW_BYTES,
            ..skein_catalog::RefreshOptions::default()
        };
        // Busy (another writer past the timeout) or not: answer from what is catalogued.
        if let Err(e) = catalog.refresh(&sources, &options, &mut |_| {}) {
            error_line(&format!("statusline: {e}"));
        }
    }
    let pricing = PricingTable::embedded();
    let length = DEFAULT_BLOCK_MS;
    let day_start = zone.start_of_day(zone.day_of(now_ms));
    let start = catalog
        .activity_start(now_ms, length)?
        .map_or(day_start, |s| s.min(day_start));
    let mut builder = UsageBuilder::new();
    for s in catalog.copies_between(start - MARGIN_MS, now_ms + MARGIN_MS)? {
        builder.add_session(
            &s.session_id,
            &s.project,
            SessionScan {
                copies: s.copies,
                ..SessionScan::default()
            },
        );
    }
    let (mut priced, _) = builder.priced(&pricing);
    priced.requests.retain(|r| r.timestamp_ms >= start);
    let (today, block) = usage_figures(&priced, now_ms, zone, length);
    let mut figures = StatusFigures {
        today_cost: Some(today),
        block,
        ..StatusFigures::default()
    };
    // Claude Code's own figures come first; skein's are asked for only when it has none.
    if input.session_cost.is_none()
        && let Some(id) = &input.session_id
    {
        let project = transcript
            .as_deref()
            .and_then(skein_layout::claude::project_of);
        let mut b = UsageBuilder::new();
        let copies = catalog.session_copies(id, project.as_deref())?;
        b.add_session(
            id,
            project.as_deref().unwrap_or(""),
            SessionScan {
                copies,
                ..SessionScan::default()
            },
        );
        figures.session_cost = Some(session_cost(&b.priced(&pricing).0, id));
    }
    if input
        .context
        .is_none_or(|c| c.used_tokens.is_none() && c.used_percent.is_none())
        && let Some(t) = &transcript
    {
        let abs = std::path::absolute(t).unwrap_or_else(|_| t.clone());
        figures.context_tokens = catalog.latest_prompt_tokens(&abs.to_string_lossy())?;
    }
    Ok(figures)
}
