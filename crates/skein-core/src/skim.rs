//! Skimming a line before it is parsed: the long string values of keys the reader never looks
//! at (a tool's output, a file's old contents, base64 data) are replaced by a one-letter
//! placeholder, so the parser does not copy and unescape them. On real transcripts those values
//! are about 60 % of the bytes, and finding them costs a fifth of what parsing them does.
//!
//! The skim finds strings the way simd-json's first stage does: 64-byte blocks, a bitmask of
//! quotes and one of backslashes (AVX2 compares in `crate::structural` where the CPU has them,
//! else SSE2 through `wide`, safe code), the odd runs of backslashes marking escaped
//! characters, and the unescaped quotes opening and closing strings. Everything between the
//! strings it drops is copied unchanged.
//!
//! **What it keeps exact.** A dropped value is a whole string token that is valid JSON: the
//! line has no raw control byte, and every escape in it is one JSON allows (otherwise nothing
//! is dropped and the parser judges the line as it is). Replacing such a token by another
//! string keeps the line's structure and validity. Invalid UTF-8 and lone surrogates inside a
//! dropped value do not matter: the parser repairs them, so the line is a record either way.
//! A dropped value reads as `"x"`: a reader sees that it was there and is not blank, nothing
//! else. A value that might be blank (it starts with whitespace that is not followed by a
//! plain character, or with a `\u` escape or a non-ASCII byte) is kept.
//!
//! **Which keys.** Either the values of the keys named ([`Skim::all_but`] false: what a reader
//! of everything but the bulky values drops), or of every key but those named (true: what a
//! projection of a few fields keeps, [`crate::project`]). A key written with an escape is never
//! taken for one not named: `"typ\u0065"` is `type` once unescaped, so its value is kept.

use wide::u8x16;

use crate::structural::{Simd, escaped_chars, skim_masks};

/// What a dropped value reads as once parsed: a reader that must know whether a value is
/// the record's own (`crate::project`, for an object it writes whole) looks for it.
pub const PLACEHOLDER: &str = "x";

/// Which string values to drop.
#[derive(Debug, Clone, Copy)]
pub struct Skim {
    /// Object keys (as written, without escapes) whose string values are dropped, or with
    /// `all_but` the only ones whose values are kept; there a dotted path names each of its
    /// keys (`message.model`: `message` and `model`, at any depth).
    pub keys: &'static [&'static str],
    /// Drops the long values of every key but `keys` (and but keys written with an escape).
    pub all_but: bool,
    /// Only values at least this many bytes long (between the quotes, as written).
    pub min_len: usize,
}

/// The keys whose string values make the bulk of a transcript (about 60 % of its bytes on the
/// corpus): tool output and results, file contents before and after an edit, text, thinking
/// and signatures, base64 data. A reader that looks at none of them (beyond whether a value is
/// there) skims with `Skim { keys: BULKY, .. }`.
pub const BULKY: &[&str] = &[
    "content",
    "originalFile",
    "originalFileContents",
    "data",
    "text",
    "thinking",
    "signature",
    "encrypted_content",
    "stdout",
    "stderr",
    "output",
    "fullOutput",
    "result",
    "old_string",
    "new_string",
    "oldString",
    "newString",
    "plan",
    "planContent",
];

/// Lines shorter than this are not worth skimming (their long values, if any, are short).
pub const MIN_LINE: usize = 2048;

/// Quote, backslash, `n` and control-byte (< 0x20) masks of one 64-byte block: AVX-512's or
/// AVX2's where the CPU has them (`simd`), else SSE2's.
#[inline]
fn block_masks(b: &[u8; 64], simd: Simd) -> [u64; 4] {
    skim_masks(b, simd).unwrap_or_else(|| masks(b))
}

/// [`block_masks`] with SSE2 (`wide`'s 16-byte vectors, safe code).
#[inline]
fn masks(b: &[u8; 64]) -> [u64; 4] {
    let quote = u8x16::splat(b'"');
    let backslash = u8x16::splat(b'\\');
    let n = u8x16::splat(b'n');
    let below = u8x16::splat(0x1f);
    let mut m = [0u64; 4];
    for (c, chunk) in b.chunks_exact(16).enumerate() {
        let v = u8x16::new(chunk.try_into().unwrap_or([0; 16]));
        let shift = c * 16;
        m[0] |= u64::from(v.simd_eq(quote).to_bitmask()) << shift;
        m[1] |= u64::from(v.simd_eq(backslash).to_bitmask()) << shift;
        m[2] |= u64::from(v.simd_eq(n).to_bitmask()) << shift;
        m[3] |= u64::from(v.min(below).simd_eq(v).to_bitmask()) << shift;
    }
    m
}

/// Whether the escape whose letter is at `at` is one JSON allows.
fn valid_escape(line: &[u8], at: usize) -> bool {
    match line.get(at) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
        Some(b'u') => line
            .get(at + 1..at + 5)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
        _ => false,
    }
}

/// Whether the string starting at `from` (after its quote) certainly holds a character that is
/// not whitespace: what a dropped value's placeholder promises.
fn surely_not_blank(line: &[u8], from: usize) -> bool {
    let mut i = from;
    while let Some(&b) = line.get(i) {
        match b {
            b' ' => i += 1,
            b'\\' => match line.get(i + 1) {
                Some(b'n' | b't' | b'r' | b'f') => i += 2,
                Some(b'"' | b'\\' | b'/' | b'b') => return true,
                _ => return false,
            },
            b'"' => return false,
            0x21..=0x7e => return true,
            _ => return false,
        }
    }
    false
}

/// The first byte before `at` that is not a space.
fn before(line: &[u8], at: usize) -> Option<u8> {
    line[..at].iter().rev().copied().find(|&b| b != b' ')
}

/// The first byte from `at` on that is not a space.
fn after(line: &[u8], at: usize) -> Option<u8> {
    line.get(at..)?.iter().copied().find(|&b| b != b' ')
}

impl Skim {
    /// Whether the values of `key` (as written) are dropped.
    fn drops(&self, key: &[u8]) -> bool {
        if !self.all_but {
            return self.keys.iter().any(|k| k.as_bytes() == key);
        }
        // (A key without a dot is compared whole: splitting every key on `.` for each long
        // value was a fifth of the skim's instructions on the usage scan's lines.)
        let named = self.keys.iter().any(|k| {
            k.as_bytes() == key
                || (k.len() > key.len()
                    && k.as_bytes().contains(&b'.')
                    && k.split('.').any(|part| part.as_bytes() == key))
        });
        !named && !key.contains(&b'\\')
    }

    /// Writes `line` with its droppable values replaced into `out` (cleared first). False, with
    /// `out` in no particular state, when nothing was dropped: the line should be parsed as is.
    pub fn reduce(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        if line.len() < MIN_LINE.max(self.min_len) {
            return false;
        }
        let simd = Simd::detect();
        let mut carry = 0u64;
        // Content start of the open string, if one is open.
        let mut open: Option<usize> = None;
        // The last key seen (the string before a `:`).
        let mut key: (usize, usize) = (0, 0);
        let mut copied = 0usize;
        let mut base = 0usize;
        // The last block, padded with spaces (`valid` masks the padding out).
        let mut tail = [b' '; 64];
        while base < line.len() {
            let (block, valid): (&[u8; 64], u64) =
                if let Some(b) = line.get(base..base + 64).and_then(|b| b.try_into().ok()) {
                    (b, !0)
                } else {
                    let n = line.len() - base;
                    tail[..n].copy_from_slice(&line[base..]);
                    (&tail, (1u64 << n) - 1)
                };
            let [q, bs, n, ctl] = block_masks(block, simd);
            if ctl & valid != 0 {
                return false;
            }
            let esc = escaped_chars(bs, &mut carry) & valid;
            // `\n`, `\"` and `\\` are valid escapes; the rest is checked one by one.
            let mut odd = esc & !(n | q | bs);
            while odd != 0 {
                let at = base + odd.trailing_zeros() as usize;
                odd &= odd - 1;
                if !valid_escape(line, at) {
                    return false;
                }
            }
            let mut quotes = q & !esc & valid;
            while quotes != 0 {
                let at = base + quotes.trailing_zeros() as usize;
                quotes &= quotes - 1;
                let Some(start) = open.take() else {
                    open = Some(at + 1);
                    continue;
                };
                if after(line, at + 1) == Some(b':') {
                    key = (start, at);
                } else if at - start >= self.min_len
                    && before(line, start - 1) == Some(b':')
                    && self.drops(&line[key.0..key.1])
                    && surely_not_blank(line, start)
                {
                    out.extend_from_slice(&line[copied..start]);
                    out.extend_from_slice(PLACEHOLDER.as_bytes());
                    copied = at;
                }
            }
            base += 64;
        }
        if copied == 0 {
            return false;
        }
        out.extend_from_slice(&line[copied..]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy;

    const SKIM: Skim = Skim {
        keys: &["content", "text"],
        all_but: false,
        min_len: 8,
    };

    fn reduced(line: &str) -> Option<String> {
        reduced_with(SKIM, line)
    }

    fn reduced_with(skim: Skim, line: &str) -> Option<String> {
        let mut padded = line.to_owned();
        // Every test line is padded past MIN_LINE with a kept member at the end.
        padded.pop();
        padded.push_str(r#","pad":""#);
        padded.push_str(&"p".repeat(MIN_LINE));
        padded.push_str(r#""}"#);
        let mut out = Vec::new();
        skim.reduce(padded.as_bytes(), &mut out).then(|| {
            let s = String::from_utf8(out).expect("utf-8");
            s[..s.len() - MIN_LINE - 10].to_owned() + "}"
        })
    }

    #[test]
    fn drops_long_values_of_the_named_keys_only() {
        assert_eq!(
            reduced(r#"{"type":"user","content":"a long tool output","name":"a long kept value"}"#)
                .as_deref(),
            Some(r#"{"type":"user","content":"x","name":"a long kept value"}"#)
        );
        // Short values, keys not named, keys that are values, array elements: kept.
        for kept in [
            r#"{"content":"short"}"#,
            r#"{"other":"a long tool output"}"#,
            r#"{"k":"content","v":"a long tool output"}"#,
            r#"{"content":["a long tool output"]}"#,
        ] {
            assert_eq!(reduced(kept), None, "{kept}");
        }
    }

    #[test]
    fn all_but_drops_long_values_of_every_key_not_named() {
        // ("pad" is the padding `reduced_with` adds.)
        let skim = Skim {
            keys: &["type", "uuid", "pad"],
            all_but: true,
            min_len: 8,
        };
        assert_eq!(
            reduced_with(
                skim,
                r#"{"type":"a long type value","message":{"type":"a long nested type","content":"a long tool output","model":"a long model name"},"n":12345678901}"#
            )
            .as_deref(),
            Some(r#"{"type":"a long type value","message":{"type":"a long nested type","content":"x","model":"x"},"n":12345678901}"#)
        );
        // Short values, the keys named, array elements, and a key written with an escape
        // (`typ\u0065` is `type`): kept.
        for kept in [
            r#"{"other":"short"}"#,
            r#"{"uuid":"a long uuid value"}"#,
            r#"{"list":["a long array element"]}"#,
            r#"{"typ\u0065":"a long type value"}"#,
        ] {
            assert_eq!(reduced_with(skim, kept), None, "{kept}");
        }
    }

    #[test]
    fn escapes_and_quotes_inside_values_are_followed() {
        assert_eq!(
            reduced(r#"{"content":"say \"content\":\"no\" \\","text":"two \\\" three four"}"#)
                .as_deref(),
            Some(r#"{"content":"x","text":"x"}"#)
        );
        // A value spanning blocks, with an escape run across the boundary.
        let long = format!(
            r#"{{"content":"{}\\\\{}"}}"#,
            "a".repeat(61),
            "b".repeat(70)
        );
        assert_eq!(reduced(&long).as_deref(), Some(r#"{"content":"x"}"#));
    }

    #[test]
    fn lines_it_cannot_vouch_for_are_left_whole() {
        for whole in [
            // A raw control byte anywhere, an invalid escape, a truncated \u.
            "{\"content\":\"a long\ttool output\"}",
            r#"{"content":"a long \x tool output"}"#,
            r#"{"content":"a long tool output \u12"}"#,
            // Values that might be blank.
            r#"{"content":"          "}"#,
            r#"{"content":"\n\n\n\n\n\n\n\n"}"#,
            r#"{"content":"\u0041 long tool output"}"#,
            r#"{"content":"é long tool output"}"#,
        ] {
            assert_eq!(reduced(whole), None, "{whole}");
        }
        assert_eq!(
            reduced(r#"{"content":"\n  \t a long tool output"}"#).as_deref(),
            Some(r#"{"content":"x"}"#)
        );
    }

    /// Pieces of string values the skim may drop: plain text, valid escapes (surrogate pairs
    /// and lone halves included: the parser repairs those), non-ASCII and invalid UTF-8.
    const PIECES: &[&[u8]] = &[
        b"plain words ",
        b"    ",
        b"\\n",
        b"\\t",
        b"\\\"",
        b"\\\\",
        b"\\/",
        b"\\u00e9",
        b"\\ud83d\\ude00",
        b"\\ud800",
        b"\\udc00x",
        "é€".as_bytes(),
        b"\xff\xfe",
        b"content\\\":\\\"",
        b"{[,:]}",
    ];

    /// Pieces that make a value something the skim must not vouch for (an invalid escape, a
    /// raw control byte) or that end it early (a quote).
    const POISON: &[&[u8]] = &[b"\\x", b"\\u12g4", b"\x01", b"\t", b"\"", b"\\"];

    /// Whitespace only, as a value the collector asks the blankness of could be.
    const BLANK: &[&[u8]] = &[b"    ", b"\\n", b"\\t", b"\\r", b"\\f"];

    /// How a value ends: with escaped backslashes right before its closing quote (where an
    /// even run must not escape the quote), an escaped quote, or a letter.
    const ENDS: &[&[u8]] = &[b"\\\\\\\\", b"\\\\", b"\\\"", b"x"];

    /// A string value of up to `n` pieces (raw bytes between the quotes).
    fn value(n: usize) -> impl Strategy<Value = Vec<u8>> {
        let pieces = |set: &'static [&'static [u8]]| {
            (
                proptest::collection::vec(proptest::sample::select(set), 0..n),
                proptest::sample::select(ENDS),
            )
                .prop_map(|(p, end)| [p.concat(), end.to_vec()].concat())
        };
        proptest::prop_oneof![4 => pieces(PIECES), 1 => pieces(BLANK)]
    }

    /// What a reader that looks at no bulky value may read of an envelope: every field but
    /// the texts, the tool inputs and the result sizes, and whether a text content is blank.
    fn seen(e: &crate::Envelope<'_>) -> String {
        let m = e.message.0.as_ref();
        let blocks: Vec<_> = m
            .map(|m| m.content.blocks())
            .unwrap_or_default()
            .iter()
            .map(|b| {
                (
                    b.kind(),
                    b.id.get(),
                    b.name.get(),
                    b.tool_use_id.get(),
                    b.is_error.0,
                )
            })
            .collect();
        let text = m.and_then(|m| match &m.content {
            crate::Content::Text(t) => Some(t.get().is_some_and(|t| !t.trim().is_empty())),
            _ => None,
        });
        format!(
            "{:?}",
            (
                (
                    e.kind.get(),
                    e.uuid.get(),
                    e.session_id.get(),
                    e.timestamp.get()
                ),
                (
                    e.request_id.get(),
                    e.cwd.get(),
                    e.git_branch.get(),
                    e.is_meta.0
                ),
                e.tool_use_result.0.as_ref().map(|t| t.agent_id.get()),
                m.map(|m| (m.id.get(), m.model.get(), m.usage.0, m.stop_reason.get())),
                (blocks, text),
            )
        )
    }

    proptest::proptest! {
        /// SSE2's masks, AVX2's and AVX-512's (where this CPU has them) are the bytes' masks
        /// (the index's byte loop, `structural::string_masks_bytes`).
        #[test]
        fn every_mask_path_marks_the_bytes(
            bytes in proptest::collection::vec(
                proptest::sample::select(&[b'"', b'\\', b'n', b'N', 0, 0x1f, 0x20, b'a', 0x7f, 0x80, 0xff][..]),
                64,
            )
        ) {
            let block: [u8; 64] = bytes.try_into().expect("64 bytes");
            let expected = crate::structural::string_masks_bytes(&block);
            for simd in Simd::all() {
                proptest::prop_assert_eq!(block_masks(&block, simd), expected, "{:?}", simd);
            }
        }

        /// With the skim or without, a line is a record or not alike (a line that is not fails
        /// with the same error), and a reader that looks at no bulky value sees the same record.
        #[test]
        fn a_skimmed_line_parses_as_the_whole_line(
            content in value(400),
            text in value(400),
            stdout in value(400),
            kept in value(300),
            blocks in proptest::bool::ANY,
            poison in proptest::option::of((0usize..4, 0usize..2000, proptest::sample::select(POISON))),
            cut in proptest::option::of(0usize..6000),
        ) {
            let mut values = [content, text, stdout, kept];
            if let Some((which, at, p)) = poison {
                let v = &mut values[which];
                let at = at.min(v.len());
                v.splice(at..at, p.iter().copied());
            }
            let [content, text, stdout, kept] = values;
            let string = |v: &[u8]| [&b"\""[..], v, b"\""].concat();
            let content = if blocks {
                [
                    &br#"[{"type":"tool_result","tool_use_id":"t1","content":"#[..],
                    &string(&content),
                    br#"},{"type":"text","text":"#,
                    &string(&text),
                    b"}]",
                ]
                .concat()
            } else {
                string(&content)
            };
            let mut line = [
                &br#"{"type":"user","uuid":"u1","cwd":"#[..],
                &string(&kept),
                br#","message":{"role":"user","content":"#,
                &content,
                br#"},"toolUseResult":{"agentId":"a1","stdout":"#,
                &string(&stdout),
                br#"},"timestamp":"2026-05-01T10:00:00Z"}"#,
            ]
            .concat();
            if let Some(at) = cut {
                line.truncate(at);
            }
            let mut whole = crate::Parser::new();
            let mut skimming = crate::Parser::new();
            // (The skim is for the tape: off the index, which `parse` tries first, nothing is
            // dropped.)
            skimming.set_index(false);
            skimming.set_skim(Some(Skim {
                keys: BULKY,
                all_but: false,
                min_len: 16,
            }));
            // The same record, or the same error (its column included).
            let a = whole.parse(&line).map(|p| seen(&p.envelope));
            let b = skimming.parse(&line).map(|p| seen(&p.envelope));
            proptest::prop_assert_eq!(a, b, "{}", String::from_utf8_lossy(&line));
        }
    }
}
