//! Loading a session: every file read once, each with its own record visitor, and subagents
//! linked to the calls that spawned them.

use std::path::Path;

use serde::de::DeserializeOwned;
use skein_analysis::SpawnLinks;
use skein_analysis::{Analysis, AnalysisOptions, RecordVisitor, ToolInput, analyze_visit};
use skein_core::{MapLines, Parser, ReadLines, SliceLines};
use skein_layout::{AgentFile, SessionFiles};
use skein_store::{Input, InputMode};

/// One subagent transcript, read and linked.
#[derive(Debug)]
pub struct AgentRun<V> {
    pub file: AgentFile,
    pub analysis: Analysis,
    pub visitor: V,
    /// The `tool_use` id of the spawning `Task`/`Agent` call, when found.
    pub spawned_by: Option<String>,
}

/// A session with every file read.
#[derive(Debug)]
pub struct LoadedSession<V> {
    pub files: SessionFiles,
    /// The main transcript's analysis and visitor (absent when only agent files exist).
    pub main: Option<(Analysis, V)>,
    pub links: SpawnLinks,
    pub agents: Vec<AgentRun<V>>,
}

/// Why a session could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct LoadError {
    pub path: std::path::PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// A rewrite of each line's text before the analysis sees it (`map(text, out)` appends the
/// new text and returns whether it changed; see [`skein_core::MapLines`]), e.g. redaction.
pub type LineMap<'a> = &'a (dyn Fn(&[u8], &mut Vec<u8>) -> bool + Sync);

/// Reads one file with `visitor`.
pub fn read_file<I, V>(
    path: &Path,
    options: &AnalysisOptions,
    parser: &mut Parser,
    visitor: &mut V,
    mmap: bool,
) -> Result<Analysis, LoadError>
where
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I>,
{
    read_file_mapped::<I, V>(path, options, parser, visitor, mmap, None)
}

/// [`read_file`], each line rewritten by `map` first (when given).
pub fn read_file_mapped<I, V>(
    path: &Path,
    options: &AnalysisOptions,
    parser: &mut Parser,
    visitor: &mut V,
    mmap: bool,
    map: Option<LineMap<'_>>,
) -> Result<Analysis, LoadError>
where
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I>,
{
    let err = |source| LoadError {
        path: path.to_path_buf(),
        source,
    };
    let mode = if mmap {
        InputMode::Mmap
    } else {
        InputMode::Read
    };
    let name = path.display().to_string();
    let input = skein_layout::open(path, mode).map_err(|e| err(e.source))?;
    match (input, map) {
        (Input::Mapped(data), None) => {
            analyze_visit::<_, I, V>(&name, SliceLines::new(&data), options, parser, visitor)
        }
        (Input::Mapped(data), Some(f)) => {
            let lines = MapLines::new(SliceLines::new(&data), f);
            analyze_visit::<_, I, V>(&name, lines, options, parser, visitor)
        }
        (Input::Stream(r), None) => {
            analyze_visit::<_, I, V>(&name, ReadLines::new(r), options, parser, visitor)
        }
        (Input::Stream(r), Some(f)) => {
            let lines = MapLines::new(ReadLines::new(r), f);
            analyze_visit::<_, I, V>(&name, lines, options, parser, visitor)
        }
    }
    .map_err(err)
}

/// Reads every file of `files`: the main transcript with a [`SpawnLinks`] next to a fresh
/// `V`, each agent file with its own fresh `V`; then links each agent to its spawning call
/// (meta `toolUseId` first, then the ids the results named).
pub fn load_session<I, V>(
    files: &SessionFiles,
    options: &AnalysisOptions,
    parser: &mut Parser,
    mmap: bool,
) -> Result<LoadedSession<V>, LoadError>
where
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I> + Default,
    SpawnLinks: RecordVisitor<I>,
{
    load_session_with::<I, V>(files, options, parser, mmap, V::default)
}

/// Like [`load_session`], with each file's visitor made by `new_visitor` (a visitor that
/// carries options).
pub fn load_session_with<I, V>(
    files: &SessionFiles,
    options: &AnalysisOptions,
    parser: &mut Parser,
    mmap: bool,
    new_visitor: impl FnMut() -> V,
) -> Result<LoadedSession<V>, LoadError>
where
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I>,
    SpawnLinks: RecordVisitor<I>,
{
    load_session_mapped::<I, V>(files, options, parser, mmap, new_visitor, None)
}

/// [`load_session_with`], every line of every file rewritten by `map` first (when given):
/// the analyses, visitors and spawn links see only the rewritten lines.
pub fn load_session_mapped<I, V>(
    files: &SessionFiles,
    options: &AnalysisOptions,
    parser: &mut Parser,
    mmap: bool,
    mut new_visitor: impl FnMut() -> V,
    map: Option<LineMap<'_>>,
) -> Result<LoadedSession<V>, LoadError>
where
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I>,
    SpawnLinks: RecordVisitor<I>,
{
    let mut links = SpawnLinks::new();
    let main = match &files.main {
        Some(path) => {
            let mut pair = (SpawnLinks::new(), new_visitor());
            let a = read_file_mapped::<I, _>(path, options, parser, &mut pair, mmap, map)?;
            links = pair.0;
            Some((a, pair.1))
        }
        None => None,
    };
    let mut agents = Vec::with_capacity(files.agents.len());
    for file in &files.agents {
        let mut v = new_visitor();
        let analysis = read_file_mapped::<I, _>(&file.path, options, parser, &mut v, mmap, map)?;
        let meta_id = file.meta.as_ref().and_then(|m| m.tool_use_id.as_deref());
        let spawned_by = links.spawner_of(&file.agent_id, meta_id);
        agents.push(AgentRun {
            file: file.clone(),
            analysis,
            visitor: v,
            spawned_by,
        });
    }
    Ok(LoadedSession {
        files: files.clone(),
        main,
        links,
        agents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_analysis::NoVisitor;

    #[test]
    fn sample_session_links_its_subagent() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sample");
        let found = skein_layout::discover(&[root]);
        assert_eq!(found.sessions.len(), 1);
        let s = load_session::<serde::de::IgnoredAny, NoVisitor>(
            &found.sessions[0],
            &AnalysisOptions::default(),
            &mut Parser::new(),
            false,
        )
        .expect("load");
        assert_eq!(s.agents.len(), 1);
        assert_eq!(s.agents[0].spawned_by.as_deref(), Some("toolu_04"));
        let spawn = s.links.spawn("toolu_04").expect("spawn");
        assert_eq!(spawn.agent_id.as_deref(), Some("a1b2c3d4e5f60718"));
    }
}
