//! Reading simd-json's tape directly ([`crate::Parser::parse_tape`]): a reader that wants a few
//! fields of a line steps over everything else by node count, where serde's visitor walks every
//! node of what it ignores. Used by the projection ([`crate::project`]), and by the readers
//! written over [`Source`] ([`Tape`]: the envelope, the usage scan).
//!
//! The tape holds a document as simd-json builds it: an object or array node counts its
//! members (`len`) and all the nodes below it (`count`); an object's members are a key's
//! string node followed by the value's nodes.

use std::borrow::Cow;

pub use simd_json::Node;
use simd_json::StaticNode;

use crate::envelope_tape::FromTape;
use crate::source::{Kind, Source};

/// The values of the object or array at `nodes[at]`, each with its key (`None` in an array)
/// and where it starts: a value's nodes are stepped over by their count. Nothing when
/// `nodes[at]` is neither, and it ends early where the tape is not as simd-json writes it.
pub fn entries<'n, 'a>(
    nodes: &'n [Node<'a>],
    at: usize,
) -> impl Iterator<Item = (Option<&'a str>, usize)> + 'n {
    let (len, object) = match nodes.get(at) {
        Some(Node::Object { len, .. }) => (*len, true),
        Some(Node::Array { len, .. }) => (*len, false),
        _ => (0, false),
    };
    let mut next = at + 1;
    (0..len).map_while(move |_| {
        let key = if object {
            let Some(Node::String(key)) = nodes.get(next) else {
                return None;
            };
            next += 1;
            Some(*key)
        } else {
            None
        };
        let value = next;
        next += width(nodes.get(value)?);
        Some((key, value))
    })
}

/// How many nodes a value takes on the tape.
pub fn width(value: &Node<'_>) -> usize {
    match value {
        Node::Object { count, .. } | Node::Array { count, .. } => count + 1,
        _ => 1,
    }
}

/// A line's tape as a [`Source`].
pub struct Tape<'n, 'a>(pub &'n [Node<'a>]);

impl<'a> Source<'a> for Tape<'_, 'a> {
    type At = usize;
    const ROOT: usize = 0;

    fn kind(&self, at: usize) -> Kind {
        match self.0.get(at) {
            Some(Node::Object { .. }) => Kind::Object,
            Some(Node::Array { .. }) => Kind::Array,
            Some(Node::String(_)) => Kind::String,
            Some(Node::Static(StaticNode::Bool(true))) => Kind::True,
            Some(Node::Static(StaticNode::Bool(false))) => Kind::False,
            Some(Node::Static(StaticNode::Null)) | None => Kind::Null,
            Some(Node::Static(_)) => Kind::Number,
        }
    }

    fn str(&self, at: Option<usize>) -> Option<Cow<'a, str>> {
        str_at(self.0, at).map(Cow::Borrowed)
    }

    fn str_len(&self, at: usize) -> usize {
        str_at(self.0, Some(at)).map_or(0, str::len)
    }

    fn entries(&self, at: usize) -> impl Iterator<Item = (Option<&'a [u8]>, usize)> + '_ {
        entries(self.0, at).map(|(k, v)| (k.map(str::as_bytes), v))
    }

    fn count(&self, at: Option<usize>) -> u64 {
        count_at(self.0, at)
    }

    fn input<I: FromTape<'a>>(&self, at: usize) -> Option<I> {
        Some(I::from_tape(self.0, at))
    }
}

/// The text of the string node at `at` (what [`crate::lenient::Str`] reads: `None` for a
/// missing field or any other value).
fn str_at<'a>(nodes: &[Node<'a>], at: Option<usize>) -> Option<&'a str> {
    match nodes.get(at?) {
        Some(Node::String(s)) => Some(s),
        _ => None,
    }
}

/// The count at `at` as [`Source::count`] reads it.
fn count_at(nodes: &[Node<'_>], at: Option<usize>) -> u64 {
    match at.and_then(|at| nodes.get(at)) {
        Some(Node::Static(StaticNode::U64(n))) => *n,
        Some(Node::Static(StaticNode::I64(n))) => u64::try_from(*n).unwrap_or(0),
        // `as` saturates: negative → 0, huge → u64::MAX.
        Some(Node::Static(StaticNode::F64(n))) if n.is_finite() => *n as u64,
        _ => 0,
    }
}
