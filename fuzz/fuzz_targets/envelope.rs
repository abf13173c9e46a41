//! Any bytes as one line: the envelope read off simd-json's tape (`Parser::parse_as`, every
//! reader's path) and the envelope serde reads (`Parser::parse_into`) are the same, tool inputs
//! skipped or built, or the line is refused alike. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use skein_core::Parser;
use skein_core::envelope_tape::both_ways;

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new();
    let (a, b) = both_ways::<IgnoredAny>(&mut parser, data);
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
    let (a, b) = both_ways::<serde_json::Value>(&mut parser, data);
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
});
