//! `skein tools`: one row per tool call, totals per tool with `--by name`, or tool loops with
//! `--loops[=N]`. See `docs/reports/tools.md`.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args as ClapArgs, ValueEnum};
use serde::de::IgnoredAny;
use skein_analysis::{AnalysisOptions, NoVisitor};
use skein_core::Parser;
use skein_layout::SessionFiles;
use skein_reports::tools::{
    AgentTotals, ToolCall, ToolFigures, ToolFilter, ToolLoop, ToolTotals, ToolTotalsBuilder,
    calls_by_agent, tool_calls, tool_loops,
};
use skein_reports::tree::LinkVisitor;
use skein_reports::{LoadedSession, load_session};

use super::catalog::{CatalogArgs, Remembered};
use crate::output::{Align, or_dash, percent, short_id};
use crate::report::{ReportArgs, exit_status, write_rows};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// Totals per tool name, or per agent (`main`, an agent's name, or `(type)` for unnamed
    /// agents), instead of one row per call.
    #[arg(long, value_enum, conflicts_with = "loops")]
    pub(crate) by: Option<By>,
    /// Report tool loops instead of calls: runs of at least N consecutive calls of one tool
    /// with identical input, per transcript file in file order (`--loops` alone: N = 3).
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "3",
        value_parser = clap::value_parser!(u64).range(2..)
    )]
    pub(crate) loops: Option<u64>,
    /// Only calls of this tool (exact name; repeatable).
    #[arg(long = "tool", value_name = "NAME")]
    pub(crate) tools: Vec<String>,
    #[command(flatten)]
    pub(crate) catalog: CatalogArgs,
    /// Read every session instead of taking the unchanged ones' calls from the catalog
    /// (`--by name` only: the other forms print inputs, which the catalog does not keep).
    #[arg(long)]
    pub(crate) no_catalog: bool,
}

/// What `--by` groups on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum By {
    /// One row per tool name.
    Name,
    /// One row per agent name.
    Agent,
}

/// At most `n` characters of a summary for the table.
fn cell(s: &str, n: usize) -> String {
    skein_reports::tools::clip(s, n)
}

/// The session and agent cells of a call or loop row.
fn who(session_id: &str, agent_id: Option<&str>) -> [String; 2] {
    [
        short_id(session_id),
        agent_id.map_or_else(|| "main".into(), short_id),
    ]
}

const CALL_COLUMNS: [(&str, Align); 8] = [
    ("session", Align::Left),
    ("agent", Align::Left),
    ("line", Align::Right),
    ("tool", Align::Left),
    ("result", Align::Left),
    ("bytes", Align::Right),
    ("ms", Align::Right),
    ("input", Align::Left),
];

fn call_cells(c: &ToolCall) -> Vec<String> {
    let [session, agent] = who(&c.session_id, c.agent_id.as_deref());
    vec![
        session,
        agent,
        c.line.to_string(),
        c.tool.clone(),
        match c.is_error {
            Some(true) => "error".into(),
            Some(false) => "ok".into(),
            None => "-".into(),
        },
        or_dash(c.result_bytes),
        or_dash(c.duration_ms),
        cell(&c.input_summary, 60),
    ]
}

const LOOP_COLUMNS: [(&str, Align); 8] = [
    ("session", Align::Left),
    ("agent", Align::Left),
    ("tool", Align::Left),
    ("count", Align::Right),
    ("first", Align::Right),
    ("last", Align::Right),
    ("errors", Align::Right),
    ("input", Align::Left),
];

fn loop_cells(l: &ToolLoop) -> Vec<String> {
    let [session, agent] = who(&l.session_id, l.agent_id.as_deref());
    vec![
        session,
        agent,
        l.tool.clone(),
        crate::table::thousands(l.count),
        l.first_line.to_string(),
        l.last_line.to_string(),
        l.errors.to_string(),
        cell(&l.input_summary, 60),
    ]
}

const TOTALS_HEADERS: [&str; 10] = [
    "tool", "calls", "sessions", "errors", "error%", "unpaired", "bytes", "avg", "p50_ms", "max_ms",
];

fn figure_cells(key: &str, t: &ToolFigures) -> Vec<String> {
    vec![
        key.to_owned(),
        crate::table::thousands(t.calls),
        crate::table::thousands(t.sessions),
        crate::table::thousands(t.errors),
        percent(t.error_rate),
        crate::table::thousands(t.unpaired),
        crate::table::thousands(t.result_bytes),
        or_dash(t.avg_result_bytes),
        or_dash(t.p50_duration_ms),
        or_dash(t.max_duration_ms),
    ]
}

fn totals_cells(t: &ToolTotals) -> Vec<String> {
    figure_cells(&t.tool, &t.figures)
}

const AGENT_HEADERS: [&str; 12] = [
    "agent", "files", "calls", "sessions", "errors", "error%", "unpaired", "bytes", "avg",
    "p50_ms", "max_ms", "media",
];

fn agent_cells(t: &AgentTotals) -> Vec<String> {
    let mut cells = figure_cells(&t.agent, &t.figures);
    cells.insert(1, crate::table::thousands(t.transcripts));
    cells.push(crate::table::thousands(t.figures.media_bytes));
    cells
}

pub(crate) fn run(args: &Args, env: &skein_layout::Env) -> Result<ExitCode> {
    let report = &args.report;
    let filter = ToolFilter {
        window: report.date_range()?.in_zone(&report.zone()?),
        tools: args.tools.clone(),
    };
    let (sessions, found_ok) = report.sessions(env)?;
    let options = AnalysisOptions::default();
    let mmap = report.mmap;
    let jobs_ok = if let Some(min) = args.loops {
        let min = usize::try_from(min).unwrap_or(usize::MAX);
        let job = |s: &SessionFiles, parser: &mut Parser| {
            let loaded = load_session::<serde_json::Value, NoVisitor>(s, &options, parser, mmap)?;
            let mut loops = tool_loops(&loaded, min);
            loops.retain(|l| filter.keeps_loop(l));
            Ok(loops)
        };
        report.stream_rows(&sessions, &LOOP_COLUMNS, job, loop_cells)?
    } else if args.by == Some(By::Agent) {
        let teams = super::tree::team_configs(env, report.quiet);
        let mut totals = ToolTotalsBuilder::new();
        let job = |s: &SessionFiles, parser: &mut Parser| {
            let loaded = load_session::<IgnoredAny, LinkVisitor>(s, &options, parser, mmap)?;
            let mut calls = calls_by_agent(&loaded, |v| v, &teams);
            calls.retain(|(_, c)| filter.keeps(c));
            Ok(calls)
        };
        let ok = report.for_each_row(&sessions, job, |(key, c)| {
            totals.add_as(&key, &c);
            Ok(())
        })?;
        write_rows(
            report.format(),
            &totals.finish_agents(),
            &AGENT_HEADERS,
            agent_cells,
        )?;
        ok
    } else if args.by == Some(By::Name) {
        let mut totals = ToolTotalsBuilder::new();
        // Each session's calls (without inputs) from the catalog when its files are
        // unchanged since they were remembered.
        let (catalog, memo) =
            Remembered::open(&args.catalog, env, "tools", !args.no_catalog, report.quiet);
        let job = |s: &SessionFiles, parser: &mut Parser| {
            let mut calls = memo.get_or(s, || {
                let loaded = load_session::<IgnoredAny, NoVisitor>(s, &options, parser, mmap)?;
                Ok(tool_calls(&loaded))
            })?;
            calls.retain(|c| filter.keeps(c));
            Ok(calls)
        };
        let ok = report.for_each_row(&sessions, job, |c| {
            totals.add(&c);
            Ok(())
        })?;
        memo.save(catalog.as_ref(), report.quiet);
        write_rows(
            report.format(),
            &totals.finish(),
            &TOTALS_HEADERS,
            totals_cells,
        )?;
        ok
    } else {
        let job = |s: &SessionFiles, parser: &mut Parser| {
            let loaded = load_session::<serde_json::Value, NoVisitor>(s, &options, parser, mmap)?;
            Ok(filtered_calls(&loaded, &filter))
        };
        report.stream_rows(&sessions, &CALL_COLUMNS, job, call_cells)?
    };
    Ok(exit_status(found_ok && jobs_ok))
}

/// The session's tool calls that pass `filter`.
fn filtered_calls<V>(loaded: &LoadedSession<V>, filter: &ToolFilter) -> Vec<ToolCall> {
    let mut calls = tool_calls(loaded);
    calls.retain(|c| filter.keeps(c));
    calls
}
