//! A transcript indexed for the passes: where each line is (its offset; lines are contiguous,
//! so its length is the distance to the next), what it is, the facts of each record and the
//! uuid graph. No text is kept: a pass that writes reads the lines again from its
//! [`Source`], so memory grows with the number of records (a few dozen bytes each, plus the
//! graph), not with the size of the file. Blank, invalid and torn lines are indexed as they
//! are so a pass can write them back untouched.

use std::io::{self, Read};

use rustc_hash::FxHashMap;
use skein_core::record::RecordType;
use skein_core::{Interner, LineSource, Parser, ReadLines};
use skein_graph::{Dag, GraphBuilder, NodeId, NodeInput, NodeTools, Parent};

pub use crate::facts::Record;
use crate::facts::Refs;
use crate::source::Source;

const BOM: &[u8] = b"\xEF\xBB\xBF";
const NONE: u32 = u32::MAX;

/// What a physical line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineClass {
    /// One JSON object.
    Record,
    /// Only whitespace.
    Blank,
    /// Not one JSON object (and terminated by a newline), or longer than the maximum line
    /// length (`--max-line`): passed through as it is.
    Invalid,
    /// The last line, unterminated and not parseable: a writer had not finished it.
    TornTail,
}

/// One physical line.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Byte offset of the line in the input (a leading BOM counts).
    pub start: u64,
    record: u32,
    node: u32,
    /// The next line holding the same node (a duplicate uuid), or `NONE`.
    next_same: u32,
    pub class: LineClass,
    /// Length of the terminator: 0 (unterminated), 1 (`\n`) or 2 (`\r\n`).
    term: u8,
}

/// The links of a line that repeats a uuid: its own, not the first copy's.
#[derive(Debug, Clone, Copy)]
struct DupLinks {
    parent: Parent,
    logical: Option<NodeId>,
}

/// A transcript's index (see the module docs).
#[derive(Debug)]
pub struct Transcript {
    bom: bool,
    /// Bytes of input indexed.
    len: u64,
    entries: Vec<Entry>,
    records: Vec<Record>,
    /// Every record's id lists, one after the other ([`Record::pool`]).
    pool: Vec<u32>,
    dag: Dag,
    /// The first line of each node.
    first_line: Vec<u32>,
    dups: FxHashMap<u32, DupLinks>,
    pub(crate) ids: Interner,
}

/// Uuid references waiting for the whole file: resolved in [`Transcript::scan_with`].
#[derive(Default)]
struct Unresolved {
    refs: Vec<(u32, Refs)>,
    /// A duplicate's line with its `parentUuid` and `logicalParentUuid`, as written.
    dups: Vec<(u32, UuidRef, UuidRef)>,
}

/// A uuid as written in a record, before it is resolved to a line.
type UuidRef = Option<Box<str>>;

impl Transcript {
    /// Indexes a transcript held in memory.
    pub fn parse(data: &[u8]) -> Self {
        Self::scan(&data).expect("reading memory does not fail")
    }

    /// Indexes the transcript `src` holds, reading it once.
    pub fn scan(src: &dyn Source) -> io::Result<Self> {
        Self::scan_with(src, &mut Parser::new())
    }

    /// Like [`Transcript::scan`], reusing `parser`'s buffers. Lines longer than the maximum
    /// line length are not read into memory: they are indexed as invalid and passed through.
    pub fn scan_with(src: &dyn Source, parser: &mut Parser) -> io::Result<Self> {
        let mut lines = ReadLines::new(src.open()?);
        let mut t = Self {
            bom: false,
            len: 0,
            entries: Vec::new(),
            records: Vec::new(),
            pool: Vec::new(),
            dag: GraphBuilder::new().finish(),
            first_line: Vec::new(),
            dups: FxHashMap::default(),
            ids: Interner::new(),
        };
        let mut graph = GraphBuilder::new();
        let mut later = Unresolved::default();
        while lines.advance()? {
            let line = lines.line();
            let index = u32::try_from(t.entries.len()).expect("fewer than 2^32 lines");
            let mut entry = Entry {
                start: line.offset,
                record: NONE,
                node: NONE,
                next_same: NONE,
                class: LineClass::Blank,
                term: (line.raw.len() - line.text.len()) as u8,
            };
            if line.too_long.is_some() {
                entry.term = u8::from(line.terminated);
                entry.class = LineClass::Invalid;
            } else if !line.is_blank() {
                match parser.parse(line.text) {
                    Ok(parsed) => {
                        let env = &parsed.envelope;
                        let (rec, refs) = Record::read(env, line.text, &mut t.ids, &mut t.pool);
                        if let Some(uuid) = env.uuid.get() {
                            let (node, fresh) = graph.add(&NodeInput {
                                uuid,
                                parent: env.parent_uuid.get(),
                                logical_parent: env.logical_parent_uuid.get(),
                                kind: RecordType::from_type(env.kind.get()),
                                compact_boundary: rec.compact_boundary(),
                                sidechain: rec.sidechain(),
                                meta: rec.meta(),
                                team: rec.team(),
                                line: line.number,
                            });
                            if fresh {
                                t.first_line.push(index);
                            } else {
                                t.link_duplicate(node, index);
                                later.dups.push((
                                    index,
                                    env.parent_uuid.get().map(Into::into),
                                    env.logical_parent_uuid.get().map(Into::into),
                                ));
                            }
                            entry.node = node.0;
                        }
                        if refs.leaf_uuid.is_some() || refs.message_ref.is_some() {
                            later.refs.push((t.records.len() as u32, refs));
                        }
                        entry.class = LineClass::Record;
                        entry.record = t.records.len() as u32;
                        t.records.push(rec);
                    }
                    Err(_) if !line.terminated => entry.class = LineClass::TornTail,
                    Err(_) => entry.class = LineClass::Invalid,
                }
            }
            t.entries.push(entry);
        }
        t.bom = lines.had_bom();
        t.len = lines.consumed();
        t.resolve(&graph, later);
        t.dag = graph.finish();
        Ok(t)
    }

    /// Appends line `index` to the list of lines holding `node`.
    fn link_duplicate(&mut self, node: NodeId, index: u32) {
        let mut at = self.first_line[node.0 as usize];
        while self.entries[at as usize].next_same != NONE {
            at = self.entries[at as usize].next_same;
        }
        self.entries[at as usize].next_same = index;
    }

    fn resolve(&mut self, graph: &GraphBuilder, later: Unresolved) {
        for (rec, refs) in later.refs {
            let r = &mut self.records[rec as usize];
            r.leaf = refs.leaf_uuid.and_then(|u| graph.get(&u));
            r.message_ref = refs.message_ref.and_then(|u| graph.get(&u));
        }
        for (line, parent, logical) in later.dups {
            let parent = match parent {
                None => Parent::Root,
                Some(p) => graph.get(&p).map_or(Parent::Dangling, Parent::Node),
            };
            let logical = logical.and_then(|u| graph.get(&u));
            self.dups.insert(line, DupLinks { parent, logical });
        }
    }

    /// Whether the input starts with a UTF-8 byte-order mark (written back by the passes).
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// Every physical line, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Number of physical lines.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True for an empty input.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Lines and bytes of the input.
    pub fn totals(&self) -> Totals {
        Totals {
            lines: self.entries.len() as u64,
            bytes: self.len,
        }
    }

    /// The line's length in the input, terminator included.
    pub fn line_len(&self, line: usize) -> u64 {
        let end = self
            .entries
            .get(line + 1)
            .map_or(self.len, |next| next.start);
        end - self.entries[line].start
    }

    /// The length of the line's terminator (`\n`: 1, `\r\n`: 2, none: 0).
    pub fn terminator_len(&self, line: usize) -> u64 {
        u64::from(self.entries[line].term)
    }

    /// The line's text (without its terminator), read again from `src`.
    pub fn read_text(&self, src: &dyn Source, line: usize) -> io::Result<Vec<u8>> {
        let len = self.line_len(line) - self.terminator_len(line);
        let mut buf = Vec::with_capacity(len as usize);
        src.open_at(self.entries[line].start)?
            .take(len)
            .read_to_end(&mut buf)?;
        if (buf.len() as u64) < len {
            return Err(crate::source::changed());
        }
        Ok(buf)
    }

    /// The record facts of a line.
    pub fn record(&self, line: usize) -> Option<&Record> {
        let r = self.entries[line].record;
        (r != NONE).then(|| &self.records[r as usize])
    }

    /// The graph node of a record line with a uuid (duplicate copies share the first's).
    pub fn node(&self, line: usize) -> Option<NodeId> {
        let n = self.entries[line].node;
        (n != NONE).then_some(NodeId(n))
    }

    /// The uuid graph of the chain records.
    pub fn dag(&self) -> &Dag {
        &self.dag
    }

    /// The first line of `node` (its record).
    pub fn node_line(&self, node: NodeId) -> usize {
        self.first_line[node.0 as usize] as usize
    }

    /// The lines holding `node`, in file order (the first is the node's own record; others
    /// are duplicates).
    pub fn node_lines(&self, node: NodeId) -> impl Iterator<Item = usize> + '_ {
        let mut at = self.first_line[node.0 as usize];
        std::iter::from_fn(move || {
            (at != NONE).then(|| {
                let here = at;
                at = self.entries[here as usize].next_same;
                here as usize
            })
        })
    }

    /// The record of a node (its first line).
    pub fn node_record(&self, node: NodeId) -> &Record {
        self.record(self.node_line(node))
            .expect("a node's line is a record")
    }

    /// The `parentUuid` of a record line with a uuid, as a link.
    pub fn line_parent(&self, line: usize) -> Parent {
        match self.dups.get(&(line as u32)) {
            Some(d) => d.parent,
            None => self.node(line).map_or(Parent::Root, |n| self.dag.parent(n)),
        }
    }

    /// The node the `logicalParentUuid` of a record line with a uuid names.
    pub fn line_logical_parent(&self, line: usize) -> Option<NodeId> {
        match self.dups.get(&(line as u32)) {
            Some(d) => d.logical,
            None => self.node(line).and_then(|n| self.dag.logical_parent(n)),
        }
    }

    fn ids_of(&self, rec: &Record, slot: usize) -> &[u32] {
        let start = rec.pool as usize + rec.counts[..slot].iter().sum::<u32>() as usize;
        &self.pool[start..start + rec.counts[slot] as usize]
    }

    /// `tool_use` / `server_tool_use` ids in `message.content`, interned.
    pub fn tool_uses_of<'t>(&'t self, rec: &'t Record) -> &'t [u32] {
        self.ids_of(rec, 0)
    }

    /// `tool_use_id`s of `tool_result` blocks in `message.content`, interned.
    pub fn tool_results_of<'t>(&'t self, rec: &'t Record) -> &'t [u32] {
        self.ids_of(rec, 1)
    }

    /// Ids of `Task`/`Agent` tool calls (subagent spawns), interned.
    pub fn spawns_of<'t>(&'t self, rec: &'t Record) -> &'t [u32] {
        self.ids_of(rec, 2)
    }

    /// Agent ids the record names (`toolUseResult.agentId`, `agentId: <id>` in result text),
    /// interned.
    pub fn agent_refs_of<'t>(&'t self, rec: &'t Record) -> &'t [u32] {
        self.ids_of(rec, 3)
    }

    /// An interned id's text.
    pub fn id(&self, i: u32) -> &str {
        self.ids.name(i)
    }

    /// Whether a node is a main-conversation message: a `user` or `assistant` record that is
    /// not a sidechain, team or `isMeta` (injected) record — the records the SDK prefers as
    /// the active leaf.
    pub fn is_main_message(&self, node: NodeId) -> bool {
        let r = self.node_record(node);
        matches!(r.kind, RecordType::User | RecordType::Assistant)
            && !r.sidechain()
            && !r.team()
            && !r.meta()
    }
}

impl NodeTools for Transcript {
    fn message_id(&self, n: NodeId) -> Option<u32> {
        self.node_record(n).message_id
    }
    fn tool_uses(&self, n: NodeId) -> &[u32] {
        self.tool_uses_of(self.node_record(n))
    }
    fn tool_results(&self, n: NodeId) -> &[u32] {
        self.tool_results_of(self.node_record(n))
    }
}

/// Counts of lines and bytes, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    pub lines: u64,
    pub bytes: u64,
}

impl Totals {
    /// Lines (physical, blank ones included) and bytes of `data`.
    pub fn of(data: &[u8]) -> Self {
        let body = data.strip_prefix(BOM).unwrap_or(data);
        let newlines = memchr::memchr_iter(b'\n', body).count() as u64;
        let tail = u64::from(!body.is_empty() && !body.ends_with(b"\n"));
        Self {
            lines: newlines + tail,
            bytes: data.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_lines_and_keeps_positions() {
        let data: &[u8] = b"\xEF\xBB\xBF{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"content\":\"hi\"}}\r\n\nnot json\n{\"type\":\"assistant\",\"uuid\":\"a\",\"parentUuid\":\"u\"}\n{\"type\":\"user\",\"uuid\":\"u\",\"parentUuid\":\"gone\"}\n{\"torn\":";
        let t = Transcript::parse(data);
        let classes: Vec<LineClass> = t.entries().iter().map(|e| e.class).collect();
        assert_eq!(
            classes,
            [
                LineClass::Record,
                LineClass::Blank,
                LineClass::Invalid,
                LineClass::Record,
                LineClass::Record,
                LineClass::TornTail
            ]
        );
        assert!(t.has_bom());
        assert_eq!(t.terminator_len(0), 2);
        assert_eq!(t.terminator_len(5), 0);
        assert_eq!(t.entries()[0].start, 3);
        assert_eq!(t.read_text(&data, 2).expect("read"), b"not json");
        assert_eq!(t.line_len(5), 8);
        assert!(t.record(0).expect("record").prompt());
        assert_eq!(t.dag().len(), 2);
        let u = t.dag().find("u").expect("node u");
        assert_eq!(t.node_lines(u).collect::<Vec<_>>(), [0, 4]);
        assert_eq!(t.line_parent(0), Parent::Root);
        assert_eq!(t.line_parent(4), Parent::Dangling);
        assert_eq!(t.line_parent(3), Parent::Node(u));
        assert_eq!(t.totals(), Totals::of(data));
    }
}
