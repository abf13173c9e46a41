//! The envelope read field by field over a [`Source`], written once for both places a line is
//! read from: simd-json's tape ([`crate::envelope_tape`]) and the line's structural index
//! ([`crate::envelope_lazy`]). Which keys the envelope reads,
//! how a tool result's sizes are counted and where serde's derived readers would refuse a
//! record (a field written twice: `None`, and the line takes serde's path) are decided here
//! alone.
//!
//! `envelope_tape::tests`, `envelope_lazy::tests`, the corpus test in `skein-analysis` and the
//! `envelope` and `lazy` fuzz targets hold what this reads to what serde reads.

use std::borrow::Cow;

use crate::envelope::{Block, Content, Envelope, Message, ToolUseResult, Usage};
use crate::envelope_tape::FromTape;
use crate::fields;
use crate::lenient::{Count, Flag, ResultSize, Str};
use crate::source::{FromSource, Kind, Source, object_field, str_field};

/// The envelope of the line a source holds; `None` where serde's readers would refuse it, or
/// where the source cannot read a tool input into `I`.
impl<'a, I: FromTape<'a>> FromSource<'a> for Envelope<'a, I> {
    fn from_source<S: Source<'a>>(src: &S) -> Option<Self> {
        envelope_from(src)
    }
}

fn envelope_from<'a, S: Source<'a>, I: FromTape<'a>>(src: &S) -> Option<Envelope<'a, I>> {
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
    ] = fields!(
        src,
        S::ROOT,
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
    let flag = |at| Flag(src.flag(at));
    Some(Envelope {
        kind: str_field(src, kind),
        subtype: str_field(src, subtype),
        uuid: str_field(src, uuid),
        parent_uuid: str_field(src, parent_uuid),
        logical_parent_uuid: str_field(src, logical_parent_uuid),
        session_id: str_field(src, session_id),
        timestamp: str_field(src, timestamp),
        request_id: str_field(src, request_id),
        agent_id: detail(src, agent_id),
        team_name: str_field(src, team_name),
        cwd: detail(src, cwd),
        git_branch: detail(src, git_branch),
        is_sidechain: flag(is_sidechain),
        is_meta: flag(is_meta),
        is_compact_summary: flag(is_compact_summary),
        is_api_error: flag(is_api_error),
        message: object_field(src, message_at, |at| message(src, at))?,
        tool_use_result: object_field(src, tool_use_result, |at| {
            let [agent_id] = fields!(src, at, "agentId")?;
            Some(ToolUseResult {
                agent_id: detail(src, agent_id),
            })
        })?,
    })
}

fn message<'a, S: Source<'a>, I: FromTape<'a>>(src: &S, at: S::At) -> Option<Message<'a, I>> {
    let [id, role, model, content, usage, stop_reason] = fields!(
        src,
        at,
        "id",
        "role",
        "model",
        "content",
        "usage",
        "stop_reason"
    )?;
    Some(Message {
        id: str_field(src, id),
        role: detail(src, role),
        model: str_field(src, model),
        content: match content.map(|at| (at, src.kind(at))) {
            Some((at, Kind::String)) => Content::Text(text_field(src, Some(at))),
            Some((at, Kind::Array)) => {
                let mut blocks = Vec::new();
                for (_, b) in src.entries(at) {
                    blocks.push(match src.object(Some(b)) {
                        Some(b) => block(src, b)?,
                        None => Block::empty(),
                    });
                }
                Content::Blocks(blocks)
            }
            _ => Content::None,
        },
        usage: object_field(src, usage, |at| {
            let [input, output, creation, read] = fields!(
                src,
                at,
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens"
            )?;
            Some(Usage {
                input_tokens: Count(src.count(input)),
                output_tokens: Count(src.count(output)),
                cache_creation_input_tokens: Count(src.count(creation)),
                cache_read_input_tokens: Count(src.count(read)),
            })
        })?,
        stop_reason: detail(src, stop_reason),
    })
}

fn block<'a, S: Source<'a>, I: FromTape<'a>>(src: &S, at: S::At) -> Option<Block<'a, I>> {
    let [kind, id, name, input, tool_use_id, is_error, content, body] = fields!(
        src,
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
        kind: str_field(src, kind),
        id: str_field(src, id),
        name: detail(src, name),
        // `Option<I>`: absent or `null` is `None`.
        input: match src.present(input) {
            Some(at) => Some(src.input(at)?),
            None => None,
        },
        tool_use_id: str_field(src, tool_use_id),
        is_error: Flag(src.flag(is_error)),
        content: match content {
            Some(at) if src.details() => result_size(src, at),
            _ => ResultSize::default(),
        },
        text: text_field(src, body),
    })
}

/// A field the analysis does not read, read where the source reads them ([`Source::details`]).
fn detail<'a, S: Source<'a>>(src: &S, at: Option<S::At>) -> Str<'a> {
    str_if(src.details(), src, at)
}

/// A prompt's or a block's text, read where the source reads texts ([`Source::texts`]).
fn text_field<'a, S: Source<'a>>(src: &S, at: Option<S::At>) -> Str<'a> {
    str_if(src.texts(), src, at)
}

/// The string field at `at` where `read`, else empty.
fn str_if<'a, S: Source<'a>>(read: bool, src: &S, at: Option<S::At>) -> Str<'a> {
    if read {
        str_field(src, at)
    } else {
        Str::default()
    }
}

/// A string's bytes as [`crate::lenient::TextSize`] counts them: every string inside, object
/// keys and the values of `type` keys excluded.
fn text_size<'a, S: Source<'a>>(src: &S, at: S::At) -> u64 {
    match src.kind(at) {
        Kind::String => src.str_len(at) as u64,
        Kind::Array => src.entries(at).map(|(_, v)| text_size(src, v)).sum(),
        Kind::Object => src
            .entries(at)
            .filter(|(k, _)| *k != Some(b"type".as_slice()))
            .map(|(_, v)| text_size(src, v))
            .sum(),
        _ => 0,
    }
}

/// A `tool_result`'s `content` as [`ResultSize`] reads it.
fn result_size<'a, S: Source<'a>>(src: &S, at: S::At) -> ResultSize {
    match src.kind(at) {
        Kind::String => ResultSize {
            text: src.str_len(at) as u64,
            ..ResultSize::default()
        },
        Kind::Array => {
            let mut n = ResultSize::default();
            for (_, b) in src.entries(at) {
                n.add(block_size(src, b));
            }
            n
        }
        Kind::Object => block_size(src, at),
        _ => ResultSize::default(),
    }
}

/// One element of a `tool_result`'s content array, as `lenient::BlockSize` reads it.
fn block_size<'a, S: Source<'a>>(src: &S, at: S::At) -> ResultSize {
    match src.kind(at) {
        Kind::String => ResultSize {
            other: src.str_len(at) as u64,
            ..ResultSize::default()
        },
        Kind::Array => ResultSize {
            other: src.entries(at).map(|(_, v)| text_size(src, v)).sum(),
            ..ResultSize::default()
        },
        Kind::Object => {
            let mut kind: Option<Cow<'_, str>> = None;
            let (mut text, mut data, mut rest) = (0, 0, 0);
            for (key, v) in src.entries(at) {
                match key {
                    Some(b"type") => kind = src.str(Some(v)),
                    Some(b"text") => text += text_size(src, v),
                    Some(b"source") => {
                        let (d, r) = source_size(src, v);
                        data += d;
                        rest += r;
                    }
                    _ => rest += text_size(src, v),
                }
            }
            ResultSize::of_block(kind.as_deref(), text, data, rest)
        }
        _ => ResultSize::default(),
    }
}

/// A media block's `source` as `lenient::SourceSize` reads it: (its `data`, every other string).
fn source_size<'a, S: Source<'a>>(src: &S, at: S::At) -> (u64, u64) {
    match src.kind(at) {
        Kind::Object => {
            let (mut data, mut rest) = (0, 0);
            for (key, v) in src.entries(at) {
                match key {
                    Some(b"data") => data += text_size(src, v),
                    Some(b"type") => {}
                    _ => rest += text_size(src, v),
                }
            }
            (data, rest)
        }
        Kind::String => (0, src.str_len(at) as u64),
        Kind::Array => (0, src.entries(at).map(|(_, v)| text_size(src, v)).sum()),
        _ => (0, 0),
    }
}
