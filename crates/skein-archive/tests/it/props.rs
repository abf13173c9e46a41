//! Property: whatever pieces a transcript grows by (splitting lines anywhere) and whenever the
//! archive runs, the archive always equals the source's complete lines, one frame per run that
//! found new lines, and verify stays clean.

use crate::common;

use common::{append, count_frames, decode_whole, ingest, main_kind, scratch};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn archive_is_always_the_complete_lines(
        pieces in prop::collection::vec((prop::collection::vec(0u8..8, 0..400), any::<bool>()), 1..12)
    ) {
        let (_dir, src, root, a) = scratch();
        let kind = main_kind("p1");
        let mut source = Vec::new();
        let mut frames_expected = 0;
        let mut archived = 0;
        std::fs::write(&src, b"").expect("create");
        for (bytes, run) in pieces {
            // Map to a small alphabet with plenty of newlines.
            let piece: Vec<u8> = bytes.iter().map(|b| b"{}ab\"x\n\n"[*b as usize]).collect();
            append(&src, &String::from_utf8(piece.clone()).expect("ascii"));
            source.extend_from_slice(&piece);
            if run {
                let r = ingest(&a, &src, &kind).expect("ingest");
                let complete = source.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                if complete > archived {
                    frames_expected += 1;
                    archived = complete;
                }
                if let Some(p) = r.archive_path {
                    prop_assert_eq!(decode_whole(&p), source[..complete].to_vec());
                    prop_assert_eq!(count_frames(&p), frames_expected);
                } else {
                    prop_assert_eq!(complete, 0);
                }
            }
        }
        let rep = skein_archive::verify(&root).expect("verify");
        prop_assert!(rep.issues.is_empty(), "{:?}", rep.issues);
    }
}
