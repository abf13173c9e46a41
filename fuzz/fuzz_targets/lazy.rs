//! Any bytes as one line: where the structural index vouches for it (`skein_core::lazy`),
//! simd-json and serde_json accept it, and the envelope read off the index is the one serde
//! reads. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use skein_core::envelope_lazy::off_index;
use skein_core::envelope_tape::both_ways;
use skein_core::lazy::Lazy;
use skein_core::Parser;

fuzz_target!(|data: &[u8]| {
    let vouched = Lazy::new().document(data).is_some();
    if vouched {
        assert!(simd_json::to_tape(&mut data.to_vec()).is_ok(), "{}", String::from_utf8_lossy(data));
        assert!(serde_json::from_slice::<serde_json::Value>(data).is_ok());
    }
    if let Some(lazy) = off_index(data) {
        let (_, serde) = both_ways::<IgnoredAny>(&mut Parser::new(), data);
        assert_eq!(lazy, serde, "{}", String::from_utf8_lossy(data));
    }
});
