//! A projection: a few top-level fields of each record, one compact JSON object per record,
//! as `jq -c '{type,uuid,parentUuid}'` prints them (a field the record lacks is `null`).
//!
//! Only the fields named are read. Before a long line is parsed, the long string values of
//! every other key are dropped ([`Skim::all_but`]): on transcripts that is most of the bytes
//! (tool output, file contents, texts), which simd-json then neither scans nor copies. The
//! skim keeps a line's validity: a line is a record, or refused with the same error, with the
//! skim or without ([`Parser::parse_seed`]). A field named may hold an object or an array, and
//! the skim may have dropped strings inside it (their keys are not named): such a record is
//! parsed again whole, so what is written is always the record's own value.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
    value::{MapAccessDeserializer, SeqAccessDeserializer},
};
use serde::{Deserialize, Serialize, Serializer};
use simd_json::{Node, StaticNode};

use crate::parse::{ParseError, Parser};
use crate::skim::Skim;

/// Strings shorter than this are not worth dropping.
const MIN_DROPPED: usize = 64;

/// The fields to write, in order.
#[derive(Debug, Clone, Copy)]
pub struct Projection {
    names: &'static [&'static str],
    /// `None`: every line parsed whole ([`Projection::whole`]).
    skim: Option<Skim>,
}

impl Projection {
    /// Writes `names` (top-level keys, as they are once unescaped), in that order.
    pub fn new(names: &'static [&'static str]) -> Self {
        Self {
            names,
            skim: Some(Skim {
                keys: names,
                all_but: true,
                min_len: MIN_DROPPED,
            }),
        }
    }

    /// The same projection with every line parsed whole: what the skim is measured and
    /// tested against.
    #[must_use]
    pub fn whole(self) -> Self {
        Self { skim: None, ..self }
    }

    /// The field names.
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }

    /// Parses one line (without its terminator) and appends its projection to `out`: `{`,
    /// `prefix` (members the caller adds first, separated by commas, or nothing), the fields,
    /// `}` and a newline. Returns whether the line needed repair (invalid UTF-8, lone
    /// surrogates); a line that is not one JSON object appends nothing.
    pub fn write(
        &self,
        parser: &mut Parser,
        text: &[u8],
        prefix: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, ParseError> {
        // The fast path: the tape walked for the fields, when simd-json takes the line and no
        // field named holds an object or an array.
        if self.skim.is_some()
            && let Some(Some(fields)) =
                parser.parse_tape(text, self.skim, |nodes| self.read_tape(nodes))
        {
            write_object(self.names, &fields, prefix, out);
            return Ok(false);
        }
        let select = Select { names: self.names };
        let (fields, repaired) = parser.parse_seed(text, select, self.skim)?;
        if self.skim.is_none() || !fields.iter().any(|f| matches!(f, Field::Composite(_))) {
            write_object(self.names, &fields, prefix, out);
            return Ok(repaired);
        }
        let (fields, repaired) = parser.parse_seed(text, select, None)?;
        write_object(self.names, &fields, prefix, out);
        Ok(repaired)
    }

    /// The fields named, read off a record's tape (keys unescaped, the last of duplicates
    /// winning, as [`Select`] reads them); `None` when the tape is not an object or a field
    /// named holds an object or an array (read those through serde).
    fn read_tape<'s>(&self, nodes: &[Node<'s>]) -> Option<Vec<Field<'s>>> {
        let Some(Node::Object { len, .. }) = nodes.first() else {
            return None;
        };
        let mut fields = vec![Field::Missing; self.names.len()];
        let mut at = 1;
        for _ in 0..*len {
            let (Node::String(key), value) = (nodes.get(at)?, nodes.get(at + 1)?) else {
                return None;
            };
            let width = match value {
                Node::Object { count, .. } | Node::Array { count, .. } => count + 1,
                _ => 1,
            };
            if let Some(i) = self.names.iter().position(|n| n == key) {
                fields[i] = match *value {
                    Node::String(s) => Field::Str(Cow::Borrowed(s)),
                    Node::Static(StaticNode::Null) => Field::Null,
                    Node::Static(StaticNode::Bool(b)) => Field::Bool(b),
                    Node::Static(StaticNode::I64(n)) => Field::Signed(n),
                    Node::Static(StaticNode::U64(n)) => Field::Unsigned(n),
                    Node::Static(StaticNode::F64(n)) => Field::Float(n),
                    _ => return None,
                };
            }
            at += 1 + width;
        }
        Some(fields)
    }
}

fn write_object(names: &[&str], fields: &[Field<'_>], prefix: &[u8], out: &mut Vec<u8>) {
    out.push(b'{');
    out.extend_from_slice(prefix);
    for (i, (name, field)) in names.iter().zip(fields).enumerate() {
        if i > 0 || !prefix.is_empty() {
            out.push(b',');
        }
        // Writing JSON into a Vec cannot fail: strings are UTF-8, numbers finite.
        let _ = serde_json::to_writer(&mut *out, name);
        out.push(b':');
        let _ = serde_json::to_writer(&mut *out, field);
    }
    out.extend_from_slice(b"}\n");
}

/// One field's value as read.
#[derive(Debug, Clone, PartialEq)]
enum Field<'de> {
    Missing,
    Null,
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float(f64),
    Str(Cow<'de, str>),
    /// An object or an array.
    Composite(serde_json::Value),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Missing | Field::Null => s.serialize_unit(),
            Field::Bool(b) => s.serialize_bool(*b),
            Field::Signed(n) => s.serialize_i64(*n),
            Field::Unsigned(n) => s.serialize_u64(*n),
            Field::Float(n) => s.serialize_f64(*n),
            Field::Str(t) => s.serialize_str(t),
            Field::Composite(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Field<'de>, E> {
        Ok(Field::Null)
    }
    fn visit_none<E>(self) -> Result<Field<'de>, E> {
        Ok(Field::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Field<'de>, E> {
        Ok(Field::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Field<'de>, E> {
        Ok(Field::Signed(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Field<'de>, E> {
        Ok(Field::Unsigned(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Field<'de>, E> {
        Ok(Field::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
        serde_json::Value::deserialize(SeqAccessDeserializer::new(seq)).map(Field::Composite)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
        serde_json::Value::deserialize(MapAccessDeserializer::new(map)).map(Field::Composite)
    }
}

/// Reads the named top-level fields of an object (the last of duplicate keys wins, as in
/// serde_json and jq), skipping every other value.
#[derive(Clone, Copy)]
struct Select {
    names: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for Select {
    type Value = Vec<Field<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Select {
    type Value = Vec<Field<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = vec![Field::Missing; self.names.len()];
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match self.names.iter().position(|n| *n == key) {
                Some(i) => fields[i] = map.next_value()?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
}

/// An object key, borrowed where the parser can lend it (serde's `Cow<str>` always copies).
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["type", "uuid", "parentUuid"];

    fn projected(names: &'static [&'static str], line: &[u8]) -> Result<String, ParseError> {
        let mut out = Vec::new();
        Projection::new(names).write(&mut Parser::new(), line, b"", &mut out)?;
        Ok(String::from_utf8(out).expect("utf-8"))
    }

    #[test]
    fn writes_the_fields_in_order_with_null_for_the_missing() {
        assert_eq!(
            projected(
                NAMES,
                br#"{"parentUuid":null,"uuid":"u2","type":"user","x":[1,{"y":2}]}"#
            ),
            Ok("{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":null}\n".into())
        );
        assert_eq!(
            projected(NAMES, br#"{"type":"summary"}"#),
            Ok("{\"type\":\"summary\",\"uuid\":null,\"parentUuid\":null}\n".into())
        );
        // Any JSON value, escapes re-written, the last of duplicate keys.
        assert_eq!(
            projected(
                &["a", "b", "c", "d"],
                br#"{"a":1.5,"b":-3,"c":"q\u0022\n","d":true,"a":false}"#
            ),
            Ok("{\"a\":false,\"b\":-3,\"c\":\"q\\\"\\n\",\"d\":true}\n".into())
        );
        // Only top-level keys count.
        assert_eq!(
            projected(&["id"], br#"{"message":{"id":"m1"}}"#),
            Ok("{\"id\":null}\n".into())
        );
    }

    /// The fast path reads fields after nested objects and arrays (stepping over them by
    /// their node counts), and leaves objects named to serde.
    #[test]
    fn the_tape_walk_steps_over_nested_values() {
        let p = Projection::new(NAMES);
        let mut parser = Parser::new();
        let line = br#"{"message":{"a":[1,{"b":[]}],"c":{}},"type":"user","x":[[],{}],"uuid":"u1","parentUuid":7}"#;
        let fields = parser.parse_tape(line, p.skim, |nodes| p.read_tape(nodes));
        assert_eq!(
            fields,
            Some(Some(vec![
                Field::Str("user".into()),
                Field::Str("u1".into()),
                Field::Unsigned(7)
            ]))
        );
        let named = Projection::new(&["message"]);
        assert_eq!(
            parser.parse_tape(line, named.skim, |nodes| named.read_tape(nodes)),
            Some(None)
        );
        // What simd-json refuses is left to the whole parse.
        assert_eq!(parser.parse_tape(br#"{"a":1"#, p.skim, |_| ()), None);
    }

    #[test]
    fn the_callers_members_come_first() {
        let mut out = Vec::new();
        let mut parser = Parser::new();
        let line = br#"{"type":"user","uuid":"u1"}"#;
        Projection::new(&["uuid"])
            .write(&mut parser, line, br#""line":3,"at":"f""#, &mut out)
            .expect("record");
        Projection::new(&[])
            .write(&mut parser, line, br#""line":4"#, &mut out)
            .expect("record");
        Projection::new(&[])
            .write(&mut parser, line, b"", &mut out)
            .expect("record");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "{\"line\":3,\"at\":\"f\",\"uuid\":\"u1\"}\n{\"line\":4}\n{}\n"
        );
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        for bad in [&b"[1]"[..], b"{\"a\":1", b"{\"a\":1} {}", b"", b"nul"] {
            assert!(
                projected(NAMES, bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A long line, padded past the skim's threshold with a value it drops.
    fn long(members: &str) -> Vec<u8> {
        let pad = "p".repeat(crate::skim::MIN_LINE);
        let sep = if members.is_empty() { "" } else { "," };
        format!(r#"{{{members}{sep}"toolUseResult":{{"stdout":"{pad}"}}}}"#).into_bytes()
    }

    #[test]
    fn an_object_or_array_named_is_written_whole() {
        let text = "t".repeat(200);
        let line = long(&format!(
            r#""type":"user","message":{{"role":"user","content":"{text}"}},"list":["{text}"]"#
        ));
        let got = projected(&["message", "list"], &line).expect("record");
        assert_eq!(
            got,
            format!(
                "{{\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"list\":[\"{text}\"]}}\n"
            )
        );
        // The skim did drop something from this line: the whole parse was needed.
        let mut out = Vec::new();
        let skim = Projection::new(&["message"]).skim.expect("skims");
        assert!(skim.reduce(&line, &mut out));
    }

    fn whole(names: &'static [&'static str], line: &[u8]) -> Result<String, ParseError> {
        let mut out = Vec::new();
        Projection::new(names)
            .whole()
            .write(&mut Parser::new(), line, b"", &mut out)?;
        Ok(String::from_utf8(out).expect("utf-8"))
    }

    /// Top-level keys of the generated lines: the fields named, one of them written with an
    /// escape, and others.
    const KEYS: &[&str] = &[
        "type",
        "uuid",
        "parentUuid",
        "typ\\u0065",
        "message",
        "content",
        "x",
    ];
    /// Their values (`LONG`: a long string's body).
    const VALUES: &[&str] = &[
        "\"short\"",
        "null",
        "12",
        "-1.5e3",
        "true",
        "[\"a\",{\"content\":\"LONG\"}]",
        "{\"content\":\"LONG\",\"type\":\"LONG\"}",
        "\"LONG\"",
        "\"LONG\\\\\"",
        "\"\\ud800LONG\"",
        "\"\u{e9}LONG\"",
        "\"   \"",
    ];
    /// Values that make the line invalid: an invalid escape, a raw control byte.
    const POISON: &[&str] = &["\"LONG\\x\"", "\"LONG\t\""];
    /// Pieces of a long string's body (`BAD`: a byte that is not UTF-8).
    const BODY: &[&str] = &[
        "words ",
        "\\n",
        "\\\"",
        "\\\\",
        "\\u00e9",
        "\u{e9}\u{20ac}",
        "{[,:]}",
        "BAD",
    ];

    proptest::proptest! {
        /// Skimmed or whole, the same projection of every line, or the same error: lines
        /// built of the fields named and others, strings long and short with escapes,
        /// non-ASCII, invalid UTF-8 and lone surrogates, keys written with escapes, objects
        /// and arrays, cut anywhere.
        #[test]
        fn the_skim_changes_no_projection(
            members in proptest::collection::vec((
                proptest::sample::select(KEYS),
                proptest::prop_oneof![12 => proptest::sample::select(VALUES), 1 => proptest::sample::select(POISON)],
            ), 1..6),
            body in proptest::collection::vec(proptest::sample::select(BODY), 8..40),
            cut in proptest::option::weighted(0.2, 0usize..4000),
        ) {
            let body = body.concat();
            let members: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("\"{k}\":{}", v.replace("LONG", &body)))
                .collect();
            let mut line = String::from_utf8_lossy(&long(&members.join(",")))
                .replace("BAD", "\0")
                .into_bytes();
            for b in &mut line {
                if *b == 0 {
                    *b = 0xff;
                }
            }
            if let Some(at) = cut {
                line.truncate(at);
            }
            for names in [NAMES, &["message", "type"][..], &["x"][..]] {
                let a = whole(names, &line);
                let b = projected(names, &line);
                proptest::prop_assert_eq!(a, b, "{}", String::from_utf8_lossy(&line));
            }
        }
    }
}
