//! Request scoping and bookkeeping: which request an event belongs to (a new one for
//! `open-request`; the session's current one; an implicit one, from the last prompt in the
//! transcript, when a Stop or SubagentStop finds none), and what a Stop learns about it from
//! the new transcript bytes (its prompt record, the task list).

use std::fmt::Write as _;
use std::path::Path;

use skein_analysis::{TaskList, TaskSource, TaskTracker};

use crate::checkpoint::{self, ChangeKind, TranscriptCheckpoints};
use crate::config::PASS_OPEN_REQUEST;
use crate::dispatch::Ctx;
use crate::event::EventKind;
use crate::runtime::{HookError, Log};
use crate::security::Counts;
use crate::state::{CONTEXT_FILE, NewRequest, REQUEST_FILE, RequestRecord, Todo};
use crate::transcript;

/// Checkpoint name of the runtime's own prompt and task-list tracking.
const TODOS: &str = "todos";

/// The request this event belongs to: a new one for `open-request`, else the session's
/// current one; Stop/SubagentStop open an implicit request when there is none.
pub(crate) fn scope_request(
    c: &Ctx<'_>,
    names: &[String],
    log: &mut Log,
) -> Result<Option<RequestRecord>, HookError> {
    let session = c.valid.session.as_str();
    if names.iter().any(|n| n == PASS_OPEN_REQUEST) {
        return open(c, explicit(c), log).map(Some);
    }
    let current = match c.state.current_request(session) {
        Ok(cur) => cur,
        Err(e) => {
            // Keep going without a request: the passes can still archive.
            log.error(format!("current request unknown: {e}"));
            return Ok(None);
        }
    };
    match current {
        Some(id) => Ok(Some(c.state.load_request(session, &id)?)),
        None if matches!(c.valid.kind, EventKind::Stop | EventKind::SubagentStop) => {
            let new = implicit(c, log);
            open(c, new, log).map(Some)
        }
        None => Ok(None),
    }
}

fn transcript_size(c: &Ctx<'_>) -> Option<u64> {
    c.valid
        .transcript
        .as_deref()
        .and_then(|t| std::fs::metadata(t).ok())
        .map(|m| m.len())
}

/// A request opened by the user's prompt.
fn explicit(c: &Ctx<'_>) -> NewRequest {
    NewRequest {
        prompt: c.ev.prompt.clone(),
        prompt_id: c.ev.prompt_id.clone(),
        start_offset: transcript_size(c),
        ..NewRequest::default()
    }
}

/// A request opened by a Stop or SubagentStop that found none (skein installed during the
/// session, or no UserPromptSubmit hook): its prompt is the last one in the transcript.
fn implicit(c: &Ctx<'_>, log: &mut Log) -> NewRequest {
    let size = transcript_size(c);
    let found = match (c.valid.transcript.as_deref(), size) {
        (Some(t), Some(end)) => transcript::last_prompt(t, end).unwrap_or_else(|e| {
            log.warn(format!("implicit request: no prompt read: {e}"));
            None
        }),
        _ => None,
    };
    match found {
        Some(p) => NewRequest {
            prompt: Some(p.text),
            start_uuid: Some(p.uuid),
            start_offset: Some(p.offset),
            implicit: true,
            ..NewRequest::default()
        },
        None => NewRequest {
            start_offset: size,
            implicit: true,
            ..NewRequest::default()
        },
    }
}

/// Opens the request: its prompt redacted, `context.md` started with it.
fn open(c: &Ctx<'_>, mut new: NewRequest, log: &mut Log) -> Result<RequestRecord, HookError> {
    let mut counts = Counts::new();
    new.prompt = new.prompt.map(|p| c.redact(&p, &mut counts));
    new.context = Some(context_head(new.prompt.as_deref(), new.implicit));
    let opened = c.state.open_request(&c.valid.session, c.hook.clock, new)?;
    for w in opened.warnings {
        log.warn(w);
    }
    let dir = c.state.request_dir(&c.valid.session, &opened.record.id)?;
    // The prompt is in both files.
    c.redacted(&dir.join(REQUEST_FILE), counts.clone());
    c.redacted(&dir.join(CONTEXT_FILE), counts);
    Ok(opened.record)
}

/// The start of `context.md`: the user's prompt (subagents' `<context>` blocks follow).
fn context_head(prompt: Option<&str>, implicit: bool) -> String {
    let mut md = String::from("## Prompt\n\n");
    match prompt {
        Some(p) => {
            let _ = writeln!(md, "{}", p.trim_end());
        }
        None if implicit => {
            md.push_str("(not known: the request was opened by a Stop, without a prompt)\n");
        }
        None => md.push_str("(empty)\n"),
    }
    md
}

/// Stop / compact SessionStart: fill in the prompt's uuid and the task list from the bytes
/// appended since the last look (the task tracker's state is carried in the checkpoint).
pub(crate) fn track_request(
    c: &Ctx<'_>,
    req: &mut RequestRecord,
    t: &Path,
    cps: &mut TranscriptCheckpoints,
    wants_todos: bool,
) -> Result<(), HookError> {
    let probe = checkpoint::probe(t, cps.get(TODOS)).map_err(HookError::io("probe", t))?;
    if probe.change == ChangeKind::Unchanged {
        return Ok(());
    }
    let mut todos = None;
    let mut tracker_state = None;
    if wants_todos {
        let mut tracker = match (probe.change, cps.state(TODOS)) {
            (ChangeKind::Appended { .. }, Some(v)) => {
                serde_json::from_value::<TaskTracker>(v).unwrap_or_default()
            }
            _ => TaskTracker::new(),
        };
        transcript::feed_tasks(t, probe.start(), probe.end, &mut tracker)
            .map_err(HookError::io("scan tasks in", t))?;
        let lists = tracker.lists();
        if !lists.is_empty() {
            todos = Some(as_todos(c, &lists, &req.id));
        }
        // The state is stored under the state directory: redacted like everything there.
        if let Some(r) = c.redactor.as_deref() {
            tracker.map_text(&mut |t| crate::redaction::redact_str(r, t, &mut Counts::new()));
        }
        tracker_state = serde_json::to_value(&tracker).ok();
    }
    // Only the new bytes are searched, so each byte near the request start is read once.
    let uuid = match (&req.start_uuid, &req.prompt, req.start_offset) {
        (None, Some(prompt), Some(at)) => {
            let is_it = |text: &str, prompt_id: Option<&str>| {
                if let (Some(a), Some(b)) = (prompt_id, req.prompt_id.as_deref()) {
                    return a == b;
                }
                // The stored prompt is redacted: compare like with like.
                let text = c.redact(text, &mut Counts::new());
                let want: String = prompt.trim().chars().take(80).collect();
                !want.is_empty() && text.trim_start().starts_with(&want)
            };
            transcript::find_prompt_uuid(t, at, probe.start(), probe.end, &is_it)
                .map_err(HookError::io("scan prompt in", t))?
        }
        _ => None,
    };
    if todos.is_some() || uuid.is_some() {
        *req = c.state.update_request(&c.valid.session, &req.id, |r| {
            let mut changed = false;
            if let Some(u) = uuid {
                changed |= r.start_uuid.replace(u.clone()).as_ref() != Some(&u);
            }
            if let Some(t) = todos {
                changed |= r.todos.replace(t.clone()).as_ref() != Some(&t);
            }
            changed
        })?;
    }
    cps.set(TODOS, t, probe.next);
    cps.set_state(TODOS, tracker_state);
    Ok(())
}

/// The task lists as the request records them: every item (the reminder picks the open
/// ones), subjects redacted.
fn as_todos(c: &Ctx<'_>, lists: &[TaskList], request: &str) -> Vec<Todo> {
    let mut counts = Counts::new();
    let mut out = Vec::new();
    for list in lists {
        let source = match list.source {
            TaskSource::TodoWrite => "todo_write",
            TaskSource::Tasks => "tasks",
        };
        for item in &list.items {
            out.push(Todo {
                id: item.id.clone(),
                content: c.redact(&item.subject, &mut counts),
                status: item.status.clone(),
                active_form: item
                    .active_form
                    .as_deref()
                    .map(|a| c.redact(a, &mut counts)),
                owner: item.owner.clone(),
                source: Some(source.to_owned()),
            });
        }
    }
    if let Ok(dir) = c.state.request_dir(&c.valid.session, request) {
        c.redacted(&dir.join(REQUEST_FILE), counts);
    }
    out
}
