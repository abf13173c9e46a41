//! `skein archive restore`: archived sessions back into a Claude projects tree, each file where
//! it came from ([`skein_layout::archive::restore_plan`]), written by the archive.

use std::collections::BTreeMap;
use std::path::Path;

use skein_archive::{Archive, RestoreReport};
use skein_layout::Source;
use skein_layout::archive::restore_plan;

use crate::error::Error;

/// The archived sources of the archive at `root` by session id (sorted): main sessions, their
/// subagents, and legacy agent files whose session has no main transcript.
pub fn archived_sessions(root: &Path) -> Result<BTreeMap<String, Vec<Source>>, Error> {
    let mut out: BTreeMap<String, Vec<Source>> = BTreeMap::new();
    for s in skein_archive::current_files(root)?
        .into_iter()
        .map(Source::archived)
    {
        out.entry(s.session_id.clone()).or_default().push(s);
    }
    Ok(out)
}

/// How to restore.
#[derive(Debug, Clone, Copy)]
pub struct RestoreOptions<'a> {
    /// The Claude projects directory written into.
    pub projects: &'a Path,
    /// Overrides the recorded project directory name.
    pub project: Option<&'a str>,
    /// Restore the subagents too (not only the main transcript).
    pub subagents: bool,
    /// Replace existing files whose content differs.
    pub overwrite: bool,
}

/// Restores one session's sources: all of them or, on a conflict, none.
pub fn restore_session(
    archive: &Archive,
    sources: &[Source],
    opts: &RestoreOptions<'_>,
) -> Result<RestoreReport, Error> {
    let sources: Vec<Source> = sources
        .iter()
        .filter(|s| opts.subagents || s.agent().is_none())
        .cloned()
        .collect();
    let plan = restore_plan(&sources, opts.projects, opts.project)?;
    Ok(archive.restore(&plan, opts.overwrite)?)
}
