//! The request's `session-logs/`: a redacted copy of each subagent transcript that stopped in
//! the request (`agent-<id>.jsonl`, next to the snapshot pass's `snapshot.jsonl`), so the
//! request directory still tells what happened once Claude Code has deleted its transcripts.
//! Kept up incrementally: each SubagentStop copies the agent transcript's bytes appended since
//! the last copy into this request (a checkpoint per request on the agent transcript).

use skein_store::safe_component;

use crate::checkpoint::{self, ChangeKind, TranscriptCheckpoints};
use crate::dispatch::Ctx;
use crate::runtime::HookError;
use crate::security::Counts;
use crate::state::{RequestRecord, SESSION_LOGS_DIR, append_bytes, create_dir_all, write_private};

/// Copies the new bytes of the event's agent transcript into the request's `session-logs/`
/// (redacted when redaction is on). Returns the number of source bytes copied.
pub(crate) fn copy_agent(
    c: &Ctx<'_>,
    req: &RequestRecord,
    cps: &mut TranscriptCheckpoints,
) -> Result<u64, HookError> {
    let (Some(agent), Some(t)) = (
        c.valid.agent_id.as_deref(),
        c.valid.agent_transcript.as_deref(),
    ) else {
        return Ok(0);
    };
    if !t.is_file() {
        return Ok(0);
    }
    let name = format!("session-logs:{}", req.id);
    let probe = checkpoint::probe(t, cps.get(&name)).map_err(HookError::io("probe", t))?;
    if probe.change == ChangeKind::Unchanged {
        return Ok(0);
    }
    let bytes = read_range(t, probe.start(), probe.end).map_err(HookError::io("read", t))?;
    let mut out = Vec::with_capacity(bytes.len());
    let counts = if let Some(r) = c.redactor.as_deref() {
        r.redact_jsonl(&bytes, &mut out)
    } else {
        out.extend_from_slice(&bytes);
        Counts::new()
    };
    let dir = c
        .state
        .request_dir(&c.valid.session, &req.id)?
        .join(SESSION_LOGS_DIR);
    create_dir_all(&dir)?;
    let dest = dir.join(format!(
        "agent-{}.jsonl",
        safe_component(agent).map_err(crate::state::StateError::from)?
    ));
    match probe.change {
        // The transcript was replaced: so is the copy.
        ChangeKind::Rewritten => write_private(&dest, &out)?,
        _ => append_bytes(&dest, &out)?,
    }
    c.redacted(&dest, counts);
    cps.set(&name, t, probe.next);
    Ok(probe.end - probe.start())
}

fn read_range(path: &std::path::Path, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(usize::try_from(to - from).unwrap_or(0));
    f.take(to - from).read_to_end(&mut buf)?;
    Ok(buf)
}
