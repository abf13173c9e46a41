//! Archiving a tree with metadata (`skein archive PATH… --to DIR`): every source of a session
//! ingested with the metadata computed from the transcripts ([`crate::meta`]) and its origin in
//! the Claude tree, optionally pruned and redacted on the way in. The binary finds the
//! sessions, runs [`ArchiveJob::session`] on its workers and prints the rows.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use skein_archive::{
    Batch, Checkpoint, IngestReport, IngestRequest, Kind, MetaLater, SessionMeta, Transform,
    VersionReason,
};
use skein_core::Parser;
use skein_layout::SessionFiles;
use skein_layout::archive::{main_key, parent_session};

use crate::error::{Error, chain};
use crate::identity::AgentIdentity;
use crate::meta::{SOURCE_BYTES, finish};
use crate::meta_read::{SessionMetas, read_session};
use crate::session_meta::{agent_identity, agent_meta, main_meta, redact_meta};
use crate::transform::{LineAction, Transforms, prune_plan, redact_line};

/// What happened to one source transcript (one line of `skein archive`'s output).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IngestRow {
    /// The source transcript.
    pub source: String,
    /// `main-session` or `subagent`.
    pub kind: &'static str,
    /// The session (for a subagent: the parent session).
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// The archive file, relative to the archive.
    pub file: Option<String>,
    pub version: u32,
    /// `created`, `appended`, `new-version`, `unchanged`, `rewrite-pending`, `skipped`, `error`.
    pub status: &'static str,
    /// Why a new version was started (or is pending): `inode-changed`, `shrunk`,
    /// `head-changed`, `tail-changed`, `archive-damaged`; why a source was `skipped`:
    /// `symlink`, `inside-archive`, `compressed`, `duplicate-key`.
    pub reason: Option<&'static str>,
    /// Complete source lines newly read, and the lines written after prune/redact.
    pub source_lines: u64,
    pub lines: u64,
    /// Bytes written before and after compression.
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    /// An incomplete last line left for the next run.
    pub torn_tail_bytes: u64,
    /// Bytes of a torn frame from an earlier crash cut first.
    pub recovered_bytes: u64,
    /// The trained dictionary the file uses.
    pub dict: Option<u32>,
    /// Why the source was skipped or failed.
    pub error: Option<String>,
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
    fn row(&self) -> IngestRow {
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
        IngestRow {
            source: self.path.display().to_string(),
            kind,
            session_id,
            agent_id,
            agent_type,
            ..IngestRow::default()
        }
    }
}

/// The sources of a session with their archive keys. Legacy agent files without a session id
/// inside have no parent session.
fn plan(s: &SessionFiles) -> Vec<Planned> {
    let mut out = Vec::new();
    if let Some(main) = &s.main {
        out.push(Planned {
            path: main.clone(),
            kind: main_key(&s.session_id),
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

fn report_row(mut row: IngestRow, r: &IngestReport, root: &Path) -> IngestRow {
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

fn error_row(mut row: IngestRow, status: &'static str, msg: String) -> IngestRow {
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
    ck.is_some_and(|c| c.indexed)
        && !cur.source.unknown
        && skein_store::FileId::of(md).same_file(&cur.source.file_id())
        && md.len() == cur.source.size
        && cur.meta.extra.get(SOURCE_BYTES).and_then(Value::as_u64) == Some(md.len())
}

/// A main transcript at least this big is compressed while its session is read for the
/// metadata (the size at which the frame gets worker threads): below it, a thread costs
/// more than it saves.
const OVERLAP_MIN: u64 = skein_archive::MT_THRESHOLD;

/// The metadata read by a scoped thread (`None`: already taken).
fn join(
    h: Option<std::thread::ScopedJoinHandle<'_, Result<SessionMetas, Error>>>,
) -> Result<SessionMetas, Error> {
    match h {
        Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        None => Err(Error::Pass(
            "the session's metadata was read already".to_owned(),
        )),
    }
}

/// Why a symlinked transcript file is not archived (symlinked directories are not followed
/// either): the link could point at any file, `/etc/passwd` included.
pub const SYMLINK_SKIPPED: &str = "a symbolic link: not followed (archive the file it points to)";

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Archives sessions into one archive: the refusals are settled over all sessions first, then
/// each session is staged in the batch by [`ArchiveJob::session`] (sessions may run in
/// parallel: the archive locks per source); the caller commits the batch
/// ([`Batch::commit`], at most every [`ArchiveJob::BATCH_SOURCES`] sources) before it reports
/// the rows.
#[derive(Debug)]
pub struct ArchiveJob<'a> {
    batch: &'a Batch<'a>,
    transforms: Transforms<'a>,
    /// Sources not archived: the row's `reason` code and the message.
    refused: HashMap<PathBuf, (&'static str, String)>,
}

impl<'a> ArchiveJob<'a> {
    /// How many staged sources a commit waits for: each holds its lock (a file descriptor)
    /// until then, and a commit costs two filesystem syncs.
    pub const BATCH_SOURCES: usize = 256;

    /// A job over `sessions`: symlinks, compressed files, files inside the archive, and a
    /// second source with the archive key of an earlier one (the same session id in two
    /// projects would otherwise replace each other's archive on every run; the first in order
    /// wins) are refused.
    pub fn new(
        batch: &'a Batch<'a>,
        transforms: Transforms<'a>,
        sessions: &[SessionFiles],
    ) -> Self {
        let archive = batch.archive();
        let root = archive.root();
        let abs_root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut refused = HashMap::new();
        for s in sessions {
            for p in plan(s) {
                let abs = std::path::absolute(&p.path).unwrap_or_else(|_| p.path.clone());
                let why = if is_symlink(&p.path) {
                    Some(("symlink", SYMLINK_SKIPPED.to_owned()))
                } else if abs.starts_with(&abs_root) {
                    Some(("inside-archive", "inside the archive directory".to_owned()))
                } else if skein_store::is_zstd(&p.path) {
                    Some((
                        "compressed",
                        "a compressed transcript is not archived (decompress it first)".to_owned(),
                    ))
                } else if let Some(first) = seen.get(&key_of(&p.kind)) {
                    Some((
                        "duplicate-key",
                        format!("same archive key as {} (archived instead)", first.display()),
                    ))
                } else {
                    seen.insert(key_of(&p.kind), p.path.clone());
                    None
                };
                if let Some(why) = why {
                    refused.insert(p.path, why);
                }
            }
        }
        Self {
            batch,
            transforms,
            refused,
        }
    }

    /// The symlinked sources skipped, sorted (the command warns about each).
    pub fn skipped_symlinks(&self) -> Vec<&Path> {
        let mut links: Vec<&Path> = self
            .refused
            .iter()
            .filter(|(_, (code, _))| *code == "symlink")
            .map(|(p, _)| p.as_path())
            .collect();
        links.sort();
        links
    }

    /// The archive key and metadata of source `p` of session `s` (a subagent's agent type and
    /// spawning call come from the main transcript's links).
    fn meta_for(
        &self,
        s: &SessionFiles,
        p: &Planned,
        metas: &SessionMetas,
        ck: Option<&Checkpoint>,
        size: u64,
    ) -> (Kind, SessionMeta) {
        // Who an agent is (from its sidecar and the main transcript's spawning calls): every
        // agent for the main transcript's metadata, only its own for an agent's.
        let identity = |a: &skein_layout::AgentFile| {
            agent_identity(
                &a.agent_id,
                a.meta.as_ref(),
                None,
                Some(&metas.links),
                parent_session(s),
            )
        };
        let project = Some(s.project());
        let main = metas.main.as_ref();
        let (kind, m) = match p.agent {
            None => {
                let agents: Vec<AgentIdentity> = s.agents.iter().map(identity).collect();
                let m = main.map(|c| main_meta(c, &s.session_id, project, &agents));
                (p.kind.clone(), m.unwrap_or_default())
            }
            Some(a) => {
                let id = identity(&s.agents[a]);
                (id.kind(), agent_meta(&metas.agents[a], &id, project, main))
            }
        };
        let stored_meta = ck.and_then(|c| c.current.as_ref()).map(|c| &c.meta);
        let mut m = finish(m, stored_meta, size);
        let t = self.transforms;
        if let Some(r) = t.redactor {
            redact_meta(&mut m, r, &mut skein_redact::RuleCounts::new());
        }
        m.origin = skein_layout::archive::origin(&p.path, |b| t.text(b));
        (kind, m)
    }

    /// Ingests `p` with `meta`, or with the metadata `later` computes meanwhile.
    fn ingest_one(
        &self,
        p: &Planned,
        kind: Kind,
        meta: Option<SessionMeta>,
        later: Option<&mut MetaLater<'_>>,
    ) -> Result<IngestReport, Error> {
        let t = &self.transforms;
        let first = skein_layout::claude::first_timestamp(&p.path);
        let request = IngestRequest {
            source: &p.path,
            kind,
            first_timestamp: first.as_deref(),
            meta,
        };
        let mut later = later;
        let mut ingest = |transform: Option<&mut Transform<'_>>| match later.take() {
            Some(f) => self.batch.ingest_meta_later(&request, transform, f),
            None => self.batch.ingest(&request, transform),
        };
        if t.redactor.is_none() && t.prune.is_none() {
            return Ok(ingest(None)?);
        }
        let (input, pruned) = match t.prune {
            Some(opts) => {
                let input = std::fs::read(&p.path).map_err(|error| Error::Io {
                    path: p.path.clone(),
                    error,
                })?;
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
        Ok(ingest(Some(&mut transform))?)
    }

    /// Archives one session; one row per source. Sources already archived at their current
    /// size, with metadata computed for that size, are not read at all.
    pub fn session(&self, s: &SessionFiles, parser: &mut Parser) -> Result<Vec<IngestRow>, Error> {
        let root = self.batch.archive().root();
        let planned = plan(s);
        // Per source: its row when it is settled already (refused, unreadable checkpoint),
        // else its stored checkpoint and its size now.
        let mut sources: Vec<Result<(Option<Checkpoint>, u64), IngestRow>> =
            Vec::with_capacity(planned.len());
        let mut all_unchanged = true;
        for p in &planned {
            if let Some((code, why)) = self.refused.get(&p.path) {
                // A skipped row always says why: a code in `reason`, the words in `error`.
                let row = IngestRow {
                    reason: Some(code),
                    ..p.row()
                };
                sources.push(Err(error_row(row, "skipped", why.clone())));
                continue;
            }
            let md = std::fs::metadata(&p.path).ok();
            sources.push(match self.batch.archive().checkpoint(&p.kind) {
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
                    IngestRow {
                        file: cur.map(|c| c.file.clone()),
                        version: cur.map_or(0, |c| c.version),
                        dict: cur.and_then(|c| c.dict).map(|d| d.version),
                        status: "unchanged",
                        ..p.row()
                    }
                })
                .collect());
        }

        // The main transcript's archive key does not depend on its metadata: a big one is
        // compressed while another thread reads the session for the metadata (only the commit
        // needs it), so the wall time is the longer of the two, not their sum.
        let mut rows: Vec<Option<IngestRow>> = vec![None; planned.len()];
        let overlap = planned
            .first()
            .zip(sources.first())
            .and_then(|(p, src)| match src {
                Ok((ck, size)) if p.agent.is_none() && *size >= OVERLAP_MIN => Some((p, ck, *size)),
                _ => None,
            });
        let metas = match overlap {
            None => read_session(s, parser)?,
            Some((p, ck, size)) => std::thread::scope(|scope| {
                let reader = scope.spawn(|| read_session(s, parser));
                let mut reader = Some(reader);
                let mut metas = None;
                let mut later = || {
                    let m = join(reader.take())?;
                    let meta = self.meta_for(s, p, &m, ck.as_ref(), size).1;
                    metas = Some(m);
                    Ok(Some(meta))
                };
                let result = self.ingest_one(p, p.kind.clone(), None, Some(&mut later));
                let metas = match metas {
                    Some(m) => m,
                    None => join(reader)?,
                };
                rows[0] = Some(match result {
                    Ok(r) => report_row(p.row(), &r, root),
                    Err(e) => error_row(p.row(), "error", chain(&e)),
                });
                Ok::<_, Error>(metas)
            })?,
        };
        let mut out = Vec::with_capacity(planned.len());
        for ((p, source), done) in planned.iter().zip(sources).zip(rows) {
            if let Some(row) = done {
                out.push(row);
                continue;
            }
            let (ck, size) = match source {
                Ok(source) => source,
                Err(row) => {
                    out.push(row);
                    continue;
                }
            };
            let (kind, m) = self.meta_for(s, p, &metas, ck.as_ref(), size);
            let mut row = p.row();
            if let Kind::Subagent { agent_type, .. } = &kind {
                row.agent_type = Some(agent_type.clone());
            }
            out.push(match self.ingest_one(p, kind, Some(m), None) {
                Ok(r) => report_row(row, &r, root),
                Err(e) => error_row(row, "error", chain(&e)),
            });
        }
        Ok(out)
    }
}
