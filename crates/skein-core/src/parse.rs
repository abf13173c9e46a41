//! One line of text → one [`Envelope`]. simd-json does the work; lines it refuses are repaired
//! (invalid UTF-8, lone surrogates, see [`crate::repair`]) and retried, and whatever is still
//! refused but is one JSON object (duplicate keys, for one) goes through serde_json. A reader
//! that looks at none of the bulky values can have them skimmed off first ([`crate::skim`],
//! [`Parser::set_skim`]).

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::envelope::Envelope;
use crate::envelope_tape::FromTape;
use crate::lazy::Lazy;
use crate::repair::repair_line;
use crate::skim::Skim;
use crate::source::FromSource;
use crate::tape::Tape;

/// Why a line is not a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The line's first byte is not `{`.
    #[error("not a JSON object (starts with {0:?})")]
    NotAnObject(char),
    /// The line is not valid JSON, or holds more than one value.
    #[error("invalid JSON: {0}")]
    Invalid(String),
    /// The line is longer than the maximum line length; it was skipped, not parsed.
    #[error("line of {bytes} bytes is longer than the maximum line length ({max} bytes); skipped")]
    TooLong { bytes: u64, max: u64 },
}

/// A parsed line: the envelope borrows from the parser's buffers until the next parse.
#[derive(Debug)]
pub struct Parsed<'s, I = IgnoredAny> {
    pub envelope: Envelope<'s, I>,
    /// The line needed invalid UTF-8 or lone surrogate replacement to parse.
    pub repaired: bool,
}

/// Lines at least this long are parsed by serde_json straight from the line's bytes, strings
/// borrowed where they hold no escape: no copy of the line. simd-json, faster on ordinary
/// lines, copies its input twice (into its own buffer and an aligned one) and needs a string
/// buffer as large again, four times the line in all; for a line of hundreds of MiB that is
/// what decides whether the command runs. What serde_json refuses this way (duplicate keys,
/// invalid UTF-8) takes the usual path below.
pub const BIG_LINE: usize = 1 << 20;

/// simd-json's reusable state for parsing one line at a time: the padded copy of the line it
/// unescapes strings into, its buffers, and the tape. `simd_json::serde::from_slice_with_buffers`
/// copies every line a second time (into an aligned, padded buffer) and allocates a new tape per
/// line; here the one copy is padded as simd-json needs ([`simd_json::fill_tape_padded`]) and the
/// tape's allocation is kept across lines. Every simd-json line parse in skein goes through this.
#[derive(Default)]
pub struct SimdScratch {
    buf: Vec<u8>,
    buffers: simd_json::Buffers,
    /// Empty between parses (it only borrows from `buf` during one).
    tape: Option<simd_json::Tape<'static>>,
}

impl std::fmt::Debug for SimdScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimdScratch").finish_non_exhaustive()
    }
}

impl SimdScratch {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `text` (one JSON document) into `T`, which may borrow strings from this scratch
    /// until the next call. The same result as `simd_json::serde::from_slice` on a copy of
    /// `text`.
    pub fn from_slice<'s, T: Deserialize<'s>>(&'s mut self, text: &[u8]) -> simd_json::Result<T> {
        self.load(text, None);
        self.parse_buffer()
    }

    /// Puts `text` in the buffer, skimmed by `skim` when it drops something from it: the one
    /// copy a line gets before simd-json reads it.
    fn load(&mut self, text: &[u8], skim: Option<&Skim>) {
        // (`reduce` leaves the buffer in no particular state when it drops nothing.)
        if !skim.is_some_and(|s| s.reduce(text, &mut self.buf)) {
            self.buf.clear();
            self.buf.reserve(text.len() + simd_json::INPUT_PADDING);
            self.buf.extend_from_slice(text);
        }
    }

    /// Builds the tape of the document the buffer holds and hands its nodes to `read` (their
    /// strings borrow from this scratch).
    fn tape_of_buffer<'s, R>(
        &'s mut self,
        read: impl FnOnce(&[simd_json::Node<'s>]) -> R,
    ) -> simd_json::Result<R> {
        self.with_tape(|t| (read(&t.0), t))
    }

    /// Parses the document the buffer holds.
    fn parse_buffer<'s, T: Deserialize<'s>>(&'s mut self) -> simd_json::Result<T> {
        self.with_tape(|t| {
            let mut de = simd_json::Deserializer::from_tape(t);
            let value = T::deserialize(&mut de);
            (value, de.into_tape())
        })?
    }

    /// Builds the tape of the document the buffer holds and hands it to `use_tape`, which
    /// hands it back: its allocation is kept for the next line.
    fn with_tape<'s, R>(
        &'s mut self,
        use_tape: impl FnOnce(simd_json::Tape<'s>) -> (R, simd_json::Tape<'s>),
    ) -> simd_json::Result<R> {
        let Self { buf, buffers, tape } = self;
        let len = buf.len();
        // The padding's content does not matter; simd-json reads past the end in SIMD words.
        buf.resize(len + simd_json::INPUT_PADDING, b' ');
        let mut t: simd_json::Tape<'s> = tape
            .take()
            .map_or_else(simd_json::Tape::null, simd_json::Tape::reset);
        let input: &'s mut [u8] = buf.as_mut_slice();
        if let Err(e) = simd_json::fill_tape_padded(input, len, buffers, &mut t) {
            *tape = Some(t.reset());
            return Err(e);
        }
        let (result, t) = use_tape(t);
        *tape = Some(t.reset());
        Ok(result)
    }
}

/// A reader of one value off simd-json's tape (`Parser::parse_with`): `None` where serde
/// would refuse the value.
type TapeReader<'s, T> = fn(&[simd_json::Node<'s>]) -> Option<T>;

/// Reusable parse state (one per thread).
#[derive(Default)]
pub struct Parser {
    simd: SimdScratch,
    lazy: Lazy,
    fallback: serde_json::Value,
    /// Values dropped before parsing ([`Parser::set_skim`]).
    skim: Option<Skim>,
    /// Envelopes are not read off the structural index ([`Parser::set_index`]).
    tape_only: bool,
    /// Envelopes read off the index leave the texts out ([`Parser::set_texts`]).
    no_texts: bool,
    /// Envelopes read off the index leave the details out ([`Parser::set_details`]).
    no_details: bool,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser").finish_non_exhaustive()
    }
}

fn trim(text: &[u8]) -> &[u8] {
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = text.iter().position(|b| !is_ws(b)).unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|b| !is_ws(b))
        .map_or(start, |i| i + 1);
    &text[start..end]
}

fn describe(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_owned(),
        None => full,
    }
}

impl Parser {
    /// A parser with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops the long string values `skim` names from every line before it is parsed off
    /// simd-json's tape (`None`: parse lines whole, the default). Their fields then read `"x"`,
    /// or whole where the line is read off its structural index instead ([`Parser::parse_as`]
    /// tries that first): only for a reader that looks at nothing of them but whether they are
    /// there. A line is a record with the skim exactly when it is without, and a line that is
    /// not fails with the same error; but a record whose only invalid UTF-8 or lone surrogates
    /// were in dropped values is not [`Parsed::repaired`]. Returns the previous setting.
    pub fn set_skim(&mut self, skim: Option<Skim>) -> Option<Skim> {
        std::mem::replace(&mut self.skim, skim)
    }

    /// Whether envelopes and projections ([`crate::Projection`]) may be read off the line's
    /// structural index ([`crate::lazy`]; on by default) or always off simd-json's tape: the
    /// same either way (the tests hold them to it); off is for benchmarks and tests that
    /// compare the two.
    pub fn set_index(&mut self, on: bool) {
        self.tape_only = !on;
    }

    /// Whether envelopes read the texts of prompts and blocks (a string `message.content`, a
    /// block's `text`; on by default). A reader that looks at none of them turns them off: an
    /// envelope read off the line's structural index then holds `Str(None)` in their place and
    /// skips their unescaping (`docs/performance.md`, stop 40). Off means "may leave out": a
    /// line read off simd-json's tape or by serde still has them. Returns the previous setting.
    pub fn set_texts(&mut self, on: bool) -> bool {
        !std::mem::replace(&mut self.no_texts, !on)
    }

    /// Whether envelopes read the fields skein's analysis does not read ([`Source::details`]:
    /// `agentId`, `cwd`, `gitBranch`, `message.role`, `message.stop_reason`,
    /// `toolUseResult.agentId`, a block's `name` and a tool result's sizes; on by default). A
    /// reader that looks at none of them turns them off, as [`Parser::set_texts`] turns off
    /// the texts: off the index they are then left empty, and not read (`skein stats`: about
    /// 6 % off reading an envelope, `docs/performance.md`, stop 45). Returns the previous
    /// setting.
    ///
    /// [`Source::details`]: crate::source::Source::details
    pub fn set_details(&mut self, on: bool) -> bool {
        !std::mem::replace(&mut self.no_details, !on)
    }

    /// Parses one line (without its terminator), skipping tool inputs.
    pub fn parse<'s>(&'s mut self, text: &'s [u8]) -> Result<Parsed<'s>, ParseError> {
        self.parse_as::<IgnoredAny>(text)
    }

    /// Parses one line, reading tool inputs into `I`. The envelope may borrow from the
    /// parser's buffers or, for a line of [`BIG_LINE`] bytes or more, from `text` itself.
    pub fn parse_as<'s, I: Deserialize<'s> + Default + FromTape<'s>>(
        &'s mut self,
        text: &'s [u8],
    ) -> Result<Parsed<'s, I>, ParseError> {
        let skim = self.skim;
        // Off the line's structural index first. The index builds no tool inputs: where they
        // are read (`I` is not skipped) and a block has one, the envelope's reader gives up
        // there (`Source::input`) and the line is read off the tape. The values a skim drops
        // read whole off the index ([`Parser::set_skim`]).
        // Wrapped once, on its way out (not first in a tuple): an envelope is 568 bytes, and
        // each move of it a `memcpy`.
        if let Some(envelope) = self.off_index(text) {
            return Ok(Parsed {
                envelope,
                repaired: false,
            });
        }
        let (envelope, repaired) = self.off_tape::<Envelope<'s, I>>(text, skim)?;
        Ok(Parsed { envelope, repaired })
    }

    /// Parses one line (without its terminator) into `T`, read through [`crate::source`]: off
    /// the line's structural index where it vouches for the line ([`crate::lazy`]: no tape, no
    /// copy of the line), else off simd-json's tape of the line skimmed by `skim`, else as
    /// [`Parser::parse_into`] parses it (repaired, judged, and read by serde). `T::from_source`
    /// must give what serde gives, or `None` where serde would refuse the line, and must read
    /// nothing of what `skim` drops (off the index nothing is dropped). The same promises as
    /// [`Parser::parse_into`].
    pub fn parse_read<'s, T: Deserialize<'s> + FromSource<'s>>(
        &'s mut self,
        text: &'s [u8],
        skim: Option<Skim>,
    ) -> Result<(T, bool), ParseError> {
        if let Some(value) = self.off_index(text) {
            return Ok((value, false));
        }
        self.off_tape(text, skim)
    }

    /// `T` read off simd-json's tape of the line skimmed by `skim`, without serde's visitor,
    /// or by serde where the reader gives up (where serde would refuse the line).
    fn off_tape<'s, T: Deserialize<'s> + FromSource<'s>>(
        &'s mut self,
        text: &'s [u8],
        skim: Option<Skim>,
    ) -> Result<(T, bool), ParseError> {
        self.parse_with(text, skim, Some(|nodes| T::from_source(&Tape(nodes))))
    }

    /// `T` read off the line's structural index, where the parser allows it
    /// ([`Parser::set_index`]) and the index vouches for the line.
    fn off_index<'s, T: FromSource<'s>>(&mut self, text: &'s [u8]) -> Option<T> {
        let (texts, details) = (!self.no_texts, !self.no_details);
        self.parse_doc(text, |doc| {
            if texts && details {
                T::from_source(doc)
            } else {
                T::from_source(&crate::source::Leaving {
                    source: doc,
                    texts,
                    details,
                })
            }
        })
    }

    /// The fastest path of a reader that reads a line off its structural index itself
    /// ([`crate::lazy`]): `read` is handed the checked document, where the parser allows it
    /// ([`Parser::set_index`]), the line is shorter than [`BIG_LINE`] and the index vouches for
    /// it. `None` otherwise, or where `read` gives up: the caller then takes
    /// [`Parser::parse_tape`] or [`Parser::parse_into`].
    pub(crate) fn parse_doc<'s, R>(
        &mut self,
        text: &'s [u8],
        read: impl FnOnce(&crate::lazy::Doc<'s, '_>) -> Option<R>,
    ) -> Option<R> {
        if self.tape_only {
            return None;
        }
        let line = trim(text);
        if line.len() >= BIG_LINE {
            return None;
        }
        read(&self.lazy.document(line)?)
    }

    /// The fast path of a reader that walks simd-json's tape itself: parses one line
    /// (skimmed by `skim` first) and hands the tape's nodes to `read`. `None` when simd-json
    /// refuses the line, when it does not start with `{`, or when it is of [`BIG_LINE`] bytes
    /// or more: the caller then takes [`Parser::parse_into`], which repairs and judges it as
    /// every line is judged.
    pub fn parse_tape<'s, R>(
        &'s mut self,
        text: &'s [u8],
        skim: Option<Skim>,
        read: impl FnOnce(&[simd_json::Node<'s>]) -> R,
    ) -> Option<R> {
        let text = trim(text);
        if text.first() != Some(&b'{') || text.len() >= BIG_LINE {
            return None;
        }
        let simd = &mut self.simd;
        simd.load(text, skim.as_ref());
        simd.tape_of_buffer(read).ok()
    }

    /// Parses one line (without its terminator) into `T`, with `skim` (not the parser's own:
    /// [`Parser::set_skim`] is for envelopes), and whether the line needed repair. The same
    /// promises as [`Parser::parse_as`]: a line is read or refused alike with the skim or
    /// without, the error of a refused line is the whole line's.
    pub fn parse_into<'s, T: Deserialize<'s>>(
        &'s mut self,
        text: &'s [u8],
        skim: Option<Skim>,
    ) -> Result<(T, bool), ParseError> {
        self.parse_with(text, skim, None)
    }

    /// [`Parser::parse_into`], the tape read by `from_tape` where given instead of by serde
    /// (a [`FromSource`] reader, `Parser::read`): it must give what serde gives, or `None`
    /// where serde refuses the value (the line then takes the path serde's refusal takes:
    /// repaired and parsed by serde_json, which keeps the last of a repeated key).
    fn parse_with<'s, T: Deserialize<'s>>(
        &'s mut self,
        text: &'s [u8],
        skim: Option<Skim>,
        from_tape: Option<TapeReader<'s, T>>,
    ) -> Result<(T, bool), ParseError> {
        let text = trim(text);
        match text.first() {
            Some(b'{') => {}
            Some(&b) => return Err(ParseError::NotAnObject(char::from(b))),
            None => return Err(ParseError::Invalid("empty line".into())),
        }
        let Self { simd, fallback, .. } = self;
        // UTF-8 is checked first: serde_json does not check the strings it skips.
        if text.len() >= BIG_LINE && std::str::from_utf8(text).is_ok() {
            let mut de = serde_json::Deserializer::from_slice(text);
            if let Ok(value) = T::deserialize(&mut de)
                && de.end().is_ok()
            {
                return Ok((value, false));
            }
        }
        // A skimmed line goes straight into simd-json's buffer (one copy). What simd-json refuses
        // of it is judged on the whole line below, as a line parsed whole is: the repair, the
        // fallback and the error (its column) are the line's own. A line of BIG_LINE bytes or
        // more is not skimmed: what is left of it could still be too big for simd-json's copies.
        simd.load(text, skim.as_ref().filter(|_| text.len() < BIG_LINE));
        let first = match from_tape {
            Some(read) => simd.tape_of_buffer(read).ok().flatten(),
            None => simd.parse_buffer().ok(),
        };
        if let Some(value) = first {
            return Ok((value, false));
        }
        let repaired = repair_line(text);
        let was_repaired = matches!(repaired, std::borrow::Cow::Owned(_));
        // serde_json accepts what simd-json may not (duplicate keys, deep nesting) and checks
        // that nothing but whitespace follows the object; its message (with the column) is the
        // one reported.
        *fallback = serde_json::from_slice(&repaired).map_err(|e| {
            ParseError::Invalid(format!("{} at column {}", describe(&e), e.column()))
        })?;
        if !fallback.is_object() {
            return Err(ParseError::Invalid("not a JSON object".into()));
        }
        let value = T::deserialize(&*fallback).map_err(|e| ParseError::Invalid(e.to_string()))?;
        Ok((value, was_repaired))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &mut Parser, line: &[u8]) -> Result<(Option<String>, bool), ParseError> {
        p.parse(line)
            .map(|r| (r.envelope.kind.get().map(str::to_owned), r.repaired))
    }

    /// The index's path and the tape's give the same envelope; a line the index does not
    /// vouch for (`\u` escape) is read off the tape either way.
    #[test]
    fn the_index_and_the_tape_read_the_same_envelope() {
        let lines: [&[u8]; 3] = [
            br#"{"type":"assistant","uuid":"u","message":{"content":[{"type":"text","text":"a\nb"}],"usage":{"output_tokens":7}}}"#,
            br#"{"type":"user","message":{"content":"caf\u00e9"}}"#,
            b"{\"type\":\"user\",\"cwd\":\"\xff\"}",
        ];
        for line in lines {
            let mut on = Parser::new();
            let mut off = Parser::new();
            off.set_index(false);
            let a = on
                .parse(line)
                .map(|p| format!("{:?} {}", p.envelope, p.repaired));
            let b = off
                .parse(line)
                .map(|p| format!("{:?} {}", p.envelope, p.repaired));
            assert_eq!(a, b, "{}", String::from_utf8_lossy(line));
        }
        assert!(
            crate::envelope_lazy::off_index(lines[0]).is_some(),
            "the plain line is read off the index"
        );
        assert_eq!(crate::envelope_lazy::off_index(lines[1]), None);
    }

    #[test]
    fn accepts_every_object_and_refuses_everything_else() {
        let mut p = Parser::new();
        assert_eq!(
            kind(&mut p, br#"{"type":"user"}"#),
            Ok((Some("user".into()), false))
        );
        assert_eq!(
            kind(&mut p, br#"{"type":"a","type":"b"}"#),
            Ok((Some("b".into()), false))
        );
        assert_eq!(kind(&mut p, br#"{"type":7}"#), Ok((None, false)));
        assert_eq!(
            kind(&mut p, b"{\"type\":\"\xff\"}"),
            Ok((Some("\u{FFFD}".into()), true))
        );
        assert_eq!(
            kind(&mut p, br#"{"type":"\ud83d"}"#),
            Ok((Some("\u{FFFD}".into()), true))
        );
        assert!(matches!(
            kind(&mut p, b"[1]"),
            Err(ParseError::NotAnObject('['))
        ));
        assert!(matches!(
            kind(&mut p, br#"{"a":1}{"b":2}"#),
            Err(ParseError::Invalid(_))
        ));
        assert!(matches!(
            kind(&mut p, br#"{"a":1"#),
            Err(ParseError::Invalid(_))
        ));
        assert!(matches!(
            kind(&mut p, br#"{"a":1} x"#),
            Err(ParseError::Invalid(_))
        ));
    }

    #[test]
    fn one_scratch_parses_line_after_line_like_serde_json() {
        #[derive(Deserialize)]
        struct Borrowed<'a> {
            k: &'a str,
        }
        // Lines growing and shrinking (the tape and the padded copy are reused), escapes,
        // invalid lines in between, and a document ending exactly where the padding starts.
        let long = format!(
            r#"{{"a":"{}","b":[1,2.5,{{"c":null}}]}}"#,
            "x\\n\\\"y".repeat(5000)
        );
        let lines: Vec<Vec<u8>> = vec![
            br#"{"type":"user","n":1}"#.to_vec(),
            long.clone().into_bytes(),
            b"{}".to_vec(),
            br#"{"a":1"#.to_vec(),
            br#"{"s":"\u00e9\ud83d\ude00","t":true}"#.to_vec(),
            b"[1,2,3]".to_vec(),
            br#"{"a":1} {"b":2}"#.to_vec(),
            long.into_bytes(),
            b"123".to_vec(),
            br#"{"k":"v"}"#.to_vec(),
        ];
        let mut scratch = SimdScratch::new();
        for line in &lines {
            let want = serde_json::from_slice::<serde_json::Value>(line).ok();
            let got = scratch.from_slice::<serde_json::Value>(line).ok();
            assert_eq!(got, want, "{}", String::from_utf8_lossy(line));
        }
        for (line, k) in [
            (br#"{"k":"one"}"#.as_slice(), "one"),
            (br#"{"k":"tw\u006f"}"#, "two"),
        ] {
            assert_eq!(
                scratch.from_slice::<Borrowed<'_>>(line).expect("parse").k,
                k
            );
        }
    }

    #[test]
    fn lenient_fields_survive_odd_shapes() {
        let mut p = Parser::new();
        let line = br#"{"type":"assistant","uuid":"u","isSidechain":"yes","message":{"id":"m","content":[1,{"type":"tool_use","id":"t","name":"Bash","input":{"c":1}},"x"],"usage":{"input_tokens":12.0,"output_tokens":5000000000,"cache_read_input_tokens":null,"cache_creation_input_tokens":-3}}}"#;
        let r = p.parse(line).expect("parse");
        let env = r.envelope;
        assert!(!env.is_sidechain.0);
        let msg = env.message.0.expect("message");
        let blocks = msg.content.blocks();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[1].id.get(), Some("t"));
        let u = msg.usage.0.expect("usage");
        assert_eq!(
            (
                u.input_tokens.0,
                u.output_tokens.0,
                u.cache_read_input_tokens.0,
                u.cache_creation_input_tokens.0
            ),
            (12, 5_000_000_000, 0, 0)
        );
        for weird in [
            br#"{"message":null}"#.as_slice(),
            br#"{"message":"text"}"#,
            br#"{"message":{"content":"hi"}}"#,
            br#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":null}]}}"#,
            br#"{"message":{"content":{"a":1}}}"#,
        ] {
            p.parse(weird).expect("lenient");
        }
    }

    #[test]
    fn big_lines_parse_the_same_without_copies() {
        let pad = "x\\n\\\"y".repeat(BIG_LINE / 5);
        for (line, kind, uuid) in [
            // Escaped and plain strings, a tool_result of more than BIG_LINE bytes.
            (
                format!(
                    r#"{{"type":"user","uuid":"u1","message":{{"content":[{{"type":"tool_result","tool_use_id":"t","content":"{pad}"}}]}}}}"#
                ),
                "user",
                "u1",
            ),
            // Duplicate keys (serde_json's derive refuses them): the usual path, last wins.
            (
                format!(r#"{{"type":"a","type":"assistant","uuid":"u\u0032","x":"{pad}"}}"#),
                "assistant",
                "u2",
            ),
        ] {
            assert!(line.len() >= BIG_LINE);
            let mut p = Parser::new();
            let r = p.parse(line.as_bytes()).expect("parse");
            assert_eq!(r.envelope.kind.get(), Some(kind));
            assert_eq!(r.envelope.uuid.get(), Some(uuid));
        }
        let mut bytes = format!(r#"{{"type":"user","x":"{pad}"}}"#).into_bytes();
        bytes[20] = 0xff;
        let mut p = Parser::new();
        let r = p.parse(&bytes).expect("repaired");
        assert!(r.repaired);
        let mut p = Parser::new();
        assert!(matches!(
            p.parse(format!(r#"{{"x":"{pad}"}} trailing"#).as_bytes()),
            Err(ParseError::Invalid(_))
        ));
        let text =
            format!(r#"{{"message":{{"content":[{{"type":"tool_result","content":"{pad}"}}]}}}}"#);
        let r = p.parse(text.as_bytes()).expect("parse");
        let msg = r.envelope.message.0.expect("message");
        // Text bytes after unescaping: "x\n\"y" is four.
        assert_eq!(
            msg.content.blocks()[0].content.text,
            4 * (BIG_LINE as u64 / 5)
        );
    }

    #[test]
    fn tool_result_size_counts_text_bytes() {
        let mut p = Parser::new();
        let line = br#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"abcd"},{"type":"text","text":"\u00e9"}]},{"type":"tool_result","tool_use_id":"s","content":"xyz"}]}}"#;
        let r = p.parse(line).expect("parse");
        let msg = r.envelope.message.0.expect("message");
        let sizes: Vec<u64> = msg
            .content
            .blocks()
            .iter()
            .map(|b| b.content.text)
            .collect();
        assert_eq!(sizes, vec![6, 3]);
    }

    #[test]
    fn tool_result_size_keeps_media_and_names_apart() {
        let mut p = Parser::new();
        // An image result with 5 bytes of text, and a ToolSearch result naming two tools; the
        // `type` tag after the fields and a `source` before it are both handled.
        let line = br#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"text":"shot:","type":"text"},{"source":{"type":"base64","media_type":"image/png","data":"aGVsbG8gd29ybGQ="},"type":"image"},{"type":"document","source":{"type":"base64","data":"UERG"}}]},{"type":"tool_result","tool_use_id":"s","content":[{"type":"tool_reference","tool_name":"TaskCreate"},{"type":"tool_reference","tool_name":"Read"}]}]}}"#;
        let r = p.parse(line).expect("parse");
        let msg = r.envelope.message.0.expect("message");
        let blocks = msg.content.blocks();
        let img = blocks[0].content;
        assert_eq!((img.text, img.media, img.images, img.other), (5, 20, 1, 9));
        assert_eq!(img.total(), 5 + 20 + 9, "every string byte, as before");
        let names = blocks[1].content;
        assert_eq!(
            (names.text, names.media, names.images, names.other),
            (0, 0, 0, 14)
        );
    }
}
