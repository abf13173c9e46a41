//! Writing a transcript back: every line kept as it was unless a pass changed it. A change
//! of ids only (`parentUuid`, `logicalParentUuid`, `leafUuid`) replaces the bytes of that one
//! top-level value and nothing else; a change of content re-serialises that line with
//! serde_json (key order kept), and only that line.

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::transcript::Transcript;

/// A new value for an id field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdValue {
    Uuid(String),
    Null,
}

impl IdValue {
    fn json(&self) -> Vec<u8> {
        match self {
            Self::Uuid(s) => serde_json::to_vec(s).expect("a string serialises"),
            Self::Null => b"null".to_vec(),
        }
    }

    fn value(&self) -> Value {
        match self {
            Self::Uuid(s) => Value::String(s.clone()),
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

    fn fields(&self) -> impl Iterator<Item = (&'static str, &IdValue)> {
        [
            ("parentUuid", self.parent.as_ref()),
            ("logicalParentUuid", self.logical_parent.as_ref()),
            ("leafUuid", self.leaf.as_ref()),
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
    /// New content of changed lines (ids are applied on top).
    pub(crate) values: FxHashMap<usize, Value>,
    /// New text of lines changed at the byte level (ids are applied on top).
    pub(crate) texts: FxHashMap<usize, Vec<u8>>,
    /// Id changes.
    pub(crate) ids: FxHashMap<usize, IdEdits>,
}

impl LinePlan {
    pub(crate) fn new(lines: usize) -> Self {
        Self {
            removed: vec![false; lines],
            values: FxHashMap::default(),
            texts: FxHashMap::default(),
            ids: FxHashMap::default(),
        }
    }
}

/// Counts from writing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WriteStats {
    /// Lines written with different bytes.
    pub(crate) rewritten: u64,
    /// Lines whose ids had to change but could not be rewritten (kept as they were).
    pub(crate) unrewritable: u64,
}

/// Writes the transcript with the plan applied (consuming the plan's new contents).
pub(crate) fn write(t: &Transcript<'_>, plan: &mut LinePlan, out: &mut Vec<u8>) -> WriteStats {
    let mut stats = WriteStats::default();
    if t.has_bom() {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    for i in 0..t.entries().len() {
        if plan.removed[i] {
            continue;
        }
        let ids = plan.ids.get(&i).filter(|e| !e.is_empty());
        let value = plan.values.remove(&i);
        let text = plan.texts.remove(&i);
        let base: &[u8] = text.as_deref().unwrap_or(t.text(i));
        let before = out.len();
        let ok = match (value, ids) {
            (None, None) if text.is_none() => {
                out.extend_from_slice(t.raw(i));
                continue;
            }
            (None, None) => {
                out.extend_from_slice(base);
                true
            }
            (Some(mut v), ids) => {
                if let (Some(ids), Value::Object(map)) = (ids, &mut v) {
                    for (k, val) in ids.fields() {
                        map.insert(k.to_owned(), val.value());
                    }
                }
                serde_json::to_writer(&mut *out, &v).expect("a value serialises");
                true
            }
            (None, Some(ids)) => splice_ids(base, ids, out) || reserialise_ids(base, ids, out),
        };
        if ok {
            out.extend_from_slice(t.terminator(i));
            if out[before..] == *t.raw(i) {
                continue;
            }
            stats.rewritten += 1;
        } else {
            out.truncate(before);
            out.extend_from_slice(t.raw(i));
            stats.unrewritable += 1;
        }
    }
    stats
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

fn reserialise_ids(text: &[u8], ids: &IdEdits, out: &mut Vec<u8>) -> bool {
    let Some(Value::Object(mut map)) = parse_value(text) else {
        return false;
    };
    for (k, val) in ids.fields() {
        map.insert(k.to_owned(), val.value());
    }
    serde_json::to_writer(&mut *out, &map).expect("a value serialises");
    true
}

/// Replaces the values of top-level keys in place. `false` (nothing written) when a key to
/// change is not found as a plain top-level key.
fn splice_ids(text: &[u8], ids: &IdEdits, out: &mut Vec<u8>) -> bool {
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
        spans.push((m.value.clone(), val.json()));
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
        let mut out = Vec::new();
        let ids = IdEdits {
            parent: Some(IdValue::Uuid("new".into())),
            ..IdEdits::default()
        };
        assert!(splice_ids(line, &ids, &mut out));
        assert_eq!(
            out,
            br#"{"parentUuid":"new","data":{"parentUuid":"nested"},"uuid":"u"}"#
        );
        out.clear();
        let ids = IdEdits {
            parent: Some(IdValue::Null),
            ..IdEdits::default()
        };
        assert!(splice_ids(line, &ids, &mut out));
        assert!(out.starts_with(br#"{"parentUuid":null,"#));
        out.clear();
        let missing = IdEdits {
            leaf: Some(IdValue::Null),
            ..IdEdits::default()
        };
        assert!(!splice_ids(line, &missing, &mut out));
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
