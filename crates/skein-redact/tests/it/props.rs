//! Property tests: arbitrary input never panics, valid JSON stays valid, redaction is
//! idempotent, and the fast path agrees with decoding every string.

use proptest::prelude::*;
use serde_json::Value;

use crate::{PARANOID, STRICT, redact};

/// Fragments that steer random lines towards anchors, escapes and JSON syntax.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\n",
    "\\\"",
    "\\u0041",
    "\\ud83d",
    "\\/",
    " ",
    "ghp_",
    "sk-ant-api03-",
    "AKIA",
    "eyJ",
    ".eyJ",
    "PRIVATE KEY",
    "-----BEGIN ",
    "-----END ",
    "://",
    "@",
    "password",
    "TOKEN",
    "_key",
    "=",
    "Key",
    "Q~",
    "xox",
    "secret",
    "[REDACTED:x]",
    "uuid",
    "signature",
    "data",
    "é",
    "\u{1F600}",
    "\n",
    "a",
    "Z",
    "0",
    "9",
    "-",
    "_",
    "/",
    "+",
];

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        1 => "[A-Za-z0-9+/_=-]{1,40}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let text = proptest::collection::vec(fragment(), 0..12).prop_map(|v| Value::String(v.concat()));
    let leaf = prop_oneof![
        text,
        any::<i64>().prop_map(Value::from),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool)
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    proptest::sample::select(
                        &[
                            "uuid",
                            "data",
                            "source",
                            "signature",
                            "content",
                            "input",
                            "password",
                            "type",
                            "x"
                        ][..]
                    ),
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn random_lines_never_panic(parts in proptest::collection::vec(fragment(), 0..40)) {
        let line = parts.concat();
        let (out, _) = redact(&STRICT, &line);
        if serde_json::from_str::<Value>(&line).is_ok() {
            prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{} -> {}", line, out);
        }
        prop_assert_eq!(redact(&STRICT, &out).0, out.clone());
    }

    #[test]
    fn random_documents_stay_valid(v in json_value()) {
        let line = serde_json::to_string(&v).expect("serialise");
        let (out, o) = redact(&STRICT, &line);
        prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{} -> {}", line, out);
        prop_assert_eq!(o.changed, out != line);
        prop_assert_eq!(redact(&STRICT, &out).0, out.clone());
        prop_assert_eq!(redact(&PARANOID, &line).0, out);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut out = Vec::new();
        STRICT.redact_line(&bytes, &mut out);
        let mut again = Vec::new();
        STRICT.redact_line(&out, &mut again);
        prop_assert_eq!(again, out);
    }
}
