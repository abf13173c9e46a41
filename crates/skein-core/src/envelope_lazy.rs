//! The envelope read off a line's structural index ([`crate::lazy`]): the same [`Envelope`]
//! as [`crate::envelope_tape`] reads off simd-json's tape, field by field, for a reader that
//! skips tool inputs. Where the tape's reader gives up (a field of a derived struct written
//! twice), so does this one.
//!
//! `envelope_lazy::tests`, the corpus test in `skein-core`'s `tests/` and the `lazy` fuzz
//! target hold the two readers to the same envelope: a change to one is made in both.

use std::borrow::Cow;

use crate::doc_fields;
use crate::envelope::{Block, Content, Envelope, Message, ToolUseResult, Usage};
use crate::envelope_tape::FromTape;
use crate::lazy::{At, Doc, Kind};
use crate::lenient::{Count, Flag, Obj, ResultSize, Str};

fn s<'a>(doc: &Doc<'a, '_>, at: Option<At>) -> Str<'a> {
    Str(doc.str(at))
}

fn object<T>(
    doc: &Doc<'_, '_>,
    at: Option<At>,
    read: impl FnOnce(At) -> Option<T>,
) -> Option<Obj<T>> {
    Some(Obj(match doc.object(at) {
        Some(at) => Some(read(at)?),
        None => None,
    }))
}

/// The envelope of the checked document `doc`, tool inputs skipped (`I::skipped`); `None`
/// where the tape's reader gives up too, or where `I` is not skipped.
pub(crate) fn envelope_from_doc<'a, I: FromTape<'a>>(doc: &Doc<'a, '_>) -> Option<Envelope<'a, I>> {
    let [
        kind,
        subtype,
        uuid,
        parent_uuid,
        logical_parent_uuid,
        session_id,
        timestamp,
        request_id,
        agent_id,
        team_name,
        cwd,
        git_branch,
        is_sidechain,
        is_meta,
        is_compact_summary,
        is_api_error,
        message_at,
        tool_use_result,
    ] = doc_fields!(
        doc,
        Doc::ROOT,
        "type",
        "subtype",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sessionId",
        "timestamp",
        "requestId",
        "agentId",
        "teamName",
        "cwd",
        "gitBranch",
        "isSidechain",
        "isMeta",
        "isCompactSummary",
        "isApiErrorMessage",
        "message",
        "toolUseResult",
    )?;
    let flag = |at| Flag(doc.flag(at));
    Some(Envelope {
        kind: s(doc, kind),
        subtype: s(doc, subtype),
        uuid: s(doc, uuid),
        parent_uuid: s(doc, parent_uuid),
        logical_parent_uuid: s(doc, logical_parent_uuid),
        session_id: s(doc, session_id),
        timestamp: s(doc, timestamp),
        request_id: s(doc, request_id),
        agent_id: s(doc, agent_id),
        team_name: s(doc, team_name),
        cwd: s(doc, cwd),
        git_branch: s(doc, git_branch),
        is_sidechain: flag(is_sidechain),
        is_meta: flag(is_meta),
        is_compact_summary: flag(is_compact_summary),
        is_api_error: flag(is_api_error),
        message: object(doc, message_at, |at| message(doc, at))?,
        tool_use_result: object(doc, tool_use_result, |at| {
            let [agent_id] = doc_fields!(doc, at, "agentId")?;
            Some(ToolUseResult {
                agent_id: s(doc, agent_id),
            })
        })?,
    })
}

fn message<'a, I: FromTape<'a>>(doc: &Doc<'a, '_>, at: At) -> Option<Message<'a, I>> {
    let [id, role, model, content, usage, stop_reason] = doc_fields!(
        doc,
        at,
        "id",
        "role",
        "model",
        "content",
        "usage",
        "stop_reason"
    )?;
    Some(Message {
        id: s(doc, id),
        role: s(doc, role),
        model: s(doc, model),
        content: match content.map(|at| (at, doc.kind(at))) {
            Some((at, Kind::String)) => Content::Text(Str(doc.str(Some(at)))),
            Some((at, Kind::Array)) => {
                let mut blocks = Vec::new();
                for (_, b) in doc.entries(at) {
                    blocks.push(match doc.object(Some(b)) {
                        Some(b) => block(doc, b)?,
                        None => Block::empty(),
                    });
                }
                Content::Blocks(blocks)
            }
            _ => Content::None,
        },
        usage: object(doc, usage, |at| {
            let [input, output, creation, read] = doc_fields!(
                doc,
                at,
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens"
            )?;
            Some(Usage {
                input_tokens: Count(doc.count(input)),
                output_tokens: Count(doc.count(output)),
                cache_creation_input_tokens: Count(doc.count(creation)),
                cache_read_input_tokens: Count(doc.count(read)),
            })
        })?,
        stop_reason: s(doc, stop_reason),
    })
}

fn block<'a, I: FromTape<'a>>(doc: &Doc<'a, '_>, at: At) -> Option<Block<'a, I>> {
    let [kind, id, name, input, tool_use_id, is_error, content, body] = doc_fields!(
        doc,
        at,
        "type",
        "id",
        "name",
        "input",
        "tool_use_id",
        "is_error",
        "content",
        "text"
    )?;
    Some(Block {
        kind: s(doc, kind),
        id: s(doc, id),
        name: s(doc, name),
        input: match doc.present(input) {
            Some(_) => Some(I::skipped()?),
            None => None,
        },
        tool_use_id: s(doc, tool_use_id),
        is_error: Flag(doc.flag(is_error)),
        content: content.map_or_else(ResultSize::default, |at| result_size(doc, at)),
        text: s(doc, body),
    })
}

/// A string's bytes as [`crate::lenient::TextSize`] counts them (as the tape's `text_size`).
fn text_size(doc: &Doc<'_, '_>, at: At) -> u64 {
    match doc.kind(at) {
        Kind::String => doc.str_len(at) as u64,
        Kind::Array => doc.entries(at).map(|(_, v)| text_size(doc, v)).sum(),
        Kind::Object => doc
            .entries(at)
            .filter(|(k, _)| *k != Some(b"type".as_slice()))
            .map(|(_, v)| text_size(doc, v))
            .sum(),
        _ => 0,
    }
}

/// A `tool_result`'s `content` as [`ResultSize`] reads it.
fn result_size(doc: &Doc<'_, '_>, at: At) -> ResultSize {
    match doc.kind(at) {
        Kind::String => ResultSize {
            text: doc.str_len(at) as u64,
            ..ResultSize::default()
        },
        Kind::Array => {
            let mut n = ResultSize::default();
            for (_, b) in doc.entries(at) {
                n.add(block_size(doc, b));
            }
            n
        }
        Kind::Object => block_size(doc, at),
        _ => ResultSize::default(),
    }
}

/// One element of a `tool_result`'s content array, as `lenient::BlockSize` reads it.
fn block_size(doc: &Doc<'_, '_>, at: At) -> ResultSize {
    match doc.kind(at) {
        Kind::String => ResultSize {
            other: doc.str_len(at) as u64,
            ..ResultSize::default()
        },
        Kind::Array => ResultSize {
            other: doc.entries(at).map(|(_, v)| text_size(doc, v)).sum(),
            ..ResultSize::default()
        },
        Kind::Object => {
            let mut kind: Option<Cow<'_, str>> = None;
            let (mut text, mut data, mut rest) = (0, 0, 0);
            for (key, v) in doc.entries(at) {
                match key {
                    Some(b"type") => kind = doc.str(Some(v)),
                    Some(b"text") => text += text_size(doc, v),
                    Some(b"source") => {
                        let (d, r) = source_size(doc, v);
                        data += d;
                        rest += r;
                    }
                    _ => rest += text_size(doc, v),
                }
            }
            ResultSize::of_block(kind.as_deref(), text, data, rest)
        }
        _ => ResultSize::default(),
    }
}

/// A media block's `source` as `lenient::SourceSize` reads it: (its `data`, every other string).
fn source_size(doc: &Doc<'_, '_>, at: At) -> (u64, u64) {
    match doc.kind(at) {
        Kind::Object => {
            let (mut data, mut rest) = (0, 0);
            for (key, v) in doc.entries(at) {
                match key {
                    Some(b"data") => data += text_size(doc, v),
                    Some(b"type") => {}
                    _ => rest += text_size(doc, v),
                }
            }
            (data, rest)
        }
        Kind::String => (0, doc.str_len(at) as u64),
        Kind::Array => (0, doc.entries(at).map(|(_, v)| text_size(doc, v)).sum()),
        _ => (0, 0),
    }
}

/// The envelope of `line` off its index, as `Debug` text, or `None` where the index does not
/// vouch for the line or the reader gives up; what the tests and the `lazy` fuzz target hold
/// to the envelope serde reads ([`crate::Parser::parse_into`]).
pub fn off_index(line: &[u8]) -> Option<String> {
    let mut lazy = crate::lazy::Lazy::new();
    let doc = lazy.document(line)?;
    envelope_from_doc::<serde::de::IgnoredAny>(&doc).map(|e| format!("{e:?} false"))
}

#[cfg(test)]
mod tests {
    use serde::de::IgnoredAny;

    use super::*;
    use crate::Parser;

    /// The envelope serde reads (`both_ways`' second half).
    fn by_serde(line: &[u8]) -> String {
        crate::envelope_tape::both_ways::<IgnoredAny>(&mut Parser::new(), line).1
    }

    #[test]
    fn the_index_reads_what_serde_reads() {
        let lines = [
            r#"{"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","isSidechain":true,"isMeta":false,"isCompactSummary":1,"message":{"id":"m","role":"assistant","model":"claude-x","stop_reason":"end_turn","usage":{"input_tokens":1.9,"output_tokens":-2,"cache_creation_input_tokens":"3","cache_read_input_tokens":12},"content":[{"type":"text","text":"say \"hi\"\n"},{"type":"tool_use","id":"t1","name":"Task","input":{"o":{"k":"v","k":"w"}}},{"type":"tool_use","id":"t2","name":"Bash","input":null},7,"s",null,[1]]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a\tb\\c"},{"type":"image","source":{"type":"base64","data":"AA\/A","x":"yy"}},{"type":"document","source":"raw","text":"t"},"loose",["n",{"type":"q","k":"v\"v"}],5,null]}]},"toolUseResult":{"agentId":"a9","other":[1,2]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"plain \"quoted\" text"}]}}"#,
            r#"{"message":"just text","toolUseResult":[1]}"#,
            r#"{"message":{"content":"a prompt with a \\ backslash"},"cwd":"C:\\work"}"#,
            r#"{"type":"user","x":1,"x":2,"message":{"zz":1,"zz":2}}"#,
            "{ \"type\" : \"user\" ,\t\"message\" : { \"content\" : [ ] } }",
            "{}",
        ];
        for line in lines {
            let lazy = off_index(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
            assert_eq!(lazy, by_serde(line.as_bytes()), "{line}");
        }
        // Where serde's derived readers refuse a record (a field written twice), the index's
        // reader gives up too, and the line takes serde's path.
        for line in [
            r#"{"type":"user","type":"assistant"}"#,
            r#"{"message":{"usage":{"input_tokens":1,"input_tokens":2}}}"#,
            r#"{"message":{"content":[{"type":"text","type":"tool_use"}]}}"#,
            r#"{"toolUseResult":{"agentId":"a","agentId":"b"}}"#,
        ] {
            assert_eq!(off_index(line.as_bytes()), None, "{line}");
        }
    }
}
