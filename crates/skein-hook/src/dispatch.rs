//! Per-event work: request scoping, built-in passes (`open-request`, `extract`), request
//! bookkeeping on Stop, the goal reminder, and the configured passes with their checkpoints.

use std::fmt::Write as _;
use std::path::Path;

use crate::checkpoint::{self, ChangeKind, Probe, TranscriptCheckpoints};
use crate::config::{Config, PASS_EXTRACT, PASS_OPEN_REQUEST};
use crate::event::{EventKind, HookEvent, ValidEvent};
use crate::extract::{extract_tags, write_work_files};
use crate::passes::{PassInput, PassRunner};
use crate::reminder;
use skein_core::time::format_ms;

use crate::runtime::{HookContext, HookError, Log, Scope};
use crate::state::{AgentRecord, NewRequest, RequestRecord, StateDir, StateError, WORK_DIR};
use crate::transcript;
use skein_store::LockError;

/// Checkpoint name used for the runtime's own todo/prompt tracking.
const TODOS: &str = "todos";

struct Ctx<'a> {
    ev: &'a HookEvent,
    valid: ValidEvent,
    hook: &'a HookContext,
    config: &'a Config,
    state: StateDir,
}

pub(crate) fn dispatch(
    ev: &HookEvent,
    hook: &HookContext,
    config: &Config,
    passes: &mut dyn PassRunner,
    log: &mut Log,
    scope: &mut Scope,
) -> Result<Option<String>, HookError> {
    let valid = ev.validate(&hook.projects_dirs).inspect_err(|_| {
        scope.outcome = Some("refused");
    })?;
    scope.session = Some(valid.session.clone());
    scope.agent.clone_from(&valid.agent_id);
    let c = Ctx {
        ev,
        state: StateDir::new(&hook.state_root, config.lock_timeout()),
        valid,
        hook,
        config,
    };
    let kind = c.valid.kind.clone();
    if kind == EventKind::Stop && ev.stop_hook_active {
        scope.outcome = Some("skipped");
        log.info("stop_hook_active is set: passes skipped");
        return Ok(None);
    }
    let names = config.passes_for(kind.name());
    let mut request = scope_request(&c, names, log)?;
    scope.request = request.as_ref().map(|r| r.id.clone());

    let transcript = match kind {
        EventKind::SubagentStop => c.valid.agent_transcript.as_deref(),
        _ => c.valid.transcript.as_deref(),
    };
    let existing = transcript.filter(|t| t.is_file());
    let wants_todos = c.config.goal_reminder && (kind == EventKind::Stop || ev.is_compact_start());
    let runner_passes = names
        .iter()
        .any(|n| n != PASS_OPEN_REQUEST && n != PASS_EXTRACT);
    let mut busy = false;
    let mut cps = match existing {
        Some(t) if runner_passes || wants_todos || kind == EventKind::Stop => {
            match TranscriptCheckpoints::open(&hook.state_root, t, config.lock_timeout()) {
                Ok(cps) => {
                    if let Some(w) = &cps.warning {
                        log.warn(format!("checkpoints reset: {w}"));
                    }
                    Some(cps)
                }
                // Another hook is working on this transcript (e.g. a long first pass): its
                // bytes will be offered to the passes next time.
                Err(StateError::Lock(LockError::Timeout { .. })) => {
                    busy = true;
                    scope.outcome = Some("busy");
                    log.warn("transcript busy in another skein hook: passes skipped this time");
                    None
                }
                Err(e) => return Err(e.into()),
            }
        }
        _ => None,
    };

    if let (Some(req), Some(t), Some(cps)) = (&mut request, existing, &mut cps)
        && matches!(kind, EventKind::Stop | EventKind::SessionStart)
    {
        // Bookkeeping only: a failure must not keep the passes from running.
        if let Err(e) = track_request(&c, req, t, cps, wants_todos) {
            log.error(format!("request bookkeeping: {e}"));
        }
    }
    let stdout = match &request {
        Some(req) if ev.is_compact_start() && config.goal_reminder => reminder::render(req),
        _ => None,
    };

    for name in names {
        match name.as_str() {
            PASS_OPEN_REQUEST => {}
            PASS_EXTRACT if kind == EventKind::SubagentStop => match &request {
                Some(req) => {
                    if let Err(e) = extract(&c, req, log) {
                        log.error(format!("extract: {e}"));
                    }
                }
                None => log.warn("extract: no request to attach the subagent to"),
            },
            PASS_EXTRACT => log.warn(format!("pass extract does nothing on {}", kind.name())),
            _ if busy => {}
            pass => run_pass(
                &c,
                pass,
                transcript,
                request.as_ref(),
                cps.as_mut(),
                passes,
                log,
            ),
        }
    }
    if let Some(cps) = &mut cps {
        cps.save()?;
    }
    Ok(stdout)
}

/// The request this event belongs to: a new one for `open-request`, else the session's
/// current one; Stop/SubagentStop open an implicit request when there is none.
fn scope_request(
    c: &Ctx<'_>,
    names: &[String],
    log: &mut Log,
) -> Result<Option<RequestRecord>, HookError> {
    let session = c.valid.session.as_str();
    let open = |implicit: bool, log: &mut Log| -> Result<RequestRecord, HookError> {
        let start_offset = c
            .valid
            .transcript
            .as_deref()
            .and_then(|t| std::fs::metadata(t).ok())
            .map(|m| m.len());
        let opened = c.state.open_request(
            session,
            c.hook.clock,
            NewRequest {
                prompt: if implicit { None } else { c.ev.prompt.clone() },
                prompt_id: c.ev.prompt_id.clone(),
                start_offset,
                implicit,
            },
        )?;
        for w in opened.warnings {
            log.warn(w);
        }
        Ok(opened.record)
    };
    if names.iter().any(|n| n == PASS_OPEN_REQUEST) {
        return open(false, log).map(Some);
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
            open(true, log).map(Some)
        }
        None => Ok(None),
    }
}

/// Stop / compact SessionStart: fill in the prompt's uuid and the latest todo list from the
/// bytes appended since the last look.
fn track_request(
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
    let todos = if wants_todos {
        transcript::latest_todos(t, probe.start(), probe.end)
            .map_err(HookError::io("scan todos in", t))?
    } else {
        None
    };
    // Only the new bytes are searched, so each byte near the request start is read once.
    let uuid = match (&req.start_uuid, &req.prompt, req.start_offset) {
        (None, Some(prompt), Some(at)) => {
            transcript::find_prompt_uuid(t, at, probe.start(), probe.end, prompt)
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
    Ok(())
}

/// SubagentStop: `<context>` blocks → `context.md`, `<work>` tags → `work/`, and the agent
/// recorded in `request.json` (its link to the parent request).
fn extract(c: &Ctx<'_>, req: &RequestRecord, log: &mut Log) -> Result<(), HookError> {
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
    let _lock = c.state.lock_request(session, &req.id)?;
    if !found.contexts.is_empty() {
        let who = c.ev.agent_type.as_deref().unwrap_or("agent");
        let mut md = String::new();
        for block in &found.contexts {
            let _ = write!(
                md,
                "\n## {} `{agent_id}` — {now}\n\n{block}\n",
                one_line(who)
            );
        }
        c.state.append_context_locked(session, &req.id, &md)?;
    }
    let work_files = if found.works.is_empty() {
        Vec::new()
    } else {
        let work = dir.join(WORK_DIR);
        write_work_files(&work, &found.works)
            .map_err(HookError::io("write work files in", &work))?
    };
    let record = AgentRecord {
        agent_id,
        agent_type: c.ev.agent_type.clone(),
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

/// Runs one configured pass through the runner and advances its checkpoint on success.
/// Failures are logged and do not stop the other passes.
fn run_pass(
    c: &Ctx<'_>,
    pass: &str,
    transcript: Option<&Path>,
    request: Option<&RequestRecord>,
    cps: Option<&mut TranscriptCheckpoints>,
    runner: &mut dyn PassRunner,
    log: &mut Log,
) {
    let mut probe: Option<Probe> = None;
    if let (Some(t), Some(cps)) = (transcript, cps.as_deref()) {
        match checkpoint::probe(t, cps.get(pass)) {
            Ok(p) => probe = Some(p),
            Err(e) => {
                log.error(format!("pass {pass}: cannot probe {}: {e}", t.display()));
                return;
            }
        }
    }
    let request_dir = request.and_then(|r| c.state.request_dir(&c.valid.session, &r.id).ok());
    let archive_dir = c.hook.archive_dir(c.config);
    let input = PassInput {
        pass,
        kind: &c.valid.kind,
        event: c.ev,
        session: &c.valid.session,
        agent_id: c.valid.agent_id.as_deref(),
        transcript,
        parent_transcript: match c.valid.kind {
            EventKind::SubagentStop => c.valid.transcript.as_deref(),
            _ => None,
        },
        change: probe.map(|p| p.change),
        end: probe.map_or(0, |p| p.end),
        request,
        request_dir: request_dir.as_deref(),
        archive_dir: &archive_dir,
        config: c.config,
    };
    match runner.run_pass(&input) {
        Ok(report) => {
            if let Some(s) = report.summary {
                log.info(format!("pass {pass}: {s}"));
            }
            if let (Some(t), Some(p), Some(cps)) = (transcript, probe, cps) {
                cps.set(pass, t, p.next);
            }
        }
        Err(e) => log.error(e),
    }
}
