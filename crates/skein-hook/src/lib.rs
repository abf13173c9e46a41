//! Hook runtime for skein: everything behind `skein hook` and `skein hooks install|uninstall|
//! doctor`, as a library. The binary only collects arguments, environment and stdin, calls
//! [`run`] (or the [`settings`] functions) and turns the result into output and an exit code.
//!
//! * [`event`]: the hook input (tolerant parse, validation of ids and transcript paths).
//! * [`config`]: TOML configuration layers and defaults.
//! * [`state`]: session map, request directories, audit trail.
//! * [`checkpoint`]: per-transcript checkpoints (and carried state) for incremental passes.
//! * [`redaction`], [`security`]: everything written is redacted; `security.jsonl` says what.
//! * [`names`]: unknown event and pass names in `[events]` (for `hooks doctor`).
//! * [`extract`]: `<context>` / `<work>` extraction from a subagent's final text.
//! * [`transcript`]: bounded transcript reads (final text, todos, prompt uuid).
//! * [`passes`]: the [`PassRunner`] seam for passes implemented in other crates.
//! * [`runtime`]: [`run`], fail-open dispatch and the outcome.
//! * [`log`]: the rotating hook log.
//! * [`settings`], [`doctor`](mod@doctor): Claude Code `settings.json` install/uninstall/checks.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "skein-hook owns its state, log and settings files; the clock comes from HookContext"
)]

pub mod checkpoint;
pub mod config;
mod dispatch;
pub mod doctor;
pub mod event;
pub mod extract;
pub mod log;
mod loop_guard;
pub mod names;
pub mod passes;
pub mod redaction;
pub mod reminder;
mod request;
pub mod runtime;
pub mod security;
mod session_logs;
pub mod settings;
pub mod state;
pub mod status_line;
mod subagent;
pub mod transcript;

pub use checkpoint::{ChangeKind, Checkpoint, Probe, TranscriptCheckpoints};
pub use config::{
    Config, ConfigError, ConfigFiles, LogConfig, PassPresets, ProjectLookup, ReportFormat,
    ReportsConfig, StatuslineConfig,
};
pub use doctor::{DoctorInput, Finding, Severity, doctor, resolve_program};
pub use event::{EventError, EventKind, HookEvent, MAX_EVENT_BYTES, ValidEvent};
pub use log::{LogEntry, LogLevel};
pub use loop_guard::GuardOptions;
pub use names::{NameProblem, check_names};
pub use passes::{NoopPasses, PassError, PassInput, PassReport, PassRunner, RecordingPasses};
pub use redaction::Redactors;
pub use runtime::{HookContext, HookError, HookOutcome, run};
pub use security::{Counts, SecurityEvent, SecurityLog};
pub use settings::{
    DEFAULT_COMMAND, HookSpec, InstallOptions, SettingsChange, SettingsError, default_hooks,
    install, uninstall,
};
pub use state::{RequestRecord, StateDir, StateError};
pub use status_line::{
    DEFAULT_STATUS_COMMAND, StatusLineOptions, install_status_line, uninstall_status_line,
};
