//! Per-event work: request scoping ([`crate::request`]), the built-in passes (`open-request`,
//! `extract`, `loop-guard`), the goal reminder, and the configured passes with their
//! checkpoints and carried state.

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use skein_redact::Redactor;
use skein_store::LockError;

use crate::checkpoint::{self, Probe, TranscriptCheckpoints};
use crate::config::{Config, PASS_EXTRACT, PASS_LOOP_GUARD, PASS_OPEN_REQUEST};
use crate::event::{EventKind, HookEvent, ValidEvent};
use crate::passes::{PassInput, PassRunner};
use crate::redaction::maybe_redact;
use crate::runtime::{HookContext, HookError, Log, Scope};
use crate::security::{Counts, SecurityLog};
use crate::state::{RequestRecord, StateDir, StateError};
use crate::{loop_guard, reminder, request, session_logs, subagent};

/// What the work on one event shares.
pub(crate) struct Ctx<'a> {
    pub(crate) ev: &'a HookEvent,
    pub(crate) valid: ValidEvent,
    pub(crate) hook: &'a HookContext,
    pub(crate) config: &'a Config,
    pub(crate) state: StateDir,
    /// `None` when redaction is off.
    pub(crate) redactor: Option<Arc<Redactor>>,
    pub(crate) security: RefCell<SecurityLog>,
}

impl Ctx<'_> {
    /// `text` as it may be written: secrets replaced when redaction is on (counted in
    /// `counts`).
    pub(crate) fn redact(&self, text: &str, counts: &mut Counts) -> String {
        maybe_redact(self.redactor.as_deref(), text, counts)
    }

    /// Records a write to `file` that replaced `counts` secrets (for `security.jsonl`).
    pub(crate) fn redacted(&self, file: &Path, counts: Counts) {
        self.security.borrow_mut().redacted(file, counts);
    }
}

pub(crate) fn dispatch(
    ev: &HookEvent,
    hook: &HookContext,
    config: &Config,
    passes: &mut dyn PassRunner,
    redactor: Option<Arc<Redactor>>,
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
        redactor,
        security: RefCell::new(SecurityLog::default()),
    };
    let result = dispatch_valid(&c, passes, log, scope);
    scope.security.events.extend(c.security.into_inner().events);
    result
}

fn dispatch_valid(
    c: &Ctx<'_>,
    passes: &mut dyn PassRunner,
    log: &mut Log,
    scope: &mut Scope,
) -> Result<Option<String>, HookError> {
    let (ev, config) = (c.ev, c.config);
    let kind = c.valid.kind.clone();
    if kind == EventKind::Stop && ev.stop_hook_active {
        scope.outcome = Some("skipped");
        scope.detail = Some("stop_hook_active is set: passes skipped".to_owned());
        log.info("stop_hook_active is set: passes skipped");
        return Ok(None);
    }
    let names = config.passes_for(kind.name());
    // The loop guard answers before anything else: it is on every tool call's path.
    let mut stdout = None;
    if names.iter().any(|n| n == PASS_LOOP_GUARD) {
        match loop_guard::check(c) {
            Ok(Some(decision)) => {
                scope.decision = Some("block");
                stdout = Some(decision);
            }
            Ok(None) => {}
            Err(e) => log.error(format!("loop-guard: {e}")),
        }
    }
    let mut request = request::scope_request(c, names, log)?;
    scope.request = request.as_ref().map(|r| r.id.clone());

    let transcript = match kind {
        EventKind::SubagentStop => c.valid.agent_transcript.as_deref(),
        _ => c.valid.transcript.as_deref(),
    };
    let existing = transcript.filter(|t| t.is_file());
    let wants_todos = config.goal_reminder && (kind == EventKind::Stop || ev.is_compact_start());
    let runner_passes = names.iter().any(|n| !is_builtin(n));
    let copies_agent = kind == EventKind::SubagentStop && names.iter().any(|n| n == PASS_EXTRACT);
    let mut busy = false;
    let mut cps = match existing {
        Some(t) if runner_passes || wants_todos || copies_agent || kind == EventKind::Stop => {
            match TranscriptCheckpoints::open(&c.hook.state_root, t, config.lock_timeout()) {
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
        if let Err(e) = request::track_request(c, req, t, cps, wants_todos) {
            log.error(format!("request bookkeeping: {e}"));
        }
    }
    if let Some(req) = &request
        && ev.is_compact_start()
        && config.goal_reminder
    {
        stdout = reminder::render(req);
    }

    for name in names {
        match name.as_str() {
            PASS_OPEN_REQUEST | PASS_LOOP_GUARD => {}
            PASS_EXTRACT if kind == EventKind::SubagentStop => match &request {
                Some(req) => {
                    if let Err(e) = subagent::extract(c, req, log) {
                        log.error(format!("extract: {e}"));
                    }
                    if let Some(cps) = cps.as_mut()
                        && let Err(e) = session_logs::copy_agent(c, req, cps)
                    {
                        log.error(format!("extract: session-logs copy: {e}"));
                    }
                }
                None => log.warn("extract: no request to attach the subagent to"),
            },
            PASS_EXTRACT => log.warn(format!("pass extract does nothing on {}", kind.name())),
            _ if busy => {}
            pass => run_pass(
                c,
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

fn is_builtin(name: &str) -> bool {
    crate::config::BUILTIN_PASSES.contains(&name)
}

/// Runs one configured pass through the runner and, on success, advances its checkpoint and
/// stores the state it carries. Failures are logged and do not stop the other passes.
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
    // The state describes the bytes before the checkpoint: useless once the file changed.
    let state = match (probe, cps.as_deref()) {
        (Some(p), Some(cps)) if p.change != checkpoint::ChangeKind::Rewritten => cps.state(pass),
        _ => None,
    };
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
        state_root: &c.hook.state_root,
        config: c.config,
        state: state.as_ref(),
    };
    match runner.run_pass(&input) {
        Ok(report) => {
            if let Some(s) = report.summary {
                log.info(format!("pass {pass}: {s}"));
            }
            c.security
                .borrow_mut()
                .events
                .extend(report.security.events);
            if let (Some(t), Some(p), Some(cps)) = (transcript, probe, cps) {
                // A state file is rewritten only when it would say something else.
                let same = report.state == state && cps.get(pass) == Some(&p.next);
                cps.set(pass, t, p.next);
                if !same {
                    cps.set_state(pass, report.state);
                }
            }
        }
        Err(e) => log.error(e),
    }
}
