//! Junk, truncation and giant lines never panic, and the reader's view does not depend on how
//! the input is split into reads.

use proptest::prelude::*;
use skein_analysis::{AnalysisOptions, FileStats, analyze};
use skein_core::{ReadLines, SliceLines};

fn stats_slice(data: &[u8]) -> FileStats {
    analyze("x", SliceLines::new(data), &AnalysisOptions::default())
        .expect("in-memory reads cannot fail")
        .stats
}

fn stats_stream(data: &[u8], block: usize) -> FileStats {
    analyze(
        "x",
        ReadLines::with_block_size(data, block),
        &AnalysisOptions::default(),
    )
    .expect("in-memory reads cannot fail")
    .stats
}

fn non_blank_lines(data: &[u8]) -> u64 {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    data.split(|&b| b == b'\n')
        .filter(|l| l.iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')))
        .count() as u64
}

const SAMPLE: &[u8] = include_bytes!(
    "../../../../testdata/sample/projects/-home-dev-widgets/0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048), block in 1usize..64) {
        let a = stats_slice(&data);
        let b = stats_stream(&data, block);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a.lines, non_blank_lines(&data));
        prop_assert!(a.invalid_lines <= a.lines);
        prop_assert_eq!(a.bytes, data.len() as u64);
    }

    #[test]
    fn truncated_and_mangled_samples_never_panic(cut in 0usize..SAMPLE.len(), flips in proptest::collection::vec((0usize..SAMPLE.len(), any::<u8>()), 0..8), block in 1usize..4096) {
        let mut data = SAMPLE[..cut].to_vec();
        for (at, byte) in flips {
            if at < data.len() {
                data[at] = byte;
            }
        }
        let a = stats_slice(&data);
        let b = stats_stream(&data, block);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a.lines, non_blank_lines(&data));
        let t = a.tools;
        prop_assert_eq!(t.paired + t.unpaired_uses, t.uses);
        prop_assert_eq!(t.paired + t.orphan_results, t.results);
    }

    #[test]
    fn a_prefix_cut_mid_line_is_a_torn_tail(cut in 1usize..SAMPLE.len()) {
        let data = &SAMPLE[..cut];
        let s = stats_slice(data);
        let last_complete = data.last() == Some(&b'\n');
        // The last line is torn exactly when it has no newline and is not a whole object
        // (the cut can fall just before a newline, leaving a complete record).
        let last = &data[data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)..];
        let whole = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(last).is_ok();
        let blank = last.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        prop_assert_eq!(s.torn_tail.is_some(), !last_complete && !whole && !blank);
        if let Some(tail) = s.torn_tail {
            prop_assert_eq!(tail.offset + tail.bytes, cut as u64);
        }
        // Nothing before the cut is invalid: the sample is clean.
        prop_assert_eq!(s.invalid_lines, u64::from(s.torn_tail.is_some()));
    }
}

/// A line just under the default maximum line length (256 MiB) is read and parsed whole.
#[test]
fn a_line_of_almost_256_mib_is_one_record() {
    const BIG: usize = skein_core::lines::DEFAULT_MAX_LINE - 256;
    let mut line = Vec::with_capacity(BIG + 256);
    line.extend_from_slice(br#"{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":""#);
    line.resize(line.len() + BIG, b'a');
    line.extend_from_slice(b"\"}]}}\n");
    line.extend_from_slice(br#"{"type":"assistant","uuid":"a1","parentUuid":"u1"}"#);
    line.push(b'\n');
    let s = stats_stream(&line, 1 << 20);
    assert_eq!((s.lines, s.invalid_lines), (2, 0));
    assert_eq!(s.tools.results, 1);
    assert_eq!(s.chain.active_leaf.as_deref(), Some("a1"));
    assert_eq!(s.bytes, line.len() as u64);
}
