//! `snapshot`: the part of a session that belongs to one request, as a self-contained
//! transcript. It runs from a start record (the last human prompt on the active branch by
//! default, or a uuid, or the first record at or after a timestamp) to the end of the active
//! branch — its whole history ([`skein_graph::Dag::history`]), so a request that spans a
//! compaction or a seam keeps the records on both sides — with the parallel tool calls and results Claude Code splices back, the progress,
//! system and attachment records hanging from those, inline sidechain (subagent) records
//! started inside it, and the metadata records written after the start. Abandoned branches
//! are left out. The start record becomes a root (`parentUuid: null`); every other record is
//! written back byte for byte.
//!
//! Subagent transcripts live in other files: the report lists the spawning tool calls and
//! the agent ids named inside the snapshot, and the caller copies those files (see
//! [`spawns`] for the links inside an agent file, for nested agents).

use std::io::Write;

use serde::{Deserialize, Serialize};
use skein_core::Parser;
use skein_core::time::parse_ms;
use skein_graph::{NodeId, NodeTools, Parent, repair_parallel_tools};

use crate::Error;
use crate::edit::{self, LinePlan};
use crate::source::{Counting, Source};
use crate::structure::{self, NodeSet};
use crate::transcript::{LineClass, Record, Totals, Transcript};

/// Where a snapshot starts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case", tag = "by", content = "value")]
pub enum Start {
    /// The last human prompt on the active branch.
    #[default]
    LastPrompt,
    /// The record with this uuid (on the active branch, compactions crossed).
    Uuid(String),
    /// The first record on the active branch at or after this ISO-8601 timestamp.
    Since(String),
}

/// Snapshot options. Deserialises from a config section with at most one of `from` (a uuid)
/// and `since` (a timestamp).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "SnapshotConfig")]
pub struct SnapshotOptions {
    pub start: Start,
}

/// The `[snapshot]` config section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SnapshotConfig {
    /// Start at the record with this uuid.
    pub from: Option<String>,
    /// Start at the first record at or after this timestamp.
    pub since: Option<String>,
}

impl TryFrom<SnapshotConfig> for SnapshotOptions {
    type Error = Error;
    fn try_from(c: SnapshotConfig) -> Result<Self, Error> {
        let start = match (c.from, c.since) {
            (Some(_), Some(_)) => return Err(Error::StartConflict),
            (Some(u), None) => Start::Uuid(u),
            (None, Some(s)) => {
                if parse_ms(&s).is_none() {
                    return Err(Error::BadTimestamp(s));
                }
                Start::Since(s)
            }
            (None, None) => Start::LastPrompt,
        };
        Ok(Self { start })
    }
}

/// The record a snapshot starts at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartRecord {
    pub uuid: String,
    /// 1-based line in the input.
    pub line: u64,
    pub timestamp: Option<String>,
}

/// The report of one snapshot run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotReport {
    pub options: SnapshotOptions,
    pub input: Totals,
    pub output: Totals,
    pub start: StartRecord,
    /// The active leaf the snapshot ends at.
    pub leaf: String,
    /// Chain records written.
    pub records: u64,
    /// Metadata records (no uuid) written.
    pub metadata: u64,
    /// Records before the start added back because they hold the `tool_use` of a result
    /// inside the snapshot.
    pub kept_for_tool_pairs: u64,
    /// Lines that are not JSON (left out).
    pub invalid_lines: u64,
    /// `Task`/`Agent` tool calls inside the snapshot: their subagent transcripts belong to it.
    pub spawns: Vec<String>,
    /// Agent ids named inside the snapshot (`toolUseResult.agentId`, `agentId: …`).
    pub agent_ids: Vec<String>,
    /// Byte offset in the input of the first line written (a metadata record of the start's
    /// message, or a `tool_use` record added back, can come before the start). Not in the JSON
    /// report: for a caller that cuts the same transcript again later (the hook).
    #[serde(skip)]
    pub first_byte: u64,
}

/// Tool calls that spawn subagents, and agent ids named, in a whole transcript (for nested
/// agents: run it on an agent file to find the agents that agent spawned).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Spawns {
    pub tool_use_ids: Vec<String>,
    pub agent_ids: Vec<String>,
}

/// Every spawn link of a transcript.
pub fn spawns(t: &Transcript) -> Spawns {
    let mut out = Spawns::default();
    for i in 0..t.len() {
        if let Some(rec) = t.record(i) {
            collect_spawns(t, rec, &mut out);
        }
    }
    out
}

fn collect_spawns(t: &Transcript, rec: &Record, out: &mut Spawns) {
    for &s in t.spawns_of(rec) {
        let id = t.id(s);
        if !out.tool_use_ids.iter().any(|x| x == id) {
            out.tool_use_ids.push(id.to_owned());
        }
    }
    for &a in t.agent_refs_of(rec) {
        let id = t.id(a);
        if !out.agent_ids.iter().any(|x| x == id) {
            out.agent_ids.push(id.to_owned());
        }
    }
}

/// Cuts the request-scoped snapshot out of a transcript held in memory.
pub fn snapshot(
    input: &[u8],
    options: &SnapshotOptions,
) -> Result<(Vec<u8>, SnapshotReport), Error> {
    let t = Transcript::parse(input);
    let mut out = Vec::new();
    let report = snapshot_transcript(&t, &input, options, &mut out)?;
    Ok((out, report))
}

/// Cuts the snapshot out of the transcript `src` holds, writing it to `out` (`src` is read
/// twice, never held in memory).
pub fn snapshot_source(
    src: &dyn Source,
    options: &SnapshotOptions,
    out: &mut dyn Write,
) -> Result<SnapshotReport, Error> {
    snapshot_transcript(&Transcript::scan(src)?, src, options, out)
}

/// The index on `path` where the snapshot starts.
fn find_start(t: &Transcript, path: &[NodeId], start: &Start) -> Result<usize, Error> {
    match start {
        Start::LastPrompt => path
            .iter()
            .rposition(|&n| t.node_record(n).prompt())
            .ok_or(Error::NoPrompt),
        Start::Uuid(u) => path
            .iter()
            .position(|&n| t.dag().uuid(n) == u)
            .ok_or_else(|| Error::StartNotOnBranch(u.clone())),
        Start::Since(ts) => {
            let want = parse_ms(ts).ok_or_else(|| Error::BadTimestamp(ts.clone()))?;
            path.iter()
                .position(|&n| t.node_record(n).timestamp_ms.is_some_and(|ms| ms >= want))
                .ok_or_else(|| Error::NothingSince(ts.clone()))
        }
    }
}

/// The nodes of the snapshot starting at `path[s]` (moved earlier while a result inside it
/// answers a call before it), and where it starts.
fn select(t: &Transcript, path: &[NodeId], mut s: usize) -> (NodeSet, usize) {
    let dag = t.dag();
    let on_path = FxIndex::new(path, dag.len());
    let main = structure::main_line(t, true, None, &structure::NodeSet::new());
    let gone = structure::abandoned(t, &main);
    // Where each tool call is, to pull the start back over results whose call precedes it.
    let mut use_node: Vec<Option<NodeId>> = vec![None; t.ids.len()];
    for node in dag.nodes() {
        for &u in t.tool_uses(node) {
            use_node[u as usize].get_or_insert(node);
        }
    }
    loop {
        let start = path[s];
        // The start's subtree, and the subtree after every place the history was bridged
        // after it (a compaction boundary under its logical parent, a seam over a broken
        // chain): a request that spans one keeps the records on both sides.
        let mut roots = vec![start];
        roots.extend(
            (s + 1..path.len())
                .filter(|&j| dag.parent_node(path[j]) != Some(path[j - 1]))
                .map(|j| path[j]),
        );
        let mut sel = structure::subtrees(t, roots);
        // Parallel calls and results spliced in after the start.
        for n in repair_parallel_tools(dag, &path[s..], t) {
            sel[n.0 as usize] = true;
        }
        for (i, g) in gone.iter().enumerate() {
            if *g {
                sel[i] = false;
            }
        }
        // Inline sidechains (old builds) started after the start.
        let start_line = dag.line(start);
        let roots = dag
            .nodes()
            .filter(|&r| {
                dag.parent_node(r).is_none()
                    && dag.is_sidechain(r)
                    && dag.line(r) > start_line
                    && !sel[r.0 as usize]
            })
            .collect();
        for (i, b) in structure::subtrees(t, roots).iter().enumerate() {
            sel[i] |= *b;
        }
        let earliest = dag
            .nodes()
            .filter(|n| sel[n.0 as usize])
            .flat_map(|n| t.tool_results(n).iter().copied())
            .filter_map(|r| use_node[r as usize])
            .filter(|u| !sel[u.0 as usize])
            .filter_map(|u| on_path.position(u))
            .filter(|&p| p < s)
            .min();
        match earliest {
            Some(p) => s = p,
            None => return (sel, s),
        }
    }
}

/// Cuts the snapshot out of an indexed transcript, reading its lines again from `src` and
/// writing them to `out`.
pub fn snapshot_transcript(
    t: &Transcript,
    src: &dyn Source,
    options: &SnapshotOptions,
    out: &mut dyn Write,
) -> Result<SnapshotReport, Error> {
    let dag = t.dag();
    let leaf = structure::main_leaf(t, &structure::NodeSet::new()).ok_or(Error::NoActiveBranch)?;
    let mut path = dag.history_to_root(leaf);
    path.reverse();
    let s = find_start(t, &path, &options.start)?;
    let (selected, s) = select(t, &path, s);
    let start = path[s];
    let start_line = t.node_line(start);

    let n = t.len();
    let mut plan = LinePlan::new(n);
    let mut invalid_lines = 0;
    for (i, e) in t.entries().iter().enumerate() {
        plan.removed[i] = match (t.record(i), t.node(i)) {
            (_, Some(node)) => !selected[node.0 as usize],
            (Some(rec), None) => {
                let belongs = rec.message_ref.is_some_and(|m| selected[m.0 as usize]);
                !(i > start_line || belongs)
            }
            (None, None) => {
                if matches!(e.class, LineClass::Invalid | LineClass::TornTail) {
                    invalid_lines += 1;
                }
                e.class != LineClass::Blank || i < start_line
            }
        };
    }
    let kept_for_tool_pairs = structure::restore_tool_pairs(t, &mut plan, &|l| t.node(l).is_some());
    structure::reparent(t, &mut plan);
    // Self-contained: a parent that names no written record (the start's, or one that was
    // already dangling) becomes null.
    let kept = structure::kept_nodes(t, &plan);
    for i in 0..n {
        if plan.removed[i] || t.node(i).is_none() {
            continue;
        }
        let effective = match plan.ids.get(&i).and_then(|x| x.parent) {
            Some(edit::IdValue::Node(p)) => Parent::Node(p),
            Some(edit::IdValue::Null) => Parent::Root,
            None => t.line_parent(i),
        };
        let written = match effective {
            Parent::Node(p) => kept[p.0 as usize],
            Parent::Dangling => false,
            Parent::Root => true,
        };
        if !written {
            plan.ids.entry(i).or_default().parent = Some(edit::IdValue::Null);
        }
    }
    let mut counted = Counting::new(out, t.has_bom());
    edit::write(t, src, &plan, &mut counted, &mut |_, _| None)?;
    let output = counted.totals();

    let mut records = 0;
    let mut metadata = 0;
    let mut links = Spawns::default();
    for i in 0..n {
        if plan.removed[i] {
            continue;
        }
        let Some(rec) = t.record(i) else { continue };
        if t.node(i).is_some() {
            records += 1;
        } else {
            metadata += 1;
        }
        collect_spawns(t, rec, &mut links);
    }
    let start_text = t.read_text(src, start_line)?;
    let timestamp = Parser::new()
        .parse(&start_text)
        .ok()
        .and_then(|p| p.envelope.timestamp.get().map(str::to_owned));
    Ok(SnapshotReport {
        options: options.clone(),
        input: t.totals(),
        output,
        start: StartRecord {
            uuid: dag.uuid(start).to_owned(),
            line: dag.line(start),
            timestamp,
        },
        leaf: dag.uuid(leaf).to_owned(),
        records,
        metadata,
        kept_for_tool_pairs,
        invalid_lines,
        spawns: links.tool_use_ids,
        agent_ids: links.agent_ids,
        first_byte: plan
            .removed
            .iter()
            .position(|r| !r)
            .map_or(0, |i| t.entries()[i].start),
    })
}

/// Position of nodes on a path.
struct FxIndex(Vec<u32>);

impl FxIndex {
    fn new(path: &[NodeId], nodes: usize) -> Self {
        let mut v = vec![u32::MAX; nodes];
        for (i, n) in path.iter().enumerate() {
            v[n.0 as usize] = i as u32;
        }
        Self(v)
    }
    fn position(&self, n: NodeId) -> Option<usize> {
        let p = self.0[n.0 as usize];
        (p != u32::MAX).then_some(p as usize)
    }
}
