//! Any bytes as one line: the envelope read off simd-json's tape (`Parser::parse_as`, every
//! reader's path) and the envelope serde reads (`Parser::parse_into`) are the same, tool inputs
//! skipped or built, or the line is refused alike. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use skein_core::envelope_tape::FromTape;
use skein_core::{Envelope, Parser};

fn both<I>(parser: &mut Parser, line: &[u8]) -> (String, String)
where
    I: for<'a> serde::Deserialize<'a> + for<'a> FromTape<'a> + Default + std::fmt::Debug,
{
    let tape = match parser.parse_as::<I>(line) {
        Ok(p) => format!("{:?} {}", p.envelope, p.repaired),
        Err(e) => format!("error: {e}"),
    };
    let serde = match parser.parse_into::<Envelope<'_, I>>(line, None) {
        Ok((e, repaired)) => format!("{e:?} {repaired}"),
        Err(e) => format!("error: {e}"),
    };
    (tape, serde)
}

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new();
    let (a, b) = both::<IgnoredAny>(&mut parser, data);
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
    let (a, b) = both::<serde_json::Value>(&mut parser, data);
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
});
