//! What the usage scan reads of a line ([`RawLine`]), read by serde (a line parsed whole) or
//! through [`skein_core::source`] (off the line's structural index, or off simd-json's tape
//! after the skim), the same every way: the source reader takes each field as the lenient type
//! serde reads it into does, and gives up (the caller then parses the line whole) wherever
//! serde's reader would refuse the line.

use serde::Deserialize;
use serde::de::IgnoredAny;
use skein_core::lenient::{Count, Flag, Obj, Str};
use skein_core::source::{FromSource, Source as JsonSource, object_field, str_field};
use skein_core::{Skim, fields};

use super::Tokens;

/// What a usage line keeps before it is parsed: the long string values of every key the scan
/// does not read are dropped ([`Skim::all_but`]; texts, thinking, tool inputs). A key the scan
/// reads a string of must be named here: `the_skim_changes_no_scan` compares the scan with
/// and without the skim on the corpus.
pub(super) const SKIM: Skim = Skim {
    keys: &[
        "type",
        "timestamp",
        "sessionId",
        "requestId",
        "isSidechain",
        "message",
        "id",
        "model",
        "usage",
        "speed",
        "data",
        "agentId",
    ],
    all_but: true,
    min_len: 64,
};

/// A record with usage; `D` is what its `data` holds: a progress record's nested record at
/// the top level, nothing read inside that nested record.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawLine<'a, D = Obj<RawData<'a>>> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Str<'a>,
    #[serde(borrow)]
    pub(super) timestamp: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    pub(super) session_id: Str<'a>,
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: Str<'a>,
    #[serde(rename = "isSidechain")]
    pub(super) is_sidechain: Flag,
    #[serde(borrow)]
    pub(super) message: Obj<RawMessage<'a>>,
    pub(super) data: D,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawData<'a> {
    #[serde(borrow)]
    pub(super) message: Obj<RawLine<'a, IgnoredAny>>,
    #[serde(rename = "agentId", borrow)]
    pub(super) agent_id: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawMessage<'a> {
    #[serde(borrow)]
    pub(super) id: Str<'a>,
    #[serde(borrow)]
    pub(super) model: Str<'a>,
    #[serde(borrow)]
    pub(super) usage: Obj<RawUsage<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawUsage<'a> {
    pub(super) input_tokens: Count,
    pub(super) output_tokens: Count,
    pub(super) cache_creation_input_tokens: Count,
    pub(super) cache_read_input_tokens: Count,
    pub(super) cache_creation: Obj<RawCacheCreation>,
    #[serde(borrow)]
    pub(super) speed: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawCacheCreation {
    pub(super) ephemeral_5m_input_tokens: Option<Count>,
    pub(super) ephemeral_1h_input_tokens: Option<Count>,
}

impl RawUsage<'_> {
    pub(super) fn tokens(&self) -> Tokens {
        let (m5, h1) = match &self.cache_creation.0 {
            Some(c)
                if c.ephemeral_5m_input_tokens.is_some()
                    || c.ephemeral_1h_input_tokens.is_some() =>
            {
                (
                    c.ephemeral_5m_input_tokens.map_or(0, |n| n.0),
                    c.ephemeral_1h_input_tokens.map_or(0, |n| n.0),
                )
            }
            _ => (self.cache_creation_input_tokens.0, 0),
        };
        Tokens {
            input: self.input_tokens.0,
            output: self.output_tokens.0,
            cache_creation: m5.saturating_add(h1),
            cache_creation_5m: m5,
            cache_creation_1h: h1,
            cache_read: self.cache_read_input_tokens.0,
        }
    }
}

/// A record read as serde reads it into [`RawLine`] (the same lenient fields), off the line's
/// index or its tape ([`skein_core::source`]); `None` where serde's reader would refuse the
/// record (a key it reads written twice in one object), which the caller then parses the slow
/// way.
impl<'a> FromSource<'a> for RawLine<'a> {
    fn from_source<S: JsonSource<'a>>(src: &S) -> Option<Self> {
        line_from(src, S::ROOT, |at| {
            object_field(src, at, |at| {
                let [message, agent_id] = fields!(src, at, "message", "agentId")?;
                Some(RawData {
                    message: object_field(src, message, |m| {
                        line_from(src, m, |_| Some(IgnoredAny))
                    })?,
                    agent_id: str_field(src, agent_id),
                })
            })
        })
    }
}

/// The record at `at`, its `data` read by `data`.
fn line_from<'a, S: JsonSource<'a>, D>(
    src: &S,
    at: S::At,
    data: impl FnOnce(Option<S::At>) -> Option<D>,
) -> Option<RawLine<'a, D>> {
    let [
        kind,
        timestamp,
        session_id,
        request_id,
        sidechain,
        message,
        data_at,
    ] = fields!(
        src,
        at,
        "type",
        "timestamp",
        "sessionId",
        "requestId",
        "isSidechain",
        "message",
        "data",
    )?;
    let message = object_field(src, message, |at| message_from(src, at))?;
    Some(RawLine {
        kind: str_field(src, kind),
        timestamp: str_field(src, timestamp),
        session_id: str_field(src, session_id),
        request_id: str_field(src, request_id),
        is_sidechain: Flag(src.flag(sidechain)),
        message,
        data: data(data_at)?,
    })
}

fn message_from<'a, S: JsonSource<'a>>(src: &S, at: S::At) -> Option<RawMessage<'a>> {
    let [id, model, usage] = fields!(src, at, "id", "model", "usage")?;
    let usage = object_field(src, usage, |at| usage_from(src, at))?;
    Some(RawMessage {
        id: str_field(src, id),
        model: str_field(src, model),
        usage,
    })
}

fn usage_from<'a, S: JsonSource<'a>>(src: &S, at: S::At) -> Option<RawUsage<'a>> {
    let [input, output, creation, read, cache_creation, speed] = fields!(
        src,
        at,
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cache_creation",
        "speed"
    )?;
    let cache_creation = object_field(src, cache_creation, |c| {
        let [m5, h1] = fields!(
            src,
            c,
            "ephemeral_5m_input_tokens",
            "ephemeral_1h_input_tokens"
        )?;
        // `Option<Count>`: absent or `null` is `None`, anything else a count.
        let optional = |at| src.present(at).map(|at| Count(src.count(Some(at))));
        Some(RawCacheCreation {
            ephemeral_5m_input_tokens: optional(m5),
            ephemeral_1h_input_tokens: optional(h1),
        })
    })?;
    Some(RawUsage {
        input_tokens: Count(src.count(input)),
        output_tokens: Count(src.count(output)),
        cache_creation_input_tokens: Count(src.count(creation)),
        cache_read_input_tokens: Count(src.count(read)),
        cache_creation,
        speed: str_field(src, speed),
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use skein_core::SliceLines;

    use super::super::{SessionScan, Source, UsageScanner};
    use super::*;

    fn scanned(scanner: &mut UsageScanner, data: &[u8]) -> SessionScan {
        let mut scan = SessionScan::default();
        scanner
            .scan_lines(SliceLines::new(data), "s1", Source::Main, &mut scan)
            .expect("in memory");
        scan
    }

    /// The scan of `data` as the command reads it (off the index where it vouches for a line,
    /// else the skimmed tape) and parsing every line whole, for the caller to compare; the scan
    /// off the skimmed tape alone is asserted equal to the whole one here.
    fn both(data: &[u8]) -> (SessionScan, SessionScan) {
        let (read, whole) = (
            scanned(&mut UsageScanner::new(), data),
            scanned(&mut UsageScanner::whole(), data),
        );
        let tape = scanned(&mut UsageScanner::tape_only(), data);
        assert_eq!(
            tape,
            whole,
            "off the tape: {}",
            String::from_utf8_lossy(data)
        );
        (read, whole)
    }

    /// Whether the tape reader takes `line` (skimmed) itself, without the slow path.
    fn on_tape(line: &str) -> bool {
        let mut parser = skein_core::Parser::new();
        parser
            .parse_tape(line.as_bytes(), Some(SKIM), |nodes| {
                RawLine::from_source(&skein_core::tape::Tape(nodes)).is_some()
            })
            .unwrap_or(false)
    }

    /// Whether `line` is read off its index, without the tape.
    fn on_index(line: &str) -> bool {
        let mut lazy = skein_core::lazy::Lazy::new();
        lazy.document(line.as_bytes())
            .is_some_and(|doc| RawLine::from_source(&doc).is_some())
    }

    /// A long string body: a line with it is skimmed.
    fn long() -> String {
        "words \\\"quoted\\\" \\u00e9 ".repeat(150)
    }

    fn assistant(message: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","sessionId":"s1","requestId":"r1","message":{message}{extra}}}"#
        )
    }

    fn usage_message(usage: &str) -> String {
        format!(r#"{{"id":"m1","model":"claude-x","usage":{usage}}}"#)
    }

    /// Lines of every shape the lenient fields take, and the lines serde's reader refuses: the
    /// same scan off the index (where it vouches for a line), off the tape and parsed whole,
    /// line by line and all together.
    #[test]
    fn the_index_and_the_tape_read_what_serde_reads() {
        let long = long();
        let base = r#"{"input_tokens":10,"output_tokens":2,"cache_creation_input_tokens":3,"cache_read_input_tokens":4}"#;
        let text = format!(r#","content":[{{"type":"text","text":"{long}"}}]"#);
        let counts = [
            r#"{"input_tokens":12.9,"output_tokens":-3,"cache_read_input_tokens":1e30,"cache_creation_input_tokens":-2.5}"#,
            r#"{"input_tokens":"12","output_tokens":true,"cache_read_input_tokens":null,"cache_creation_input_tokens":[1]}"#,
            r#"{"input_tokens":{"a":1},"output_tokens":18446744073709551615,"speed":"fast"}"#,
            r#"{"input_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":5,"ephemeral_1h_input_tokens":null}}"#,
            r#"{"input_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":"x"},"speed":1}"#,
            r#"{"input_tokens":1,"cache_creation":{},"cache_creation_input_tokens":9}"#,
            r#"{"input_tokens":1,"cache_creation":"much","cache_creation_input_tokens":9}"#,
            r#"{"input_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":2.7}}"#,
            r#"{"cache_creation_input_tokens":9,"cache_creation":{"ephemeral_5m_input_tokens":null,"ephemeral_1h_input_tokens":null}}"#,
            "[1,2]",
            "\"usage\"",
        ];
        let model = "m".repeat(100);
        let mut lines = vec![
            // Read off the tape.
            (assistant(&usage_message(base), ""), true),
            (assistant(&usage_message(base), &text), true),
            (
                assistant(
                    &format!(
                        r#"{{"id":"m9","model":"claude-{model}","usage":{base},"content":"{long}"}}"#
                    ),
                    &format!(r#","requestId":"{model}""#).replacen("requestId", "other", 1),
                ),
                true,
            ),
            (
                format!(
                    r#"{{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","sessionId":"s2","requestId":"{model}","isSidechain":true,"message":{{"id":"m3","model":"<synthetic>","usage":{base}}}}}"#
                ),
                true,
            ),
            (
                assistant(&usage_message(base), r#","isSidechain":"true","x":1,"x":2"#),
                true,
            ),
            (
                format!(
                    r#"{{"typ\u0065":"assistant","timestamp":"2026-01-01T00:01:00Z","message":{{"id":"m4","usag\u0065":{base}}}}}"#
                ),
                true,
            ),
            (
                format!(
                    r#"{{"type":"progress","timestamp":"2026-01-01T00:02:00Z","data":{{"agentId":"a1","message":{{"type":"assistant","timestamp":"2026-01-01T00:03:00Z","requestId":"r2","data":[1],"message":{}}},"text":"{long}"}}}}"#,
                    usage_message(base)
                ),
                true,
            ),
            (
                r#"{"type":"progress","data":"usage","timestamp":"2026-01-01T00:00:00Z"}"#.into(),
                true,
            ),
            (
                r#"{"type":"assistant","message":"usage","timestamp":5}"#.into(),
                true,
            ),
            // serde's reader refuses these (a key it reads written twice): parsed whole.
            (assistant(&usage_message(base), r#","type":"user""#), false),
            (
                assistant(
                    &usage_message(base),
                    &format!(r#","message":{}"#, usage_message(base)),
                ),
                false,
            ),
            (
                assistant(
                    r#"{"id":"m1","model":"claude-x","usage":{"input_tokens":1,"input_tokens":7}}"#,
                    "",
                ),
                false,
            ),
            (
                assistant(
                    &usage_message(
                        r#"{"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_5m_input_tokens":2}}"#,
                    ),
                    "",
                ),
                false,
            ),
            (
                format!(
                    r#"{{"type":"progress","timestamp":"2026-01-01T00:02:00Z","data":{{"agentId":"a1","agentId":"a2","message":{{"type":"assistant","timestamp":"2026-01-01T00:03:00Z","message":{}}}}}}}"#,
                    usage_message(base)
                ),
                false,
            ),
            (
                format!(
                    r#"{{"type":"progress","timestamp":"2026-01-01T00:02:00Z","data":{{"message":{{"type":"assistant","data":1,"data":2,"timestamp":"2026-01-01T00:03:00Z","message":{}}}}}}}"#,
                    usage_message(base)
                ),
                false,
            ),
        ];
        for usage in counts {
            lines.push((assistant(&usage_message(usage), &text), true));
        }
        // Not read off the tape at all: invalid UTF-8, a lone surrogate (repaired), what is
        // not one object.
        let others = [
            format!("{}\u{0}", assistant(&usage_message(base), &text)),
            assistant(&usage_message(base), r#","text":"\ud800 usage""#),
            r#"["usage"]"#.to_owned(),
            r#"{"type":"assistant","usage":"#.to_owned(),
            format!("{} {{}}", assistant(&usage_message(base), "")),
        ];
        // Each line also with its `\u00e9` escapes written as the character: the index does not
        // vouch for a `\u` escape, and the line is read off it.
        let plain: Vec<(String, bool)> = lines
            .iter()
            .filter(|(line, _)| line.contains("\\u00e9"))
            .map(|(line, taken)| (line.replace("\\u00e9", "\u{e9}"), *taken))
            .collect();
        lines.extend(plain);
        let (mut all, mut counted, mut indexed) = (Vec::new(), 0, 0);
        for (line, taken) in &lines {
            assert_eq!(on_tape(line), *taken, "{line}");
            // The index reads what the tape reads where it vouches for the line (not for an
            // exponent, a long number or a `\u` escape), and refuses what the tape refuses.
            let off_index = on_index(line);
            assert!(!off_index || *taken, "{line}");
            indexed += usize::from(off_index);
            let (fast, whole) = both(line.as_bytes());
            assert_eq!(fast, whole, "{line}");
            counted += usize::from(!fast.copies.is_empty());
            all.extend_from_slice(line.as_bytes());
            all.push(b'\n');
        }
        for line in &others {
            let mut bytes = line.clone().into_bytes();
            for b in &mut bytes {
                if *b == 0 {
                    *b = 0xff;
                }
            }
            let (fast, whole) = both(&bytes);
            assert_eq!(fast, whole, "{line}");
            all.extend_from_slice(&bytes);
            all.push(b'\n');
        }
        let (fast, whole) = both(&all);
        assert_eq!(fast, whole);
        // (Most lines have usage that counts; the others test what has none.)
        assert!(counted >= 15, "{counted} of the lines counted");
        assert!(fast.invalid_lines >= 3, "{}", fast.invalid_lines);
        assert!(indexed >= 15, "{indexed} of the lines read off the index");
    }

    /// The corpus, file by file: the same scan off the index, off the tape and parsed whole.
    #[test]
    #[allow(clippy::disallowed_methods, reason = "the test reads the corpus")]
    fn the_skim_changes_no_scan() {
        let Some((_, files)) = skein_testkit::corpus_files() else {
            return;
        };
        let (mut fast, mut tape, mut whole) = (
            UsageScanner::new(),
            UsageScanner::tape_only(),
            UsageScanner::whole(),
        );
        let mut copies = 0;
        for f in &files {
            let data = std::fs::read(f).expect("read a corpus file");
            let a = scanned(&mut fast, &data);
            let b = scanned(&mut whole, &data);
            assert_eq!(a, b, "{}", f.display());
            assert_eq!(scanned(&mut tape, &data), b, "{}", f.display());
            copies += a.copies.len();
        }
        assert!(copies > 1000, "{copies} request copies in the corpus");
    }

    /// A generated object: each of `members` present or not (its value drawn from its
    /// strategy), sometimes one of them twice, in any order.
    fn object(members: Vec<BoxedStrategy<(&'static str, String)>>) -> BoxedStrategy<String> {
        let again = proptest::strategy::Union::new(members.clone());
        let present: Vec<_> = members
            .into_iter()
            .map(|m| proptest::option::weighted(0.8, m))
            .collect();
        (present, proptest::option::weighted(0.1, again))
            .prop_map(|(present, again)| {
                present
                    .into_iter()
                    .flatten()
                    .chain(again)
                    .collect::<Vec<_>>()
            })
            .prop_shuffle()
            .prop_map(|m| {
                let m: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", m.join(","))
            })
            .boxed()
    }

    fn member(
        key: &'static str,
        value: impl Strategy<Value = String> + 'static,
    ) -> BoxedStrategy<(&'static str, String)> {
        (Just(key), value).boxed()
    }

    fn scalar(list: &'static [&'static str]) -> impl Strategy<Value = String> + Clone {
        proptest::sample::select(list).prop_map(str::to_owned)
    }

    const COUNTS: &[&str] = &[
        "10", "-4", "2.9", "1e30", "\"7\"", "null", "true", "[1]", "{}",
    ];
    const STRINGS: &[&str] = &["\"a\"", "\"LONG\"", "5", "null", "{}"];
    const OTHER: &[&str] = &[
        "\"LONG\"",
        "[\"LONG\",{\"text\":\"LONG\"}]",
        "{\"text\":\"LONG\"}",
    ];

    fn usage() -> BoxedStrategy<String> {
        let count = scalar(COUNTS);
        let cache = object(vec![
            member("ephemeral_5m_input_tokens", count.clone()),
            member("ephemeral_1h_input_tokens", count.clone()),
        ]);
        object(vec![
            member("input_tokens", count.clone()),
            member("output_tokens", count.clone()),
            member("cache_creation_input_tokens", count.clone()),
            member("cache_read_input_tokens", count),
            member(
                "cache_creation",
                prop_oneof![4 => cache, 1 => scalar(COUNTS).boxed()],
            ),
            member("speed", scalar(&["\"fast\"", "\"standard\"", "1"])),
        ])
    }

    fn message() -> BoxedStrategy<String> {
        object(vec![
            member("id", scalar(&["\"m1\"", "\"m2\"", "\"LONG\"", "3"])),
            member(
                "model",
                scalar(&["\"claude-x\"", "\"<synthetic>\"", "\"LONG\"", "null"]),
            ),
            member(
                "usage",
                prop_oneof![4 => usage(), 1 => scalar(COUNTS).boxed()],
            ),
            member("content", scalar(OTHER)),
        ])
    }

    fn record(data: impl Strategy<Value = String> + 'static) -> BoxedStrategy<String> {
        object(vec![
            member(
                "type",
                scalar(&[
                    "\"assistant\"",
                    "\"assistant\"",
                    "\"progress\"",
                    "\"user\"",
                    "\"LONG\"",
                    "1",
                ]),
            ),
            member(
                "timestamp",
                scalar(&[
                    "\"2026-01-01T00:00:00Z\"",
                    "\"2026-01-02T10:00:00.5Z\"",
                    "\"2026-01-03T00:00:00+02:00\"",
                    "\"LONG\"",
                    "5",
                ]),
            ),
            member("sessionId", scalar(&["\"s1\"", "\"s2\"", "null"])),
            member("requestId", scalar(&["\"r1\"", "\"r2\"", "\"LONG\""])),
            member("isSidechain", scalar(&["true", "false", "\"true\""])),
            member(
                "message",
                prop_oneof![4 => message(), 1 => scalar(STRINGS).boxed()],
            ),
            member("data", data),
            member("typ\\u0065", scalar(&["\"assistant\""])),
            member("toolUseResult", scalar(OTHER)),
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Generated records of every shape the fields take (counts of every type, objects
        /// where strings belong and back, keys repeated, nested progress records, long values
        /// the skim drops): the same scan off the index, off the tape and parsed whole.
        #[test]
        fn the_index_and_the_tape_read_generated_records_as_serde_does(
            lines in proptest::collection::vec(
                record(prop_oneof![
                    3 => object(vec![
                        member("message", record(scalar(COUNTS))),
                        member("agentId", scalar(STRINGS)),
                    ]),
                    1 => scalar(OTHER).boxed(),
                ]),
                1..8,
            ),
        ) {
            let long = long();
            let text: String = lines
                .iter()
                .map(|l| {
                    // Every line mentions "usage" (the prefilter) and is long (the skim).
                    let l = l.replace("LONG", &long);
                    let pad = format!("\"pad\":\"usage {long}\"");
                    if l == "{}" { format!("{{{pad}}}\n") } else { format!("{},{pad}}}\n", &l[..l.len() - 1]) }
                })
                .collect();
            let (fast, whole) = both(text.as_bytes());
            prop_assert_eq!(fast, whole, "{}", text);
            // And without `\u` escapes, which the index leaves to the tape: read off the index.
            let plain = text.replace("\\u00e9", "\u{e9}");
            let (fast, whole) = both(plain.as_bytes());
            prop_assert_eq!(fast, whole, "{}", plain);
        }
    }
}
