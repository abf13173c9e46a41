//! The facts of one record line that the passes decide on, read from its parsed envelope: a
//! few dozen bytes, no text. Ids (tool calls, message ids, agent ids) are interned numbers;
//! uuids are graph nodes.

use serde::Deserialize;
use skein_core::record::{RecordType, UserFacts, is_spawn_tool};
use skein_core::{Content, Envelope, Interner};
use skein_graph::NodeId;

/// Flag bits of [`Record`].
mod bit {
    pub(super) const COMPACT_BOUNDARY: u16 = 1;
    pub(super) const SIDECHAIN: u16 = 1 << 1;
    pub(super) const META: u16 = 1 << 2;
    pub(super) const COMPACT_SUMMARY: u16 = 1 << 3;
    pub(super) const TEAM: u16 = 1 << 4;
    pub(super) const PROMPT: u16 = 1 << 5;
    pub(super) const STEERING: u16 = 1 << 6;
    pub(super) const TOOL_USE_RESULT: u16 = 1 << 7;
    pub(super) const BASE64: u16 = 1 << 8;
}

/// The parsed facts of one record line.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: RecordType,
    flags: u16,
    /// `message.id` of an assistant record, interned.
    pub message_id: Option<u32>,
    /// `thinking` and `redacted_thinking` blocks in `message.content`.
    pub thinking_blocks: u32,
    /// Other blocks in `message.content`.
    pub other_blocks: u32,
    /// The largest text size of one `tool_result` block (bytes of every string inside it).
    pub max_result_bytes: u64,
    /// `timestamp`, in milliseconds since the epoch, when it parses.
    pub timestamp_ms: Option<i64>,
    /// The node `leafUuid` names (`summary` / `last-prompt` records).
    pub leaf: Option<NodeId>,
    /// The node `messageId` names (`file-history-snapshot` records).
    pub message_ref: Option<NodeId>,
    /// Where this record's ids start in the transcript's id pool, and how many of each:
    /// tool uses, tool results, spawns, agent ids.
    pub(crate) pool: u32,
    pub(crate) counts: [u32; 4],
}

/// Strings of a record that name other records: resolved once the whole file is read.
#[derive(Debug, Default)]
pub(crate) struct Refs {
    pub(crate) leaf_uuid: Option<Box<str>>,
    pub(crate) message_ref: Option<Box<str>>,
}

impl Record {
    /// A `system` / `compact_boundary` record.
    pub fn compact_boundary(&self) -> bool {
        self.flags & bit::COMPACT_BOUNDARY != 0
    }
    pub fn sidechain(&self) -> bool {
        self.flags & bit::SIDECHAIN != 0
    }
    /// `isMeta`.
    pub fn meta(&self) -> bool {
        self.flags & bit::META != 0
    }
    /// `isCompactSummary`.
    pub fn compact_summary(&self) -> bool {
        self.flags & bit::COMPACT_SUMMARY != 0
    }
    /// A non-empty `teamName`.
    pub fn team(&self) -> bool {
        self.flags & bit::TEAM != 0
    }
    /// A human prompt: a main-chain `user` record with text that is not a tool result,
    /// injected context, a compaction summary, an interrupt marker or a local command.
    pub fn prompt(&self) -> bool {
        self.flags & bit::PROMPT != 0
    }
    /// `queue-operation` with `operation: "remove"` and content: steering text typed mid-turn.
    pub fn steering(&self) -> bool {
        self.flags & bit::STEERING != 0
    }
    /// The line mentions `"toolUseResult"`.
    pub fn has_tool_use_result(&self) -> bool {
        self.flags & bit::TOOL_USE_RESULT != 0
    }
    /// The line mentions `"base64"` (inline image or document data).
    pub fn has_base64(&self) -> bool {
        self.flags & bit::BASE64 != 0
    }

    fn set(&mut self, b: u16, on: bool) {
        if on {
            self.flags |= b;
        }
    }

    /// The facts of one parsed record line (`text` is the line, for the byte searches and the
    /// metadata fields). Ids go into `ids`, the record's id lists onto `pool`; the uuids it
    /// names come back in [`Refs`].
    pub(crate) fn read(
        env: &Envelope<'_>,
        text: &[u8],
        ids: &mut Interner,
        pool: &mut Vec<u32>,
    ) -> (Self, Refs) {
        let kind = RecordType::from_type(env.kind.get());
        let mut rec = Record {
            kind,
            flags: 0,
            message_id: None,
            thinking_blocks: 0,
            other_blocks: 0,
            max_result_bytes: 0,
            timestamp_ms: env.timestamp.get().and_then(skein_core::time::parse_ms),
            leaf: None,
            message_ref: None,
            pool: u32::try_from(pool.len()).expect("fewer than 2^32 ids in one transcript"),
            counts: [0; 4],
        };
        rec.set(
            bit::COMPACT_BOUNDARY,
            kind == RecordType::System && env.subtype.get() == Some("compact_boundary"),
        );
        rec.set(bit::SIDECHAIN, env.is_sidechain.0);
        rec.set(bit::META, env.is_meta.0);
        rec.set(bit::COMPACT_SUMMARY, env.is_compact_summary.0);
        rec.set(
            bit::TEAM,
            env.team_name.get().is_some_and(|t| !t.is_empty()),
        );
        rec.set(
            bit::TOOL_USE_RESULT,
            memchr::memmem::find(text, b"\"toolUseResult\"").is_some(),
        );
        rec.set(
            bit::BASE64,
            memchr::memmem::find(text, b"\"base64\"").is_some(),
        );
        let mut uses = Vec::new();
        let mut results = Vec::new();
        let mut spawns = Vec::new();
        let mut agents = Vec::new();
        if let Some(a) = env
            .tool_use_result
            .0
            .as_ref()
            .and_then(|t| t.agent_id.get())
        {
            agents.push(ids.intern(a));
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
                            uses.push(i);
                            if b.name.get().is_some_and(is_spawn_tool) {
                                spawns.push(i);
                            }
                        }
                    }
                    Some("tool_result") => {
                        if let Some(id) = b.tool_use_id.get() {
                            results.push(ids.intern(id));
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
            let prompt = UserFacts {
                kind,
                first_text: first_text.filter(|_| has_text),
                tool_results: !results.is_empty(),
                meta: rec.meta(),
                compact_summary: rec.compact_summary(),
                sidechain: rec.sidechain(),
                team: rec.team(),
            }
            .is_prompt();
            rec.set(bit::PROMPT, prompt);
            if kind == RecordType::User && !results.is_empty() {
                agent_ids_in_text(text, ids, &mut agents);
            }
        }
        let mut refs = Refs::default();
        if matches!(
            kind,
            RecordType::Summary
                | RecordType::LastPrompt
                | RecordType::FileHistorySnapshot
                | RecordType::QueueOperation
        ) {
            let fields: MetaFields =
                serde_json::from_slice(&skein_core::repair::repair_line(text)).unwrap_or_default();
            let steering = kind == RecordType::QueueOperation
                && fields.operation.as_ref().and_then(|v| v.as_str()) == Some("remove")
                && fields.content.as_ref().is_some_and(|c| match c {
                    serde_json::Value::String(s) => !s.trim().is_empty(),
                    serde_json::Value::Null => false,
                    _ => true,
                });
            rec.set(bit::STEERING, steering);
            refs.leaf_uuid = string_of(fields.leaf_uuid);
            refs.message_ref = string_of(fields.message_id);
        }
        for (slot, list) in [uses, results, spawns, agents].into_iter().enumerate() {
            rec.counts[slot] = list.len() as u32;
            pool.extend(list);
        }
        (rec, refs)
    }
}

/// The id after each `agentId: ` in raw JSON text (ids are plain ASCII, so no unescaping),
/// each once.
fn agent_ids_in_text(text: &[u8], ids: &mut Interner, out: &mut Vec<u32>) {
    const KEY: &[u8] = b"agentId: ";
    for at in memchr::memmem::find_iter(text, KEY) {
        let rest = &text[at + KEY.len()..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'))
            .unwrap_or(rest.len());
        if end > 0
            && let Ok(id) = std::str::from_utf8(&rest[..end])
        {
            let i = ids.intern(id);
            if !out.contains(&i) {
                out.push(i);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_from_result_text() {
        let mut ids = Interner::new();
        let mut v = Vec::new();
        agent_ids_in_text(
            br#""done\nagentId: a1b2 (use SendMessage) agentId: a1b2""#,
            &mut ids,
            &mut v,
        );
        assert_eq!(v.len(), 1);
        assert_eq!(ids.name(v[0]), "a1b2");
    }
}
