//! `skein tools`: one row per tool call, totals per tool with `--by name`, or tool loops with
//! `--loops[=N]`. See `docs/reports/tools.md`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args as ClapArgs, ValueEnum};
use serde::Serialize;
use serde::de::IgnoredAny;
use skein_analysis::{AnalysisOptions, NoVisitor};
use skein_reports::load_session;
use skein_reports::tools::{
    ToolCall, ToolFilter, ToolLoop, ToolTotals, ToolTotalsBuilder, tool_calls, tool_loops,
};

use crate::cli::Format;
use crate::report::{ReportArgs, write_rows};

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// Totals per tool name instead of one row per call.
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
}

/// What `--by` groups on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum By {
    /// One row per tool name.
    Name,
}

/// Column alignment of the call and loop tables.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// A text table with per-column alignment (summaries read better left-aligned).
fn aligned_table(headers: &[&str], align: &[Align], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let parts: Vec<String> = cells
            .zip(widths.iter().zip(align))
            .map(|(c, (&w, a))| match a {
                Align::Left => format!("{c:<w$}"),
                Align::Right => format!("{c:>w$}"),
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

/// Rows written as they come: JSONL lines, one JSON array, or a table at the end.
struct RowWriter<W: Write> {
    format: Format,
    out: W,
    rows: usize,
    table: Vec<Vec<String>>,
}

impl<W: Write> RowWriter<W> {
    fn new(format: Format, mut out: W) -> Result<Self> {
        if format == Format::Json {
            out.write_all(b"[")?;
        }
        Ok(Self {
            format,
            out,
            rows: 0,
            table: Vec::new(),
        })
    }

    fn row<T: Serialize>(
        &mut self,
        value: &T,
        cells: impl FnOnce(&T) -> Vec<String>,
    ) -> Result<()> {
        match self.format {
            Format::Jsonl => {
                // As an io::Error, so that a closed pipe is recognised as one.
                serde_json::to_writer(&mut self.out, value).map_err(std::io::Error::from)?;
                self.out.write_all(b"\n")?;
            }
            Format::Json => {
                if self.rows > 0 {
                    self.out.write_all(b",")?;
                }
                self.out.write_all(b"\n")?;
                serde_json::to_writer(&mut self.out, value).map_err(std::io::Error::from)?;
            }
            Format::Table => self.table.push(cells(value)),
        }
        self.rows += 1;
        Ok(())
    }

    fn finish(mut self, headers: &[&str], align: &[Align]) -> Result<()> {
        match self.format {
            Format::Json if self.rows == 0 => self.out.write_all(b"]\n")?,
            Format::Json => self.out.write_all(b"\n]\n")?,
            Format::Table => self
                .out
                .write_all(aligned_table(headers, align, &self.table).as_bytes())?,
            Format::Jsonl => {}
        }
        self.out.flush()?;
        Ok(())
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

/// At most `n` characters of a summary for the table.
fn cell(s: &str, n: usize) -> String {
    skein_reports::tools::clip(s, n)
}

const CALL_HEADERS: [&str; 8] = [
    "session", "agent", "line", "tool", "result", "bytes", "ms", "input",
];
const CALL_ALIGN: [Align; 8] = [
    Align::Left,
    Align::Left,
    Align::Right,
    Align::Left,
    Align::Left,
    Align::Right,
    Align::Right,
    Align::Left,
];

fn call_cells(c: &ToolCall) -> Vec<String> {
    vec![
        short(&c.session_id),
        c.agent_id.as_deref().map_or_else(|| "main".into(), short),
        c.line.to_string(),
        c.tool.clone(),
        match c.is_error {
            Some(true) => "error".into(),
            Some(false) => "ok".into(),
            None => "-".into(),
        },
        opt(c.result_bytes),
        opt(c.duration_ms),
        cell(&c.input_summary, 60),
    ]
}

const LOOP_HEADERS: [&str; 8] = [
    "session", "agent", "tool", "count", "first", "last", "errors", "input",
];
const LOOP_ALIGN: [Align; 8] = [
    Align::Left,
    Align::Left,
    Align::Left,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Left,
];

fn loop_cells(l: &ToolLoop) -> Vec<String> {
    vec![
        short(&l.session_id),
        l.agent_id.as_deref().map_or_else(|| "main".into(), short),
        l.tool.clone(),
        l.count.to_string(),
        l.first_line.to_string(),
        l.last_line.to_string(),
        l.errors.to_string(),
        cell(&l.input_summary, 60),
    ]
}

fn totals_cells(t: &ToolTotals) -> Vec<String> {
    vec![
        t.tool.clone(),
        t.calls.to_string(),
        t.sessions.to_string(),
        t.errors.to_string(),
        t.error_rate
            .map_or_else(|| "-".into(), |r| format!("{:.1}%", r * 100.0)),
        t.unpaired.to_string(),
        t.result_bytes.to_string(),
        opt(t.avg_result_bytes),
        opt(t.p50_duration_ms),
        opt(t.max_duration_ms),
    ]
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let format = args.report.format();
    let filter = ToolFilter {
        dates: args.report.date_range()?,
        tools: args.tools.clone(),
    };
    let (sessions, found_ok) = args.report.sessions()?;
    let options = AnalysisOptions::default();
    let mmap = args.report.mmap;
    let stdout = std::io::stdout();
    let jobs_ok = if let Some(min) = args.loops {
        let min = usize::try_from(min).unwrap_or(usize::MAX);
        let mut w = RowWriter::new(format, std::io::BufWriter::new(stdout.lock()))?;
        let ok = args.report.for_each_session(
            &sessions,
            |s, parser| {
                let loaded =
                    load_session::<serde_json::Value, NoVisitor>(s, &options, parser, mmap)?;
                let mut loops = tool_loops(&loaded, min);
                loops.retain(|l| filter.keeps_loop(l));
                Ok(loops)
            },
            |_, loops| {
                for l in &loops {
                    w.row(l, loop_cells)?;
                }
                Ok(())
            },
        )?;
        w.finish(&LOOP_HEADERS, &LOOP_ALIGN)?;
        ok
    } else if args.by == Some(By::Name) {
        let mut totals = ToolTotalsBuilder::new();
        let ok = args.report.for_each_session(
            &sessions,
            |s, parser| {
                let loaded = load_session::<IgnoredAny, NoVisitor>(s, &options, parser, mmap)?;
                let mut calls = tool_calls(&loaded);
                calls.retain(|c| filter.keeps(c));
                Ok(calls)
            },
            |_, calls| {
                for c in &calls {
                    totals.add(c);
                }
                Ok(())
            },
        )?;
        write_rows(
            format,
            &totals.finish(),
            &[
                "tool", "calls", "sessions", "errors", "error%", "unpaired", "bytes", "avg",
                "p50_ms", "max_ms",
            ],
            totals_cells,
        )?;
        ok
    } else {
        let mut w = RowWriter::new(format, std::io::BufWriter::new(stdout.lock()))?;
        let ok = args.report.for_each_session(
            &sessions,
            |s, parser| {
                let loaded =
                    load_session::<serde_json::Value, NoVisitor>(s, &options, parser, mmap)?;
                let mut calls = tool_calls(&loaded);
                calls.retain(|c| filter.keeps(c));
                Ok(calls)
            },
            |_, calls| {
                for c in &calls {
                    w.row(c, call_cells)?;
                }
                Ok(())
            },
        )?;
        w.finish(&CALL_HEADERS, &CALL_ALIGN)?;
        ok
    };
    Ok(if found_ok && jobs_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
