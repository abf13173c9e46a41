//! Writing a transcript back: every line kept as it was unless a pass changed it. A change
//! of ids only (`parentUuid`, `logicalParentUuid`, `leafUuid`) replaces the bytes of that one
//! top-level value and nothing else; a change of content re-serialises that line with
//! serde_json (key order kept), and only that line. Lines are read again from the pass's
//! [`Source`] one at a time: unchanged lines are copied in bulk, so memory holds one line.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde_json::Value;
use skein_graph::{Dag, NodeId};

use crate::source::{Replay, Source, changed};
use crate::transcript::Transcript;

/// A new value for an id field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdValue {
    /// The uuid of this node.
    Node(NodeId),
    Null,
}

impl IdValue {
    fn json(self, dag: &Dag) -> Vec<u8> {
        match self {
            Self::Node(n) => serde_json::to_vec(dag.uuid(n)).expect("a string serialises"),
            Self::Null => b"null".to_vec(),
        }
    }

    fn value(self, dag: &Dag) -> Value {
        match self {
            Self::Node(n) => Value::String(dag.uuid(n).to_owned()),
            Self::Null => Value::Null,
        }
    }
}

/// Id fields to set on one line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdEdits {
    pub(crate) parent: Option<IdValue>,
    pub(crate) logical_parent: Option<IdValue>,
    pub(crate) leaf: Option<IdValue>,
}

impl IdEdits {
    pub(crate) fn is_empty(&self) -> bool {
        self.parent.is_none() && self.logical_parent.is_none() && self.leaf.is_none()
    }

    fn fields(&self) -> impl Iterator<Item = (&'static str, IdValue)> {
        [
            ("parentUuid", self.parent),
            ("logicalParentUuid", self.logical_parent),
            ("leafUuid", self.leaf),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
    }
}

/// What happens to each line.
#[derive(Debug)]
pub(crate) struct LinePlan {
    /// Lines not written.
    pub(crate) removed: Vec<bool>,
    /// Lines whose content the writer's callback may change (ids are applied on top).
    pub(crate) content: Vec<bool>,
    /// Id changes.
    pub(crate) ids: FxHashMap<usize, IdEdits>,
}

impl LinePlan {
    pub(crate) fn new(lines: usize) -> Self {
        Self {
            removed: vec![false; lines],
            content: vec![false; lines],
            ids: FxHashMap::default(),
        }
    }
}

/// New content for one line, from a content callback.
pub(crate) enum NewContent {
    /// New text (a byte-level edit).
    Text(Vec<u8>),
    /// A changed record, serialised with serde_json.
    Value(Value),
}

/// Counts from writing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WriteStats {
    /// Lines written with different bytes.
    pub(crate) rewritten: u64,
    /// Lines whose ids had to change but could not be rewritten (kept as they were).
    pub(crate) unrewritable: u64,
}

/// Writes the transcript `src` holds with the plan applied. `content` is called with the
/// index and text of every line the plan marks, and returns its new content (or `None`).
pub(crate) fn write(
    t: &Transcript,
    src: &dyn Source,
    plan: &LinePlan,
    out: &mut dyn Write,
    content: &mut dyn FnMut(usize, &[u8]) -> Option<NewContent>,
) -> io::Result<WriteStats> {
    let mut stats = WriteStats::default();
    let mut replay = Replay::new(src.open()?);
    if t.has_bom() {
        replay.skip(3, out)?;
        out.write_all(b"\xEF\xBB\xBF")?;
    }
    let dag = t.dag();
    let mut raw = Vec::new();
    let mut line = Vec::new();
    for i in 0..t.len() {
        let len = t.line_len(i);
        if plan.removed[i] {
            replay.skip(len, out)?;
            continue;
        }
        let ids = plan.ids.get(&i).filter(|e| !e.is_empty());
        if !plan.content[i] && ids.is_none() {
            replay.copy(len);
            continue;
        }
        replay.read(len, &mut raw, out)?;
        let term = t.terminator_len(i) as usize;
        if term > 0 && raw.last() != Some(&b'\n') {
            return Err(changed());
        }
        let text = &raw[..raw.len() - term];
        let new = if plan.content[i] {
            content(i, text)
        } else {
            None
        };
        line.clear();
        let ok = match (new, ids) {
            (None, None) => {
                out.write_all(&raw)?;
                continue;
            }
            (Some(NewContent::Text(b)), None) => {
                line = b;
                true
            }
            (Some(NewContent::Value(mut v)), ids) => {
                if let (Some(ids), Value::Object(map)) = (ids, &mut v) {
                    for (k, val) in ids.fields() {
                        map.insert(k.to_owned(), val.value(dag));
                    }
                }
                serde_json::to_writer(&mut line, &v).expect("a value serialises");
                true
            }
            (Some(NewContent::Text(b)), Some(ids)) => {
                splice_ids(&b, ids, dag, &mut line) || reserialise_ids(&b, ids, dag, &mut line)
            }
            (None, Some(ids)) => {
                splice_ids(text, ids, dag, &mut line) || reserialise_ids(text, ids, dag, &mut line)
            }
        };
        if ok {
            line.extend_from_slice(&raw[raw.len() - term..]);
            if line != raw {
                stats.rewritten += 1;
            }
            out.write_all(&line)?;
        } else {
            out.write_all(&raw)?;
            stats.unrewritable += 1;
        }
    }
    replay.flush(out)?;
    Ok(stats)
}

/// `text` (one JSON object) without its top-level member `key` (the last one, with
/// duplicates), every other byte as it was. `None` when the key is not a plain top-level key.
pub(crate) fn remove_member(text: &[u8], key: &str) -> Option<Vec<u8>> {
    let members = top_level_members(text)?;
    let at = members
        .iter()
        .rposition(|m| &text[m.key.clone()] == key.as_bytes())?;
    // The key's opening quote through the value, plus the comma on one side.
    let span = if at + 1 < members.len() {
        members[at].key.start - 1..members[at + 1].key.start - 1
    } else if at > 0 {
        members[at - 1].value.end..members[at].value.end
    } else {
        members[at].key.start - 1..members[at].value.end
    };
    let mut out = Vec::with_capacity(text.len() - span.len());
    out.extend_from_slice(&text[..span.start]);
    out.extend_from_slice(&text[span.end..]);
    Some(out)
}

/// Parses a line for rewriting (invalid UTF-8 and lone surrogates repaired first).
pub(crate) fn parse_value(text: &[u8]) -> Option<Value> {
    let repaired = skein_core::repair::repair_line(text);
    serde_json::from_slice::<Value>(&repaired)
        .ok()
        .filter(Value::is_object)
}

fn reserialise_ids(text: &[u8], ids: &IdEdits, dag: &Dag, out: &mut Vec<u8>) -> bool {
    let Some(Value::Object(mut map)) = parse_value(text) else {
        return false;
    };
    for (k, val) in ids.fields() {
        map.insert(k.to_owned(), val.value(dag));
    }
    serde_json::to_writer(&mut *out, &map).expect("a value serialises");
    true
}

/// Replaces the values of top-level keys in place. `false` (nothing written) when a key to
/// change is not found as a plain top-level key.
fn splice_ids(text: &[u8], ids: &IdEdits, dag: &Dag, out: &mut Vec<u8>) -> bool {
    let Some(members) = top_level_members(text) else {
        return false;
    };
    let mut spans: Vec<(std::ops::Range<usize>, Vec<u8>)> = Vec::new();
    for (key, val) in ids.fields() {
        // With duplicate keys, parsers keep the last one.
        let Some(m) = members
            .iter()
            .rev()
            .find(|m| &text[m.key.clone()] == key.as_bytes())
        else {
            return false;
        };
        spans.push((m.value.clone(), val.json(dag)));
    }
    spans.sort_by_key(|(r, _)| r.start);
    let mut at = 0;
    for (r, bytes) in spans {
        out.extend_from_slice(&text[at..r.start]);
        out.extend_from_slice(&bytes);
        at = r.end;
    }
    out.extend_from_slice(&text[at..]);
    true
}

/// One top-level member of a JSON object: the key's raw bytes (between the quotes) and the
/// value's byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) key: std::ops::Range<usize>,
    pub(crate) value: std::ops::Range<usize>,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting with the quote at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let rel = memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        j += rel;
        if b[j] == b'\\' {
            j += 2;
        } else {
            return Some(j + 1);
        }
    }
}

/// End (exclusive) of the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The top-level members of the object on a line (`None` if the line is not an object this
/// scanner understands).
pub(crate) fn top_level_members(b: &[u8]) -> Option<Vec<Member>> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut out = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let kend = string_end(b, i)?;
        let key = i + 1..kend - 1;
        i = skip_ws(b, kend);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let vend = value_end(b, i)?;
        out.push(Member {
            key,
            value: i..vend,
        });
        i = skip_ws(b, vend);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

/// The serialised size of a value in bytes (serde_json compact form).
pub(crate) fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    serde_json::to_writer(&mut c, v).expect("a value serialises");
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_finds_only_top_level_keys() {
        let line = br#"{"data":{"parentUuid":"x","s":"a\"}b"},"parentUuid":"p", "n":-1.5e3,"arr":[{"k":"]"}],"z":null}"#;
        let m = top_level_members(line).expect("object");
        let keys: Vec<&[u8]> = m.iter().map(|m| &line[m.key.clone()]).collect();
        assert_eq!(keys, [&b"data"[..], b"parentUuid", b"n", b"arr", b"z"]);
        assert_eq!(&line[m[1].value.clone()], br#""p""#);
        assert_eq!(&line[m[2].value.clone()], b"-1.5e3");
        assert_eq!(&line[m[4].value.clone()], b"null");
    }

    #[test]
    fn splice_changes_only_the_value() {
        let line = br#"{"parentUuid":"old","data":{"parentUuid":"nested"},"uuid":"u"}"#;
        let mut graph = skein_graph::GraphBuilder::new();
        let (new, _) = graph.add(&skein_graph::NodeInput {
            uuid: "new",
            ..skein_graph::NodeInput::default()
        });
        let dag = graph.finish();
        let mut out = Vec::new();
        let ids = IdEdits {
            parent: Some(IdValue::Node(new)),
            ..IdEdits::default()
        };
        assert!(splice_ids(line, &ids, &dag, &mut out));
        assert_eq!(
            out,
            br#"{"parentUuid":"new","data":{"parentUuid":"nested"},"uuid":"u"}"#
        );
        out.clear();
        let ids = IdEdits {
            parent: Some(IdValue::Null),
            ..IdEdits::default()
        };
        assert!(splice_ids(line, &ids, &dag, &mut out));
        assert!(out.starts_with(br#"{"parentUuid":null,"#));
        out.clear();
        let missing = IdEdits {
            leaf: Some(IdValue::Null),
            ..IdEdits::default()
        };
        assert!(!splice_ids(line, &missing, &dag, &mut out));
    }

    #[test]
    fn remove_member_keeps_every_other_byte() {
        let line = br#"{"a":1, "toolUseResult":{"x":"}"},"b":"\/"}"#;
        assert_eq!(
            remove_member(line, "toolUseResult").expect("found"),
            br#"{"a":1, "b":"\/"}"#
        );
        let last = br#"{"a":1,"toolUseResult":[1,2]}"#;
        assert_eq!(
            remove_member(last, "toolUseResult").expect("found"),
            br#"{"a":1}"#
        );
        let only = br#"{"toolUseResult":null}"#;
        assert_eq!(remove_member(only, "toolUseResult").expect("found"), b"{}");
        assert!(remove_member(br#"{"a":{"toolUseResult":1}}"#, "toolUseResult").is_none());
    }

    #[test]
    fn json_len_matches_serialisation() {
        let v: Value =
            serde_json::from_str(r#"{"a":[1,"é\n",null],"b":{"c":true}}"#).expect("json");
        assert_eq!(
            json_len(&v),
            serde_json::to_vec(&v).expect("ser").len() as u64
        );
    }
}
