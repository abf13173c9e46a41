//! Any bytes as one line: projected off the structural index or the skimmed tape, whichever
//! takes it first (`skein_core::project`), or whole: the same object is written, or the same
//! error is returned.
//! Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skein_core::{Parser, Projection};

const NAMES: &[&str] = &["type", "uuid", "message.id", "message.content", "toolUseResult"];

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let projection = Projection::new(NAMES).expect("paths");
    let skimmed = projection.write(&mut parser, data, b"", &mut a);
    let whole = projection.clone().whole().write(&mut parser, data, b"", &mut b);
    assert_eq!(skimmed.is_ok(), whole.is_ok(), "{}", String::from_utf8_lossy(data));
    assert_eq!(skimmed.err(), whole.err());
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
});
