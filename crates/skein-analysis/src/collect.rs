//! One pass over a transcript feeding every collector.

use std::io;

use rustc_hash::FxHashMap;
use serde::de::{DeserializeOwned, IgnoredAny};
use skein_core::{Envelope, Event, Line, LineSource, Parser, Reader, ReaderOptions};
use skein_graph::{Dag, GraphBuilder, NodeId, NodeInput, NodeTools, RecordType};

use crate::stats::{ChainStats, FileStats, InvalidSample, SeamStats};
use crate::tools::{ToolInput, ToolPairing, ToolResult, ToolUse};
use crate::usage::UsageAccumulator;

/// How many invalid lines a report lists.
pub const MAX_INVALID_SAMPLES: usize = 20;

/// What to collect beyond the statistics.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalysisOptions {
    pub reader: ReaderOptions,
    /// Keep per-node message and tool ids (needed for the parallel-tool repair).
    pub node_tools: bool,
    /// Count tool uses and results by id only ([`ToolPairing::count_use`]): the statistics
    /// are the same, [`Analysis::tools`] lists no uses or results, and the pass makes no
    /// per-tool copies of ids, names, timestamps and uuids (what `skein stats` needs).
    pub tool_counts_only: bool,
}

/// Everything known about one transcript after a pass.
#[derive(Debug)]
pub struct Analysis {
    pub stats: FileStats,
    pub dag: Dag,
    pub tools: ToolPairing,
    pub usage: UsageAccumulator,
    /// Per-node message and tool ids, when [`AnalysisOptions::node_tools`] was set.
    pub node_tools: Option<NodeToolTable>,
}

/// Per-node ids for [`skein_graph::repair_parallel_tools`], interned to numbers.
#[derive(Debug, Default)]
pub struct NodeToolTable {
    ids: FxHashMap<Box<str>, u32>,
    message: Vec<Option<u32>>,
    uses: Vec<Vec<u32>>,
    results: Vec<Vec<u32>>,
}

impl NodeToolTable {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.ids.len() as u32;
        self.ids.insert(s.into(), i);
        i
    }

    fn slot(&mut self, n: NodeId) -> usize {
        let i = n.0 as usize;
        if self.message.len() <= i {
            self.message.resize(i + 1, None);
            self.uses.resize(i + 1, Vec::new());
            self.results.resize(i + 1, Vec::new());
        }
        i
    }
}

impl NodeTools for NodeToolTable {
    fn message_id(&self, n: NodeId) -> Option<u32> {
        self.message.get(n.0 as usize).copied().flatten()
    }
    fn tool_uses(&self, n: NodeId) -> &[u32] {
        self.uses.get(n.0 as usize).map_or(&[], Vec::as_slice)
    }
    fn tool_results(&self, n: NodeId) -> &[u32] {
        self.results.get(n.0 as usize).map_or(&[], Vec::as_slice)
    }
}

fn keep_min(slot: &mut Option<String>, v: &str) {
    match slot {
        Some(s) if s.as_str() <= v => {}
        Some(s) => {
            s.clear();
            s.push_str(v);
        }
        None => *slot = Some(v.to_owned()),
    }
}

fn keep_max(slot: &mut Option<String>, v: &str) {
    match slot {
        Some(s) if s.as_str() >= v => {}
        Some(s) => {
            s.clear();
            s.push_str(v);
        }
        None => *slot = Some(v.to_owned()),
    }
}

/// Sees every record during an analysis pass, for reports that need more than the statistics.
pub trait RecordVisitor<I> {
    /// Whether `record` reads the texts of prompts and blocks (a string `message.content`, a
    /// block's `text`). The analysis itself reads none: for a visitor that says so, the
    /// envelopes it is shown may leave them out ([`Parser::set_texts`]), which spares
    /// unescaping them.
    const TEXTS: bool = true;

    /// Whether `record` reads the fields the analysis itself reads only for a full tool
    /// listing, or not at all: `agentId`, `cwd`, `gitBranch`, `message.role`,
    /// `message.stop_reason`, `toolUseResult.agentId`, a block's `name` and a tool result's
    /// sizes ([`Parser::set_details`]). With a visitor that says no, a pass that only counts
    /// tools ([`AnalysisOptions::tool_counts_only`]) leaves them out of its envelopes.
    const DETAILS: bool = true;

    /// Called for every valid record, after the graph saw it. `node` is the record's graph
    /// node and whether this record created it (`false` for a duplicate uuid).
    fn record(&mut self, line: &Line<'_>, envelope: &Envelope<'_, I>, node: Option<(NodeId, bool)>);
}

/// The visitor that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoVisitor;

impl<I> RecordVisitor<I> for NoVisitor {
    const TEXTS: bool = false;
    const DETAILS: bool = false;

    fn record(&mut self, _: &Line<'_>, _: &Envelope<'_, I>, _: Option<(NodeId, bool)>) {}
}

impl<I, A: RecordVisitor<I>, B: RecordVisitor<I>> RecordVisitor<I> for (A, B) {
    const TEXTS: bool = A::TEXTS || B::TEXTS;
    const DETAILS: bool = A::DETAILS || B::DETAILS;

    fn record(
        &mut self,
        line: &Line<'_>,
        envelope: &Envelope<'_, I>,
        node: Option<(NodeId, bool)>,
    ) {
        self.0.record(line, envelope, node);
        self.1.record(line, envelope, node);
    }
}

/// The collections a pass fills, kept from one pass to the next ([`file_stats`]): a pass
/// over thousands of small files otherwise grows its graph, interners and tables from nothing
/// for each file, and frees them after (that growth and those frees were about 3 % of `skein
/// stats`' samples, `docs/performance.md`, stop 45). One per thread; it keeps the vectors of
/// the largest file it saw (the interners give back slot tables past 1,024 slots when
/// emptied, `Interner::clear`).
#[derive(Debug, Default)]
pub struct Reuse {
    graph: GraphBuilder,
    tools: ToolPairing,
    usage: UsageAccumulator,
}

impl Reuse {
    /// Takes back the collections of `analysis`, emptied.
    fn keep(&mut self, analysis: Analysis) {
        let Analysis {
            dag,
            mut tools,
            mut usage,
            ..
        } = analysis;
        tools.clear();
        usage.clear();
        *self = Self {
            graph: GraphBuilder::recycle(dag),
            tools,
            usage,
        };
    }
}

/// The statistics of `source`, as [`analyze_with`] computes them, the pass's collections
/// taken from `reuse` and given back to it emptied, with their memory (what `skein stats` runs
/// on each file).
pub fn file_stats<S: LineSource>(
    path: &str,
    source: S,
    options: &AnalysisOptions,
    parser: &mut Parser,
    reuse: &mut Reuse,
) -> io::Result<FileStats> {
    let parts = std::mem::take(reuse);
    let mut analysis =
        analyze_parts::<S, IgnoredAny, _>(path, source, options, parser, &mut NoVisitor, parts)?;
    let stats = std::mem::take(&mut analysis.stats);
    reuse.keep(analysis);
    Ok(stats)
}

/// Reads every line of `source` and computes the analysis. `path` is only copied into the
/// statistics. I/O errors of the source are returned; bad lines are not errors.
pub fn analyze<S: LineSource>(
    path: &str,
    source: S,
    options: &AnalysisOptions,
) -> io::Result<Analysis> {
    analyze_with(path, source, options, &mut Parser::new())
}

/// Like [`analyze`], reusing `parser`'s buffers (one parser per thread saves allocations).
pub fn analyze_with<S: LineSource>(
    path: &str,
    source: S,
    options: &AnalysisOptions,
    parser: &mut Parser,
) -> io::Result<Analysis> {
    analyze_visit::<S, IgnoredAny, _>(path, source, options, parser, &mut NoVisitor)
}

/// Like [`analyze_with`], reading tool inputs into `I` and showing every record to `visitor`.
pub fn analyze_visit<
    S: LineSource,
    I: DeserializeOwned + Default + ToolInput,
    V: RecordVisitor<I>,
>(
    path: &str,
    source: S,
    options: &AnalysisOptions,
    parser: &mut Parser,
    visitor: &mut V,
) -> io::Result<Analysis> {
    analyze_parts(path, source, options, parser, visitor, Reuse::default())
}

/// [`analyze_visit`] filling the collections of `parts`.
fn analyze_parts<S: LineSource, I: DeserializeOwned + Default + ToolInput, V: RecordVisitor<I>>(
    path: &str,
    source: S,
    options: &AnalysisOptions,
    parser: &mut Parser,
    visitor: &mut V,
    parts: Reuse,
) -> io::Result<Analysis> {
    let texts = parser.set_texts(V::TEXTS);
    // The tool listing reads names and result sizes; the counts read neither.
    let details = parser.set_details(V::DETAILS || !options.tool_counts_only);
    let mut reader = Reader::with_parser(source, options.reader, std::mem::take(parser));
    let result = run::<S, I, V>(path, &mut reader, options, visitor, parts);
    let (_, p) = reader.into_parts();
    *parser = p;
    parser.set_texts(texts);
    parser.set_details(details);
    result
}

fn run<S: LineSource, I: DeserializeOwned + Default + ToolInput, V: RecordVisitor<I>>(
    path: &str,
    reader: &mut Reader<S>,
    options: &AnalysisOptions,
    visitor: &mut V,
    parts: Reuse,
) -> io::Result<Analysis> {
    let Reuse {
        mut graph,
        mut tools,
        mut usage,
    } = parts;
    let mut stats = FileStats {
        path: path.to_owned(),
        ..FileStats::default()
    };
    // Records by type: the named types in an array (by `RecordType`, which each record's
    // type is read into anyway; a map lookup per line showed in `skein stats`' profile), any
    // other type in a map.
    let mut named = [0u64; RecordType::NAMED.len()];
    let mut types: FxHashMap<Box<str>, u64> = FxHashMap::default();
    let mut table = options.node_tools.then(NodeToolTable::default);

    loop {
        // Borrowed where it lies, not moved out (of the result, then of the event): the event
        // is 568 bytes, and each move of it a `memcpy` (five per line in all were 4 % of
        // `stats`' instructions).
        let next = reader.next_event_as::<I>();
        let event = match next {
            Ok(Some(ref event)) => event,
            Ok(None) => break,
            Err(e) => return Err(e),
        };
        stats.lines += 1;
        let (line, parsed) = match event {
            Event::Record(line, parsed) => (line, parsed),
            Event::Invalid(_, invalid) => {
                stats.invalid_lines += 1;
                if stats.invalid.len() < MAX_INVALID_SAMPLES {
                    stats.invalid.push(InvalidSample {
                        line: invalid.line,
                        offset: invalid.offset,
                        bytes: invalid.bytes,
                        error: invalid.error.to_string(),
                    });
                }
                continue;
            }
            Event::TornTail(_, tail) => {
                stats.invalid_lines += 1;
                stats.torn_tail = Some(*tail);
                continue;
            }
        };
        stats.repaired_lines += u64::from(parsed.repaired);
        let env = &parsed.envelope;
        let kind_str = env.kind.get();
        let kind = RecordType::from_type(kind_str);
        if let Some(n) = named.get_mut(kind as usize) {
            *n += 1;
        } else {
            let key = kind_str.unwrap_or("<none>");
            match types.get_mut(key) {
                Some(c) => *c += 1,
                None => {
                    types.insert(key.into(), 1);
                }
            }
        }
        if stats.session_id.is_none()
            && let Some(s) = env.session_id.get()
        {
            stats.session_id = Some(s.to_owned());
        }
        if let Some(ts) = env.timestamp.get() {
            keep_min(&mut stats.first_timestamp, ts);
            keep_max(&mut stats.last_timestamp, ts);
        }
        let node = env.uuid.get().map(|uuid| {
            graph.add(&NodeInput {
                uuid,
                parent: env.parent_uuid.get(),
                logical_parent: env.logical_parent_uuid.get(),
                kind,
                compact_boundary: kind == RecordType::System
                    && env.subtype.get() == Some("compact_boundary"),
                sidechain: env.is_sidechain.0,
                meta: env.is_meta.0,
                team: env.team_name.get().is_some_and(|t| !t.is_empty()),
                line: line.number,
            })
        });
        visitor.record(line, env, node);
        let Some(message) = env.message.0.as_ref() else {
            continue;
        };
        let new_node = node.filter(|&(_, fresh)| fresh).map(|(id, _)| id);
        if kind == RecordType::Assistant {
            if let Some(u) = message.usage.0.as_ref() {
                usage.add(
                    message.id.get(),
                    env.request_id.get(),
                    message.model.get(),
                    u,
                );
            }
            if let (Some(t), Some(n), Some(mid)) = (table.as_mut(), new_node, message.id.get()) {
                let m = t.intern(mid);
                let slot = t.slot(n);
                t.message[slot] = Some(m);
            }
        }
        for block in message.content.blocks() {
            match (kind, block.kind()) {
                (RecordType::Assistant, Some("tool_use")) => {
                    let Some(id) = block.id.get() else { continue };
                    if let (Some(t), Some(n)) = (table.as_mut(), new_node) {
                        let i = t.intern(id);
                        let slot = t.slot(n);
                        t.uses[slot].push(i);
                    }
                    if options.tool_counts_only {
                        tools.count_use(id);
                        continue;
                    }
                    if tools.has_use(id) {
                        continue;
                    }
                    tools.add_use(ToolUse {
                        id: id.to_owned(),
                        name: block.name.get().map(str::to_owned),
                        input: block.input.as_ref().and_then(ToolInput::to_value),
                        timestamp: env.timestamp.get().map(str::to_owned),
                        line: line.number,
                        uuid: env.uuid.get().map(str::to_owned),
                        sidechain: env.is_sidechain.0,
                    });
                }
                (RecordType::User, Some("tool_result")) => {
                    let Some(id) = block.tool_use_id.get() else {
                        continue;
                    };
                    if let (Some(t), Some(n)) = (table.as_mut(), new_node) {
                        let i = t.intern(id);
                        let slot = t.slot(n);
                        t.results[slot].push(i);
                    }
                    if options.tool_counts_only {
                        tools.count_result(id, block.is_error.0);
                        continue;
                    }
                    tools.add_result(ToolResult {
                        tool_use_id: id.to_owned(),
                        is_error: block.is_error.0,
                        bytes: block.content.text,
                        media_bytes: block.content.media,
                        images: block.content.images,
                        timestamp: env.timestamp.get().map(str::to_owned),
                        line: line.number,
                        uuid: env.uuid.get().map(str::to_owned),
                    });
                }
                _ => {}
            }
        }
    }

    stats.bytes = reader.source().consumed();
    let dag = graph.finish();
    let summary = dag.summary();
    let active = dag.active_leaf();
    let history = active.map(|l| dag.history(l)).unwrap_or_default();
    stats.chain = ChainStats {
        nodes: summary.nodes,
        duplicate_uuids: summary.duplicate_uuids,
        roots: summary.roots,
        dangling: summary.dangling,
        branch_points: summary.branch_points,
        leaves: summary.leaves,
        compactions: summary.compactions,
        sidechain: summary.sidechain,
        cycles: summary.cycles,
        active_leaf: active.map(|l| dag.uuid(l).to_owned()),
        active_path_len: active.map_or(0, |l| dag.path_to_root(l).len() as u64),
        bridged_path_len: history.path.len() as u64,
        seams: history
            .seams
            .iter()
            .map(|s| SeamStats {
                uuid: dag.uuid(s.node).to_owned(),
                line: dag.line(s.node),
                kind: s.kind.name(),
                continues: dag.uuid(s.continues).to_owned(),
            })
            .collect(),
    };
    stats.records = types.into_iter().map(|(k, v)| (k.into(), v)).collect();
    for (kind, n) in RecordType::NAMED.into_iter().zip(named) {
        if let Some(name) = kind.name().filter(|_| n > 0) {
            stats.records.insert(name.to_owned(), n);
        }
    }
    stats.tools = tools.stats();
    stats.usage = usage.totals();
    Ok(Analysis {
        stats,
        dag,
        tools,
        usage,
        node_tools: table,
    })
}
