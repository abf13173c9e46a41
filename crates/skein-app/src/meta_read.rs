//! Reading transcripts into [`MetaCollector`]s: each record parsed once and handed to the
//! collector, nothing else. The reports' analysis (`skein_reports::load_session`) also builds
//! the record graph, pairs tool calls with results and counts usage, which the metadata does
//! not need: on a 462 MB session that was half of the pass's time and most of its memory.
//! The collector ignores graph nodes, so it gets the same calls either way.

use std::io;
use std::path::Path;

use serde_json::Value;
use skein_analysis::{RecordVisitor, SpawnLinks};
use skein_core::{Event, LineSource, Parser, ReadLines, Reader, ReaderOptions, SliceLines};
use skein_layout::SessionFiles;
use skein_store::{Input, InputMode};

use crate::error::Error;
use crate::meta::MetaCollector;

/// The collectors of a session's files, in the order of [`SessionFiles`].
#[derive(Debug, Default)]
pub(crate) struct SessionMetas {
    pub(crate) main: Option<MetaCollector>,
    /// One per `SessionFiles::agents` entry.
    pub(crate) agents: Vec<MetaCollector>,
    /// The main transcript's spawning calls (empty without one).
    pub(crate) links: SpawnLinks,
}

/// Feeds every record of `lines` to `c` (invalid lines and a torn tail are skipped, as the
/// analysis skips them), with the reader options the reports use. The values the collector
/// never reads are skimmed off before each line is parsed ([`crate::meta::SKIM`]).
pub fn feed_lines<S: LineSource>(
    c: &mut MetaCollector,
    lines: S,
    parser: &mut Parser,
) -> io::Result<()> {
    feed_lines_with(c, lines, parser, Some(crate::meta::SKIM))
}

/// [`feed_lines`] with `skim` (`None`: every line parsed whole, what the skim is compared
/// with); `parser`'s own setting is restored afterwards.
pub fn feed_lines_with<S: LineSource>(
    c: &mut MetaCollector,
    lines: S,
    parser: &mut Parser,
    skim: Option<skein_core::Skim>,
) -> io::Result<()> {
    let mut skimming = std::mem::take(parser);
    let before = skimming.set_skim(skim);
    let mut reader = Reader::with_parser(lines, ReaderOptions::default(), skimming);
    let result = loop {
        match reader.next_event_as::<Value>() {
            Ok(Some(Event::Record(line, parsed))) => c.record(&line, &parsed.envelope, None),
            Ok(Some(_)) => {}
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    *parser = reader.into_parts().1;
    parser.set_skim(before);
    result
}

/// The collector of one whole transcript.
pub(crate) fn read_file(path: &Path, parser: &mut Parser) -> Result<MetaCollector, Error> {
    let err = |error| Error::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut c = MetaCollector::new();
    match skein_layout::open(path, InputMode::Read).map_err(|e| err(e.source))? {
        Input::Mapped(data) => feed_lines(&mut c, SliceLines::new(&data), parser),
        Input::Stream(r) => feed_lines(&mut c, ReadLines::new(r), parser),
    }
    .map_err(err)?;
    Ok(c)
}

/// The collectors of every file of a session.
pub(crate) fn read_session(s: &SessionFiles, parser: &mut Parser) -> Result<SessionMetas, Error> {
    let main = s
        .main
        .as_deref()
        .map(|p| read_file(p, parser))
        .transpose()?;
    let agents = s
        .agents
        .iter()
        .map(|a| read_file(&a.path, parser))
        .collect::<Result<_, _>>()?;
    let links = main.as_ref().map(|m| m.links().clone()).unwrap_or_default();
    Ok(SessionMetas {
        main,
        agents,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collector of `data`, with the metadata's skim or with every line parsed whole.
    fn collected(
        data: &[u8],
        parser: &mut Parser,
        skim: Option<skein_core::Skim>,
    ) -> MetaCollector {
        let mut c = MetaCollector::new();
        feed_lines_with(&mut c, SliceLines::new(data), parser, skim).expect("feed");
        c
    }

    /// With the skim, as `feed_lines` reads: off the structural index where it vouches for a
    /// line and no block holds a tool input, else off the skimmed tape.
    fn skimmed(data: &[u8], parser: &mut Parser) -> MetaCollector {
        collected(data, parser, Some(crate::meta::SKIM))
    }

    /// With the skim, every line off the skimmed tape.
    fn skimmed_tape(data: &[u8]) -> MetaCollector {
        let mut parser = Parser::new();
        parser.set_index(false);
        collected(data, &mut parser, Some(crate::meta::SKIM))
    }

    /// Every line parsed whole, off the tape.
    fn unskimmed(data: &[u8]) -> MetaCollector {
        let mut parser = Parser::new();
        parser.set_index(false);
        collected(data, &mut parser, None)
    }

    /// The skim given is the one used, and none means none: one that drops `cwd` (which the
    /// metadata does read) changes the metadata; without a skim the value is whole.
    #[test]
    fn the_skim_given_is_the_one_used() {
        let cwd = format!("/w/{}", "d".repeat(3000));
        let line = format!(
            r#"{{"type":"user","cwd":"{cwd}","message":{{"role":"user","content":"hi"}}}}"#
        );
        let greedy = skein_core::Skim {
            keys: &["cwd"],
            all_but: false,
            min_len: 16,
        };
        let mut parser = Parser::new();
        // (The skim is for the tape: off the index nothing is dropped.)
        parser.set_index(false);
        // (The metadata keeps the head of a long working directory.)
        let mut cwd_of = |skim| collected(line.as_bytes(), &mut parser, skim).meta().cwd;
        let whole = cwd_of(None).expect("cwd");
        assert!(whole.starts_with("/w/ddd"), "{whole}");
        assert_eq!(cwd_of(Some(greedy)).as_deref(), Some("x"));
        assert_eq!(cwd_of(None).as_deref(), Some(whole.as_str()));
    }

    /// Lines the skim drops something from.
    fn reduced(data: &[u8]) -> usize {
        let mut out = Vec::new();
        data.split(|&b| b == b'\n')
            .filter(|l| crate::meta::SKIM.reduce(l, &mut out))
            .count()
    }

    #[test]
    fn the_skim_changes_no_metadata() {
        let Some((_, files)) = skein_testkit::corpus_files() else {
            return;
        };
        let mut parser = Parser::new();
        let mut dropped = 0;
        for f in &files {
            let data = std::fs::read(f).expect("read");
            let whole = unskimmed(&data);
            assert_eq!(skimmed(&data, &mut parser), whole, "{}", f.display());
            assert_eq!(skimmed_tape(&data), whole, "{}", f.display());
            dropped += reduced(&data);
        }
        assert!(
            dropped > 1000,
            "the skim dropped values from {dropped} lines"
        );
    }

    /// Long values of every shape the collector cares about, and lines broken inside them: the
    /// same records and the same metadata with the skim as without.
    #[test]
    fn the_skim_changes_no_metadata_of_odd_lines() {
        let long = "ok ".repeat(800);
        let blank = " ".repeat(2400);
        let lines = [
            // A prompt that is long, one that is long but blank, a long text block.
            format!(
                r#"{{"type":"user","timestamp":"2026-05-01T10:00:00Z","message":{{"role":"user","content":"{long}"}}}}"#
            ),
            format!(r#"{{"type":"user","message":{{"role":"user","content":"{blank}"}}}}"#),
            format!(r#"{{"type":"user","message":{{"role":"user","content":"\n\n{blank}\t"}}}}"#),
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"{long}"}}]}}}}"#
            ),
            // A tool call with long inputs, its result, a spawn and its result.
            format!(
                r#"{{"type":"assistant","requestId":"r1","message":{{"id":"m1","model":"claude-opus-4","content":[{{"type":"tool_use","id":"t1","name":"Write","input":{{"file_path":"/w/{long}","content":"{long}"}}}},{{"type":"thinking","thinking":"{long}","signature":"{long}"}}],"usage":{{"input_tokens":3,"output_tokens":1}}}}}}"#
            ),
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"{long}"}}]}},"toolUseResult":{{"stdout":"{long}","originalFile":"{long}"}}}}"#
            ),
            format!(
                r#"{{"type":"assistant","message":{{"id":"m2","content":[{{"type":"tool_use","id":"t2","name":"Task","input":{{"description":"{long}","subagent_type":"Explore","prompt":"{long}"}}}}]}}}}"#
            ),
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t2","content":[{{"type":"text","text":"{long}\nagentId: a1"}}]}}]}},"toolUseResult":{{"agentId":"a1","content":"{long}"}}}}"#
            ),
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":"{long}"}},"content":"{long}","cwd":"/w","gitBranch":"main","sessionId":"s1"}}"#
            ),
        ];
        // Broken at a random place, most often inside a long value: an invalid escape, a raw
        // control byte, a lone surrogate, invalid UTF-8, a stray quote, a cut.
        let breaks: [&[u8]; 7] = [b"\\x", b"\x01", b"\\ud800", b"\xff", b"\"", b"\\u12", b"\\"];
        let mut parser = Parser::new();
        let mut rng = skein_testkit::Xorshift::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next();
        for line in &lines {
            let mut data = line.clone().into_bytes();
            data.push(b'\n');
            let whole = unskimmed(&data);
            assert_eq!(skimmed(&data, &mut parser), whole, "{line}");
            assert_eq!(skimmed_tape(&data), whole, "{line}");
            for b in breaks {
                for _ in 0..20 {
                    let mut broken = line.clone().into_bytes();
                    let at = (next() as usize) % broken.len();
                    broken.splice(at..at, b.iter().copied());
                    if next() % 4 == 0 {
                        broken.truncate(at + b.len() + (next() as usize) % 50);
                    }
                    broken.push(b'\n');
                    let both = [&data[..], &broken[..], &data[..]].concat();
                    let whole = unskimmed(&both);
                    let shown = String::from_utf8_lossy(&broken);
                    assert_eq!(skimmed(&both, &mut parser), whole, "{shown}");
                    assert_eq!(skimmed_tape(&both), whole, "{shown}");
                }
            }
        }
        let dropped: usize = lines.iter().map(|l| reduced(l.as_bytes())).sum();
        assert_eq!(dropped, 6, "lines the skim drops values from");
    }
}
