//! `skein archive PATH… --to DIR`: the archive, redactor and prune options from the flags, the
//! sessions found under the paths, [`skein_app::ArchiveJob`] run on them in parallel; one JSON
//! object per source on stdout and a summary on a terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use skein_app::ingest::SYMLINK_SKIPPED;
use skein_app::teams::archive_teams;
use skein_app::{ArchiveJob, IngestRow, Transforms};
use skein_archive::{Archive, ArchiveOptions, CodecOptions, DictMode};
use skein_layout::Env;
use skein_layout::teams::teams_dirs_of;
use skein_passes::{Preset, PruneOptions};

use super::{IngestArgs, PrunePresetArg};
use crate::output::error_line;
use crate::report::ReportArgs;

#[derive(Default)]
struct Totals {
    counts: BTreeMap<&'static str, u64>,
    lines: u64,
    raw: u64,
    compressed: u64,
}

pub(super) fn run(args: &IngestArgs, env: &Env) -> Result<ExitCode> {
    let config = crate::commands::config::load(env)?;
    let dir = crate::commands::config::archive_dir(env, args.to.as_deref(), "--to DIR")?;
    let dir = dir.as_path();
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        bail!("the archive reads files, not standard input");
    }
    let report = ReportArgs {
        paths: args.paths.clone(),
        project: args.project.clone(),
        include: args.include.clone(),
        exclude: args.exclude.clone(),
        quiet: args.quiet,
        threads: args.threads,
        ..ReportArgs::default()
    };
    let archive = Archive::open(
        dir,
        ArchiveOptions {
            codec: CodecOptions {
                level: args
                    .zstd_level
                    .or(config.archive_level)
                    .unwrap_or(CodecOptions::default().level),
                long: args.long,
                threads: 0,
            },
            dict: if args.no_dict {
                DictMode::Off
            } else {
                DictMode::Auto
            },
            lock_timeout: Duration::from_secs(args.lock_timeout),
            ..ArchiveOptions::default()
        },
    )
    .with_context(|| format!("archive {}", dir.display()))?;
    // The rules the hook's archive pass uses (`[redaction]`), the flags on top.
    let redactor = args.redaction.redactor(env)?;
    let prune = args.prune.map(|p| PruneOptions {
        // Decided over the whole transcript while the session may still grow: abandoned
        // branches and pre-compaction history are not final, so those rules stay off.
        off_branch: false,
        before_last_compaction: false,
        ..PruneOptions::preset(match p {
            PrunePresetArg::Safe => Preset::Safe,
            PrunePresetArg::Lean => Preset::Lean,
        })
    });
    let transforms = Transforms {
        redactor: redactor.as_ref(),
        prune: prune.as_ref(),
    };

    let (sessions, found_ok) = report.sessions(env)?;
    let batch = archive
        .batch()
        .with_context(|| format!("archive {}", dir.display()))?;
    let job = ArchiveJob::new(&batch, transforms, &sessions);
    if !args.quiet {
        for path in job.skipped_symlinks() {
            error_line(&format!(
                "warning: {}: skipped, {SYMLINK_SKIPPED}",
                path.display()
            ));
        }
    }
    let human = crate::output::ReportFormat::human(args.format, std::io::stdout().is_terminal());
    let stdout = std::io::stdout();
    // On a terminal the rows are not wanted: only the summary below.
    let mut out: Box<dyn Write> = if human {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::BufWriter::new(stdout.lock()))
    };
    let mut totals = Totals::default();
    // Rows wait for the commit of the batch their sources were staged in.
    let mut held: Vec<IngestRow> = Vec::new();
    let mut flush = |held: &mut Vec<IngestRow>, totals: &mut Totals| -> Result<()> {
        let failed = batch.commit().err().map(|e| e.to_string());
        for mut row in held.drain(..) {
            if let Some(e) = &failed
                && matches!(row.status, "created" | "appended" | "new-version")
            {
                row.status = "error";
                row.error = Some(format!("commit: {e}"));
            }
            if let Some(e) = &row.error
                && row.status == "error"
                && !args.quiet
            {
                error_line(&format!("{}: {e}", row.source));
            }
            *totals.counts.entry(row.status).or_default() += 1;
            // What a failed commit staged is not in the archive: the summary does not count it.
            if row.status != "error" {
                totals.lines += row.lines;
                totals.raw += row.raw_bytes;
                totals.compressed += row.compressed_bytes;
            }
            serde_json::to_writer(&mut out, &row)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    };
    let jobs_ok = report.for_each_session(
        &sessions,
        |s, parser| Ok(job.session(s, parser)?),
        |_, rows| {
            held.extend(rows);
            if batch.len() >= ArchiveJob::BATCH_SOURCES {
                flush(&mut held, &mut totals)?;
            }
            Ok(())
        },
    )?;
    flush(&mut held, &mut totals)?;
    let teams = teams_dirs_of(env, &args.paths);
    for row in archive_teams(&archive, &teams, redactor.as_ref()) {
        if let Some(e) = &row.error
            && !args.quiet
        {
            error_line(&format!("{}: {e}", row.source));
        }
        *totals.counts.entry(row.status).or_default() += 1;
        serde_json::to_writer(&mut out, &row)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    if human || (!args.quiet && std::io::stderr().is_terminal()) {
        let files: u64 = totals.counts.values().sum();
        let parts: Vec<String> = totals
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        error_line(&format!(
            "archived {files} source(s) into {}: {}; {} lines, {} → {}",
            archive.root().display(),
            parts.join(", "),
            crate::table::thousands(totals.lines),
            crate::table::human_bytes(totals.raw),
            crate::table::human_bytes(totals.compressed)
        ));
    }
    let failed = totals.counts.get("error").copied().unwrap_or(0) > 0;
    Ok(if found_ok && jobs_ok && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
