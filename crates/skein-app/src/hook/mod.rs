//! The hook, composed: its runtime context from the environment ([`context`]), and the passes
//! skein runs inside the runtime (`skein-hook`): `archive` ([`archive`]) and `snapshot`
//! ([`snapshot`]). [`Passes`] is the runtime's [`PassRunner`]; any other name is
//! [`PassError::Unknown`] (the built-in `open-request` and `extract` never reach it).

pub mod archive;
pub mod index;
pub mod snapshot;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use skein_hook::{
    Config, ConfigFiles, EventKind, HookContext, PassError, PassInput, PassReport, PassRunner,
    ProjectLookup, Redactors,
};
use skein_layout::Env;
use skein_redact::{RedactOptions, Redactor};

use crate::error::{Error, chain};

/// Pass name: archive the transcript (main session or subagent).
pub const ARCHIVE: &str = "archive";
/// Pass name: index the transcript's new bytes into the catalog.
pub const INDEX: &str = "index";
/// Pass name: write the request's snapshot.
pub const SNAPSHOT: &str = "snapshot";
/// Every pass name [`Passes`] resolves (for `hooks doctor`).
pub const PASSES: [&str; 3] = [ARCHIVE, INDEX, SNAPSHOT];

/// The runner for one hook process. Holds what passes of the same run can share.
#[derive(Debug, Default)]
pub struct Passes {
    /// Compiled redactors, shared with the runtime (one compile per rule set per run).
    redactors: Redactors,
    /// The catalog the `index` pass writes (its `catalog` option overrides it).
    pub catalog: Option<std::path::PathBuf>,
}

impl Passes {
    /// Starts building the default redactor on another thread (see
    /// [`Redactors::prepare_default`]).
    pub fn prepare_redactor(&mut self) {
        self.redactors.prepare_default();
    }

    /// The redactor for `opts`, built once per process.
    pub fn redactor(&mut self, opts: &RedactOptions) -> Result<Arc<Redactor>, Error> {
        Ok(self.redactors.get(opts)?)
    }
}

impl PassRunner for Passes {
    fn run_pass(&mut self, input: &PassInput<'_>) -> Result<PassReport, PassError> {
        let result = match input.pass {
            ARCHIVE => archive::run(self, input),
            SNAPSHOT => snapshot::run(self, input),
            INDEX => index::run(self, input),
            other => return Err(PassError::Unknown(other.to_owned())),
        };
        result.map_err(|e| PassError::Failed {
            pass: input.pass.to_owned(),
            source: chain(&e).into(),
        })
    }

    fn redactors(&mut self) -> Option<&mut Redactors> {
        Some(&mut self.redactors)
    }
}

/// The config layers `skein hook` reads: the user's (`env`), the project's (found from the
/// event's cwd), then `explicit`.
pub fn config_files(env: &Env, explicit: Option<PathBuf>) -> ConfigFiles {
    ConfigFiles {
        user: env.user_config(),
        project: ProjectLookup::EventCwd,
        explicit,
    }
}

/// The hook runtime's context from the environment and the clock, or `None` when no state
/// directory can be derived (no `XDG_STATE_HOME` and no home).
pub fn context(
    env: &Env,
    explicit_config: Option<PathBuf>,
    clock: fn() -> SystemTime,
) -> Option<HookContext> {
    Some(HookContext {
        state_root: env.state_root()?,
        projects_dirs: env.transcript_roots(),
        config_files: config_files(env, explicit_config),
        base_config: Config::default(),
        home: env.home.clone(),
        clock,
    })
}

/// Whether the event is one the default configuration archives (Stop, SubagentStop,
/// PreCompact, SessionEnd): those redact, so the redactor is worth starting early. A guess
/// only (the config may say otherwise); a wrong guess costs CPU, not correctness.
pub fn will_redact(input: &[u8]) -> bool {
    // Stop-like events are small; a huge input is a pasted prompt, not worth parsing twice.
    if input.len() > 1 << 20 {
        return false;
    }
    let Ok(ev) = skein_hook::HookEvent::parse(input) else {
        return false;
    };
    match ev.kind() {
        EventKind::Stop => !ev.stop_hook_active,
        EventKind::SubagentStop | EventKind::PreCompact | EventKind::SessionEnd => true,
        _ => false,
    }
}

/// Whether `table` suits the pass `pass`'s `[pass.<name>]` options (for `skein config check`
/// and `hooks doctor`; the hook itself finds out only when the pass runs). Passes this runner
/// does not implement are not its to judge.
pub fn check_pass_options(pass: &str, table: &toml::Table) -> Result<(), String> {
    fn parse<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Result<(), String> {
        toml::Value::Table(table.clone())
            .try_into::<T>()
            .map(drop)
            .map_err(|e| e.message().trim().to_owned())
    }
    match pass {
        ARCHIVE => parse::<archive::ArchivePassOptions>(table),
        INDEX => parse::<index::IndexPassOptions>(table),
        SNAPSHOT => parse::<snapshot::SnapshotPassOptions>(table),
        _ => Ok(()),
    }
}

/// Deserialises a pass's `[pass.<name>]` table (absent: the defaults).
pub(crate) fn pass_options<T>(input: &PassInput<'_>) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + Default,
{
    match input.options() {
        None => Ok(T::default()),
        Some(table) => {
            toml::Value::Table(table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    Error::Pass(format!("[pass.{}]: {}", input.pass, e.message().trim()))
                })
        }
    }
}

/// A one-line summary for the hook log.
pub(crate) fn summary(s: &str) -> PassReport {
    PassReport {
        summary: Some(s.to_owned()),
        ..PassReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_options_are_checked_against_their_pass() {
        let table = |t: &str| t.parse::<toml::Table>().expect("toml");
        assert_eq!(
            check_pass_options(ARCHIVE, &table("zstd_level = 9")),
            Ok(())
        );
        let e = check_pass_options(ARCHIVE, &table("zstd_levle = 9")).expect_err("typo");
        assert!(e.contains("zstd_levle"), "{e}");
        assert!(check_pass_options(SNAPSHOT, &table("max_bytes = \"x\"")).is_err());
        assert_eq!(check_pass_options("mine", &table("anything = 1")), Ok(()));
    }
}
