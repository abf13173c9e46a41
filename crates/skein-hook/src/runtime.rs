//! `skein hook`: parse the event, load the config, dispatch, audit, log — and fail open.
//!
//! Every error (including a panic in a pass) becomes a log entry; the hook then exits 0 with
//! nothing on stdout. Only with `blocking = true`, on Stop/SubagentStop, and never when
//! `stop_hook_active` is set, does an error exit 2 with the message on stderr.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use skein_core::time::{format_ms, unix_ms};
use skein_redact::{RedactOptions, Redactor};
use skein_store::safe_component;

use crate::config::{Config, ConfigError, ConfigFiles};
use crate::event::{EventError, EventKind, HookEvent};
use crate::log::{self, LogEntry, LogLevel};
use crate::passes::{PassError, PassRunner};
use crate::redaction::{Redactors, maybe_redact};
use crate::security::{self, Counts, SecurityLog};
use crate::state::{AuditLine, EventFacts, StateDir, StateError};

/// Everything the runtime needs from its environment; every path is injectable.
#[derive(Debug, Clone)]
pub struct HookContext {
    /// State root (normally `~/.local/state/skein`).
    pub state_root: PathBuf,
    /// Claude projects directories transcript paths must lie in (normally
    /// `~/.claude/projects`, or `$CLAUDE_CONFIG_DIR/projects`).
    pub projects_dirs: Vec<PathBuf>,
    /// Config layers to read over `base_config`.
    pub config_files: ConfigFiles,
    /// Starting point before any file (normally `Config::default()`).
    pub base_config: Config,
    /// Expands `~/` in config paths; also bounds the project-config search.
    pub home: Option<PathBuf>,
    /// "Now", for log and audit times and request ids (the binary passes the system clock,
    /// tests a fixed one). The library never reads the clock itself.
    pub clock: fn() -> SystemTime,
}

impl HookContext {
    /// A context with default config, no config files and the given clock.
    pub fn new(
        state_root: impl Into<PathBuf>,
        projects_dir: impl Into<PathBuf>,
        clock: fn() -> SystemTime,
    ) -> Self {
        Self {
            state_root: state_root.into(),
            projects_dirs: vec![projects_dir.into()],
            config_files: ConfigFiles::default(),
            base_config: Config::default(),
            home: None,
            clock,
        }
    }

    /// The clock's time, in milliseconds since the epoch.
    pub fn now_ms(&self) -> i64 {
        unix_ms((self.clock)())
    }

    /// `config.log.dir` or `<state>/logs`.
    pub fn log_dir(&self, config: &Config) -> PathBuf {
        config
            .log
            .dir
            .clone()
            .unwrap_or_else(|| skein_layout::env::log_dir(&self.state_root))
    }

    /// `config.archive_dir` or `<state>/archive`.
    pub fn archive_dir(&self, config: &Config) -> PathBuf {
        config
            .archive_dir
            .clone()
            .unwrap_or_else(|| skein_layout::env::archive_dir(&self.state_root))
    }
}

/// What the process should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    /// 0, or 2 when blocking on an error was asked for.
    pub exit_code: i32,
    /// Print exactly this (a single JSON object) on stdout, nothing when `None`.
    pub stdout: Option<String>,
    /// Print on stderr (only set with exit code 2: Claude Code shows it to the model).
    pub stderr: Option<String>,
    /// Everything logged during the run (already appended to the log file when possible).
    pub log: Vec<LogEntry>,
}

impl HookOutcome {
    pub fn has_errors(&self) -> bool {
        self.log.iter().any(|e| e.level == LogLevel::Error)
    }
}

/// Any internal failure.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error(transparent)]
    Event(#[from] EventError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("internal panic: {0}")]
    Panic(String),
    #[error("{0}")]
    Options(String),
}

impl HookError {
    pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_owned();
        move |source| Self::Io { what, path, source }
    }
}

/// Collects log entries labelled with the event and session.
#[derive(Debug)]
pub(crate) struct Log {
    pub(crate) entries: Vec<LogEntry>,
    pub(crate) event: Option<String>,
    pub(crate) session: Option<String>,
    clock: fn() -> SystemTime,
}

impl Log {
    pub(crate) fn new(clock: fn() -> SystemTime) -> Self {
        Self {
            entries: Vec::new(),
            event: None,
            session: None,
            clock,
        }
    }

    pub(crate) fn push(&mut self, level: LogLevel, message: impl Into<String>) {
        let e = LogEntry::new(
            (self.clock)(),
            level,
            self.event.as_deref(),
            self.session.as_deref(),
            message,
        );
        self.entries.push(e);
    }
    pub(crate) fn error(&mut self, message: impl std::fmt::Display) {
        self.push(LogLevel::Error, message.to_string());
    }
    pub(crate) fn warn(&mut self, message: impl std::fmt::Display) {
        self.push(LogLevel::Warn, message.to_string());
    }
    pub(crate) fn info(&mut self, message: impl std::fmt::Display) {
        self.push(LogLevel::Info, message.to_string());
    }
}

/// Where the audit line goes and what it says; filled in as dispatch learns things.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    pub(crate) session: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) request: Option<String>,
    pub(crate) outcome: Option<&'static str>,
    /// Why, for an outcome that is not `ok` without an error (e.g. `skipped`).
    pub(crate) detail: Option<String>,
    /// The loop guard's answer, when it refused the call.
    pub(crate) decision: Option<&'static str>,
    /// Writes that redacted something, archive files created.
    pub(crate) security: SecurityLog,
}

/// Runs one hook invocation on the raw stdin bytes. Never panics, never prints.
pub fn run(event_bytes: &[u8], ctx: &HookContext, passes: &mut dyn PassRunner) -> HookOutcome {
    catch_unwind(AssertUnwindSafe(|| run_inner(event_bytes, ctx, passes))).unwrap_or_else(|p| {
        let message = format!("internal panic: {}", panic_message(p.as_ref()));
        HookOutcome {
            exit_code: 0,
            stdout: None,
            stderr: None,
            log: vec![LogEntry::new(
                (ctx.clock)(),
                LogLevel::Error,
                None,
                None,
                message,
            )],
        }
    })
}

fn run_inner(event_bytes: &[u8], ctx: &HookContext, passes: &mut dyn PassRunner) -> HookOutcome {
    let started = Instant::now();
    let mut log = Log::new(ctx.clock);
    let mut parse_error = None;
    let event = HookEvent::parse(event_bytes)
        .map_err(|e| parse_error = Some(e))
        .ok();
    if let Some(ev) = &event {
        log.event = Some(event_label(&ev.hook_event_name));
        log.session.clone_from(&ev.session_id);
    }
    let config = match &event {
        Some(ev) => load_config(ctx, ev.cwd.as_deref(), &mut log),
        None => ctx.base_config.clone(),
    };
    let mut own = Redactors::default();
    let redactor = redactor_for(passes, &mut own, &config, &mut log);
    restrict_state_root(ctx, &mut log);
    let mut scope = Scope::default();
    let result = match (&event, parse_error) {
        (Some(ev), _) => catch_unwind(AssertUnwindSafe(|| {
            crate::dispatch::dispatch(
                ev,
                ctx,
                &config,
                passes,
                redactor.clone(),
                &mut log,
                &mut scope,
            )
        }))
        .unwrap_or_else(|p| Err(HookError::Panic(panic_message(p.as_ref())))),
        (None, e) => {
            Err(e.map_or_else(|| HookError::Panic("no event".to_owned()), HookError::from))
        }
    };
    let stdout = match result {
        Ok(out) => out,
        Err(e) => {
            log.error(&e);
            None
        }
    };
    let redactor = redactor.as_deref();
    if let Some(ev) = &event {
        audit(ev, ctx, &config, &mut scope, &mut log, redactor, started);
    }
    // Messages quote inputs and errors: they are redacted like everything else written.
    let mut log_counts = Counts::new();
    for e in &mut log.entries {
        e.message = maybe_redact(redactor, &e.message, &mut log_counts);
    }
    let log_dir = ctx.log_dir(&config);
    scope
        .security
        .redacted(&log_dir.join(log::LOG_FILE), log_counts);
    write_security(ctx, &config, event.as_ref(), &scope, &mut log);
    if let Err(e) = log::append(&log_dir, &config.log, &log.entries, config.lock_timeout()) {
        log.warn(format!("log file not written: {e}"));
    }
    finish(event.as_ref(), &config, log.entries, stdout)
}

/// The redactor for the runtime's own writes (`None` when redaction is off). Rules that do not
/// compile (a bad user rule) fall back to the built-in ones: redaction stays on.
fn redactor_for(
    passes: &mut dyn PassRunner,
    own: &mut Redactors,
    config: &Config,
    log: &mut Log,
) -> Option<Arc<Redactor>> {
    if !config.redact {
        return None;
    }
    let cache = match passes.redactors() {
        Some(c) => c,
        None => own,
    };
    match cache.get(&config.redaction) {
        Ok(r) => Some(r),
        Err(e) => {
            log.error(format!("[redaction]: {e}; using the built-in rules"));
            cache.get(&RedactOptions::default()).ok()
        }
    }
}

/// The state directory is private: a group- or world-readable one (made by an older version
/// or by hand) is restricted to its owner.
fn restrict_state_root(ctx: &HookContext, log: &mut Log) {
    match skein_store::private::restrict_dir(&ctx.state_root) {
        Ok(true) => log.warn(format!(
            "{}: group and other permissions removed (skein's state is private)",
            ctx.state_root.display()
        )),
        Ok(false) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => log.warn(format!("{}: {e}", ctx.state_root.display())),
    }
}

fn write_security(
    ctx: &HookContext,
    config: &Config,
    ev: Option<&HookEvent>,
    scope: &Scope,
    log: &mut Log,
) {
    let ts = format_ms(ctx.now_ms());
    let event = ev
        .map(|e| event_label(&e.hook_event_name))
        .unwrap_or_default();
    let labels = security::Labels {
        ts: &ts,
        event: &event,
        session: scope.session.as_deref(),
    };
    if let Err(e) = security::append(
        &ctx.state_root,
        labels,
        &scope.security.events,
        config.lock_timeout(),
    ) {
        log.error(format!("security trail not written: {e}"));
    }
}

/// An event name as skein writes it: letters and digits only, at most 64 (Claude Code's names
/// are words; anything else in the field is input, not a name).
pub(crate) fn event_label(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .take(64)
        .collect()
}

fn load_config(ctx: &HookContext, cwd: Option<&str>, log: &mut Log) -> Config {
    let cwd = cwd.filter(|c| !c.contains('\0')).map(Path::new);
    match ctx
        .base_config
        .clone()
        .load(&ctx.config_files, cwd, ctx.home.as_deref())
    {
        Ok((config, _)) => config,
        Err(e) => {
            log.error(format!("config ignored, using defaults: {e}"));
            ctx.base_config.clone()
        }
    }
}

fn audit(
    ev: &HookEvent,
    ctx: &HookContext,
    config: &Config,
    scope: &mut Scope,
    log: &mut Log,
    redactor: Option<&Redactor>,
    started: Instant,
) {
    let state = StateDir::new(&ctx.state_root, config.lock_timeout());
    // A refused event is still audited when its session id alone is acceptable.
    let session = scope.session.clone().or_else(|| {
        ev.session_id
            .as_deref()
            .and_then(|s| safe_component(s).ok())
            .map(str::to_owned)
    });
    let Some(session) = session else {
        return;
    };
    if scope.request.is_none() {
        scope.request = state.current_request(&session).ok().flatten();
    }
    let mut counts = Counts::new();
    let mut r = |s: Option<&str>, max: usize| {
        s.map(|s| {
            maybe_redact(
                redactor,
                &s.chars().take(max).collect::<String>(),
                &mut counts,
            )
        })
    };
    let error = log
        .entries
        .iter()
        .find(|e| e.level == LogLevel::Error)
        .map(|e| e.message.clone());
    let detail = r(error.as_deref().or(scope.detail.as_deref()), 500);
    let about = EventFacts {
        tool_name: r(ev.tool_name.as_deref(), 128),
        tool_use_id: r(ev.tool_use_id.as_deref(), 128),
        source: r(ev.source.as_deref(), 64),
        trigger: r(ev.trigger.as_deref(), 64),
        reason: r(ev.reason.as_deref(), 128),
        prompt_chars: ev.prompt.as_deref().map(|p| p.chars().count() as u64),
        agent_type: r(ev.agent_type.as_deref(), 128),
        decision: scope.decision.map(str::to_owned),
    };
    let line = AuditLine {
        ts: format_ms(ctx.now_ms()),
        event: event_label(&ev.hook_event_name),
        session: session.clone(),
        agent: scope.agent.clone(),
        request: scope.request.clone(),
        outcome: match (scope.outcome, &error) {
            (Some("refused"), _) => "refused",
            (_, Some(_)) => "error",
            (other, None) => other.unwrap_or("ok"),
        }
        .to_owned(),
        detail,
        about,
        pid: std::process::id(),
        ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    match state.append_audit(&session, scope.request.as_deref(), &line) {
        Ok(path) => scope.security.redacted(&path, counts),
        Err(e) => log.error(format!("audit line not written: {e}")),
    }
}

fn finish(
    ev: Option<&HookEvent>,
    config: &Config,
    entries: Vec<LogEntry>,
    stdout: Option<String>,
) -> HookOutcome {
    let first_error = entries
        .iter()
        .find(|e| e.level == LogLevel::Error)
        .map(|e| e.message.clone());
    let Some(message) = first_error else {
        return HookOutcome {
            exit_code: 0,
            stdout,
            stderr: None,
            log: entries,
        };
    };
    let may_block = ev.is_some_and(|ev| {
        !ev.stop_hook_active && matches!(ev.kind(), EventKind::Stop | EventKind::SubagentStop)
    });
    let block = config.blocking && may_block;
    HookOutcome {
        exit_code: if block { 2 } else { 0 },
        stdout: None,
        stderr: block.then(|| format!("skein hook failed: {message}")),
        log: entries,
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
