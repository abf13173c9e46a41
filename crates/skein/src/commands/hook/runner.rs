//! The passes the binary plugs into the hook runtime: `archive` ([`super::archive`]) and
//! `snapshot` ([`super::snapshot`]). Any other name is [`PassError::Unknown`] (the built-in
//! `open-request` and `extract` never reach the runner).

use std::thread::JoinHandle;

use skein_hook::{PassError, PassInput, PassReport, PassRunner};
use skein_redact::{RedactOptions, Redactor};

/// Pass name: archive the transcript (main session or subagent).
pub(crate) const ARCHIVE: &str = "archive";
/// Pass name: write the request's snapshot.
pub(crate) const SNAPSHOT: &str = "snapshot";

/// A redactor being built on another thread.
type Pending = JoinHandle<Result<Redactor, skein_redact::Error>>;

/// The runner for one hook process. Holds what passes of the same run can share.
#[derive(Default)]
pub(crate) struct Passes {
    /// Built on first use and shared by the passes of this run, keyed by its options.
    redactor: Option<(RedactOptions, Redactor)>,
    /// The default redactor, started early by [`Passes::prepare_redactor`].
    pending: Option<Pending>,
}

impl std::fmt::Debug for Passes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passes")
            .field("redactor", &self.redactor.is_some())
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

impl Passes {
    /// Starts building the default redactor on another thread (about 1.3 ms since the rule
    /// regexes compile lazily; it was 13–17 ms before); started before the runtime reads its
    /// state, the work overlaps with it. If no pass asks for it, the thread dies with the
    /// process.
    pub(crate) fn prepare_redactor(&mut self) {
        self.pending = std::thread::Builder::new()
            .name("redactor".into())
            .spawn(|| Redactor::new(&RedactOptions::default()))
            .ok();
    }

    /// The redactor for `opts`, built once per process.
    pub(crate) fn redactor(&mut self, opts: &RedactOptions) -> anyhow::Result<&Redactor> {
        if self.redactor.as_ref().is_none_or(|(o, _)| o != opts) {
            let prepared = match self.pending.take() {
                Some(handle) if *opts == RedactOptions::default() => handle.join().ok(),
                _ => None,
            };
            let r = match prepared {
                Some(r) => r,
                None => Redactor::new(opts),
            }
            .map_err(|e| anyhow::anyhow!("redaction rules do not compile: {e}"))?;
            self.redactor = Some((opts.clone(), r));
        }
        Ok(&self.redactor.as_ref().expect("just set").1)
    }
}

impl PassRunner for Passes {
    fn run_pass(&mut self, input: &PassInput<'_>) -> Result<PassReport, PassError> {
        let result = match input.pass {
            ARCHIVE => super::archive::run(self, input),
            SNAPSHOT => super::snapshot::run(self, input),
            other => return Err(PassError::Unknown(other.to_owned())),
        };
        result.map_err(|e| PassError::Failed {
            pass: input.pass.to_owned(),
            source: format!("{e:#}").into(),
        })
    }
}

/// Deserialises a pass's `[pass.<name>]` table (absent: the defaults).
pub(crate) fn pass_options<T>(input: &PassInput<'_>) -> anyhow::Result<T>
where
    T: serde::de::DeserializeOwned + Default,
{
    match input.options() {
        None => Ok(T::default()),
        Some(table) => toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e| anyhow::anyhow!("[pass.{}]: {}", input.pass, e.message().trim())),
    }
}

/// Redacts one transcript line (shared with `skein archive`).
pub(crate) use crate::commands::archive::source::redact_line;
