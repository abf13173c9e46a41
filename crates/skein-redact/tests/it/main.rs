//! Integration tests for skein-redact (one test binary).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod api;
mod corpus;
mod docs;
mod families;
mod planted;
mod props;
mod samples;

use std::sync::LazyLock;

use serde_json::Value;
use skein_redact::{LineOutcome, RedactOptions, Redactor};

/// Default options (tier C on).
pub(crate) static STRICT: LazyLock<Redactor> =
    LazyLock::new(|| Redactor::new(&RedactOptions::default()).expect("built-in rules compile"));

/// Same rules, but every string of every line is decoded and scanned (no raw prefilter).
pub(crate) static PARANOID: LazyLock<Redactor> = LazyLock::new(|| {
    Redactor::new(&RedactOptions {
        decode_all: true,
        ..RedactOptions::default()
    })
    .expect("compile")
});

pub(crate) fn redact(r: &Redactor, line: &str) -> (String, LineOutcome) {
    let mut out = Vec::new();
    let o = r.redact_line(line.as_bytes(), &mut out);
    (
        String::from_utf8(out).expect("output is UTF-8 when input is"),
        o,
    )
}

/// Every string in a JSON value (keys included), decoded.
pub(crate) fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

/// Resolves a finding path like `message.content[0].input.command`.
pub(crate) fn at<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = v;
    for part in path.split('.') {
        let (key, idx) = match part.find('[') {
            Some(i) => (&part[..i], Some(&part[i..])),
            None => (part, None),
        };
        if !key.is_empty() {
            cur = cur.get(key)?;
        }
        for ix in idx.unwrap_or("").split(']').filter(|s| !s.is_empty()) {
            cur = cur.get(ix.trim_start_matches('[').parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}
