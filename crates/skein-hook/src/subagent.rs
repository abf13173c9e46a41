//! SubagentStop's built-in `extract` pass: the agent's `<context>` blocks appended to the
//! request's `context.md`, its `<work>` files written to `work/`, the agent recorded in
//! `request.json` (its link to the parent request). Everything is redacted before it is
//! written when redaction is on, file names included.

use std::fmt::Write as _;

use skein_core::time::format_ms;

use crate::dispatch::Ctx;
use crate::extract::{WorkItem, extract_tags, write_work_files};
use crate::runtime::{HookError, Log};
use crate::security::Counts;
use crate::state::{AgentRecord, CONTEXT_FILE, REQUEST_FILE, RequestRecord, WORK_DIR};
use crate::transcript;

pub(crate) fn extract(c: &Ctx<'_>, req: &RequestRecord, log: &mut Log) -> Result<(), HookError> {
    let agent_id = c.valid.agent_id.clone().unwrap_or_else(|| "unknown".into());
    let text = match c.ev.last_assistant_message.as_deref() {
        Some(m) if !m.trim().is_empty() => Some(m.to_owned()),
        _ => match c.valid.agent_transcript.as_deref().filter(|p| p.is_file()) {
            Some(p) => transcript::last_assistant_text(p)
                .map_err(HookError::io("read agent transcript", p))?,
            None => None,
        },
    };
    if text.is_none() {
        log.info("extract: no final text from the subagent");
    }
    let found = extract_tags(text.as_deref().unwrap_or(""));
    let session = c.valid.session.as_str();
    let dir = c.state.request_dir(session, &req.id)?;
    let now = format_ms(c.hook.now_ms());
    let agent_type =
        c.ev.agent_type
            .as_deref()
            .map(|t| c.redact(t, &mut Counts::new()));
    let _lock = c.state.lock_request(session, &req.id)?;
    if !found.contexts.is_empty() {
        let who = agent_type.as_deref().unwrap_or("agent");
        let mut counts = Counts::new();
        let mut md = String::new();
        for block in &found.contexts {
            let block = c.redact(block, &mut counts);
            let _ = write!(
                md,
                "\n## {} `{agent_id}` — {now}\n\n{block}\n",
                one_line(who)
            );
        }
        c.state.append_context_locked(session, &req.id, &md)?;
        c.redacted(&dir.join(CONTEXT_FILE), counts);
    }
    let work_files = if found.works.is_empty() {
        Vec::new()
    } else {
        let work = dir.join(WORK_DIR);
        let mut names_counts = Counts::new();
        let mut items = Vec::with_capacity(found.works.len());
        let mut per_item = Vec::with_capacity(found.works.len());
        for w in &found.works {
            let mut counts = Counts::new();
            let content = c.redact(&w.content, &mut counts);
            // A secret in the name must not become a file name either.
            let file_name =
                skein_store::sanitize_file_name(&c.redact(&w.file_name, &mut names_counts));
            per_item.push(counts);
            items.push(WorkItem {
                raw_name: None,
                file_name,
                content,
            });
        }
        let written =
            write_work_files(&work, &items).map_err(HookError::io("write work files in", &work))?;
        for (name, counts) in written.iter().zip(per_item) {
            c.redacted(&work.join(name), counts);
        }
        c.redacted(&dir.join(REQUEST_FILE), names_counts);
        written
    };
    let record = AgentRecord {
        agent_id,
        agent_type,
        transcript: c
            .valid
            .agent_transcript
            .as_deref()
            .map(|p| p.to_string_lossy().into_owned()),
        stopped_at: now,
        context_blocks: found.contexts.len(),
        work_files,
    };
    c.state
        .update_request_locked(session, &req.id, |r| {
            r.agents.push(record);
            true
        })
        .map(drop)
        .map_err(HookError::from)
}

fn one_line(s: &str) -> String {
    s.chars()
        .take(80)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
