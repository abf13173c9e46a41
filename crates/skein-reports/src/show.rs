//! The `skein show` report: a session's active conversation as Markdown, for sharing.
//!
//! The session is read twice. The first pass ([`crate::load_session`] with a [`ShowVisitor`])
//! builds each transcript's graph and the subagent links; the branch to render is then picked
//! (the active branch, followed across compaction boundaries, with parallel tool calls and
//! their results put back by [`skein_graph::repair_parallel_tools`]); a second pass parses only
//! the lines of that branch (and of the subagent branches nested under its calls).
//! See `docs/reports/show.md`.

pub mod render;
pub mod text;

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::IgnoredAny;
use serde_json::Value;
use skein_analysis::{Analysis, RecordVisitor};
use skein_core::{Envelope, Line, LineSource, ReadLines, SliceLines};
use skein_graph::{NodeId, Seam, repair_parallel_tools};
use skein_store::{Input, InputMode};

use crate::session::{LoadError, LoadedSession};
use crate::tree::{LinkVisitor, SessionLinks, Source};

/// What the Markdown includes.
#[derive(Debug, Clone)]
pub struct ShowOptions {
    /// Render thinking blocks (folded).
    pub thinking: bool,
    /// Render `isMeta` records (injected context: skill bodies, hook feedback), folded.
    pub meta: bool,
    /// Nest subagent transcripts under their spawning calls.
    pub agents: bool,
    /// Longest tool result or input shown, in bytes (0: no limit).
    pub max_result: usize,
    /// Render the branch ending at this record (a uuid or unique prefix) instead of the
    /// active one.
    pub leaf: Option<String>,
    /// Follow the whole history: compaction boundaries back through `logicalParentUuid`,
    /// and broken chains across their seams ([`skein_graph::Dag::history`]); otherwise start
    /// at the last compaction (Claude Code's own walk).
    pub bridge: bool,
    /// Also render rewound branches (subtrees forking off the rendered branch), folded at
    /// their fork point.
    pub all_branches: bool,
    /// Memory-map plain files for the second pass.
    pub mmap: bool,
    /// Agent-team configs (`<config dir>/teams/*/config.json`), for agent names and types.
    pub teams: Vec<skein_layout::TeamConfig>,
}

impl Default for ShowOptions {
    fn default() -> Self {
        Self {
            thinking: true,
            meta: false,
            agents: true,
            max_result: 4000,
            leaf: None,
            bridge: true,
            all_branches: false,
            mmap: false,
            teams: Vec::new(),
        }
    }
}

/// Why a session could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    #[error(transparent)]
    Read(#[from] LoadError),
    #[error("no record {0:?} in the main transcript")]
    LeafNotFound(String),
    #[error("record prefix {0:?} is ambiguous ({1} records)")]
    LeafAmbiguous(String, usize),
}

/// The record visitor of `skein show`: subagent links plus the lines of title records.
#[derive(Debug, Default)]
pub struct ShowVisitor {
    pub links: LinkVisitor,
    /// Line of the last `custom-title`, `ai-title` and `summary` record.
    pub titles: [Option<u64>; 3],
}

impl RecordVisitor<IgnoredAny> for ShowVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.links.record(line, env, node);
        let slot = match env.kind.get() {
            Some("custom-title") => 0,
            Some("ai-title") => 1,
            Some("summary") => 2,
            _ => return,
        };
        self.titles[slot] = Some(line.number);
    }
}

/// Parses the given lines of a transcript (1-based physical line numbers).
pub fn read_lines<H: BuildHasher>(
    path: &Path,
    wanted: &HashSet<u64, H>,
    mmap: bool,
) -> Result<FxHashMap<u64, Value>, LoadError> {
    let err = |source| LoadError {
        path: path.to_path_buf(),
        source,
    };
    let mut out = FxHashMap::default();
    if wanted.is_empty() {
        return Ok(out);
    }
    let mode = if mmap {
        InputMode::Mmap
    } else {
        InputMode::Read
    };
    let mut take = |src: &mut dyn LineSource| -> std::io::Result<()> {
        while src.advance()? {
            let line = src.line();
            if wanted.contains(&line.number)
                && let Some(v) = text::parse_line(line.text)
            {
                out.insert(line.number, v);
                if out.len() == wanted.len() {
                    break;
                }
            }
        }
        Ok(())
    };
    match skein_layout::open(path, mode).map_err(|e| err(e.source))? {
        Input::Mapped(map) => take(&mut SliceLines::new(&map)).map_err(err)?,
        Input::Stream(r) => take(&mut ReadLines::new(r)).map_err(err)?,
    }
    Ok(out)
}

/// The record a `--leaf` value names: an exact uuid, else a unique prefix.
fn find_leaf(a: &Analysis, wanted: &str) -> Result<NodeId, ShowError> {
    let dag = &a.dag;
    if let Some(n) = dag.nodes().find(|&n| dag.uuid(n) == wanted) {
        return Ok(n);
    }
    let matches: Vec<NodeId> = dag
        .nodes()
        .filter(|&n| dag.uuid(n).starts_with(wanted))
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(ShowError::LeafNotFound(wanted.to_owned())),
        many => Err(ShowError::LeafAmbiguous(wanted.to_owned(), many.len())),
    }
}

/// What to render of a transcript: the records, root first, and the seams crossed.
#[derive(Debug, Clone, Default)]
pub struct Branch {
    pub nodes: Vec<NodeId>,
    pub seams: Vec<Seam>,
}

/// The records to render for a transcript, root first: the branch up from `leaf` (or the
/// active leaf) — its whole history when `bridge` is set (across compaction boundaries and
/// broken chains, each seam listed), else Claude Code's walk — with parallel tool calls
/// repaired when the analysis kept per-node tool ids.
pub fn branch(a: &Analysis, leaf: Option<NodeId>, bridge: bool) -> Branch {
    let dag = &a.dag;
    let Some(leaf) = leaf.or_else(|| dag.active_leaf()) else {
        return Branch::default();
    };
    let (path, seams) = if bridge {
        let h = dag.history(leaf);
        (h.path, h.seams)
    } else {
        let mut p = dag.path_to_root(leaf);
        p.reverse();
        (p, Vec::new())
    };
    Branch {
        nodes: repaired(a, path),
        seams,
    }
}

fn repaired(a: &Analysis, path: Vec<NodeId>) -> Vec<NodeId> {
    match &a.node_tools {
        Some(t) => repair_parallel_tools(&a.dag, &path, t),
        None => path,
    }
}

/// The branch of a subtree starting at `root` (an inline sidechain, a rewound branch): from
/// `root` down to its latest message leaf in file order.
pub(crate) fn subtree_branch(a: &Analysis, root: NodeId) -> Vec<NodeId> {
    let dag = &a.dag;
    let mut seen = FxHashSet::default();
    let mut stack = vec![root];
    let mut best: Option<NodeId> = None;
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let kids = dag.children(n);
        if kids.is_empty()
            && dag.kind(n).is_message()
            && best.is_none_or(|b| dag.line(n) > dag.line(b))
        {
            best = Some(n);
        }
        stack.extend(kids.iter().copied());
    }
    let mut path = Vec::new();
    for n in dag.path_to_root(best.unwrap_or(root)) {
        path.push(n);
        if n == root {
            break;
        }
    }
    path.reverse();
    repaired(a, path)
}

/// Renders the session as Markdown. The analyses must have been made with
/// `AnalysisOptions::node_tools` for the parallel-tool repair.
pub fn render_session(
    s: &LoadedSession<ShowVisitor>,
    links: &SessionLinks,
    options: &ShowOptions,
) -> Result<String, ShowError> {
    let mut r = render::Renderer::new(s, links, options);
    r.session()?;
    Ok(r.finish())
}

/// The transcript path and analysis of a source.
fn source(s: &LoadedSession<ShowVisitor>, src: Source) -> Option<(&Path, &Analysis)> {
    match src {
        Source::Main => Some((s.files.main.as_deref()?, &s.main.as_ref()?.0)),
        Source::Agent(i) => s
            .agents
            .get(i)
            .map(|a| (a.file.path.as_path(), &a.analysis)),
    }
}
