//! A transcript in memory: every line's exact bytes (borrowed from the input) plus the few
//! parsed facts the passes need, and the uuid graph over its chain records. Blank, invalid and
//! torn lines are kept as they are so a pass can write them back untouched.

use rustc_hash::FxHashMap;
use serde::Deserialize;
use skein_core::record::{RecordType, UserFacts, is_spawn_tool};
use skein_core::{Content, Envelope, LineSource, Parser, SliceLines};
use skein_graph::{Dag, GraphBuilder, NodeId, NodeInput, NodeTools};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a physical line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineClass {
    /// One JSON object.
    Record,
    /// Only whitespace.
    Blank,
    /// Not one JSON object (and terminated by a newline).
    Invalid,
    /// The last line, unterminated and not parseable: a writer had not finished it.
    TornTail,
}

/// The parsed facts of one record line.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: RecordType,
    /// `system` with `subtype: "compact_boundary"`.
    pub compact_boundary: bool,
    pub uuid: Option<Box<str>>,
    /// `parentUuid` when it is a string.
    pub parent: Option<Box<str>>,
    /// `logicalParentUuid` when it is a string.
    pub logical_parent: Option<Box<str>>,
    /// `leafUuid` of `summary` / `last-prompt` records.
    pub leaf_uuid: Option<Box<str>>,
    /// `messageId` of `file-history-snapshot` records.
    pub message_ref: Option<Box<str>>,
    pub timestamp: Option<Box<str>>,
    pub sidechain: bool,
    pub meta: bool,
    pub compact_summary: bool,
    /// A non-empty `teamName`.
    pub team: bool,
    /// `message.id`, interned.
    pub message_id: Option<u32>,
    /// `tool_use` / `server_tool_use` ids in `message.content`, interned.
    pub tool_uses: Vec<u32>,
    /// `tool_use_id`s of `tool_result` blocks in `message.content`, interned.
    pub tool_results: Vec<u32>,
    /// Ids of `Task`/`Agent` tool calls (subagent spawns), interned.
    pub spawns: Vec<u32>,
    /// Agent ids this record names: `toolUseResult.agentId` and `agentId: <id>` in the text.
    pub agent_refs: Vec<Box<str>>,
    /// `thinking` and `redacted_thinking` blocks in `message.content`.
    pub thinking_blocks: u32,
    /// Other blocks in `message.content`.
    pub other_blocks: u32,
    /// The largest text size of one `tool_result` block (bytes of every string inside it).
    pub max_result_bytes: u64,
    /// A human prompt: a main-chain `user` record with text that is not a tool result,
    /// injected context, a compaction summary, an interrupt marker or a local command.
    pub prompt: bool,
    /// `queue-operation` with `operation: "remove"` and content: steering text typed mid-turn.
    pub steering: bool,
    /// The line mentions `"toolUseResult"`.
    pub has_tool_use_result: bool,
    /// The line mentions `"base64"` (inline image or document data).
    pub has_base64: bool,
}

/// One physical line.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1-based physical line number.
    pub number: u64,
    /// Byte range of the line in the input, terminator included.
    pub start: usize,
    pub end: usize,
    /// End of the line's text (without `\n` / `\r\n`).
    pub text_end: usize,
    pub class: LineClass,
    /// Facts, for records.
    pub record: Option<Record>,
    /// The graph node of a record with a uuid (shared by duplicate copies).
    pub node: Option<NodeId>,
}

/// Ids interned to numbers.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    index: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = u32::try_from(self.names.len()).expect("fewer than 2^32 ids");
        self.index.insert(s.into(), i);
        self.names.push(s.into());
        i
    }

    pub(crate) fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

/// A parsed transcript borrowing the input bytes.
#[derive(Debug)]
pub struct Transcript<'a> {
    data: &'a [u8],
    bom: bool,
    entries: Vec<Entry>,
    dag: Dag,
    /// Lines of each node, in file order (the first is the node's record).
    node_lines: Vec<Vec<usize>>,
    pub(crate) ids: Interner,
}

/// The id after each `agentId: ` in raw JSON text (ids are plain ASCII, so no unescaping).
fn agent_ids_in_text(text: &[u8], out: &mut Vec<Box<str>>) {
    const KEY: &[u8] = b"agentId: ";
    for at in memchr::memmem::find_iter(text, KEY) {
        let rest = &text[at + KEY.len()..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'))
            .unwrap_or(rest.len());
        if end > 0
            && let Ok(id) = std::str::from_utf8(&rest[..end])
            && !out.iter().any(|o| &**o == id)
        {
            out.push(id.into());
        }
    }
}

/// The few fields of metadata records read with serde_json (they are rare and small).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MetaFields {
    #[serde(rename = "leafUuid")]
    leaf_uuid: Option<serde_json::Value>,
    #[serde(rename = "messageId")]
    message_id: Option<serde_json::Value>,
    operation: Option<serde_json::Value>,
    content: Option<serde_json::Value>,
}

fn string_of(v: Option<serde_json::Value>) -> Option<Box<str>> {
    match v {
        Some(serde_json::Value::String(s)) => Some(s.into()),
        _ => None,
    }
}

impl Record {
    /// The facts of one parsed record line (`text` is the line, for the byte searches and the
    /// metadata fields); ids are interned into `ids`.
    fn read(env: &Envelope<'_>, text: &[u8], ids: &mut Interner) -> Self {
        let kind = RecordType::from_type(env.kind.get());
        let mut rec = Record {
            kind,
            compact_boundary: kind == RecordType::System
                && env.subtype.get() == Some("compact_boundary"),
            uuid: env.uuid.get().map(Into::into),
            parent: env.parent_uuid.get().map(Into::into),
            logical_parent: env.logical_parent_uuid.get().map(Into::into),
            leaf_uuid: None,
            message_ref: None,
            timestamp: env.timestamp.get().map(Into::into),
            sidechain: env.is_sidechain.0,
            meta: env.is_meta.0,
            compact_summary: env.is_compact_summary.0,
            team: env.team_name.get().is_some_and(|t| !t.is_empty()),
            message_id: None,
            tool_uses: Vec::new(),
            tool_results: Vec::new(),
            spawns: Vec::new(),
            agent_refs: Vec::new(),
            thinking_blocks: 0,
            other_blocks: 0,
            max_result_bytes: 0,
            prompt: false,
            steering: false,
            has_tool_use_result: memchr::memmem::find(text, b"\"toolUseResult\"").is_some(),
            has_base64: memchr::memmem::find(text, b"\"base64\"").is_some(),
        };
        if let Some(a) = env
            .tool_use_result
            .0
            .as_ref()
            .and_then(|t| t.agent_id.get())
        {
            rec.agent_refs.push(a.into());
        }
        if let Some(m) = env.message.0.as_ref() {
            if kind == RecordType::Assistant {
                rec.message_id = m.id.get().map(|id| ids.intern(id));
            }
            let mut has_text = false;
            let mut first_text: Option<&str> = None;
            if let Content::Text(s) = &m.content {
                has_text = true;
                first_text = s.get();
            }
            for b in m.content.blocks() {
                match b.kind() {
                    Some("thinking" | "redacted_thinking") => {
                        rec.thinking_blocks += 1;
                        continue;
                    }
                    Some("tool_use" | "server_tool_use") => {
                        if let Some(id) = b.id.get() {
                            let i = ids.intern(id);
                            rec.tool_uses.push(i);
                            if b.name.get().is_some_and(is_spawn_tool) {
                                rec.spawns.push(i);
                            }
                        }
                    }
                    Some("tool_result") => {
                        if let Some(id) = b.tool_use_id.get() {
                            rec.tool_results.push(ids.intern(id));
                        }
                        rec.max_result_bytes = rec.max_result_bytes.max(b.content.total());
                    }
                    Some("text") => {
                        has_text = true;
                        if first_text.is_none() {
                            first_text = b.text.get();
                        }
                    }
                    _ => {}
                }
                rec.other_blocks += 1;
            }
            rec.prompt = UserFacts {
                kind,
                first_text: first_text.filter(|_| has_text),
                tool_results: !rec.tool_results.is_empty(),
                meta: rec.meta,
                compact_summary: rec.compact_summary,
                sidechain: rec.sidechain,
                team: rec.team,
            }
            .is_prompt();
            if kind == RecordType::User && !rec.tool_results.is_empty() {
                agent_ids_in_text(text, &mut rec.agent_refs);
            }
        }
        if matches!(
            kind,
            RecordType::Summary
                | RecordType::LastPrompt
                | RecordType::FileHistorySnapshot
                | RecordType::QueueOperation
        ) {
            let fields: MetaFields =
                serde_json::from_slice(&skein_core::repair::repair_line(text)).unwrap_or_default();
            rec.steering = kind == RecordType::QueueOperation
                && fields.operation.as_ref().and_then(|v| v.as_str()) == Some("remove")
                && fields.content.as_ref().is_some_and(|c| match c {
                    serde_json::Value::String(s) => !s.trim().is_empty(),
                    serde_json::Value::Null => false,
                    _ => true,
                });
            rec.leaf_uuid = string_of(fields.leaf_uuid);
            rec.message_ref = string_of(fields.message_id);
        }
        rec
    }
}

impl<'a> Transcript<'a> {
    /// Parses `data` (a whole transcript). Never fails: lines that are not JSON objects are
    /// classified and kept.
    pub fn parse(data: &'a [u8]) -> Self {
        Self::parse_with(data, &mut Parser::new())
    }

    /// Like [`Transcript::parse`], reusing `parser`'s buffers.
    pub fn parse_with(data: &'a [u8], parser: &mut Parser) -> Self {
        let bom = data.starts_with(BOM);
        let mut lines = SliceLines::new(data);
        let mut entries = Vec::new();
        let mut ids = Interner::default();
        let mut graph = GraphBuilder::new();
        let mut node_lines: Vec<Vec<usize>> = Vec::new();
        while let Ok(true) = lines.advance() {
            let line = lines.line();
            let start = usize::try_from(line.offset).expect("offset fits in memory");
            let end = start + line.raw.len();
            let text_end = start + line.text.len();
            let index = entries.len();
            let mut entry = Entry {
                number: line.number,
                start,
                end,
                text_end,
                class: LineClass::Blank,
                record: None,
                node: None,
            };
            if !line.is_blank() {
                match parser.parse(line.text) {
                    Ok(parsed) => {
                        let env = &parsed.envelope;
                        let rec = Record::read(env, line.text, &mut ids);
                        if let Some(uuid) = env.uuid.get() {
                            let (node, fresh) = graph.add(&NodeInput {
                                uuid,
                                parent: env.parent_uuid.get(),
                                logical_parent: env.logical_parent_uuid.get(),
                                kind: RecordType::from_type(env.kind.get()),
                                compact_boundary: rec.compact_boundary,
                                sidechain: rec.sidechain,
                                meta: rec.meta,
                                team: rec.team,
                                line: line.number,
                            });
                            if fresh {
                                node_lines.push(Vec::new());
                            }
                            node_lines[node.0 as usize].push(index);
                            entry.node = Some(node);
                        }
                        entry.class = LineClass::Record;
                        entry.record = Some(rec);
                    }
                    Err(_) if !line.terminated => entry.class = LineClass::TornTail,
                    Err(_) => entry.class = LineClass::Invalid,
                }
            }
            entries.push(entry);
        }
        Self {
            data,
            bom,
            entries,
            dag: graph.finish(),
            node_lines,
            ids,
        }
    }

    /// The input bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Whether the input starts with a UTF-8 byte-order mark (written back by the passes).
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// Every physical line, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The line exactly as in the input, terminator included.
    pub fn raw(&self, line: usize) -> &'a [u8] {
        let e = &self.entries[line];
        &self.data[e.start..e.end]
    }

    /// The line without its terminator.
    pub fn text(&self, line: usize) -> &'a [u8] {
        let e = &self.entries[line];
        &self.data[e.start..e.text_end]
    }

    /// The line's terminator (`\n`, `\r\n`, or empty for an unterminated last line).
    pub fn terminator(&self, line: usize) -> &'a [u8] {
        let e = &self.entries[line];
        &self.data[e.text_end..e.end]
    }

    /// The record facts of a line.
    pub fn record(&self, line: usize) -> Option<&Record> {
        self.entries[line].record.as_ref()
    }

    /// The uuid graph of the chain records.
    pub fn dag(&self) -> &Dag {
        &self.dag
    }

    /// The lines holding `node` (the first is the node's own record; others are duplicates).
    pub fn node_lines(&self, node: NodeId) -> &[usize] {
        &self.node_lines[node.0 as usize]
    }

    /// The record of a node (its first line).
    pub fn node_record(&self, node: NodeId) -> &Record {
        let line = self.node_lines[node.0 as usize][0];
        self.entries[line]
            .record
            .as_ref()
            .expect("a node's line is a record")
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
            && !r.sidechain
            && !r.team
            && !r.meta
    }

    /// uuid → node, for repeated lookups.
    pub fn uuid_index(&self) -> FxHashMap<&str, NodeId> {
        self.dag.nodes().map(|n| (self.dag.uuid(n), n)).collect()
    }
}

impl NodeTools for Transcript<'_> {
    fn message_id(&self, n: NodeId) -> Option<u32> {
        self.node_record(n).message_id
    }
    fn tool_uses(&self, n: NodeId) -> &[u32] {
        &self.node_record(n).tool_uses
    }
    fn tool_results(&self, n: NodeId) -> &[u32] {
        &self.node_record(n).tool_results
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
        let data = b"\xEF\xBB\xBF{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"content\":\"hi\"}}\r\n\nnot json\n{\"type\":\"assistant\",\"uuid\":\"a\",\"parentUuid\":\"u\"}\n{\"torn\":";
        let t = Transcript::parse(data);
        let classes: Vec<LineClass> = t.entries().iter().map(|e| e.class).collect();
        assert_eq!(
            classes,
            [
                LineClass::Record,
                LineClass::Blank,
                LineClass::Invalid,
                LineClass::Record,
                LineClass::TornTail
            ]
        );
        assert!(t.has_bom());
        assert_eq!(t.terminator(0), b"\r\n");
        assert_eq!(t.terminator(4), b"");
        assert!(t.record(0).expect("record").prompt);
        assert_eq!(t.dag().len(), 2);
        assert_eq!(Totals::of(data).lines, 5);
    }

    #[test]
    fn agent_ids_from_result_text() {
        let mut v = Vec::new();
        agent_ids_in_text(br#""done\nagentId: a1b2 (use SendMessage)""#, &mut v);
        assert_eq!(v, vec![Box::<str>::from("a1b2")]);
    }
}
