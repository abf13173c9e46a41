//! Any bytes as one JSONL line through the redaction JSON walker: no panic; valid JSON stays
//! valid; the output is the input with some spans replaced by `[REDACTED:…]` placeholders;
//! redacting again changes nothing; the raw prefilter agrees with decoding every string; the
//! plain-text path never panics either.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use skein_redact::{RedactOptions, Redactor};

static STRICT: LazyLock<Redactor> =
    LazyLock::new(|| Redactor::new(&RedactOptions::default()).expect("built-in rules compile"));
static DECODE_ALL: LazyLock<Redactor> = LazyLock::new(|| {
    Redactor::new(&RedactOptions {
        decode_all: true,
        ..RedactOptions::default()
    })
    .expect("built-in rules compile")
});

/// Long inputs add little but slow every execution down (thousands per second is the aim).
const MAX_LEN: usize = 4096;

/// `out` splits into pieces around placeholders that appear in `input` in order, the first
/// as its prefix and the last as its suffix.
fn only_placeholders_inserted(input: &[u8], out: &[u8]) -> bool {
    let mut pieces = Vec::new();
    let mut rest = out;
    while let Some(p) = find(rest, b"[REDACTED:") {
        let Some(close) = rest[p..].iter().position(|&b| b == b']') else {
            break;
        };
        pieces.push(&rest[..p]);
        rest = &rest[p + close + 1..];
    }
    pieces.push(rest);
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return input == out;
    }
    if !input.starts_with(first) || !input.ends_with(last) {
        return false;
    }
    let mut at = first.len();
    for piece in &pieces[1..pieces.len() - 1] {
        match find(&input[at..], piece) {
            Some(p) => at += p + piece.len(),
            None => return false,
        }
    }
    at <= input.len() - last.len()
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    if n.is_empty() {
        return Some(0);
    }
    h.windows(n.len()).position(|w| w == n)
}

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_LEN {
        return;
    }
    let mut out = Vec::new();
    let outcome = STRICT.redact_line(data, &mut out);
    assert_eq!(outcome.changed, out != data);
    assert!(only_placeholders_inserted(data, &out));
    let mut again = Vec::new();
    assert!(!STRICT.redact_line(&out, &mut again).changed);
    assert_eq!(again, out);
    if serde_json::from_slice::<serde_json::Value>(data).is_ok() {
        assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
        let mut all = Vec::new();
        DECODE_ALL.redact_line(data, &mut all);
        assert_eq!(all, out);
    }
    let mut text = Vec::new();
    STRICT.redact_text(data, &mut text);
});
