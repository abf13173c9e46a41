//! The shared corpus of real transcripts (`SKEIN_CORPUS`, default `../shared/corpus` beside
//! the checkout): every file parses with no invalid line except the one known joined line, and
//! skein's tool pairing and usage agree with an independent serde_json computation.

use std::collections::{BTreeMap, BTreeSet};

use skein_analysis::{AnalysisOptions, analyze};
use skein_core::ReadLines;

/// Lines known to be broken in the corpus: `(path suffix, line number)`.
const KNOWN_INVALID: &[(&str, u64)] = &[("entireio__cli/37/995ebed6e4/2/full.jsonl", 128)];

/// The independent oracle: serde_json values, no shared code with skein.
#[derive(Debug, Default, PartialEq, Eq)]
struct Oracle {
    uses: BTreeSet<String>,
    results: BTreeSet<String>,
    errors: BTreeSet<String>,
    output_tokens: u64,
    messages: u64,
}

fn oracle(data: &[u8]) -> Oracle {
    let mut o = Oracle::default();
    let mut groups: BTreeMap<String, u64> = BTreeMap::new();
    let mut singles = 0u64;
    let mut single_out = 0u64;
    for line in data.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let kind = v["type"].as_str().unwrap_or("");
        let msg = &v["message"];
        if let Some(blocks) = msg["content"].as_array() {
            for b in blocks {
                match (kind, b["type"].as_str()) {
                    ("assistant", Some("tool_use")) => {
                        if let Some(id) = b["id"].as_str() {
                            o.uses.insert(id.into());
                        }
                    }
                    ("user", Some("tool_result")) => {
                        if let Some(id) = b["tool_use_id"].as_str() {
                            o.results.insert(id.into());
                            if b["is_error"] == serde_json::Value::Bool(true) {
                                o.errors.insert(id.into());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if kind == "assistant" && msg["usage"].is_object() && msg["model"] != "<synthetic>" {
            let out = msg["usage"]["output_tokens"].as_u64().unwrap_or(0);
            if let Some(id) = msg["id"].as_str() {
                let key = format!("{id}\0{}", v["requestId"].as_str().unwrap_or(""));
                let e = groups.entry(key).or_insert(0);
                *e = (*e).max(out);
            } else {
                singles += 1;
                single_out += out;
            }
        }
    }
    o.messages = groups.len() as u64 + singles;
    o.output_tokens = groups.values().sum::<u64>() + single_out;
    o
}

#[test]
fn corpus_parses_and_pairs_like_an_independent_reader() {
    let Some((_, files)) = skein_testkit::corpus_files() else {
        return;
    };
    assert!(
        files.len() > 100,
        "expected the 215-file corpus, found {}",
        files.len()
    );
    let mut checked_pairs = 0;
    // One `Reuse` for every file, as a `skein stats` worker keeps it from file to file.
    let (mut reuse, mut parser) = (skein_analysis::Reuse::default(), skein_core::Parser::new());
    for path in &files {
        let data = std::fs::read(path).expect("read corpus file");
        let a = analyze(
            &path.display().to_string(),
            ReadLines::with_block_size(&data[..], 64 << 10),
            &AnalysisOptions::default(),
        )
        .expect("read");
        let s = &a.stats;
        let shown = path.display().to_string();
        // `skein stats` counts tools by id only, over a memory slice: the same statistics.
        let counted = analyze(
            &path.display().to_string(),
            skein_core::SliceLines::new(&data),
            &AnalysisOptions {
                tool_counts_only: true,
                ..AnalysisOptions::default()
            },
        )
        .expect("read");
        assert_eq!(&counted.stats, s, "{shown}: counted tools");
        let reused = skein_analysis::file_stats(
            &shown,
            skein_core::SliceLines::new(&data),
            &AnalysisOptions {
                tool_counts_only: true,
                ..AnalysisOptions::default()
            },
            &mut parser,
            &mut reuse,
        )
        .expect("read");
        assert_eq!(
            &reused, s,
            "{shown}: with the collections of the files before"
        );
        let expected_invalid: Vec<u64> = KNOWN_INVALID
            .iter()
            .filter(|(suffix, _)| shown.ends_with(suffix))
            .map(|&(_, line)| line)
            .collect();
        let got_invalid: Vec<u64> = s.invalid.iter().map(|i| i.line).collect();
        assert_eq!(got_invalid, expected_invalid, "{shown}: invalid lines");
        assert!(s.torn_tail.is_none(), "{shown}: torn tail");

        let o = oracle(&data);
        let t = s.tools;
        assert_eq!(t.uses, o.uses.len() as u64, "{shown}: uses");
        assert_eq!(t.results, o.results.len() as u64, "{shown}: results");
        assert_eq!(t.errors, o.errors.len() as u64, "{shown}: errors");
        let paired: BTreeSet<&String> = o.uses.intersection(&o.results).collect();
        assert_eq!(t.paired, paired.len() as u64, "{shown}: paired");
        // Every paired id is found both ways: use → result and result → use.
        for id in &paired {
            let u = a.tools.use_for(id).expect("use of a paired id");
            let r = a.tools.result_for(id).expect("result of a paired id");
            assert_eq!(u.id, r.tool_use_id);
            checked_pairs += 1;
        }
        assert_eq!(s.usage.messages, o.messages, "{shown}: usage groups");
        assert_eq!(
            s.usage.output_tokens, o.output_tokens,
            "{shown}: output tokens"
        );
    }
    assert!(checked_pairs > 1000, "only {checked_pairs} pairs checked");
}

/// The envelope off the line's structural index (the parser's fast path where tool inputs are
/// skipped, `skein_core::envelope_lazy`), off simd-json's tape (where they are built,
/// `skein_core::envelope_tape`) and as serde reads it: the same on every line of the corpus
/// (compared by their `Debug` forms, with the repair flag, or the same error). And the index
/// takes nearly every line: what it leaves to simd-json (`\u` escapes, exponents) is rare.
#[test]
fn every_envelope_reads_the_same_off_the_tape() {
    use serde::de::IgnoredAny;
    use skein_core::envelope_tape::both_ways;
    use skein_core::{LineSource, Parser, SliceLines};

    let Some((_, files)) = skein_testkit::corpus_files() else {
        return;
    };
    let mut parser = Parser::new();
    let (mut lines, mut off_index) = (0, 0);
    for f in &files {
        let data = std::fs::read(f).expect("read a corpus file");
        let mut source = SliceLines::new(&data);
        while source.advance().expect("in memory") {
            let text = source.line().text;
            let (a, b) = both_ways::<IgnoredAny>(&mut parser, text);
            assert_eq!(a, b, "{}:{}", f.display(), source.line().number);
            if let Some(lazy) = skein_core::envelope_lazy::off_index(text) {
                assert_eq!(lazy, b, "{}:{}", f.display(), source.line().number);
                off_index += 1;
            }
            let (a, b) = both_ways::<serde_json::Value>(&mut parser, text);
            assert_eq!(a, b, "{}:{}", f.display(), source.line().number);
            lines += 1;
        }
    }
    assert!(lines > 10_000, "{lines} lines");
    assert!(
        off_index * 100 >= lines * 95,
        "{off_index} of {lines} lines read off the index"
    );
}

/// A visitor that reads texts and counts those it is shown.
#[derive(Default)]
struct TextCounter(u64);

impl skein_analysis::RecordVisitor<serde::de::IgnoredAny> for TextCounter {
    fn record(
        &mut self,
        _: &skein_core::Line<'_>,
        env: &skein_core::Envelope<'_>,
        _: Option<(skein_graph::NodeId, bool)>,
    ) {
        use skein_core::Content;
        if let Some(m) = env.message.0.as_ref() {
            self.0 += match &m.content {
                Content::Text(t) => u64::from(t.get().is_some()),
                Content::Blocks(b) => b.iter().filter(|b| b.text.get().is_some()).count() as u64,
                Content::None => 0,
            };
        }
    }
}

/// The analysis reads no text (`RecordVisitor::TEXTS`): without a visitor, whose envelopes
/// leave the texts out, it is the analysis with a visitor that reads them, on every file of
/// the corpus. And a visitor that reads texts is shown them, beside one that does not.
#[test]
fn the_analysis_is_the_same_without_the_texts() {
    use skein_analysis::{Analysis, NoVisitor, RecordVisitor, analyze_visit};
    use skein_core::{Parser, SliceLines};

    /// `data`'s analysis with `visitor`, which decides whether texts are read.
    fn analysis<V: RecordVisitor<serde::de::IgnoredAny>>(
        name: &str,
        data: &[u8],
        parser: &mut Parser,
        visitor: &mut V,
    ) -> Analysis {
        let options = AnalysisOptions::default();
        analyze_visit(name, SliceLines::new(data), &options, parser, visitor).expect("in memory")
    }

    let Some((_, files)) = skein_testkit::corpus_files() else {
        return;
    };
    let mut parser = Parser::new();
    let mut shown = 0;
    for f in &files {
        let data = std::fs::read(f).expect("read a corpus file");
        let name = f.display().to_string();
        let without = analysis(&name, &data, &mut parser, &mut NoVisitor);
        let mut both = (NoVisitor, TextCounter::default());
        let with = analysis(&name, &data, &mut parser, &mut both);
        assert_eq!(without.stats, with.stats, "{name}");
        shown += both.1.0;
    }
    assert!(shown > 1000, "{shown} texts shown");
}
