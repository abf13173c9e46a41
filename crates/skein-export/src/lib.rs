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
pub struct ExportOptions {
    pub text: TextOptions,
    /// The sessions to export (subagents go with their session).
    pub shard: Option<Shard>,
    /// Memory-map plain files.
    pub mmap: bool,
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

/// Exports `sessions` (in this order; the usage deduplication depends on it) into `out`.
/// Call [`Dataset::commit`] afterwards to make the files appear.
pub fn export(
    sessions: &[SessionFiles],
    options: &ExportOptions,
    pricing: &PricingTable,
    out: &mut Dataset,
) -> Result<ExportStats, Error> {
    let shard = options.shard.unwrap_or(Shard::ALL);
    let usage = usage::usage_rows(sessions, pricing, options.mmap)?;
    let mut stats = ExportStats {
        sessions: sessions.len() as u64,
        usage: usage.stats,
        ..ExportStats::default()
    };
    let mut by_session: Vec<Vec<UsageRow>> = vec![Vec::new(); sessions.len()];
    for (i, row) in usage.rows {
        by_session[i].push(row);
    }
    let mut parser = Parser::new();
    for (i, files) in sessions.iter().enumerate() {
        if !shard.contains(&files.session_id) {
            continue;
        }
        stats.exported += 1;
        let project = files.project();
        for row in std::mem::take(&mut by_session[i]) {
            out.push(&project, row)?;
        }
        let loaded = load(files, options.text, &mut parser, options.mmap)?;
        let cost = |agent: Option<&str>| {
            usage
                .cost
                .get(&(i, agent.map(str::to_owned)))
                .copied()
                .unwrap_or(0.0)
        };
        let emit = |rows: FileRows, out: &mut Dataset| -> Result<(), Error> {
            out.push(&project, rows.session)?;
            for m in rows.messages {
                out.push(&project, m)?;
            }
            for t in rows.tool_calls {
                out.push(&project, t)?;
            }
            Ok(())
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
        if let Some((analysis, visitor)) = loaded.main {
            stats.files += 1;
            stats.bytes += analysis.stats.bytes;
            let row = SessionRow {
                cost_usd: cost(None),
                ..base.clone()
            };
            emit(file_rows(row, &analysis, visitor, options.text), out)?;
        }
        for ((run, id), name) in loaded.agents.into_iter().zip(identities).zip(names) {
            stats.files += 1;
            stats.bytes += run.analysis.stats.bytes;
            let row = SessionRow {
                agent_id: Some(run.file.agent_id.clone()),
                parent_session_id: Some(files.session_id.clone()),
                spawning_tool_use_id: id.tool_use_id,
                agent_type: Some(id.agent_type),
                agent_name: name,
                cost_usd: cost(Some(&run.file.agent_id)),
                ..base.clone()
            };
            emit(
                file_rows(row, &run.analysis, run.visitor, options.text),
                out,
            )?;
        }
    }
    Ok(stats)
}
