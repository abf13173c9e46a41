//! The `archive` pass: the event's transcript into the skein archive, redacted on the way in
//! when `redact = true`.
//!
//! * Main transcripts (Stop, SessionEnd, PreCompact, …) go under `main-session/`.
//! * SubagentStop archives the agent's transcript under `subagent/<agent-type>/`, keyed by its
//!   parent session; the meta records the parent session and the spawning `tool_use` id (from
//!   Claude Code's `agent-<id>.meta.json` sidecar when present).
//!
//! The archive keeps its own crash-safe checkpoint and only reads the bytes it has not archived
//! yet. When the runtime's checkpoint says nothing was appended since the last successful run,
//! the pass does not even open the archive.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;
use skein_archive::{
    Archive, ArchiveOptions, CodecOptions, DictMode, IngestReport, IngestRequest, Kind, SessionMeta,
};
use skein_hook::{ChangeKind, EventKind, PassInput, PassReport};
use skein_layout::claude::{first_timestamp, project_of};
use skein_redact::RedactOptions;

use super::{Passes, pass_options, summary};
use crate::error::Error;
use crate::identity::{AgentIdentity, read_sidecar};
use crate::transform::{Transforms, redact_line};

/// `[pass.archive]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ArchivePassOptions {
    /// zstd level (default 3; `compress = false` means -7, zstd's fastest).
    zstd_level: Option<i32>,
    /// Long-distance matching window log (e.g. 27).
    long_window: Option<u32>,
    /// Compression threads: 0 = automatic (default), 1 = none.
    threads: Option<u32>,
    /// Use a trained dictionary for small new subagent files (default true).
    dictionary: Option<bool>,
    /// Redaction rules (used when `redact = true`): `level`, `user_rules`, `allowlist`, …
    redact: RedactOptions,
}

pub(super) fn run(passes: &mut Passes, input: &PassInput<'_>) -> Result<PassReport, Error> {
    let Some(source) = input.transcript else {
        return Ok(summary("no transcript in the event"));
    };
    let first_sight = match input.change {
        None => return Ok(summary("transcript does not exist (yet)")),
        Some(ChangeKind::Unchanged) => return Ok(PassReport::default()),
        Some(ChangeKind::Rewritten) => true,
        Some(ChangeKind::Appended { .. }) => false,
    };
    let opts: ArchivePassOptions = pass_options(input)?;
    let config = input.config;
    let level = match (opts.zstd_level, config.compress) {
        (Some(l), _) => l,
        (None, true) => CodecOptions::default().level,
        (None, false) => -7,
    };
    let archive = Archive::open(
        input.archive_dir,
        ArchiveOptions {
            codec: CodecOptions {
                level,
                long: opts.long_window,
                threads: opts.threads.unwrap_or(0),
            },
            dict: if opts.dictionary.unwrap_or(true) {
                DictMode::Auto
            } else {
                DictMode::Off
            },
            lock_timeout: config.lock_timeout(),
            ..ArchiveOptions::default()
        },
    )?;
    let redactor = if config.redact {
        Some(passes.redactor(&opts.redact)?)
    } else {
        None
    };
    let transforms = Transforms {
        redactor,
        prune: None,
    };

    let (kind, mut meta) = kind_and_meta(input, source)?;
    // The metadata is stored on first sight, at SessionEnd (with the reason) and whenever the
    // archive has nothing of this source yet (e.g. a new archive directory); `None` keeps what
    // is stored. The file name needs the first timestamp only when a new archive file is
    // started, which only happens in those cases (or on a rewrite the runtime saw).
    let store_meta = first_sight
        || *input.kind == EventKind::SessionEnd
        || archive
            .checkpoint(&kind)?
            .is_none_or(|c| c.current.is_none());
    let first_timestamp = if store_meta {
        first_timestamp(source)
    } else {
        None
    };
    meta.first_timestamp.clone_from(&first_timestamp);
    meta.origin = skein_layout::archive::origin(source, |b| transforms.text(b));
    let request = IngestRequest {
        source,
        kind,
        first_timestamp: first_timestamp.as_deref(),
        meta: store_meta.then_some(meta),
    };
    let report = if let Some(redactor) = redactor {
        let mut transform = |line: &[u8], out: &mut Vec<u8>| redact_line(redactor, line, out);
        archive.ingest(&request, Some(&mut transform))
    } else {
        archive.ingest(&request, None)
    }?;
    Ok(describe(&report, archive.root()))
}

fn describe(r: &IngestReport, root: &Path) -> PassReport {
    let file = r
        .archive_path
        .as_deref()
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .unwrap_or_default();
    let mut s = if r.appended_source_lines == 0 {
        format!("nothing new for {file}")
    } else {
        format!(
            "{} line(s), {} → {} bytes into {file}",
            r.appended_lines, r.appended_raw_bytes, r.appended_bytes
        )
    };
    if let Some(reason) = r.new_file {
        let _ = write!(s, " (new file: {reason:?})");
    }
    if r.recovered_bytes > 0 {
        let _ = write!(s, " ({} torn bytes recovered)", r.recovered_bytes);
    }
    summary(&s)
}

/// The archive key and the metadata stored with a new file.
fn kind_and_meta(input: &PassInput<'_>, source: &Path) -> Result<(Kind, SessionMeta), Error> {
    let mut meta = SessionMeta {
        cwd: input.event.cwd.clone(),
        ..SessionMeta::default()
    };
    if *input.kind != EventKind::SubagentStop {
        meta.session_id = Some(input.session.to_owned());
        meta.project = project_of(source);
        meta.outcome = (*input.kind == EventKind::SessionEnd)
            .then(|| input.event.reason.clone())
            .flatten();
        return Ok((skein_layout::archive::main_key(input.session), meta));
    }
    let Some(agent_id) = input.agent_id else {
        return Err(Error::Pass("SubagentStop without agent_id".into()));
    };
    let sidecar = read_sidecar(source);
    let agent = AgentIdentity::new(
        agent_id,
        &[
            input.event.agent_type.as_deref(),
            sidecar.agent_type.as_deref(),
        ],
        Some(input.session),
        sidecar.tool_use_id,
        sidecar.description,
    );
    agent.annotate(&mut meta);
    meta.project = input
        .parent_transcript
        .and_then(project_of)
        .or_else(|| project_of(source));
    Ok((agent.kind(), meta))
}
