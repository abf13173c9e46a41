//! A parsed line read value by value, whichever way it was parsed: simd-json's tape
//! ([`crate::tape::Tape`]) or the line's structural index ([`crate::lazy::Doc`]). A reader
//! written once over [`Source`] ([`FromSource`]: the envelope, the usage scan's line) reads
//! both, and [`crate::Parser::parse_read`] hands it the index where the index vouches for the
//! line and the tape where it does not. What a reader gives must be what serde's derived reader
//! of the same type gives, or `None` where serde would refuse the line (which then takes
//! serde's path): the envelope's and the usage scan's tests and fuzz targets hold them to it.

use std::borrow::Cow;

use crate::envelope_tape::FromTape;
use crate::lenient::{Obj, Str};

/// What a value is (off the index: by its first byte; off the tape: by its node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    True,
    False,
    Null,
    Number,
}

/// A parsed line that values can be read from; `At` names a value in it.
pub trait Source<'a> {
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
    /// as they do takes its slow path then. [`fields!`](crate::fields) writes `index` from the
    /// keys' names.
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

    /// The count at `at` as [`crate::lenient::Count`] reads it: integers as given, floats
    /// truncated toward zero, negatives, non-finite numbers, non-numbers and a missing field
    /// as 0.
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

    /// Whether the texts of prompts and blocks are read ([`crate::Parser::set_texts`]): a
    /// string `message.content` and a block's `text`, left empty when not.
    fn texts(&self) -> bool {
        true
    }

    /// Whether the fields skein's analysis does not read are read
    /// ([`crate::Parser::set_details`]): `agentId`, `cwd`, `gitBranch`, `message.role`,
    /// `message.stop_reason`, `toolUseResult.agentId`, a block's `name` and a tool result's
    /// sizes, left empty when not.
    fn details(&self) -> bool {
        true
    }
}

/// A source read without the texts of prompts and blocks ([`Source::texts`]) or without the
/// details ([`Source::details`]), as its flags say: every value else as `S` reads it. (A
/// wrapper, not flags in the index's `Doc`: a field more in `Doc` changed the code of the
/// grammar walk that returns it, +1.3 % of its instructions in the usage scan,
/// `docs/performance.md`, stop 40.)
pub(crate) struct Leaving<'d, S> {
    pub source: &'d S,
    pub texts: bool,
    pub details: bool,
}

impl<'a, S: Source<'a>> Source<'a> for Leaving<'_, S> {
    type At = S::At;
    const ROOT: S::At = S::ROOT;

    fn kind(&self, at: S::At) -> Kind {
        self.source.kind(at)
    }

    fn str(&self, at: Option<S::At>) -> Option<Cow<'a, str>> {
        self.source.str(at)
    }

    fn str_len(&self, at: S::At) -> usize {
        self.source.str_len(at)
    }

    fn entries(&self, at: S::At) -> impl Iterator<Item = (Option<&'a [u8]>, S::At)> + '_ {
        self.source.entries(at)
    }

    fn fields_by<const N: usize>(
        &self,
        at: S::At,
        index: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<[Option<S::At>; N]> {
        self.source.fields_by(at, index)
    }

    fn count(&self, at: Option<S::At>) -> u64 {
        self.source.count(at)
    }

    fn input<I: FromTape<'a>>(&self, at: S::At) -> Option<I> {
        self.source.input(at)
    }

    fn flag(&self, at: Option<S::At>) -> bool {
        self.source.flag(at)
    }

    fn present(&self, at: Option<S::At>) -> Option<S::At> {
        self.source.present(at)
    }

    fn object(&self, at: Option<S::At>) -> Option<S::At> {
        self.source.object(at)
    }

    fn texts(&self) -> bool {
        self.texts && self.source.texts()
    }

    fn details(&self) -> bool {
        self.details && self.source.details()
    }
}

/// A value read off a [`Source`]: `None` where serde's derived reader of the type would refuse
/// the line, or where `src` cannot read it (the index builds no tool inputs).
pub trait FromSource<'a>: Sized {
    /// The value of the line `src` holds, from its root.
    fn from_source<S: Source<'a>>(src: &S) -> Option<Self>;
}

/// A string field as [`Str`] holds it (`None` for a missing field or any other value).
pub fn str_field<'a, S: Source<'a>>(src: &S, at: Option<S::At>) -> Str<'a> {
    Str(src.str(at))
}

/// An object field read by `read`, as [`Obj`] holds it (`None` for a missing field or anything
/// but an object); `None` when `read` gives up.
pub fn object_field<'a, S: Source<'a>, T>(
    src: &S,
    at: Option<S::At>,
    read: impl FnOnce(S::At) -> Option<T>,
) -> Option<Obj<T>> {
    Some(Obj(match src.object(at) {
        Some(at) => Some(read(at)?),
        None => None,
    }))
}

/// `fields!(&source, at, "type", "uuid", …)`: [`Source::fields_by`] of the keys named,
/// numbered in the order given ([`crate::key_index!`]).
#[macro_export]
macro_rules! fields {
    ($source:expr, $at:expr, $($key:literal),+ $(,)?) => {
        $crate::source::Source::fields_by($source, $at, $crate::key_index!($($key),+))
    };
}

/// `key_index!("type", "uuid", …)`: the closure that numbers the keys named in the order given
/// (`None` for any other key), for [`Source::fields_by`]. The keys are
/// compared as literals, which the compiler turns into a length test and a word compare each
/// (a lookup in a list of keys, with a `memcmp` call per candidate, was most of reading a
/// record's fields off the tape).
#[doc(hidden)]
#[macro_export]
macro_rules! key_index {
    ($($key:literal),+ $(,)?) => {
        |k: &[u8]| {
            let mut i = 0usize;
            $(
                if k == $key.as_bytes() {
                    return Some(i);
                }
                i += 1;
            )+
            let _ = i;
            None
        }
    };
}
