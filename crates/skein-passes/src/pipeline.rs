//! Passes chained: each pass reads the previous one's output and writes a transcript, and
//! reports what it did as one JSON object. A config file (TOML) names the pipeline and holds
//! each pass's options.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use skein_redact::RedactOptions;

use crate::Error;
use crate::prune::{PruneConfig, PruneOptions, PruneReport, prune_source};
use crate::redact::{RedactPass, RedactReport};
use crate::snapshot::{SnapshotConfig, SnapshotOptions, SnapshotReport, snapshot_source};
use crate::source::{Source, Spool};

/// The name of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    Prune,
    Snapshot,
    Redact,
}

impl PassKind {
    /// The pass's name as used in configs, reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Prune => "prune",
            Self::Snapshot => "snapshot",
            Self::Redact => "redact",
        }
    }
}

/// One configured pass.
#[derive(Debug, Clone)]
pub enum Pass {
    Prune(PruneOptions),
    Snapshot(SnapshotOptions),
    Redact(RedactPass),
}

/// What one pass reports (serialised with a `"pass"` tag).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "pass", rename_all = "snake_case")]
pub enum PassReport {
    Prune(PruneReport),
    Snapshot(SnapshotReport),
    Redact(RedactReport),
}

impl Pass {
    pub fn kind(&self) -> PassKind {
        match self {
            Self::Prune(_) => PassKind::Prune,
            Self::Snapshot(_) => PassKind::Snapshot,
            Self::Redact(_) => PassKind::Redact,
        }
    }

    /// Runs the pass on a whole transcript held in memory.
    pub fn run(&self, input: &[u8]) -> Result<(Vec<u8>, PassReport), Error> {
        let mut out = Vec::new();
        let report = self.run_source(&input, &mut out)?;
        Ok((out, report))
    }

    /// Runs the pass on the transcript `src` holds, writing the result to `out`. Memory holds
    /// the index of the transcript (prune, snapshot) or one line (redact), never the text.
    pub fn run_source(&self, src: &dyn Source, out: &mut dyn Write) -> Result<PassReport, Error> {
        Ok(match self {
            Self::Prune(o) => PassReport::Prune(prune_source(src, o, out)?),
            Self::Snapshot(o) => PassReport::Snapshot(snapshot_source(src, o, out)?),
            Self::Redact(p) => PassReport::Redact(p.run_stream(&mut src.open()?, out)?),
        })
    }
}

/// Passes run in order.
#[derive(Debug, Clone, Default)]
pub struct Pipeline {
    passes: Vec<Pass>,
}

/// The result of a pipeline run.
#[derive(Debug, Clone)]
pub struct PipelineOutput {
    pub bytes: Vec<u8>,
    /// One report per pass, in order.
    pub reports: Vec<PassReport>,
}

impl Pipeline {
    /// A pipeline of `passes`.
    pub fn new(passes: Vec<Pass>) -> Self {
        Self { passes }
    }

    /// Appends a pass.
    pub fn push(&mut self, pass: Pass) -> &mut Self {
        self.passes.push(pass);
        self
    }

    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }

    /// The same pipeline without its `kind` passes (subagent files of a snapshot go through
    /// the other passes only).
    #[must_use]
    pub fn without(&self, kind: PassKind) -> Self {
        Self {
            passes: self
                .passes
                .iter()
                .filter(|p| p.kind() != kind)
                .cloned()
                .collect(),
        }
    }

    /// Runs every pass on `input`. An empty pipeline returns the input unchanged.
    pub fn run(&self, input: &[u8]) -> Result<PipelineOutput, Error> {
        let mut bytes = Vec::new();
        let reports = self.run_source(&input, &mut bytes, &mut || Ok(Box::new(Vec::new())))?;
        Ok(PipelineOutput { bytes, reports })
    }

    /// Runs every pass on the transcript `src` holds, writing the last pass's output to
    /// `out`. Each pass before the last writes into a [`Spool`] from `spool` (a temp file,
    /// say) that the next one reads. An empty pipeline copies the input.
    pub fn run_source(
        &self,
        src: &dyn Source,
        out: &mut dyn Write,
        spool: &mut dyn FnMut() -> io::Result<Box<dyn Spool>>,
    ) -> Result<Vec<PassReport>, Error> {
        let Some((last, first)) = self.passes.split_last() else {
            io::copy(&mut src.open()?, out)?;
            return Ok(Vec::new());
        };
        let mut reports = Vec::with_capacity(self.passes.len());
        let mut current: Option<Box<dyn Source>> = None;
        for pass in first {
            let mut next = spool()?;
            let input = current.as_deref().unwrap_or(src);
            reports.push(pass.run_source(input, &mut next)?);
            next.flush()?;
            current = Some(next.into_source()?);
        }
        reports.push(last.run_source(current.as_deref().unwrap_or(src), out)?);
        Ok(reports)
    }
}

/// A passes config file (TOML). Top-level keys other than these are ignored, so the file can
/// hold other tools' sections too; the sections themselves reject unknown keys.
///
/// ```toml
/// pipeline = ["prune", "redact"]
/// [prune]
/// preset = "lean"
/// max_tool_result_bytes = 32768
/// [snapshot]
/// since = "2026-05-01T10:00:00Z"
/// [redact]
/// level = "standard"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PassesConfig {
    /// Passes to run, in order.
    pub pipeline: Vec<PassKind>,
    pub prune: PruneConfig,
    pub snapshot: SnapshotConfig,
    pub redact: RedactOptions,
}

impl PassesConfig {
    /// Parses a config file's text.
    pub fn from_toml(text: &str) -> Result<Self, Error> {
        let config: Self = toml::from_str(text).map_err(|e| Error::Config(e.to_string()))?;
        SnapshotOptions::try_from(config.snapshot.clone())?;
        Ok(config)
    }

    /// The pass `kind` with this config's options.
    pub fn pass(&self, kind: PassKind) -> Result<Pass, Error> {
        Ok(match kind {
            PassKind::Prune => Pass::Prune(self.prune.resolve()),
            PassKind::Snapshot => Pass::Snapshot(SnapshotOptions::try_from(self.snapshot.clone())?),
            PassKind::Redact => Pass::Redact(RedactPass::new(&self.redact)?),
        })
    }

    /// The configured pipeline.
    pub fn build(&self) -> Result<Pipeline, Error> {
        let passes = self
            .pipeline
            .iter()
            .map(|&k| self.pass(k))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pipeline::new(passes))
    }
}
