//! The shared corpus of real transcripts: every finding there was reviewed by hand (see
//! `docs/redact.md`); the corpus was scanned for real keys before publication, so anything new
//! here is most likely a false positive to fix in the rules.
//!
//! `SKEIN_CORPUS` overrides the directory (default: the shared corpus next to the checkout).
//! Files are read in place, never copied.

use serde_json::Value;

use crate::{PARANOID, STRICT};

/// `file:line rule json_path start..end`, sorted. Reviewed in docs/redact.md: both are the
/// same fake `API_KEY=sk_live_…` that a code review quotes as "don't capture this" (the tool
/// result and its `toolUseResult` copy). It is credential-shaped, so redacting it is intended.
const EXPECTED: &[&str] = &[
    "entireio__cli/d3/7d736cbc10/0/full.jsonl:57 generic-api-key message.content[0].content[0].text 14370..14394",
    "entireio__cli/d3/7d736cbc10/0/full.jsonl:57 generic-api-key toolUseResult.content[0].text 14370..14394",
];

#[test]
fn corpus_findings_are_the_reviewed_ones() {
    let Some((dir, files)) = skein_testkit::corpus_files() else {
        return;
    };
    let (mut found, mut lines, mut bytes) = (Vec::new(), 0usize, 0usize);
    let (mut out, mut again, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for (n, file) in files.iter().enumerate() {
        let data = std::fs::read(file).expect("readable");
        let rel = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .display()
            .to_string();
        bytes += data.len();
        for (i, line) in data.split(|&b| b == b'\n').enumerate() {
            lines += 1;
            out.clear();
            let o = STRICT.redact_line(line, &mut out);
            if !o.changed {
                assert_eq!(out, line, "{rel}:{}", i + 1);
            }
            if serde_json::from_slice::<Value>(line).is_ok() {
                assert!(
                    serde_json::from_slice::<Value>(&out).is_ok(),
                    "invalid output {rel}:{}",
                    i + 1
                );
            }
            again.clear();
            assert!(
                !STRICT.redact_line(&out, &mut again).changed,
                "not idempotent {rel}:{}",
                i + 1
            );
            // The fast path must agree with decoding everything (every 4th file in debug builds).
            if !cfg!(debug_assertions) || n % 4 == 0 {
                all.clear();
                PARANOID.redact_line(line, &mut all);
                assert_eq!(all, out, "decode_all differs at {rel}:{}", i + 1);
            }
            for f in o.findings {
                found.push(format!(
                    "{rel}:{} {} {} {}..{}",
                    i + 1,
                    f.rule_id,
                    f.json_path,
                    f.start,
                    f.end
                ));
            }
        }
    }
    found.sort();
    assert!(
        lines > 1000 && bytes > 1_000_000,
        "{lines} lines, {bytes} bytes"
    );
    assert_eq!(
        found, EXPECTED,
        "corpus findings changed; review them by hand and update EXPECTED and docs/redact.md"
    );
}
