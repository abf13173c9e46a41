//! Any bytes as a transcript's lines, scanned for usage: the lines that mention `"usage"` read
//! off their structural index where it vouches for them, else their skimmed tape
//! (`skein_reports::usage`, the command's path), off the skimmed tape alone, or parsed whole by
//! serde give the same request copies and the same counts. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skein_core::SliceLines;
use skein_reports::usage::{SessionScan, Source, UsageScanner};

fn scanned(mut scanner: UsageScanner, data: &[u8]) -> SessionScan {
    let mut scan = SessionScan::default();
    scanner
        .scan_lines(SliceLines::new(data), "s1", Source::Main, &mut scan)
        .expect("in memory");
    scan
}

fuzz_target!(|data: &[u8]| {
    let read = scanned(UsageScanner::new(), data);
    let tape = scanned(UsageScanner::tape_only(), data);
    let whole = scanned(UsageScanner::whole(), data);
    assert_eq!(read, whole, "{}", String::from_utf8_lossy(data));
    assert_eq!(tape, whole, "{}", String::from_utf8_lossy(data));
});
