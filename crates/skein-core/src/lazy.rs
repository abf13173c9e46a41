//! A line read off its structural index ([`crate::structural`]) instead of simd-json's tape:
//! the grammar is checked over the index, and only the strings a reader takes are looked at
//! (borrowed from the line, or unescaped when they hold an escape). What simd-json's stage 2
//! spends on every string and number of a line (its copies, a third of `skein stats`' work)
//! is spent here only on the few fields the envelope reads.
//!
//! [`Lazy::document`] vouches for a line only where simd-json certainly accepts it: valid
//! UTF-8, an object, the grammar checked, strings closed with no control character and only
//! the eight simple escapes, numbers of the plain forms (`-12`, `3.25`; no exponent, at most
//! 18 digits), nesting no deeper than 64. Anything else gets `None`, and the caller parses the
//! line as before; so what is read here is what the tape would give, which
//! `lazy::tests` and the `lazy` fuzz target hold it to.

use std::borrow::Cow;

use crate::envelope_tape::FromTape;
use crate::source::{Kind, Source};
use crate::structural::Structure;

/// Nesting deeper than this is left to simd-json (whose limit is 1,024).
const MAX_DEPTH: usize = 64;

/// Reusable state for reading lines off their index (one per thread).
#[derive(Debug, Default)]
pub struct Lazy {
    structure: Structure,
    /// For the index of each value's first structural, the index of its last: a container's
    /// closing bracket, a scalar itself (keys: whatever an earlier line left there).
    close: Vec<u32>,
    stack: Vec<u32>,
}

/// A checked document: where its values are, for reading.
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a, 's> {
    text: &'a str,
    /// The line's index (its offsets, `structure.idx`, and escapes).
    structure: &'s Structure,
    close: &'s [u32],
}

/// A value's place: the number of its first structural in the index.
pub type At = usize;

/// Whether a number of the plain forms (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 18 digits)
/// starts `text` and ends where a value may end. Others (exponents, long mantissas) are left
/// to simd-json, whose number parser decides their fate.
fn plain_number(text: &[u8]) -> bool {
    let mut i = usize::from(text.first() == Some(&b'-'));
    let int_start = i;
    while text.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_len = i - int_start;
    if int_len == 0 || (int_len > 1 && text[int_start] == b'0') {
        return false;
    }
    let mut digits = int_len;
    if text.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while text.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == frac_start {
            return false;
        }
        digits += i - frac_start;
    }
    digits <= 18 && ends_value(text.get(i))
}

/// Whether a scalar may end before `next` (the end of the line, whitespace or an operator).
fn ends_value(next: Option<&u8>) -> bool {
    matches!(
        next,
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b':')
    )
}

/// Whether the literal `word` starts `text` and ends there.
fn literal(text: &[u8], word: &[u8]) -> bool {
    text.starts_with(word) && ends_value(text.get(word.len()))
}

impl Lazy {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// `text` (one line, trimmed) checked and indexed, or `None` where the line is left to
    /// simd-json (see the module's text).
    pub fn document<'a, 's>(&'s mut self, text: &'a [u8]) -> Option<Doc<'a, 's>> {
        if text.first() != Some(&b'{') {
            return None;
        }
        let Self {
            structure,
            close,
            stack,
        } = self;
        let text = structure.index_str(text)?;
        walk(
            text.as_bytes(),
            &structure.idx,
            &structure.chars,
            close,
            stack,
        )?;
        Some(Doc {
            text,
            structure,
            close: &close[..structure.idx.len()],
        })
    }
}

/// A container on the walk's stack: its index in the structurals, this bit set for an object.
const OBJECT: u32 = 1 << 31;

/// Checks the grammar over the index and notes where every value ends (`close`). A key and its
/// colon are taken in one step, and an empty container in one: the walk took about 28 % fewer
/// instructions over the corpus than with a state per structural (`docs/performance.md`,
/// stop 37). Its two loops are the grammar's two places (a value; what follows a value), with
/// no state read back at each step: 2 % off the index and walk together (stop 44).
fn walk(
    text: &[u8],
    idx: &[u32],
    chars: &[u8],
    close: &mut Vec<u32>,
    stack: &mut Vec<u32>,
) -> Option<()> {
    // (Never so many: the lines indexed are shorter than `parse::BIG_LINE`.)
    if idx.len() >= OBJECT as usize {
        return None;
    }
    // Only a value's entry is ever written and read (a key's never is): what earlier lines
    // left in the others is not looked at, so the buffer is only grown, never cleared (its
    // clearing was a `memset` of 4 bytes a structural per line).
    if close.len() < idx.len() {
        close.resize(idx.len(), 0);
    }
    stack.clear();
    // (The index's byte at each offset: no load waiting on the offset's.)
    let byte = |n: usize| chars.get(n).copied();
    // A key and its colon at `n`.
    let key = |n: usize| byte(n) == Some(b'"') && byte(n + 1) == Some(b':');
    // The text from structural `n` on (a literal's or a number's).
    let from = |n: usize| &text[idx[n] as usize..];
    let mut n = 0usize;
    'value: loop {
        // A value starts at structural `n`.
        let c = byte(n)?;
        // A scalar ends where it starts (a container's end is noted when it closes): the
        // readers step over any value by `close` alone, without looking at its first byte.
        close[n] = n as u32;
        n += 1;
        match c {
            b'"' => {}
            b'{' | b'[' => {
                if stack.len() == MAX_DEPTH {
                    return None;
                }
                let (object, closer) = if c == b'{' { (OBJECT, b'}') } else { (0, b']') };
                if byte(n) == Some(closer) {
                    close[n - 1] = n as u32;
                    n += 1;
                } else {
                    // (`n - 1` fits: `idx` is shorter than `OBJECT`.)
                    stack.push((n - 1) as u32 | object);
                    if object != 0 {
                        if !key(n) {
                            return None;
                        }
                        n += 2;
                    }
                    continue 'value;
                }
            }
            b't' if literal(from(n - 1), b"true") => {}
            b'f' if literal(from(n - 1), b"false") => {}
            b'n' if literal(from(n - 1), b"null") => {}
            b'-' | b'0'..=b'9' if plain_number(from(n - 1)) => {}
            _ => return None,
        }
        // After a value: closing brackets, until a comma and the next value (with its key in
        // an object).
        loop {
            let Some(&open) = stack.last() else {
                // The root is closed: nothing may follow it.
                return (n == idx.len()).then_some(());
            };
            let c = byte(n)?;
            n += 1;
            let object = open & OBJECT != 0;
            if c == b',' {
                if object {
                    if !key(n) {
                        return None;
                    }
                    n += 2;
                }
                continue 'value;
            }
            if c != if object { b'}' } else { b']' } {
                return None;
            }
            stack.pop();
            close[(open & !OBJECT) as usize] = (n - 1) as u32;
        }
    }
}

impl<'a> Doc<'a, '_> {
    /// The document's root (an object).
    pub const ROOT: At = 0;

    fn byte(&self, at: At) -> u8 {
        self.structure.chars[at]
    }

    /// Where the value after the one at `at` would start (past its closing bracket).
    fn after(&self, at: At) -> At {
        self.close[at] as usize + 1
    }

    /// Where the inside of the string at `at` starts and ends (between its quotes).
    fn span(&self, at: At) -> (usize, usize) {
        let start = self.structure.idx[at] as usize + 1;
        let bytes = self.text.as_bytes();
        // The closing quote is the last byte before the next structural but whitespace (most
        // often the byte right before it); a string in a checked object is always followed by
        // a structural.
        let mut end = self
            .structure
            .idx
            .get(at + 1)
            .map_or(bytes.len(), |&n| n as usize);
        while end > start && bytes[end - 1] != b'"' {
            end -= 1;
        }
        (start, end.saturating_sub(1).max(start))
    }

    /// The raw text of the string at `at`, between its quotes, and where it starts.
    fn raw(&self, at: At) -> (usize, &'a str) {
        let (start, end) = self.span(at);
        (start, self.text.get(start..end).unwrap_or_default())
    }

    /// The key at `at` as written: a key with an escape is none of the names the readers
    /// look for (an escape stands for a quote, a backslash, a slash or a control character).
    fn key(&self, at: At) -> &'a [u8] {
        let (start, end) = self.span(at);
        &self.text.as_bytes()[start..end]
    }

    /// The members of the object at `at`: where each key is (for [`Source::str`], which
    /// unescapes it where it must) and where its value is; no key is read here.
    pub(crate) fn members(&self, at: At) -> impl Iterator<Item = (At, At)> + '_ {
        self.values(at + 1, self.close[at] as usize, true)
    }

    /// The values from structural `first` to `end` (a container's inside), each with where its
    /// key is in an object (in an array, where the value is): a value is stepped over by
    /// `close` alone.
    fn values(&self, first: At, end: At, object: bool) -> impl Iterator<Item = (At, At)> + '_ {
        let mut next = first;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let (key, value) = if object {
                (next, next + 2)
            } else {
                (next, next)
            };
            // Past the value's comma (or onto the closing bracket).
            next = self.after(value) + 1;
            Some((key, value))
        })
    }

    /// The text of the number at `at` as written (its sign, digits and fraction: the walk let
    /// through the plain forms only).
    pub(crate) fn number_text(&self, at: At) -> &'a str {
        let start = self.structure.idx[at] as usize;
        let len = self.text.as_bytes()[start..]
            .iter()
            .position(|b| !matches!(b, b'-' | b'.' | b'0'..=b'9'))
            .unwrap_or(self.text.len() - start);
        &self.text[start..start + len]
    }
}

/// The line off its index, for the readers written over [`Source`].
impl<'a> Source<'a> for Doc<'a, '_> {
    type At = At;
    const ROOT: At = Doc::ROOT;

    /// The kind of the value at `at`.
    fn kind(&self, at: At) -> Kind {
        match self.byte(at) {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b't' => Kind::True,
            b'f' => Kind::False,
            b'n' => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// The string at `at` (`None` for any other value), unescaped.
    fn str(&self, at: Option<At>) -> Option<Cow<'a, str>> {
        let at = at?;
        if self.kind(at) != Kind::String {
            return None;
        }
        let (start, raw) = self.raw(at);
        if !self.structure.has_escape(start, start + raw.len()) {
            return Some(Cow::Borrowed(raw));
        }
        // Runs between escapes are copied whole (an escape is ASCII, so they are `str`s).
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        // (`memchr`, not `str::find`: core's byte search is the word-at-a-time one, and it
        // showed at ~1 % of `stats`' profile on the texts of prompts and blocks.)
        while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
            out.push_str(&rest[..at]);
            let escaped = rest.as_bytes().get(at + 1).copied()?;
            out.push(match escaped {
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                other => char::from(other),
            });
            rest = &rest[at + 2..];
        }
        out.push_str(rest);
        Some(Cow::Owned(out))
    }

    /// The length in bytes of the string at `at` once unescaped.
    fn str_len(&self, at: At) -> usize {
        let (start, raw) = self.raw(at);
        raw.len() - self.structure.escapes_in(start, start + raw.len())
    }

    /// The values of the object or array at `at`, each with its key (`None` in an array).
    fn entries(&self, at: At) -> impl Iterator<Item = (Option<&'a [u8]>, At)> + '_ {
        let object = self.kind(at) == Kind::Object;
        let container = object || self.kind(at) == Kind::Array;
        let end = if container {
            self.close[at] as usize
        } else {
            at
        };
        self.values(at + 1, end, object)
            .map(move |(key, value)| (object.then(|| self.key(key)), value))
    }

    /// The count at `at` as [`crate::lenient::Count`] reads it ([`Source::count`]).
    fn count(&self, at: Option<At>) -> u64 {
        let Some(at) = at.filter(|&at| self.kind(at) == Kind::Number) else {
            return 0;
        };
        let start = self.structure.idx[at] as usize;
        let bytes = &self.text.as_bytes()[start..];
        // A plain integer (what counts are) is added up digit by digit: the walk let through
        // at most 18 digits, which fit. A negative number, whole or not, is 0 (its first byte
        // is no digit), as the tape reads it.
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if bytes.get(digits) != Some(&b'.') {
            return bytes[..digits]
                .iter()
                .fold(0, |n, &d| n * 10 + u64::from(d - b'0'));
        }
        // A fraction: through `f64`, as the tape reads it (`as` truncates toward zero).
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "as the tape"
        )]
        self.number_text(at).parse::<f64>().map_or(0, |f| f as u64)
    }

    /// Only a skipped input: the index builds no values.
    fn input<I: FromTape<'a>>(&self, _: At) -> Option<I> {
        I::skipped()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fields;

    fn simd_json_accepts(text: &[u8]) -> bool {
        simd_json::to_tape(&mut text.to_vec()).is_ok()
    }

    #[test]
    fn reads_strings_counts_and_flags_where_they_are() {
        let line =
            br#"{"s":"a\"b\\c\/d\n","n":[12,-3,2.75,0,-0.5,"7",123456789012345678,1.99999999999999999],"t":true,"z":null,"o":{},"e":""}"#;
        let mut lazy = Lazy::new();
        let doc = lazy.document(line).expect("a plain line");
        let [s, n, t, z, o, e] = fields!(&doc, Doc::ROOT, "s", "n", "t", "z", "o", "e").unwrap();
        assert_eq!(doc.str(s).as_deref(), Some("a\"b\\c/d\n"));
        assert_eq!(doc.str_len(s.unwrap()), "a\"b\\c/d\n".len());
        // Borrowed from the line where there is nothing to unescape.
        assert!(matches!(doc.str(s), Some(Cow::Owned(_))));
        assert!(matches!(doc.str(e), Some(Cow::Borrowed(""))));
        let counts: Vec<u64> = doc
            .entries(n.unwrap())
            .map(|(_, v)| doc.count(Some(v)))
            .collect();
        // (A float is read as the tape reads it: 1.99999999999999999 is 2.0 as an f64.)
        assert_eq!(counts, [12, 0, 2, 0, 0, 0, 123_456_789_012_345_678, 2]);
        assert!(doc.flag(t) && !doc.flag(z) && !doc.flag(n));
        assert_eq!(doc.present(z), None);
        assert_eq!(doc.object(o), o);
        assert_eq!(doc.entries(o.unwrap()).count(), 0);
        assert_eq!(doc.str(e).as_deref(), Some(""));
        assert_eq!(doc.str(n), None);
        // A key written twice is refused where it is asked for, not otherwise.
        let twice = br#"{"a":1,"b":2,"a":3}"#;
        let doc = lazy.document(twice).unwrap();
        let a: Option<[Option<At>; 1]> = fields!(&doc, Doc::ROOT, "a");
        assert!(a.is_none());
        let b: Option<[Option<At>; 1]> = fields!(&doc, Doc::ROOT, "b");
        assert_eq!(b, Some([Some(7)]), "the index of `2`");
    }

    #[test]
    fn leaves_every_line_it_does_not_vouch_for_to_simd_json() {
        let mut lazy = Lazy::new();
        for line in [
            r#"{"a":"\u00e9"}"#,
            r#"{"a":1e5}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":tru}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":1}x"#,
            r#"{"a":1} {}"#,
            r#"{"a":"x"y}"#,
            "[1]",
            "{\"a\":\"\u{1}\"}",
            r#"{"a":"\q"}"#,
            r#"{"a":"unclosed}"#,
            r#"{"a":[}"#,
            r#"{"a":{]}"#,
            // Keys that are not strings, or without their colon, first and after a comma.
            "{1:2}",
            r#"{"a":1,2:3}"#,
            r#"{"a":1,[]:3}"#,
            r#"{"a":1,"b","c":2}"#,
            r#"{"a":{"b" 1}}"#,
        ] {
            assert!(lazy.document(line.as_bytes()).is_none(), "{line}");
        }
        assert!(lazy.document(b"{\"a\":\"\xff\"}").is_none());
        // Nesting: the root and 63 containers inside it are read, one more is not.
        let nested = |n: usize| format!("{{\"a\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        for (arrays, vouched) in [(70, false), (64, false), (63, true), (60, true)] {
            let line = nested(arrays);
            assert_eq!(
                lazy.document(line.as_bytes()).is_some(),
                vouched,
                "{arrays}"
            );
        }
        for line in [
            "{}",
            "{ \"a\" : [ 1 , { } , [ ] , \"\" ] }",
            "{\"a\":\t-0.25}",
            r#"{"k\"ey":"\b\f\r\t\/"}"#,
        ] {
            assert!(lazy.document(line.as_bytes()).is_some(), "{line}");
        }
    }

    const TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        " ",
        "\t",
        "\"k\"",
        "\"v\\n\"",
        "\"\\\\\"",
        "\"\\\"\"",
        "\"",
        "\\",
        "1",
        "-0",
        "01",
        "1.5",
        "1.",
        "-",
        "1e5",
        "true",
        "tru",
        "false",
        "null",
        "nul",
        "\"\u{e9}\"",
        "\"\u{1}\"",
        "\"\\u0041\"",
        "\"\\ud800\"",
        "x",
        "\u{7f}",
    ];

    proptest! {
        /// Whatever bytes a line holds, the index vouches only for what simd-json accepts.
        #[test]
        fn vouches_only_for_what_simd_json_accepts(
            parts in proptest::collection::vec(proptest::sample::select(TOKENS), 0..40)
        ) {
            let line = format!("{{{}", parts.concat());
            if Lazy::new().document(line.as_bytes()).is_some() {
                prop_assert!(simd_json_accepts(line.as_bytes()), "{}", line);
            }
        }

        /// Every object of the plain kind is vouched for.
        #[test]
        fn vouches_for_plain_objects(
            members in proptest::collection::vec(
                (proptest::sample::select(&["a", "type", "t\\\"x"][..]),
                 proptest::sample::select(&["1", "-2.5", "true", "null", "\"s\\n\"", "[]", "{\"x\":[1,{}]}"][..])),
                0..6,
            ),
            space in proptest::sample::select(&["", " ", "\t"][..]),
        ) {
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\"{space}:{space}{v}")).collect();
            let line = format!("{{{}}}", body.join(&format!(",{space}")));
            prop_assert!(simd_json_accepts(line.as_bytes()), "{}", line);
            prop_assert!(Lazy::new().document(line.as_bytes()).is_some(), "{}", line);
        }
    }
}
