//! Any bytes: the reader never panics, and reading from a slice or from a stream in small
//! blocks gives the same statistics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skein_analysis::{AnalysisOptions, analyze};
use skein_core::{ReadLines, SliceLines};

fuzz_target!(|data: &[u8]| {
    let options = AnalysisOptions::default();
    let a = analyze("fuzz", SliceLines::new(data), &options).expect("slice reads cannot fail");
    let block = 1 + data.first().copied().unwrap_or(0) as usize % 61;
    let b = analyze("fuzz", ReadLines::with_block_size(data, block), &options)
        .expect("in-memory reads cannot fail");
    assert_eq!(a.stats, b.stats);
    assert!(a.stats.invalid_lines <= a.stats.lines);
});
