//! The envelope read straight off simd-json's tape ([`crate::Parser::parse_as`]'s fast path):
//! the same [`Envelope`] serde's derived readers build over the tape, without serde's visitor
//! (a sixth of the envelope parse of a long session, a fifth of the metadata's skimmed one). Each field is read as its lenient type
//! reads it ([`crate::lenient`]), and where serde's readers would refuse the record (a field
//! of a derived struct written twice in one object: `duplicate field`), the reader gives up and
//! the line takes the path serde's refusal took (serde_json, the last copy winning).
//!
//! The fields are read by [`crate::envelope_read`], which reads the index's envelope too, off
//! the tape ([`crate::tape::Tape`]); this file builds tool inputs off it ([`FromTape`]).
//! `envelope_tape::tests` hold the tape's envelope to serde's on lines of every shape the
//! fields take and on generated records, and `skein-analysis`' corpus tests on every line of
//! the corpus: a change to a lenient type must keep them equal.

use serde::de::IgnoredAny;
use simd_json::{Node, StaticNode};

use crate::envelope::Envelope;
use crate::tape::entries;

/// What a tool input (`Block::input`) is read into, off the tape: skipped ([`IgnoredAny`]) or
/// built ([`serde_json::Value`]).
pub trait FromTape<'a>: Sized {
    /// The value at `nodes[at]`.
    fn from_tape(nodes: &[Node<'a>], at: usize) -> Self;

    /// The value of a tool input that is skipped, not read: `None` for a type that reads
    /// inputs (a line with a tool input is then read off the tape, not off its index, which
    /// builds no values: [`crate::lazy`]).
    fn skipped() -> Option<Self> {
        None
    }
}

impl FromTape<'_> for IgnoredAny {
    fn from_tape(_: &[Node<'_>], _: usize) -> Self {
        IgnoredAny
    }

    fn skipped() -> Option<Self> {
        Some(IgnoredAny)
    }
}

impl FromTape<'_> for serde_json::Value {
    /// As serde_json's own visitor builds it (a repeated key: the last value, in the first
    /// one's place).
    fn from_tape(nodes: &[Node<'_>], at: usize) -> Self {
        use serde_json::Value;
        match nodes.get(at) {
            Some(Node::String(s)) => Value::String((*s).to_owned()),
            Some(Node::Static(StaticNode::Bool(b))) => Value::Bool(*b),
            Some(Node::Static(StaticNode::I64(n))) => Value::from(*n),
            Some(Node::Static(StaticNode::U64(n))) => Value::from(*n),
            Some(Node::Static(StaticNode::F64(n))) => {
                serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number)
            }
            Some(Node::Array { .. }) => Value::Array(
                entries(nodes, at)
                    .map(|(_, v)| Self::from_tape(nodes, v))
                    .collect(),
            ),
            Some(Node::Object { .. }) => {
                let mut map = serde_json::Map::new();
                for (key, v) in entries(nodes, at) {
                    map.insert(
                        key.unwrap_or_default().to_owned(),
                        Self::from_tape(nodes, v),
                    );
                }
                Value::Object(map)
            }
            Some(Node::Static(StaticNode::Null)) | None => Value::Null,
        }
    }
}

/// The envelope of `line` read both ways, as `Debug` text with the repair flag (or the error):
/// off the tape ([`crate::Parser::parse_as`]) and by serde ([`crate::Parser::parse_into`]).
/// What the tests and the `envelope` fuzz target hold equal.
pub fn both_ways<I>(parser: &mut crate::Parser, line: &[u8]) -> (String, String)
where
    I: for<'a> serde::Deserialize<'a> + for<'a> FromTape<'a> + Default + std::fmt::Debug,
{
    let tape = match parser.parse_as::<I>(line) {
        Ok(p) => format!("{:?} {}", p.envelope, p.repaired),
        Err(e) => format!("error: {e}"),
    };
    let serde = match parser.parse_into::<Envelope<'_, I>>(line, None) {
        Ok((e, repaired)) => format!("{e:?} {repaired}"),
        Err(e) => format!("error: {e}"),
    };
    (tape, serde)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::Deserialize;

    use super::*;
    use crate::parse::Parser;
    use crate::source::FromSource;

    fn both<I>(line: &[u8]) -> (String, String)
    where
        I: for<'a> Deserialize<'a> + for<'a> FromTape<'a> + Default + std::fmt::Debug,
    {
        both_ways::<I>(&mut Parser::new(), line)
    }

    fn assert_same(line: &[u8]) {
        let (a, b) = both::<IgnoredAny>(line);
        assert_eq!(a, b, "{}", String::from_utf8_lossy(line));
        let (a, b) = both::<serde_json::Value>(line);
        assert_eq!(a, b, "{}", String::from_utf8_lossy(line));
    }

    /// Whether the tape reader takes `line` itself.
    fn on_tape(line: &str) -> bool {
        let mut parser = Parser::new();
        parser
            .parse_tape(line.as_bytes(), None, |nodes| {
                Envelope::<serde_json::Value>::from_source(&crate::tape::Tape(nodes)).is_some()
            })
            .unwrap_or(false)
    }

    fn user(content: &str) -> String {
        format!(
            r#"{{"type":"user","uuid":"u1","sessionId":"s","message":{{"role":"user","content":{content}}},"toolUseResult":{{"agentId":"a9"}}}}"#
        )
    }

    /// Lines of every shape the envelope's fields take, and lines serde's readers refuse: the
    /// same envelope either way, and the tape reader gives up exactly where serde refuses.
    #[test]
    fn the_tape_reads_what_serde_reads() {
        let assistant = r#"{"type":"assistant","uuid":"a1","parentUuid":null,"logicalParentUuid":"x","sessionId":"s","timestamp":"2026-01-01T00:00:00Z","requestId":"r","agentId":"g","teamName":"t","cwd":"/w","gitBranch":"main","isSidechain":true,"isMeta":false,"isCompactSummary":1,"isApiErrorMessage":"true","message":{"id":"m","role":"assistant","model":"claude-x","stop_reason":"end_turn","usage":{"input_tokens":1.9,"output_tokens":-2,"cache_creation_input_tokens":"3","cache_read_input_tokens":1e30},"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Task","input":{"subagent_type":"x","description":"d","n":[1,2.5,-3,null,true],"o":{"k":"v","k":"w"}}},{"type":"tool_use","id":"t2","name":"Bash","input":null},{"type":"tool_use","id":"t3","name":"Read","input":"{\"file_path\":\"/a\"}"},7,"s",null,[1]]}}"#;
        let results = [
            r#""plain text result""#,
            r#"[{"type":"text","text":"abc"},{"text":"de","type":"text"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"document","source":"raw","text":"t"},{"type":"tool_reference","tool_name":"Grep"},{"type":1,"text":["a",{"b":"c","type":"zz"}],"source":[1,"xy"]},"loose",["n",{"type":"q","k":"vv"}],5,null]"#,
            r#"{"type":"text","text":"one block"}"#,
            r#"{"type":"image","source":{"data":"D","data":"EE","type":"x","other":"o"}}"#,
            r#"{"type":"text","text":"a","text":"bb"}"#,
            "42",
            "null",
        ];
        let mut lines: Vec<(String, bool)> = vec![
            (assistant.to_owned(), true),
            ("{}".to_owned(), true),
            (
                r#"{"message":"just text","toolUseResult":[1]}"#.to_owned(),
                true,
            ),
            (
                r#"{"message":{"content":{"type":"text"}}}"#.to_owned(),
                true,
            ),
            (r#"{"message":{"content":5}}"#.to_owned(), true),
            (
                r#"{"message":{"content":"a prompt"},"typ\u0065":"user"}"#.to_owned(),
                true,
            ),
            (
                r#"{"type":"user","x":1,"x":2,"message":{"zz":1,"zz":2}}"#.to_owned(),
                true,
            ),
            // serde's readers refuse these: a field of a derived struct written twice.
            (r#"{"type":"user","type":"assistant"}"#.to_owned(), false),
            (
                r#"{"type":"user","message":{"role":"a","role":"b"}}"#.to_owned(),
                false,
            ),
            (
                r#"{"message":{"usage":{"input_tokens":1,"input_tokens":2}}}"#.to_owned(),
                false,
            ),
            (
                r#"{"message":{"content":[{"type":"text","type":"tool_use"}]}}"#.to_owned(),
                false,
            ),
            (
                r#"{"toolUseResult":{"agentId":"a","agentId":"b"}}"#.to_owned(),
                false,
            ),
            (
                r#"{"uuid":"a","message":{},"message":{}}"#.to_owned(),
                false,
            ),
        ];
        for r in results {
            let content = format!(
                r#"[{{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":{r}}}]"#
            );
            lines.push((user(&content), true));
        }
        for (line, taken) in &lines {
            assert_eq!(on_tape(line), *taken, "{line}");
            assert_same(line.as_bytes());
        }
        // Not read off the tape: invalid UTF-8 (repaired), what is not one object.
        for line in [
            b"{\"type\":\"user\",\"message\":{\"content\":\"a\xffb\"}}".as_slice(),
            br#"{"type":"user","message":{"content":"\ud800"}}"#,
            b"[1]",
            br#"{"type":"user""#,
            b"",
        ] {
            assert_same(line);
        }
    }

    const KEYS: &[&str] = &["type", "text", "source", "data", "content", "input", "x"];
    const VALUES: &[&str] = &[
        "\"text\"",
        "\"image\"",
        "\"document\"",
        "\"tool_result\"",
        "\"abc\"",
        "\"\\u00e9\\n\"",
        "12",
        "-1.5",
        "true",
        "null",
        "[]",
    ];

    /// A value of depth at most `depth`: scalars, or arrays and objects of the keys the
    /// envelope's sizes look at.
    fn value(depth: u32) -> BoxedStrategy<String> {
        let leaf = proptest::sample::select(VALUES).prop_map(str::to_owned);
        if depth == 0 {
            return leaf.boxed();
        }
        let inner = value(depth - 1);
        prop_oneof![
            2 => leaf,
            1 => proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| format!("[{}]", v.join(","))),
            2 => proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..5)
                .prop_map(|m| {
                    let m: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", m.join(","))
                }),
        ]
        .boxed()
    }

    proptest! {
        /// Generated records: tool results whose content is any mix of the shapes the sizes
        /// read, tool inputs of any shape, keys repeated: the same envelope, tape or serde.
        #[test]
        fn generated_records_read_the_same(
            content in value(3),
            input in value(2),
            kind in proptest::sample::select(&["tool_result", "tool_use", "text", "image"][..]),
            repeat in proptest::sample::select(&["", ",\"is_error\":true", ",\"is_error\":1,\"is_error\":true", ",\"name\":\"N\""][..]),
        ) {
            let line = format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"{kind}","id":"i","tool_use_id":"t","content":{content},"input":{input}{repeat}}},{content}]}}}}"#
            );
            let (a, b) = both::<IgnoredAny>(line.as_bytes());
            prop_assert_eq!(a, b, "{}", line);
            let (a, b) = both::<serde_json::Value>(line.as_bytes());
            prop_assert_eq!(a, b, "{}", line);
        }
    }
}
