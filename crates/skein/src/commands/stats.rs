//! `skein stats PATH...`: one statistics object per transcript file.

use std::cell::RefCell;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use skein_analysis::{AnalysisOptions, FileStats, Reuse, file_stats};

use crate::cli::{Format, StatsArgs};
use crate::inputs::{for_each_file, with_lines};
use crate::output::{choose_format, error_line, or_dash, short_id, table, warn_invalid_lines};

thread_local! {
    /// Each worker thread's analysis collections, reused from file to file.
    static REUSE: RefCell<Reuse> = RefCell::new(Reuse::default());
}

pub(crate) fn run(args: &StatsArgs) -> Result<ExitCode> {
    let format = choose_format(args.format);
    // Only the counts of tool pairing are printed: no per-tool copies.
    let options = AnalysisOptions {
        tool_counts_only: true,
        ..AnalysisOptions::default()
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut rows: Vec<FileStats> = Vec::new();
    let mut first_json = true;
    if format == Format::Json {
        out.write_all(b"[")?;
    }
    for_each_file(
        &args.input.paths,
        args.input.threads,
        |path| {
            with_lines(path, args.input.mmap, |lines, parser| {
                REUSE.with_borrow_mut(|reuse| {
                    file_stats(&path.display().to_string(), lines, &options, parser, reuse)
                })
            })
        },
        |path, result| {
            let stats = match result {
                Ok(s) => s,
                Err(e) => {
                    failed = true;
                    out.flush()?;
                    error_line(&crate::output::error_text(&e));
                    return Ok(());
                }
            };
            if !args.quiet {
                warn_invalid(path, &stats);
            }
            match format {
                Format::Jsonl => {
                    serde_json::to_writer(&mut out, &stats)?;
                    out.write_all(b"\n")?;
                }
                Format::Json => {
                    if !first_json {
                        out.write_all(b",")?;
                    }
                    first_json = false;
                    out.write_all(b"\n")?;
                    serde_json::to_writer(&mut out, &stats)?;
                }
                Format::Table => rows.push(stats),
            }
            Ok(())
        },
    )?;
    match format {
        Format::Json => out.write_all(b"\n]\n")?,
        Format::Table => out.write_all(render_table(&rows).as_bytes())?,
        Format::Jsonl => {}
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn warn_invalid(path: &std::path::Path, stats: &FileStats) {
    let named = stats.invalid.iter().map(|b| (b.line, b.offset, &b.error));
    let more =
        stats.invalid_lines - stats.invalid.len() as u64 - u64::from(stats.torn_tail.is_some());
    warn_invalid_lines(path, named, more);
}

fn render_table(rows: &[FileStats]) -> String {
    let headers = [
        "path",
        "session",
        "lines",
        "invalid",
        "nodes",
        "active",
        "tools",
        "paired",
        "errors",
        "messages",
        "input",
        "output",
        "cache_read",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|s| {
            vec![
                s.path.clone(),
                or_dash(s.session_id.as_deref().map(short_id)),
                crate::table::thousands(s.lines),
                crate::table::thousands(s.invalid_lines),
                crate::table::thousands(s.chain.nodes),
                crate::table::thousands(s.chain.active_path_len),
                crate::table::thousands(s.tools.uses),
                crate::table::thousands(s.tools.paired),
                crate::table::thousands(s.tools.errors),
                crate::table::thousands(s.usage.messages),
                crate::table::thousands(s.usage.input_tokens),
                crate::table::thousands(s.usage.output_tokens),
                crate::table::thousands(s.usage.cache_read_input_tokens),
            ]
        })
        .collect();
    table(&headers, &body)
}
