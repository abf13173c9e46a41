//! `skein export`: sessions as a Hive-partitioned dataset (Parquet, or JSONL for tools
//! without Parquet) of four tables, `sessions/`, `messages/`, `tool_calls/` and `usage/`,
//! partitioned by `month=YYYY-MM` (and `project=`), for DuckDB, Spark, Trino, Polars.
//!
//! Nothing here is computed twice: usage rows are the requests `skein usage` counts
//! (`skein_reports::usage`, priced by `skein_reports::pricing`); session metadata is the
//! archive's (`skein_app::MetaCollector`, `skein_app::agent_identity`); text, version and
//! titles are what the catalog extracts (`skein_catalog::extract`); the active path is
//! `skein_graph`'s history of the active leaf; tool pairing is `skein_analysis`'s. This crate
//! only turns them into rows ([`rows`]), partitions and shards them ([`partition`]) and writes
//! the files ([`dataset`]) under the schema of [`schema`]. See docs/export.md.

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the export owns its I/O: the dataset directory it writes and the sources it reads; \
              it reads no environment and no clock (the caller passes both)"
)]

pub mod collect;
pub mod dataset;
pub mod error;
pub mod partition;
pub mod rows;
pub mod schema;
pub mod usage;

use skein_core::Parser;
use skein_layout::SessionFiles;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::ScanStats;

pub use collect::TextOptions;
pub use dataset::{Dataset, Format, Layout, Push, Written};
pub use error::Error;
pub use partition::{Shard, ShardError};
pub use rows::{MessageRow, SessionRow, ToolCallRow, UsageRow};
pub use schema::{SCHEMA_VERSION, Table};

use crate::collect::{FileRows, file_rows, load};

/// What to export.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions<'a> {
    pub text: TextOptions,
    /// The sessions to export (subagents go with their session).
    pub shard: Option<Shard>,
    /// Memory-map plain files.
    pub mmap: bool,
    /// Threads reading sessions (0: one per core).
    pub threads: usize,
    /// Redact every line before anything is taken from it (`--redact`): the rows are built
    /// from the redacted lines, so no secret reaches a text column (`messages.text`,
    /// `tool_calls.input_json`, titles, `cwd`, …). The usage scan reads only ids, models and
    /// token counts, which redaction never changes.
    pub redactor: Option<&'a skein_redact::Redactor>,
    /// Deduplication passes of the usage scan (`None`: one per [`usage::PASS_BYTES`] of
    /// input); more passes, less memory, one more read of the usage lines each.
    pub usage_passes: Option<u32>,
}

/// What an export read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Sessions in the input.
    pub sessions: u64,
    /// Sessions of this shard, exported.
    pub exported: u64,
    /// Transcript files and bytes read by the row pass (this shard's).
    pub files: u64,
    pub bytes: u64,
    /// The usage scan over the whole input.
    pub usage: ScanStats,
}

/// Transcript bytes of `sessions`, archive files counted at ten times their compressed size
/// (for [`usage::passes_for`]; a file that cannot be stat'ed counts nothing).
fn input_bytes(sessions: &[SessionFiles]) -> u64 {
    sessions
        .iter()
        .flat_map(SessionFiles::files)
        .filter_map(|p| {
            let len = std::fs::metadata(p).ok()?.len();
            let zst = p.extension().is_some_and(|e| e == "zst");
            Some(if zst { len.saturating_mul(10) } else { len })
        })
        .sum()
}

/// Exports `sessions` (in this order; the usage deduplication depends on it) into `out`.
/// Call [`Dataset::commit`] afterwards to make the files appear.
///
/// Sessions are read on [`ExportOptions::threads`] threads and written in input order (the
/// files are the same whatever the thread count); at most a few sessions per thread are held
/// ahead of the writer, so memory follows the largest sessions, not the input.
pub fn export(
    sessions: &[SessionFiles],
    options: &ExportOptions<'_>,
    pricing: &PricingTable,
    out: &mut Dataset,
) -> Result<ExportStats, Error> {
    let shard = options.shard.unwrap_or(Shard::ALL);
    let chosen: Vec<usize> = (0..sessions.len())
        .filter(|&i| shard.contains(&sessions[i].session_id))
        .collect();
    let mut exported = vec![false; sessions.len()];
    for &i in &chosen {
        exported[i] = true;
    }
    // Usage rows first, pass by pass, by session in input order (each session's in
    // deduplication order), made and written one at a time; the row pass below needs only
    // the costs.
    let passes = options
        .usage_passes
        .unwrap_or_else(|| usage::passes_for(input_bytes(sessions)));
    let mut project = (usize::MAX, String::new());
    let mut pricer = skein_reports::usage::Pricer::new(pricing);
    let usage = usage::usage_passes(sessions, pricing, options.mmap, passes, |kept| {
        for (i, copy) in kept.iter() {
            if !exported[i] {
                continue;
            }
            if project.0 != i {
                project = (i, sessions[i].project());
            }
            out.push(&project.1, usage::row(&sessions[i], &copy, &mut pricer))?;
        }
        Ok(())
    })?;
    let mut stats = ExportStats {
        sessions: sessions.len() as u64,
        exported: chosen.len() as u64,
        usage: usage.stats,
        ..ExportStats::default()
    };
    let cost = &usage.cost;
    let rows_of =
        |parser: &mut Parser, &i: &usize| session_rows(sessions, i, options, cost, parser);
    skein_core::ordered::ordered(
        &chosen,
        options.threads,
        Parser::new,
        rows_of,
        |rows: SessionRows| {
            stats.files += rows.files.len() as u64;
            for f in rows.files {
                stats.bytes += f.bytes;
                out.push(&rows.project, f.session)?;
                for m in f.messages {
                    out.push(&rows.project, m)?;
                }
                for t in f.tool_calls {
                    out.push(&rows.project, t)?;
                }
            }
            Ok(())
        },
    )?;
    Ok(stats)
}

/// The rows of one session: its main transcript's and each subagent's.
struct SessionRows {
    project: String,
    files: Vec<FileRows>,
}

/// Reads session `i` and builds its rows (no I/O but reading its files).
fn session_rows(
    sessions: &[SessionFiles],
    i: usize,
    options: &ExportOptions<'_>,
    costs: &[Vec<(Option<String>, f64)>],
    parser: &mut Parser,
) -> Result<SessionRows, Error> {
    let files = &sessions[i];
    let project = files.project();
    let loaded = load(files, options, parser)?;
    let costs = &costs[i];
    let cost = |agent: Option<&str>| {
        costs
            .iter()
            .filter(|(a, _)| a.as_deref() == agent)
            .map(|(_, c)| c)
            .sum::<f64>()
    };
    let identities: Vec<_> = loaded
        .agents
        .iter()
        .map(|run| {
            skein_app::agent_identity(
                &run.file.agent_id,
                run.file.meta.as_ref(),
                None,
                Some(&loaded.links),
                Some(&files.session_id),
            )
        })
        .collect();
    let main_tools = loaded.main.as_ref().map(|(a, _)| &a.tools);
    let names: Vec<Option<String>> = loaded
        .agents
        .iter()
        .map(|run| {
            let u = main_tools?.use_for(run.spawned_by.as_deref()?)?;
            let name = u.input.as_ref()?.get("name")?.as_str()?;
            Some(name.to_owned()).filter(|n| !n.is_empty())
        })
        .collect();
    let base = SessionRow {
        session_id: files.session_id.clone(),
        project: project.clone(),
        ..SessionRow::default()
    };
    let mut out = Vec::with_capacity(1 + loaded.agents.len());
    if let Some((analysis, visitor)) = loaded.main {
        // Requests of agents without a transcript of their own (known only from the progress
        // records of the main transcript) count in the main transcript's row, so that a
        // session's rows add up to its cost.
        let orphans: f64 = costs
            .iter()
            .filter(|(a, _)| {
                a.as_deref()
                    .is_some_and(|a| !loaded.agents.iter().any(|r| r.file.agent_id == a))
            })
            .map(|(_, c)| c)
            .sum();
        let row = SessionRow {
            cost_usd: cost(None) + orphans,
            ..base.clone()
        };
        out.push(file_rows(row, &analysis, visitor, options.text));
    }
    for ((run, id), name) in loaded.agents.into_iter().zip(identities).zip(names) {
        let row = SessionRow {
            agent_id: Some(run.file.agent_id.clone()),
            parent_session_id: Some(files.session_id.clone()),
            spawning_tool_use_id: id.tool_use_id,
            agent_type: Some(id.agent_type),
            agent_name: name,
            cost_usd: cost(Some(&run.file.agent_id)),
            ..base.clone()
        };
        out.push(file_rows(row, &run.analysis, run.visitor, options.text));
    }
    Ok(SessionRows {
        project,
        files: out,
    })
}
