//! The envelope read field by field, written once for both places a line is read from:
//! simd-json's tape ([`crate::envelope_tape`]) and the line's structural index
//! ([`crate::envelope_lazy`]). Each implements [`Source`]: what kind of value is where, the
//! strings, the members of a container, a count, a tool input. Which keys the envelope reads,
//! how a tool result's sizes are counted and where serde's derived readers would refuse a
//! record (a field written twice: `None`, and the line takes serde's path) are decided here
//! alone.
//!
//! `envelope_tape::tests`, `envelope_lazy::tests`, the corpus test in `skein-analysis` and the
//! `envelope` and `lazy` fuzz targets hold what this reads to what serde reads.

use std::borrow::Cow;

use crate::envelope::{Block, Content, Envelope, Message, ToolUseResult, Usage};
use crate::envelope_tape::FromTape;
use crate::lazy::Kind;
use crate::lenient::{Count, Flag, Obj, ResultSize, Str};

/// A parsed line the envelope can be read from; `At` names a value in it.
pub(crate) trait Source<'a> {
    type At: Copy;

    /// Where the line's root object is.
    const ROOT: Self::At;

    /// The kind of the value at `at`.
    fn kind(&self, at: Self::At) -> Kind;

    /// The string at `at`, unescaped (`None` for a missing field or any other value).
    fn str(&self, at: Option<Self::At>) -> Option<Cow<'a, str>>;

    /// The length in bytes of the string at `at` once unescaped.
    fn str_len(&self, at: Self::At) -> usize;

    /// The values of the object or array at `at`, each with its key (`None` in an array).
    /// A key is compared as written: one with an escape is none of the names read here (an
    /// escape stands for a quote, a backslash, a slash or a control character).
    fn entries(&self, at: Self::At) -> impl Iterator<Item = (Option<&'a [u8]>, Self::At)> + '_;

    /// Where the values of the keys `index` numbers are in the object at `at`. `None` when
    /// `at` is not an object, or when a key `index` numbers occurs twice in it: serde's derived
    /// readers refuse such an object (`duplicate field`), and a caller that must read a line
    /// as they do takes its slow path then. [`fields!`] writes `index` from the keys' names.
    fn fields_by<const N: usize>(
        &self,
        at: Self::At,
        index: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<[Option<Self::At>; N]> {
        if self.kind(at) != Kind::Object {
            return None;
        }
        let mut found = [None; N];
        for (key, value) in self.entries(at) {
            let Some(slot) = key.and_then(&index).and_then(|i| found.get_mut(i)) else {
                continue;
            };
            if slot.replace(value).is_some() {
                return None;
            }
        }
        Some(found)
    }

    /// The count at `at` as [`crate::lenient::Count`] reads it (see [`crate::tape::count_at`]).
    fn count(&self, at: Option<Self::At>) -> u64;

    /// The tool input at `at` (not `null`) read into `I`; `None` where this source cannot
    /// read it (the index reads only skipped inputs, [`FromTape::skipped`]).
    fn input<I: FromTape<'a>>(&self, at: Self::At) -> Option<I>;

    /// Whether the value at `at` is `true`.
    fn flag(&self, at: Option<Self::At>) -> bool {
        at.is_some_and(|at| self.kind(at) == Kind::True)
    }

    /// `at` when a value is there that is not `null`: what serde reads into an `Option<T>`
    /// as `Some`.
    fn present(&self, at: Option<Self::At>) -> Option<Self::At> {
        at.filter(|&at| self.kind(at) != Kind::Null)
    }

    /// `at` when the value there is an object (what [`crate::lenient::Obj`] reads).
    fn object(&self, at: Option<Self::At>) -> Option<Self::At> {
        at.filter(|&at| self.kind(at) == Kind::Object)
    }
}

/// `fields!(source, at, "type", "uuid", …)`: [`Source::fields_by`] of the keys named,
/// numbered in the order given ([`crate::key_index!`]).
macro_rules! fields {
    ($source:expr, $at:expr, $($key:literal),+ $(,)?) => {
        $source.fields_by($at, $crate::key_index!($($key),+))
    };
}
// (For the index's own tests, which read fields by name.)
#[cfg(test)]
pub(crate) use fields;

fn s<'a, S: Source<'a>>(src: &S, at: Option<S::At>) -> Str<'a> {
    Str(src.str(at))
}

/// An object field read by `read`, as [`Obj`] holds it (`None` for a missing field or anything
/// but an object); `None` when `read` gives up.
fn object<'a, S: Source<'a>, T>(
    src: &S,
    at: Option<S::At>,
    read: impl FnOnce(S::At) -> Option<T>,
) -> Option<Obj<T>> {
    Some(Obj(match src.object(at) {
        Some(at) => Some(read(at)?),
        None => None,
    }))
}

/// The envelope of the line `src` holds; `None` where serde's readers would refuse it, or
/// where `src` cannot read a tool input into `I`.
pub(crate) fn envelope_from<'a, S: Source<'a>, I: FromTape<'a>>(
    src: &S,
) -> Option<Envelope<'a, I>> {
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
        kind: s(src, kind),
        subtype: s(src, subtype),
        uuid: s(src, uuid),
        parent_uuid: s(src, parent_uuid),
        logical_parent_uuid: s(src, logical_parent_uuid),
        session_id: s(src, session_id),
        timestamp: s(src, timestamp),
        request_id: s(src, request_id),
        agent_id: s(src, agent_id),
        team_name: s(src, team_name),
        cwd: s(src, cwd),
        git_branch: s(src, git_branch),
        is_sidechain: flag(is_sidechain),
        is_meta: flag(is_meta),
        is_compact_summary: flag(is_compact_summary),
        is_api_error: flag(is_api_error),
        message: object(src, message_at, |at| message(src, at))?,
        tool_use_result: object(src, tool_use_result, |at| {
            let [agent_id] = fields!(src, at, "agentId")?;
            Some(ToolUseResult {
                agent_id: s(src, agent_id),
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
        id: s(src, id),
        role: s(src, role),
        model: s(src, model),
        content: match content.map(|at| (at, src.kind(at))) {
            Some((at, Kind::String)) => Content::Text(s(src, Some(at))),
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
        usage: object(src, usage, |at| {
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
        stop_reason: s(src, stop_reason),
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
        kind: s(src, kind),
        id: s(src, id),
        name: s(src, name),
        // `Option<I>`: absent or `null` is `None`.
        input: match src.present(input) {
            Some(at) => Some(src.input(at)?),
            None => None,
        },
        tool_use_id: s(src, tool_use_id),
        is_error: Flag(src.flag(is_error)),
        content: content.map_or_else(ResultSize::default, |at| result_size(src, at)),
        text: s(src, body),
    })
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
