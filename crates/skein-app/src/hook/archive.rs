//! The `archive` pass: the event's transcript into the skein archive, redacted on the way in
//! when `redact = true`, with the same metadata `skein archive` writes.
//!
//! * Main transcripts (Stop, SessionEnd, PreCompact, …) go under `main-session/`.
//! * SubagentStop archives the agent's transcript under `subagent/<agent-type>/`, keyed by its
//!   parent session.
//!
//! The metadata comes from [`MetaCollector`], the visitor `skein archive` reads whole files
//! with, fed here only the bytes new since the last run: the collector is the state this pass
//! carries in the runtime's checkpoint (its free text redacted like everything else under the
//! state directory). Identity fields come from `crate::session_meta`, the code `skein archive`
//! uses. A subagent's spawning call and how it ended are written in the parent transcript,
//! mostly after SubagentStop ran: each main-transcript run fills them into the metadata of the
//! session's archived subagents.
//!
//! The archive keeps its own crash-safe checkpoint and only reads the bytes it has not archived
//! yet. When the runtime's checkpoint says nothing was appended since the last successful run,
//! the pass does not even open the archive.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use skein_archive::{
    Archive, ArchiveOptions, CodecOptions, DictMode, IngestReport, IngestRequest, Kind, SessionMeta,
};
use skein_core::Parser;
use skein_hook::{ChangeKind, Counts, EventKind, PassInput, PassReport, SecurityLog};
use skein_layout::claude::{first_timestamp, project_of};
use skein_layout::session_of;
use skein_redact::{RedactOptions, Redactor};

use super::{Passes, pass_options, summary};
use crate::error::Error;
use crate::identity::{AgentIdentity, read_sidecar};
use crate::meta::{MetaCollector, feed_range, finish};
use crate::session_meta::{agent_identity, agent_meta, main_meta, redact_meta};
use crate::transform::{Transforms, redact_line};

/// `[pass.archive]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct ArchivePassOptions {
    /// zstd level (default: `[archive] level`, else 3; `compress = false` means -7, zstd's
    /// fastest).
    zstd_level: Option<i32>,
    /// Long-distance matching window log (e.g. 27).
    long_window: Option<u32>,
    /// Compression threads: 0 = automatic (default), 1 = none.
    threads: Option<u32>,
    /// Use a trained dictionary for small new subagent files (default true).
    dictionary: Option<bool>,
    /// Redaction rules for this pass (used when `redact = true`); default: `[redaction]`.
    redact: Option<RedactOptions>,
}

/// A subagent of the session and its transcript.
type AgentFile = (AgentIdentity, std::path::PathBuf);

/// What the pass carries from one run to the next on a transcript.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ArchiveState {
    /// The metadata visitor, fed every byte before the checkpoint; its id sets are kept in
    /// the id log instead ([`IdLog`]).
    meta: MetaCollector,
    /// How many bytes of the id log belong to this state.
    #[serde(default)]
    ids_len: u64,
}

/// The append-only file of the collector's id records
/// (`<state>/checkpoints/<hash of the transcript path>.archive-ids`, mode 0600): read whole,
/// appended to, cut back to what the state says (a crash between the append and the state's
/// save leaves extra records, which are cut). Guarded by the transcript's checkpoint lock,
/// which the runtime holds while the passes run.
struct IdLog {
    path: std::path::PathBuf,
}

impl IdLog {
    fn of(input: &PassInput<'_>, source: &Path) -> Self {
        let key = crate::packed::hash(source.as_os_str().as_encoded_bytes());
        Self {
            path: input
                .state_root
                .join("checkpoints")
                .join(format!("{key:016x}.archive-ids")),
        }
    }

    /// Fills the state's id sets from the log; false when the log does not hold what the
    /// state says (the state is then rebuilt from the transcript).
    fn load(&self, state: &mut ArchiveState) -> std::io::Result<bool> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let Ok(len) = usize::try_from(state.ids_len) else {
            return Ok(false);
        };
        if bytes.len() < len || !state.meta.replay_ids(&bytes[..len]) {
            return Ok(false);
        }
        if bytes.len() > len {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)?
                .set_len(state.ids_len)?;
        }
        Ok(true)
    }

    /// Starts the log over (the state is rebuilt from the transcript).
    fn reset(&self, state: &mut ArchiveState) -> std::io::Result<()> {
        state.ids_len = 0;
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Appends what the sets gained, then empties them for the state's serialization.
    fn save(&self, state: &mut ArchiveState) -> std::io::Result<()> {
        let mut records = Vec::new();
        state.meta.log_ids(&mut records);
        if !records.is_empty() {
            if let Some(dir) = self.path.parent() {
                skein_store::private::create_dir_all(dir)?;
            }
            let mut f = skein_store::private::open_append(&self.path)?;
            std::io::Write::write_all(&mut f, &records)?;
            state.ids_len += records.len() as u64;
        }
        state.meta.clear_ids();
        Ok(())
    }
}

pub(super) fn run(passes: &mut Passes, input: &PassInput<'_>) -> Result<PassReport, Error> {
    let Some(source) = input.transcript else {
        return Ok(summary("no transcript in the event"));
    };
    let from = match input.change {
        None => return Ok(summary("transcript does not exist (yet)")),
        // SessionEnd records how the session ended even when nothing was appended.
        Some(ChangeKind::Unchanged) if *input.kind == EventKind::SessionEnd => input.end,
        Some(ChangeKind::Unchanged) => {
            return Ok(PassReport {
                state: input.state.cloned(),
                ..PassReport::default()
            });
        }
        Some(ChangeKind::Rewritten) => 0,
        Some(ChangeKind::Appended { from }) => from,
    };
    let log = IdLog::of(input, source);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| Error::Io { path, error }
    };
    // A state that does not read (another version's), or whose id log is not all there, is
    // rebuilt from the whole file.
    let mut loaded = match input.state.map(|v| serde_json::from_value(v.clone())) {
        Some(Ok(s)) if from > 0 => Some(s),
        _ => None,
    };
    if let Some(s) = &mut loaded
        && !log.load(s).map_err(io(&log.path))?
    {
        loaded = None;
    }
    let (mut state, from) = if let Some(s) = loaded {
        (s, from)
    } else {
        let mut s = ArchiveState::default();
        log.reset(&mut s).map_err(io(&log.path))?;
        (s, 0)
    };
    feed_range(&mut state.meta, source, from, input.end, &mut Parser::new()).map_err(|error| {
        Error::Io {
            path: source.to_path_buf(),
            error,
        }
    })?;
    let opts: ArchivePassOptions = pass_options(input)?;
    let archive = open_archive(input, &opts)?;
    let redactor = if input.config.redact {
        Some(passes.redactor(opts.redact.as_ref().unwrap_or(&input.config.redaction))?)
    } else {
        None
    };
    let redactor = redactor.as_deref();
    let mut security = SecurityLog::default();
    let (kind, meta, agents) = kind_and_meta(input, source, &state.meta)?;
    let stored = archive.checkpoint(&kind)?.and_then(|c| c.current);
    let mut meta = finish(meta, stored.as_ref().map(|c| &c.meta), input.end);
    if *input.kind == EventKind::SessionEnd {
        meta.outcome.clone_from(&input.event.reason);
    }
    let mut counts = Counts::new();
    if let Some(r) = redactor {
        redact_meta(&mut meta, r, &mut counts);
    }
    let transforms = Transforms {
        redactor,
        prune: None,
    };
    // The file name needs the first timestamp only when a new archive file is started.
    let first_timestamp = stored.is_none().then(|| first_timestamp(source)).flatten();
    meta.first_timestamp = meta.first_timestamp.or_else(|| first_timestamp.clone());
    meta.origin = skein_layout::archive::origin(source, |b| transforms.text(b));
    let request = IngestRequest {
        source,
        kind,
        first_timestamp: first_timestamp.as_deref(),
        meta: Some(meta),
    };
    let report = ingest(&archive, &request, redactor)?;
    if let Some(path) = &report.archive_path {
        let meta_path = skein_archive_meta_path(path);
        security.redacted(&meta_path, counts);
        if report.new_file.is_some() {
            security.created(path, skein_store::private::mode_of(path));
            security.created(&meta_path, skein_store::private::mode_of(&meta_path));
        }
    }
    let mut patched = 0;
    for (agent, path) in &agents {
        patched += usize::from(fill_agent(&archive, agent, path, &state.meta, redactor)?);
    }
    let mut out = describe(&report, archive.root());
    if patched > 0
        && let Some(s) = &mut out.summary
    {
        let _ = write!(s, "; {patched} subagent record(s) completed");
    }
    if let Some(r) = redactor {
        state
            .meta
            .map_text(&mut |t| skein_hook::redaction::redact_str(r, t, &mut Counts::new()));
    }
    log.save(&mut state).map_err(io(&log.path))?;
    out.state = serde_json::to_value(&state).ok();
    out.security = security;
    Ok(out)
}

/// `<archive file>.meta.json` beside an archive file.
fn skein_archive_meta_path(archive_file: &Path) -> std::path::PathBuf {
    let name = archive_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    archive_file.with_file_name(skein_archive::meta_rel_path(&name))
}

fn open_archive(input: &PassInput<'_>, opts: &ArchivePassOptions) -> Result<Archive, Error> {
    let config = input.config;
    let level = match (opts.zstd_level.or(config.archive_level), config.compress) {
        (Some(l), _) => l,
        (None, true) => CodecOptions::default().level,
        (None, false) => -7,
    };
    Ok(Archive::open(
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
    )?)
}

fn ingest(
    archive: &Archive,
    request: &IngestRequest<'_>,
    redactor: Option<&Redactor>,
) -> Result<IngestReport, Error> {
    Ok(match redactor {
        Some(r) => {
            let mut transform = |line: &[u8], out: &mut Vec<u8>| redact_line(r, line, out);
            archive.ingest(request, Some(&mut transform))
        }
        None => archive.ingest(request, None),
    }?)
}

/// After a main transcript's run: the archived subagent's metadata gets what the parent now
/// says about it (the spawning call, its type and description, how it ended), when that
/// changes anything. Returns whether it did.
fn fill_agent(
    archive: &Archive,
    agent: &AgentIdentity,
    path: &Path,
    main: &MetaCollector,
    redactor: Option<&Redactor>,
) -> Result<bool, Error> {
    let Some(cur) = archive.checkpoint(&agent.kind())?.and_then(|c| c.current) else {
        return Ok(false);
    };
    let mut meta = cur.meta.clone();
    let known = agent.tool_use_id.is_some() || meta.tool_use_id.is_none();
    if known {
        agent.annotate(&mut meta);
    }
    let outcome = meta
        .tool_use_id
        .as_deref()
        .and_then(|id| main.outcome_of(id));
    if outcome.is_some() {
        meta.outcome = outcome;
    }
    if let Some(r) = redactor {
        redact_meta(&mut meta, r, &mut Counts::new());
    }
    if meta == cur.meta {
        return Ok(false);
    }
    let request = IngestRequest {
        source: path,
        kind: agent.kind(),
        first_timestamp: None,
        meta: Some(meta),
    };
    ingest(archive, &request, redactor)?;
    Ok(true)
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

/// The archive key and the metadata of the event's transcript, as `skein archive` computes
/// them; for a main transcript also its session's subagent files (identity and path), whose
/// archived metadata the parent completes.
fn kind_and_meta(
    input: &PassInput<'_>,
    source: &Path,
    c: &MetaCollector,
) -> Result<(Kind, SessionMeta, Vec<AgentFile>), Error> {
    if *input.kind != EventKind::SubagentStop {
        let files = session_of(source);
        let agents: Vec<AgentFile> = files
            .iter()
            .flat_map(|s| s.agents.iter())
            .map(|a| {
                let side = read_sidecar(&a.path);
                let id = agent_identity(
                    &a.agent_id,
                    Some(&side),
                    None,
                    Some(c.links()),
                    Some(input.session),
                );
                (id, a.path.clone())
            })
            .collect();
        let ids: Vec<AgentIdentity> = agents.iter().map(|(a, _)| a.clone()).collect();
        let meta = main_meta(c, input.session, project_of(source), &ids);
        return Ok((skein_layout::archive::main_key(input.session), meta, agents));
    }
    let Some(agent_id) = input.agent_id else {
        return Err(Error::Pass("SubagentStop without agent_id".into()));
    };
    let sidecar = read_sidecar(source);
    let agent = agent_identity(
        agent_id,
        Some(&sidecar),
        input.event.agent_type.as_deref(),
        None,
        Some(input.session),
    );
    let project = input
        .parent_transcript
        .and_then(project_of)
        .or_else(|| project_of(source));
    let meta = agent_meta(c, &agent, project, None);
    Ok((agent.kind(), meta, Vec::new()))
}
