//! `skein check PATH...`: diagnostics per file, exit status 1 when an error-level one is found.
//! See `docs/reports/check.md`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args as ClapArgs, ValueEnum};
use skein_reports::check::{Diagnostic, Level, LevelCounts, check_session, codes};

use crate::cli::Format;
use crate::output::error_line;
use crate::report::ReportArgs;

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    /// List only diagnostics of this level or worse (the summary and the exit status count
    /// all of them).
    #[arg(long, value_enum, default_value = "info")]
    pub(crate) level: MinLevel,
}

/// The `--level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MinLevel {
    Info,
    Warning,
    Error,
}

impl MinLevel {
    fn level(self) -> Level {
        match self {
            MinLevel::Info => Level::Info,
            MinLevel::Warning => Level::Warning,
            MinLevel::Error => Level::Error,
        }
    }
}

fn location(d: &Diagnostic) -> String {
    match d.line {
        Some(l) => format!("{}:{l}", d.path),
        None => d.path.clone(),
    }
}

/// A left-aligned table (messages read badly right-aligned).
fn render_table(rows: &[Diagnostic]) -> String {
    let headers = ["level", "code", "location", "message"];
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|d| {
            [
                d.level.name().to_owned(),
                d.code.to_owned(),
                location(d),
                d.message.clone(),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for r in &cells {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cols: [&str; 4]| {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            if i + 1 == cols.len() {
                s.push_str(c);
            } else {
                let pad = widths[i].saturating_sub(c.chars().count());
                s.push_str(c);
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(headers);
    for r in &cells {
        line([&r[0], &r[1], &r[2], &r[3]]);
    }
    out
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    if args.report.since.is_some() || args.report.until.is_some() {
        bail!("--since and --until do not apply to skein check");
    }
    let format = args.report.format();
    let min = args.level.level();
    let (sessions, found_ok) = args.report.sessions()?;
    let mut rows: Vec<Diagnostic> = Vec::new();
    if !found_ok {
        // Paths that could not be listed (already named on stderr) are diagnostics too.
        let roots = args.report.paths.clone();
        for e in skein_sessions::discover(&roots).errors {
            rows.push(Diagnostic {
                path: e.path.display().to_string(),
                line: None,
                offset: None,
                level: codes::UNREADABLE.1,
                code: codes::UNREADABLE.0,
                message: e.source.to_string(),
                session_id: String::new(),
                agent_id: None,
                uuid: None,
            });
        }
    }
    let mut counts = LevelCounts::default();
    for d in &rows {
        counts.add(d.level);
    }
    let files: usize = sessions.iter().map(|s| s.files().count()).sum();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut written = 0usize;
    let mut write = |out: &mut std::io::BufWriter<std::io::StdoutLock<'_>>,
                     table: &mut Vec<Diagnostic>,
                     d: Diagnostic|
     -> Result<()> {
        if d.level < min {
            return Ok(());
        }
        match format {
            Format::Jsonl => {
                serde_json::to_writer(&mut *out, &d)?;
                out.write_all(b"\n")?;
            }
            Format::Json => {
                out.write_all(if written == 0 { b"[\n" } else { b",\n" })?;
                serde_json::to_writer(&mut *out, &d)?;
            }
            Format::Table => table.push(d),
        }
        written += 1;
        Ok(())
    };
    let mut table = Vec::new();
    for d in std::mem::take(&mut rows) {
        write(&mut out, &mut table, d)?;
    }
    let jobs_ok = args.report.for_each_session(
        &sessions,
        |s, parser| Ok(check_session(s, parser, args.report.mmap)),
        |_, diags| {
            for d in diags {
                counts.add(d.level);
                write(&mut out, &mut table, d)?;
            }
            Ok(())
        },
    )?;
    match format {
        Format::Json if written == 0 => out.write_all(b"[]\n")?,
        Format::Json => out.write_all(b"\n]\n")?,
        Format::Table => out.write_all(render_table(&table).as_bytes())?,
        Format::Jsonl => {}
    }
    out.flush()?;
    drop(out);
    if !args.report.quiet {
        error_line(&format!(
            "checked {files} files in {} sessions: {} errors, {} warnings, {} info",
            sessions.len(),
            counts.error,
            counts.warning,
            counts.info
        ));
    }
    Ok(if !jobs_ok {
        ExitCode::from(2)
    } else if counts.error > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
