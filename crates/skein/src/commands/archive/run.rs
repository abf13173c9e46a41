//! `skein archive PATH… --to DIR`: every session found under the paths (main transcript and
//! subagents), each file ingested into the archive with its metadata, in parallel across
//! sessions; one JSON object per source on stdout.

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use skein_analysis::AnalysisOptions;
use skein_archive::{
    Archive, ArchiveOptions, Checkpoint, CodecOptions, DictMode, IngestReport, IngestRequest, Kind,
    SessionMeta, VersionReason,
};
use skein_core::Parser;
use skein_passes::{Preset, PruneOptions, RedactLevel, RedactOptions};
use skein_redact::Redactor;
use skein_reports::load_session;
use skein_sessions::SessionFiles;

use super::meta::{self, MetaVisitor, SOURCE_BYTES};
use super::source::{AgentIdentity, first_timestamp, redact_line};
use super::transform::{LineAction, Transforms, prune_plan};
use super::{IngestArgs, PrunePresetArg, RedactLevelArg};
use crate::output::error_line;
use crate::report::ReportArgs;

/// One line of output: what happened to one source transcript.
#[derive(Debug, Default, Serialize)]
struct Row {
    /// The source transcript.
    source: String,
    /// `main-session` or `subagent`.
    kind: &'static str,
    /// The session (for a subagent: the parent session).
    session_id: Option<String>,
    agent_id: Option<String>,
    agent_type: Option<String>,
    /// The archive file, relative to DIR.
    file: Option<String>,
    version: u32,
    /// `created`, `appended`, `new-version`, `unchanged`, `rewrite-pending`, `skipped`, `error`.
    status: &'static str,
    /// Why a new version was started (or is pending): `inode-changed`, `shrunk`,
    /// `head-changed`, `tail-changed`, `archive-damaged`.
    reason: Option<&'static str>,
    /// Complete source lines newly read, and the lines written after prune/redact.
    source_lines: u64,
    lines: u64,
    /// Bytes written before and after compression.
    raw_bytes: u64,
    compressed_bytes: u64,
    /// An incomplete last line left for the next run.
    torn_tail_bytes: u64,
    /// Bytes of a torn frame from an earlier crash cut first.
    recovered_bytes: u64,
    /// The trained dictionary the file uses.
    dict: Option<u32>,
    /// Why the source was skipped or failed.
    error: Option<String>,
}

fn reason_name(r: VersionReason) -> &'static str {
    match r {
        VersionReason::First => "first",
        VersionReason::InodeChanged => "inode-changed",
        VersionReason::Shrunk => "shrunk",
        VersionReason::HeadChanged => "head-changed",
        VersionReason::TailChanged => "tail-changed",
        VersionReason::ArchiveDamaged => "archive-damaged",
        VersionReason::CheckpointRebuilt => "checkpoint-rebuilt",
    }
}

/// A source of a session, before it is read.
struct Planned {
    path: PathBuf,
    /// The archive key (the agent type and spawning call are settled after reading).
    kind: Kind,
    /// Index into `SessionFiles::agents`, `None` for the main transcript.
    agent: Option<usize>,
}

impl Planned {
    fn row(&self) -> Row {
        let (kind, session_id, agent_id, agent_type) = match &self.kind {
            Kind::MainSession { session_id } => {
                ("main-session", Some(session_id.clone()), None, None)
            }
            Kind::Subagent {
                agent_type,
                agent_id,
                parent_session,
                ..
            } => (
                "subagent",
                parent_session.clone(),
                Some(agent_id.clone()),
                Some(agent_type.clone()),
            ),
        };
        Row {
            source: self.path.display().to_string(),
            kind,
            session_id,
            agent_id,
            agent_type,
            ..Row::default()
        }
    }
}

/// The session a subagent file of `s` belongs to: none for legacy agent files without a main
/// transcript and without a session id inside (their session is named `agent-<id>`).
fn parent_session(s: &SessionFiles) -> Option<&str> {
    let orphan = s.main.is_none() && s.session_id.starts_with("agent-");
    (!orphan).then_some(s.session_id.as_str())
}

/// The sources of a session with their archive keys. Legacy agent files without a session id
/// inside have no parent session.
fn plan(s: &SessionFiles) -> Vec<Planned> {
    let mut out = Vec::new();
    if let Some(main) = &s.main {
        out.push(Planned {
            path: main.clone(),
            kind: Kind::MainSession {
                session_id: s.session_id.clone(),
            },
            agent: None,
        });
    }
    for (i, a) in s.agents.iter().enumerate() {
        let agent_type = a.meta.as_ref().and_then(|m| m.agent_type.as_deref());
        let id = AgentIdentity::new(&a.agent_id, &[agent_type], parent_session(s), None, None);
        out.push(Planned {
            path: a.path.clone(),
            kind: id.kind(),
            agent: Some(i),
        });
    }
    out
}

/// The checkpoint key of a source, to find two sources that would share one.
fn key_of(kind: &Kind) -> String {
    format!(
        "{}/{}/{}",
        kind.dir_name(),
        kind.session().unwrap_or(""),
        kind.id()
    )
}

fn ingest_one(
    archive: &Archive,
    t: &Transforms<'_>,
    p: &Planned,
    kind: Kind,
    meta: Option<SessionMeta>,
) -> Result<IngestReport> {
    let first = first_timestamp(&p.path);
    let request = IngestRequest {
        source: &p.path,
        kind,
        first_timestamp: first.as_deref(),
        meta,
    };
    if t.redactor.is_none() && t.prune.is_none() {
        return Ok(archive.ingest(&request, None)?);
    }
    let (input, pruned) = match t.prune {
        Some(opts) => {
            let input = std::fs::read(&p.path).with_context(|| p.path.display().to_string())?;
            let (out, _) = skein_passes::prune(&input, opts);
            (input, out)
        }
        None => (Vec::new(), Vec::new()),
    };
    let plan = t.prune.map(|_| prune_plan(&input, &pruned));
    let mut transform = |line: &[u8], out: &mut Vec<u8>| {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = match plan.as_ref().and_then(|p| p.get(body)) {
            Some(LineAction::Drop) => return,
            Some(LineAction::Replace(r)) => *r,
            None => body,
        };
        if let Some(r) = t.redactor {
            redact_line(r, body, out);
        } else {
            out.extend_from_slice(body);
            out.push(b'\n');
        }
    };
    Ok(archive.ingest(&request, Some(&mut transform))?)
}

fn report_row(mut row: Row, r: &IngestReport, root: &Path) -> Row {
    row.file = r
        .archive_path
        .as_deref()
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string());
    row.version = r.version;
    row.status = match (r.new_file, r.rewrite_pending) {
        (Some(VersionReason::First), _) => "created",
        (Some(_), _) => "new-version",
        (None, Some(_)) => "rewrite-pending",
        (None, None) if r.appended_source_lines > 0 => "appended",
        (None, None) => "unchanged",
    };
    row.reason = r
        .new_file
        .or(r.rewrite_pending)
        .filter(|x| *x != VersionReason::First)
        .map(reason_name);
    row.source_lines = r.appended_source_lines;
    row.lines = r.appended_lines;
    row.raw_bytes = r.appended_raw_bytes;
    row.compressed_bytes = r.appended_bytes;
    row.torn_tail_bytes = r.torn_tail_bytes;
    row.recovered_bytes = r.recovered_bytes;
    row.dict = r.dict.map(|d| d.version);
    row
}

fn error_row(mut row: Row, status: &'static str, msg: String) -> Row {
    row.status = status;
    row.error = Some(msg);
    row
}

/// A source (with metadata `md`) that was read before and has not changed since, with metadata
/// computed by this command for exactly its current size: nothing to read.
fn unchanged(ck: Option<&Checkpoint>, md: Option<&std::fs::Metadata>) -> bool {
    let (Some(cur), Some(md)) = (ck.and_then(|c| c.current.as_ref()), md) else {
        return false;
    };
    !cur.source.unknown
        && skein_store::FileId::of(md).same_file(&cur.source.file_id())
        && md.len() == cur.source.size
        && cur.meta.extra.get(SOURCE_BYTES).and_then(Value::as_u64) == Some(md.len())
}

/// Archives one session; one row per source.
fn archive_session(
    archive: &Archive,
    t: &Transforms<'_>,
    s: &SessionFiles,
    refused: &HashMap<PathBuf, String>,
    parser: &mut Parser,
) -> Result<Vec<Row>> {
    let root = archive.root();
    let planned = plan(s);
    // Per source: its row when it is settled already (refused, unreadable checkpoint), else its
    // stored checkpoint and its size now.
    let mut sources: Vec<Result<(Option<Checkpoint>, u64), Row>> =
        Vec::with_capacity(planned.len());
    let mut all_unchanged = true;
    for p in &planned {
        if let Some(why) = refused.get(&p.path) {
            sources.push(Err(error_row(p.row(), "skipped", why.clone())));
            continue;
        }
        let md = std::fs::metadata(&p.path).ok();
        sources.push(match archive.checkpoint(&p.kind) {
            Ok(ck) => {
                all_unchanged &= unchanged(ck.as_ref(), md.as_ref());
                Ok((ck, md.map_or(0, |m| m.len())))
            }
            Err(e) => Err(error_row(p.row(), "error", e.to_string())),
        });
    }
    if all_unchanged {
        return Ok(planned
            .iter()
            .zip(sources)
            .map(|(p, source)| {
                let ck = match source {
                    Ok((ck, _)) => ck,
                    Err(row) => return row,
                };
                let cur = ck.as_ref().and_then(|c| c.current.as_ref());
                Row {
                    file: cur.map(|c| c.file.clone()),
                    version: cur.map_or(0, |c| c.version),
                    dict: cur.and_then(|c| c.dict).map(|d| d.version),
                    status: "unchanged",
                    ..p.row()
                }
            })
            .collect());
    }

    let loaded = load_session::<Value, MetaVisitor>(s, &AnalysisOptions::default(), parser, false)
        .map_err(anyhow::Error::new)?;
    let agents: Vec<AgentIdentity> = (0..loaded.agents.len())
        .map(|i| meta::agent_identity(&loaded, i, parent_session(s)))
        .collect();
    let main_meta = meta::main_meta(&loaded, &agents);
    let mut out = Vec::with_capacity(planned.len());
    for (p, source) in planned.iter().zip(sources) {
        let (ck, size) = match source {
            Ok(source) => source,
            Err(row) => {
                out.push(row);
                continue;
            }
        };
        let stored_meta = ck
            .as_ref()
            .and_then(|c| c.current.as_ref())
            .map(|c| &c.meta);
        let (kind, m) = match p.agent {
            None => (p.kind.clone(), main_meta.clone().unwrap_or_default()),
            Some(a) => (agents[a].kind(), meta::agent_meta(&loaded, a, &agents[a])),
        };
        let m = meta::finish(m, stored_meta, size);
        let mut row = p.row();
        if let Kind::Subagent { agent_type, .. } = &kind {
            row.agent_type = Some(agent_type.clone());
        }
        out.push(match ingest_one(archive, t, p, kind, Some(m)) {
            Ok(r) => report_row(row, &r, root),
            Err(e) => error_row(row, "error", format!("{e:#}")),
        });
    }
    Ok(out)
}

/// Why a symlinked transcript file is not archived (symlinked directories are not followed
/// either): the link could point at any file, `/etc/passwd` included.
const SYMLINK_SKIPPED: &str = "a symbolic link: not followed (archive the file it points to)";

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Sources that must not be archived: symlinks, compressed files, files inside the archive,
/// and a second source with the archive key of an earlier one (the same session id in two projects would
/// otherwise replace each other's archive on every run).
fn refusals(sessions: &[SessionFiles], root: &Path) -> HashMap<PathBuf, String> {
    let abs_root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut out = HashMap::new();
    for s in sessions {
        for p in plan(s) {
            let abs = std::path::absolute(&p.path).unwrap_or_else(|_| p.path.clone());
            let why = if is_symlink(&p.path) {
                Some(SYMLINK_SKIPPED.to_owned())
            } else if abs.starts_with(&abs_root) {
                Some("inside the archive directory".to_owned())
            } else if skein_store::is_zstd(&p.path) {
                Some("a compressed transcript is not archived (decompress it first)".to_owned())
            } else if let Some(first) = seen.get(&key_of(&p.kind)) {
                Some(format!(
                    "same archive key as {} (archived instead)",
                    first.display()
                ))
            } else {
                seen.insert(key_of(&p.kind), p.path.clone());
                None
            };
            if let Some(why) = why {
                out.insert(p.path, why);
            }
        }
    }
    out
}

#[derive(Default)]
struct Totals {
    counts: BTreeMap<&'static str, u64>,
    lines: u64,
    raw: u64,
    compressed: u64,
}

pub(super) fn run(args: &IngestArgs) -> Result<ExitCode> {
    let Some(dir) = args.to.as_deref() else {
        bail!("--to DIR is required");
    };
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
                level: args.zstd_level,
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
    let redactor = if args.redact {
        let opts = RedactOptions {
            level: match args.level {
                Some(RedactLevelArg::Standard) => RedactLevel::Standard,
                Some(RedactLevelArg::Strict) | None => RedactLevel::Strict,
            },
            ..RedactOptions::default()
        };
        Some(Redactor::new(&opts).map_err(|e| anyhow::anyhow!("redaction rules: {e}"))?)
    } else {
        None
    };
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

    let (sessions, found_ok) = report.sessions()?;
    let refused = refusals(&sessions, archive.root());
    if !args.quiet {
        let mut links: Vec<&PathBuf> = refused
            .iter()
            .filter(|(_, why)| *why == SYMLINK_SKIPPED)
            .map(|(p, _)| p)
            .collect();
        links.sort();
        for path in links {
            error_line(&format!(
                "warning: {}: skipped, {SYMLINK_SKIPPED}",
                path.display()
            ));
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut totals = Totals::default();
    let jobs_ok = report.for_each_session(
        &sessions,
        |s, parser| archive_session(&archive, &transforms, s, &refused, parser),
        |_, rows| {
            for row in rows {
                if let Some(e) = &row.error
                    && row.status == "error"
                    && !args.quiet
                {
                    error_line(&format!("{}: {e}", row.source));
                }
                *totals.counts.entry(row.status).or_default() += 1;
                totals.lines += row.lines;
                totals.raw += row.raw_bytes;
                totals.compressed += row.compressed_bytes;
                serde_json::to_writer(&mut out, &row)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
            Ok(())
        },
    )?;
    for row in super::teams::archive_teams(
        &archive,
        &super::teams::teams_dirs(&args.paths),
        redactor.as_ref(),
    ) {
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
    if !args.quiet && std::io::stderr().is_terminal() {
        let files: u64 = totals.counts.values().sum();
        let parts: Vec<String> = totals
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        error_line(&format!(
            "{files} source(s) into {}: {}; {} line(s), {} → {} bytes",
            archive.root().display(),
            parts.join(", "),
            totals.lines,
            totals.raw,
            totals.compressed
        ));
    }
    let failed = totals.counts.get("error").copied().unwrap_or(0) > 0;
    Ok(if found_ok && jobs_ok && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
