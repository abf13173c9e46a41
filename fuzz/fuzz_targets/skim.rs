//! Any bytes as one line: parsed with the bulky values skimmed off (`skein_core::skim`) or
//! whole, it is a record alike (or fails with the same error), and what a reader that looks at
//! no bulky value reads of it is the same. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skein_core::skim::{BULKY, Skim};
use skein_core::{Envelope, Parser};

/// The ids, times and counters of a record: fields no skim may change.
fn ids(e: &Envelope<'_>) -> String {
    let m = e.message.0.as_ref();
    let blocks: Vec<_> = m
        .map_or(&[][..], |m| m.content.blocks())
        .iter()
        .map(|b| {
            (
                b.kind().map(str::to_owned),
                b.id.get().map(str::to_owned),
                b.tool_use_id.get().map(str::to_owned),
            )
        })
        .collect();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?}",
        e.kind.get(),
        e.uuid.get(),
        e.timestamp.get(),
        m.and_then(|m| m.id.get()),
        m.and_then(|m| m.usage.0),
        blocks
    )
}

fuzz_target!(|data: &[u8]| {
    let mut whole = Parser::new();
    let mut skimming = Parser::new();
    skimming.set_skim(Some(Skim {
        keys: BULKY,
        all_but: false,
        min_len: 8,
    }));
    let a = whole.parse(data).map(|p| ids(&p.envelope));
    let b = skimming.parse(data).map(|p| ids(&p.envelope));
    // The same record, or the same error (its column included).
    assert_eq!(a, b, "{}", String::from_utf8_lossy(data));
});
