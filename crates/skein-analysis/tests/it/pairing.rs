//! Tool pairing details on the bundled sample: names, inputs, sizes, errors, durations.

use skein_analysis::{AnalysisOptions, NoVisitor, analyze_visit};
use skein_core::{Parser, SliceLines};

const SAMPLE: &[u8] = include_bytes!(
    "../../../../testdata/sample/projects/-home-dev-widgets/0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
);

#[test]
fn pairs_carry_name_input_size_error_and_duration() {
    let a = analyze_visit::<_, serde_json::Value, _>(
        "sample",
        SliceLines::new(SAMPLE),
        &AnalysisOptions::default(),
        &mut Parser::new(),
        &mut NoVisitor,
    )
    .expect("read");
    let bash = a.tools.use_for("toolu_03").expect("Bash call");
    assert_eq!(bash.name.as_deref(), Some("Bash"));
    assert_eq!(
        bash.input.as_ref().and_then(|i| i["command"].as_str()),
        Some("cargo test --quiet")
    );
    let result = a.tools.result_for("toolu_03").expect("Bash result");
    assert!(result.is_error);
    assert_eq!(
        result.bytes,
        "<tool_use_error>error: could not compile `widgets`</tool_use_error>".len() as u64
    );
    let pairs = a.tools.pairs();
    let pair = pairs
        .iter()
        .find(|p| p.tool_use.is_some_and(|u| u.id == "toolu_03"))
        .expect("pair");
    // The sample's timestamps advance one second per record.
    assert!(
        pair.duration_ms().is_some_and(|d| d > 0 && d < 5_000),
        "{:?}",
        pair.duration_ms()
    );
    // The interrupted call has no result.
    let interrupted = pairs
        .iter()
        .find(|p| p.tool_use.is_some_and(|u| u.id == "toolu_07"))
        .expect("interrupted call");
    assert!(interrupted.result.is_none());
    // The fast path does not keep inputs.
    let fast = skein_analysis::analyze(
        "sample",
        SliceLines::new(SAMPLE),
        &AnalysisOptions::default(),
    )
    .expect("read");
    assert!(fast.tools.use_for("toolu_03").expect("use").input.is_none());
}

/// One `Reuse` through every fixture of `testdata/stats` and the sample, twice over in
/// turns, as a `skein stats` worker keeps it from file to file: each file's statistics are
/// the ones of a pass of its own.
#[test]
fn reused_collections_give_each_file_its_own_statistics() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/stats");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("testdata/stats")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| std::fs::read(p).expect("read fixture"))
        .collect();
    files.push(SAMPLE.to_vec());
    assert!(files.len() > 10, "{} fixtures", files.len());
    let options = AnalysisOptions {
        tool_counts_only: true,
        ..AnalysisOptions::default()
    };
    let (mut reuse, mut parser) = (skein_analysis::Reuse::default(), Parser::new());
    for data in files.iter().chain(files.iter().rev()) {
        let own = skein_analysis::analyze("f", SliceLines::new(data), &options).expect("read");
        let reused = skein_analysis::file_stats(
            "f",
            SliceLines::new(data),
            &options,
            &mut parser,
            &mut reuse,
        )
        .expect("read");
        assert_eq!(reused, own.stats);
    }
}
