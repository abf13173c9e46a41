//! An owned string kept inline when it is short: message ids, request ids and model names
//! (22 to 28 bytes in Claude Code's transcripts) without a heap allocation each.
//!
//! `skein usage` makes one owned copy of each request's ids and model on a worker thread and
//! hands it to the main thread, which frees it; with a `Box<str>` each, that was three
//! allocations on one thread and three frees on another per request (docs/performance.md,
//! stop 42). A string of up to [`INLINE`] bytes is stored in the value itself; a longer one
//! (an agent id of a custom name, say) is boxed.

use std::fmt;
use std::ops::Deref;

/// The longest string kept inline: a `ShortStr` is 32 bytes, as is an `Option` of one.
pub const INLINE: usize = 30;

/// A string, inline up to [`INLINE`] bytes. Equal strings are equal however they are held.
#[derive(Clone)]
pub struct ShortStr(Repr);

#[derive(Clone)]
enum Repr {
    /// The first `len` bytes of `bytes` are the string's (the rest zero).
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Heap(Box<str>),
}

impl ShortStr {
    /// The string.
    #[allow(
        unsafe_code,
        reason = "checking the UTF-8 again on each read was 1 % of the instructions of `skein \
                  usage` (25 M of 2.6 G on the bench tree)"
    )]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                let bytes = &bytes[..usize::from(*len)];
                // SAFETY: `Repr` is private and only `inline` makes an `Inline`, copying the
                // whole of a `&str` into `bytes[..len]`: those bytes are valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Heap(s) => s,
        }
    }

    /// Whether the string is stored inline (for tests and measurements).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

/// `s` held inline; `None` when it is too long.
fn inline(s: &str) -> Option<ShortStr> {
    let len = u8::try_from(s.len())
        .ok()
        .filter(|&l| usize::from(l) <= INLINE)?;
    let mut bytes = [0; INLINE];
    bytes[..s.len()].copy_from_slice(s.as_bytes());
    Some(ShortStr(Repr::Inline { len, bytes }))
}

impl From<&str> for ShortStr {
    fn from(s: &str) -> Self {
        inline(s).unwrap_or_else(|| ShortStr(Repr::Heap(s.into())))
    }
}

impl From<String> for ShortStr {
    fn from(s: String) -> Self {
        inline(&s).unwrap_or_else(|| ShortStr(Repr::Heap(s.into_boxed_str())))
    }
}

impl From<Box<str>> for ShortStr {
    fn from(s: Box<str>) -> Self {
        match inline(&s) {
            Some(short) => short,
            None => ShortStr(Repr::Heap(s)),
        }
    }
}

impl Deref for ShortStr {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ShortStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for ShortStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ShortStr {}

impl PartialEq<str> for ShortStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ShortStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::hash::Hash for ShortStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for ShortStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ShortStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the inline limit, ASCII and multi-byte, from each source type:
    /// the same string back, inline exactly when it fits, equal and ordered as `str`s are.
    #[test]
    fn strings_come_back_whole_and_inline_when_they_fit() {
        // Byte lengths 0 to 36 in ASCII, 0 to 36 in two-byte and 0 to 36 in four-byte
        // characters: every length around the limit, and strings that cross it mid-character.
        for unit in ["a", "é", "\u{1f600}"] {
            for n in 0..=36 / unit.len() {
                let s = unit.repeat(n);
                let made = [
                    ShortStr::from(s.as_str()),
                    ShortStr::from(s.clone()),
                    ShortStr::from(Box::<str>::from(s.as_str())),
                ];
                for m in &made {
                    assert_eq!(m.as_str(), s);
                    assert_eq!(m.is_inline(), s.len() <= INLINE, "{s:?}");
                    assert_eq!(format!("{m:?}"), format!("{s:?}"));
                    assert_eq!(m.to_string(), s);
                }
                assert!(made.iter().all(|m| *m == made[0]));
            }
        }
        let (a, b) = (ShortStr::from("abc"), ShortStr::from("x".repeat(40)));
        assert_eq!(a.cmp(&b), "abc".cmp(b.as_str()), "ordered as their strings");
        assert!(a < b);
        assert_eq!(std::mem::size_of::<Option<ShortStr>>(), 32);
    }
}
