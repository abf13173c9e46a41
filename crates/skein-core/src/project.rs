//! A projection: a few fields of each record, one compact JSON object per record, as
//! `jq -c '{type,uuid,parentUuid}'` prints them (a field the record lacks is `null`). A field
//! is a top-level key or a dotted path into nested objects (`message.model`), written nested
//! as the record holds it (`{"message":{"model":…}}`, what jq's `pick(.message.model)` writes),
//! so a jq program reads the projection as it reads the record.
//!
//! Only the fields named are read: first off the line's structural index, where it vouches
//! for the line (`project::lazy`: no skim, no tape, no copy of the line). Else, before a long
//! line is parsed, the long string values of every other key are dropped ([`Skim::all_but`]):
//! on transcripts that is most of the bytes (tool output, file contents, texts), which
//! simd-json then neither scans nor copies. The skim keeps a line's validity: a line is a
//! record, or refused with the same error, with the skim or without ([`Parser::parse_into`]).
//! The fields are then read off simd-json's tape. A field that holds an object or an array may
//! have lost strings inside it to the skim (their keys are not named), and a line simd-json
//! refuses must be repaired or judged: those records are parsed again whole, so what is
//! written is always the record's own value.

use simd_json::{Node, StaticNode};

mod lazy;

use crate::parse::{ParseError, Parser};
use crate::skim::{PLACEHOLDER, Skim};
use crate::tape::{entries, width};

/// Strings shorter than this are not worth dropping.
const MIN_DROPPED: usize = 64;

/// Up to this many fields are read into an array on the stack.
const FEW: usize = 8;

/// Why a list of fields is not a projection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldsError {
    #[error("{0:?} has an empty key")]
    EmptyKey(String),
    #[error("{0:?} is named twice")]
    Twice(String),
    #[error("{0:?} is inside {1:?}, which is named whole")]
    Inside(String, String),
}

/// One key of the paths named: a field written (`leaf`: its place among the fields) or an
/// object whose keys below are.
#[derive(Debug, Clone)]
struct Step {
    key: &'static str,
    /// The key as JSON and its colon: what is written before its value.
    member: Vec<u8>,
    leaf: Option<usize>,
    below: Vec<Step>,
}

/// The fields to write, in order.
#[derive(Debug, Clone)]
pub struct Projection {
    paths: &'static [&'static str],
    steps: Vec<Step>,
    /// `None`: every line parsed whole ([`Projection::whole`]).
    skim: Option<Skim>,
}

impl Projection {
    /// Writes `paths` (top-level keys, or dotted paths into nested objects; keys as they are
    /// once unescaped), each object's members in the order they are first named.
    pub fn new(paths: &'static [&'static str]) -> Result<Self, FieldsError> {
        let mut steps: Vec<Step> = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            if path.split('.').any(str::is_empty) {
                return Err(FieldsError::EmptyKey((*path).into()));
            }
            if paths[..i].contains(path) {
                return Err(FieldsError::Twice((*path).into()));
            }
            let encloses = |p: &str| {
                p.len() < path.len() && path.starts_with(p) && path[p.len()..].starts_with('.')
            };
            if let Some(outer) = paths.iter().find(|p| encloses(p)) {
                return Err(FieldsError::Inside((*path).into(), (*outer).into()));
            }
            let mut level = &mut steps;
            let keys: Vec<&'static str> = path.split('.').collect();
            for (depth, key) in keys.iter().enumerate() {
                let at = level.iter().position(|s| s.key == *key).unwrap_or_else(|| {
                    // Writing JSON into a Vec cannot fail.
                    let mut member = serde_json::to_vec(key).unwrap_or_default();
                    member.push(b':');
                    level.push(Step {
                        key,
                        member,
                        leaf: None,
                        below: Vec::new(),
                    });
                    level.len() - 1
                });
                if depth + 1 == keys.len() {
                    level[at].leaf = Some(i);
                }
                level = &mut level[at].below;
            }
        }
        Ok(Self {
            paths,
            steps,
            skim: Some(Skim {
                keys: paths,
                all_but: true,
                min_len: MIN_DROPPED,
            }),
        })
    }

    /// The same projection with every line parsed whole: what the skim is measured and
    /// tested against.
    #[must_use]
    pub fn whole(self) -> Self {
        Self { skim: None, ..self }
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
        // The fastest path: the fields read off the line's structural index where it vouches
        // for the line (`project::lazy`); not for a projection parsing lines whole, which the
        // others are tested against.
        if self.skim.is_some()
            && parser
                .parse_doc(text, |doc| lazy::write(self, doc, prefix, out))
                .is_some()
        {
            return Ok(false);
        }
        // The fast path: the tape walked for the fields and written from it, when simd-json
        // takes the line and the objects and arrays named are whole on the tape.
        if self.skim.is_some()
            && parser.parse_tape(text, self.skim, |nodes| {
                self.with_fields(|fields| {
                    read_tape(nodes, 0, &self.steps, fields)?;
                    if writes_zero(fields) && has_minus_zero(text) {
                        return None;
                    }
                    self.write_object(fields, prefix, out);
                    Some(())
                })
            }) == Some(Some(()))
        {
            return Ok(false);
        }
        let (record, repaired) = parser.parse_into::<serde_json::Value>(text, None)?;
        let mut fields = vec![Field::Missing; self.paths.len()];
        if let serde_json::Value::Object(members) = &record {
            read_value(members, &self.steps, &mut fields);
        }
        self.write_object(&fields, prefix, out);
        Ok(repaired)
    }

    /// `read` given a slot per field, all missing: on the stack for the few fields a
    /// projection mostly names (an allocation per line cost 1-3 % of the CPU in alternating
    /// rounds).
    fn with_fields<'a, R>(&self, read: impl FnOnce(&mut [Field<'a>]) -> R) -> R {
        let n = self.paths.len();
        if n <= FEW {
            read(&mut [Field::Missing; FEW][..n])
        } else {
            read(&mut vec![Field::Missing; n])
        }
    }

    fn write_object(&self, fields: &[Field<'_>], prefix: &[u8], out: &mut Vec<u8>) {
        out.push(b'{');
        out.extend_from_slice(prefix);
        // (No field here is read off the index: nothing to give up on.)
        let _ = write_members(&self.steps, fields, !prefix.is_empty(), out, &|_, _| None);
        out.extend_from_slice(b"}\n");
    }
}

/// Reads the fields of `steps` off the object at `nodes[at]` (the last of duplicate keys
/// winning, as serde_json reads them). `None` when that is not an object, or a field named
/// holds an object or an array that may not be whole on the tape ([`whole_on_tape`]): the
/// caller parses the line whole then.
fn read_tape<'a>(
    nodes: &'a [Node<'a>],
    at: usize,
    steps: &[Step],
    fields: &mut [Field<'a>],
) -> Option<()> {
    let Some(Node::Object { len, .. }) = nodes.get(at) else {
        return None;
    };
    let mut read = 0;
    for (key, value) in entries(nodes, at) {
        read += 1;
        let Some(step) = steps.iter().find(|s| Some(s.key) == key) else {
            continue;
        };
        let node = nodes.get(value)?;
        if let Some(i) = step.leaf {
            // A scalar named is the record's own (the skim keeps the values of keys named).
            let tree = nodes.get(value..value + width(node))?;
            if tree.len() > 1 && !whole_on_tape(tree) {
                return None;
            }
            fields[i] = Field::Tape(tree);
        } else {
            // A later copy of the key replaces an earlier one whole.
            clear(&step.below, fields);
            if matches!(node, Node::Object { .. }) {
                read_tape(nodes, value, &step.below, fields)?;
            }
        }
    }
    (read == *len).then_some(())
}

/// Whether an object or array read off a skimmed line's tape is the record's own: no string
/// in it is the skim's [`PLACEHOLDER`] (a real `"x"` only costs a whole parse), and no object
/// in it repeats a key (serde_json keeps the last, and so must what is written).
fn whole_on_tape(tree: &[Node<'_>]) -> bool {
    tree.iter().enumerate().all(|(at, node)| match node {
        Node::String(s) => *s != PLACEHOLDER,
        Node::Object { len, .. } if *len > 1 => {
            let mut keys: Vec<Option<&str>> = entries(tree, at).map(|(k, _)| k).collect();
            keys.sort_unstable();
            keys.len() == *len && keys.windows(2).all(|w| w[0] != w[1])
        }
        _ => true,
    })
}

/// Whether a field read off the tape holds an integer 0: simd-json reads `-0` as one, where
/// serde reads `-0.0` (and writes it so).
fn writes_zero(fields: &[Field<'_>]) -> bool {
    fields.iter().any(|f| match f {
        Field::Tape(tree) => tree
            .iter()
            .any(|node| matches!(node, Node::Static(StaticNode::I64(0) | StaticNode::U64(0)))),
        _ => false,
    })
}

/// Whether `-0` may be a number of the line: a `-0` not followed by a digit, a point or an
/// exponent, anywhere (in a string too: then the line is only parsed whole for nothing).
fn has_minus_zero(text: &[u8]) -> bool {
    memchr::memmem::find_iter(text, b"-0")
        .any(|at| !matches!(text.get(at + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E')))
}

/// Writes the value at the start of `tree` as compact JSON.
fn write_tape(tree: &[Node<'_>], out: &mut Vec<u8>) {
    // Writing JSON into a Vec cannot fail: strings are UTF-8, numbers finite.
    let _ = match tree.first() {
        Some(Node::Object { .. } | Node::Array { .. }) => {
            let object = matches!(tree.first(), Some(Node::Object { .. }));
            out.push(if object { b'{' } else { b'[' });
            for (i, (key, value)) in entries(tree, 0).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if let Some(key) = key {
                    let _ = serde_json::to_writer(&mut *out, key);
                    out.push(b':');
                }
                write_tape(&tree[value..], out);
            }
            out.push(if object { b'}' } else { b']' });
            Ok(())
        }
        Some(Node::String(s)) => serde_json::to_writer(&mut *out, s),
        Some(Node::Static(StaticNode::Bool(b))) => serde_json::to_writer(&mut *out, b),
        Some(Node::Static(StaticNode::I64(n))) => serde_json::to_writer(&mut *out, n),
        Some(Node::Static(StaticNode::U64(n))) => serde_json::to_writer(&mut *out, n),
        Some(Node::Static(StaticNode::F64(n))) => serde_json::to_writer(&mut *out, n),
        _ => {
            out.extend_from_slice(b"null");
            Ok(())
        }
    };
}

fn clear(steps: &[Step], fields: &mut [Field<'_>]) {
    for step in steps {
        if let Some(i) = step.leaf {
            fields[i] = Field::Missing;
        }
        clear(&step.below, fields);
    }
}

/// Reads the fields of `steps` off a record parsed whole.
fn read_value<'v>(
    members: &'v serde_json::Map<String, serde_json::Value>,
    steps: &[Step],
    fields: &mut [Field<'v>],
) {
    for step in steps {
        match (members.get(step.key), step.leaf) {
            (Some(value), Some(i)) => fields[i] = Field::Json(value),
            (Some(serde_json::Value::Object(below)), None) => {
                read_value(below, &step.below, fields);
            }
            _ => {}
        }
    }
}

/// Writes the members of `steps`; a field read off the index is written by `index` (`None`
/// where it gives up, and then this does).
fn write_members(
    steps: &[Step],
    fields: &[Field<'_>],
    mut comma: bool,
    out: &mut Vec<u8>,
    index: &dyn Fn(usize, &mut Vec<u8>) -> Option<()>,
) -> Option<()> {
    for step in steps {
        if comma {
            out.push(b',');
        }
        comma = true;
        out.extend_from_slice(&step.member);
        if let Some(i) = step.leaf {
            write_field(&fields[i], out, index)?;
        } else {
            out.push(b'{');
            write_members(&step.below, fields, false, out, index)?;
            out.push(b'}');
        }
    }
    Some(())
}

/// One field's value as read: off the tape (a scalar's node, or an object's or array's
/// nodes), off the line's structural index (its first structural), or out of a record parsed
/// whole.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Field<'a> {
    Missing,
    Tape(&'a [Node<'a>]),
    Index(crate::lazy::At),
    Json(&'a serde_json::Value),
}

/// Writes one field's value as compact JSON (`index` writes one read off the index).
fn write_field(
    field: &Field<'_>,
    out: &mut Vec<u8>,
    index: &dyn Fn(usize, &mut Vec<u8>) -> Option<()>,
) -> Option<()> {
    match *field {
        Field::Missing => out.extend_from_slice(b"null"),
        Field::Tape(tree) => write_tape(tree, out),
        Field::Index(at) => index(at, out)?,
        // Writing JSON into a Vec cannot fail: strings are UTF-8, numbers finite.
        Field::Json(v) => {
            let _ = serde_json::to_writer(&mut *out, v);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["type", "uuid", "parentUuid"];

    fn projection(paths: &'static [&'static str]) -> Projection {
        Projection::new(paths).expect("paths")
    }

    fn projected(paths: &'static [&'static str], line: &[u8]) -> Result<String, ParseError> {
        let mut out = Vec::new();
        projection(paths).write(&mut Parser::new(), line, b"", &mut out)?;
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

    #[test]
    fn dotted_paths_are_written_nested() {
        const PATHS: &[&str] = &["type", "message.id", "uuid", "message.usage.output_tokens"];
        assert_eq!(
            projected(
                PATHS,
                br#"{"message":{"usage":{"input_tokens":3,"output_tokens":5},"id":"m1","content":[]},"type":"assistant","uuid":"u1"}"#
            ),
            Ok(r#"{"type":"assistant","message":{"id":"m1","usage":{"output_tokens":5}},"uuid":"u1"}"#.to_owned() + "\n")
        );
        // Missing, not an object, replaced whole by a later copy of the key.
        for (line, want) in [
            (
                &br#"{"type":"user"}"#[..],
                r#"{"type":"user","message":{"id":null,"usage":{"output_tokens":null}},"uuid":null}"#,
            ),
            (
                br#"{"message":"hi"}"#,
                r#"{"type":null,"message":{"id":null,"usage":{"output_tokens":null}},"uuid":null}"#,
            ),
            (
                br#"{"message":{"id":"m1","usage":{"output_tokens":1}},"message":{"id":"m2"}}"#,
                r#"{"type":null,"message":{"id":"m2","usage":{"output_tokens":null}},"uuid":null}"#,
            ),
        ] {
            assert_eq!(projected(PATHS, line), Ok(want.to_owned() + "\n"));
        }
    }

    #[test]
    fn paths_that_cannot_be_written_are_refused() {
        assert_eq!(
            Projection::new(&["type", "message..id"]).err(),
            Some(FieldsError::EmptyKey("message..id".into()))
        );
        assert_eq!(
            Projection::new(&["a.", "b"]).err(),
            Some(FieldsError::EmptyKey("a.".into()))
        );
        assert_eq!(
            Projection::new(&["uuid", "type", "uuid"]).err(),
            Some(FieldsError::Twice("uuid".into()))
        );
        assert_eq!(
            Projection::new(&["message.model", "message"]).err(),
            Some(FieldsError::Inside(
                "message.model".into(),
                "message".into()
            ))
        );
        // A key that only starts like another is not inside it.
        assert!(Projection::new(&["message", "messages.x", "message2"]).is_ok());
    }

    /// The fast path reads fields after nested objects and arrays (stepping over them by
    /// their node counts), and leaves objects named to serde.
    #[test]
    fn the_tape_walk_steps_over_nested_values() {
        let read = |p: &Projection, parser: &mut Parser, line: &'static [u8]| {
            parser.parse_tape(line, p.skim, |nodes| {
                let mut fields = vec![Field::Missing; p.paths.len()];
                read_tape(nodes, 0, &p.steps, &mut fields).map(|()| format!("{fields:?}"))
            })
        };
        let p = projection(NAMES);
        let mut parser = Parser::new();
        let line = br#"{"message":{"a":[1,{"b":[]}],"c":{}},"type":"user","x":[[],{}],"uuid":"u1","parentUuid":7}"#;
        assert_eq!(
            read(&p, &mut parser, line),
            Some(Some(format!(
                "{:?}",
                [
                    Field::Tape(&[Node::String("user")]),
                    Field::Tape(&[Node::String("u1")]),
                    Field::Tape(&[Node::Static(StaticNode::U64(7))])
                ]
            )))
        );
        // Objects and arrays are read off the tape when they are whole there: no string in
        // them is the skim's placeholder, no key repeats.
        assert_eq!(
            read(&projection(&["message.c", "x"]), &mut parser, line),
            Some(Some(format!(
                "{:?}",
                [
                    Field::Tape(&[Node::Object { len: 0, count: 0 }]),
                    Field::Tape(&[
                        Node::Array { len: 2, count: 2 },
                        Node::Array { len: 0, count: 0 },
                        Node::Object { len: 0, count: 0 },
                    ])
                ]
            )))
        );
        for line in [
            &br#"{"message":{"a":"x"}}"#[..],
            br#"{"message":[{"a":1,"b":2,"a":3}]}"#,
        ] {
            assert_eq!(
                read(&projection(&["message"]), &mut parser, line),
                Some(None)
            );
        }
        let whole = br#"{"message":[{"a":1,"b":2,"c":"y"}]}"#;
        assert!(matches!(
            read(&projection(&["message"]), &mut parser, whole),
            Some(Some(_))
        ));
        let nested = br#"{"message":{"a":[1,{"b":[]}],"id":"m","c":{"d":{}}},"type":"user"}"#;
        assert_eq!(
            read(&projection(&["message.id", "type"]), &mut parser, nested),
            Some(Some(format!(
                "{:?}",
                [
                    Field::Tape(&[Node::String("m")]),
                    Field::Tape(&[Node::String("user")])
                ]
            )))
        );
        // What simd-json refuses is left to the whole parse.
        assert_eq!(parser.parse_tape(br#"{"a":1"#, p.skim, |_| ()), None);
    }

    #[test]
    fn the_callers_members_come_first() {
        let mut out = Vec::new();
        let mut parser = Parser::new();
        let line = br#"{"type":"user","uuid":"u1"}"#;
        projection(&["uuid"])
            .write(&mut parser, line, br#""line":3,"at":"f""#, &mut out)
            .expect("record");
        projection(&[])
            .write(&mut parser, line, br#""line":4"#, &mut out)
            .expect("record");
        projection(&[])
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
        let skim = projection(&["message"]).skim.expect("skims");
        assert!(skim.reduce(&line, &mut out));
    }

    fn whole(names: &'static [&'static str], line: &[u8]) -> Result<String, ParseError> {
        let mut out = Vec::new();
        projection(names)
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
        "ty\\/pe",
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
        "{\"type\":1,\"type\":\"LONG\"}",
        "[1,-2.5,{\"k\":[true,null,\"x\"]},{\"type\":\"LONG\",\"n\":1e3}]",
        // What the structural index's path writes as the line has it, or leaves to the tape:
        // fractions, `-0`, escapes serde writes otherwise (`\/`), a key written with one,
        // members out of order, a short key repeated.
        "2.50",
        "-0",
        "-70",
        "\"a\\/b\\tc\\\"d\"",
        "{\"z\":0,\"a\":[1.0,\"\\/\",-0,{}],\"m\\/n\":[]}",
        "{\"k\":1,\"j\":{\"k\":2,\"k\":3}}",
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
        // Cheap cases (microseconds each), and the rarer shapes (a duplicate key inside an
        // object named) need more of them than the default 256 to show.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Off the structural index, off the tape of the skimmed line or whole, the same
        /// projection of every line, or the same error: lines
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
            for names in [
                NAMES,
                &["message"][..],
                &["message", "type"][..],
                &["x"][..],
                &["message.type", "uuid", "message.content"][..],
                &["ty/pe", "x"][..],
            ] {
                let a = whole(names, &line);
                let b = projected(names, &line);
                proptest::prop_assert_eq!(&a, &b, "{}", String::from_utf8_lossy(&line));
                let mut tape = Parser::new();
                tape.set_index(false);
                let mut out = Vec::new();
                let c = projection(names)
                    .write(&mut tape, &line, b"", &mut out)
                    .map(|_| String::from_utf8(out).expect("utf-8"));
                proptest::prop_assert_eq!(&a, &c, "{}", String::from_utf8_lossy(&line));
            }
        }
    }
}
