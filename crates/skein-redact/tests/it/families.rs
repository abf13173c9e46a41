//! Data-driven fixtures (`testdata/redact/families.toml`): for every built-in rule, texts whose
//! marked secret that rule must find, and decoys in which no rule may find anything; plus
//! whole records that pin which values Claude Code's own ids protect and which are scanned.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};
use skein_redact::builtin_rules;

use crate::{PARANOID, STRICT, redact, strings};

#[derive(Deserialize)]
struct Fixtures {
    rule: Vec<RuleFixture>,
    line: Vec<LineFixture>,
}

#[derive(Deserialize)]
struct RuleFixture {
    id: String,
    found: Vec<String>,
    clean: Vec<String>,
}

#[derive(Deserialize)]
struct LineFixture {
    about: String,
    json: String,
}

fn fixtures() -> Fixtures {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/redact/families.toml");
    let text = std::fs::read_to_string(&path).expect("testdata/redact/families.toml is readable");
    toml::from_str(&text).expect("families.toml parses")
}

/// Removes the markers `open…close` and returns (text, marked parts).
fn unmark(text: &str, open: char, close: char) -> (String, Vec<String>) {
    let (mut plain, mut parts, mut cur) = (String::new(), Vec::new(), None::<String>);
    for c in text.chars() {
        match (c, cur.as_mut()) {
            (c, None) if c == open => cur = Some(String::new()),
            (c, Some(_)) if c == close => parts.extend(cur.take()),
            (c, Some(p)) => {
                p.push(c);
                plain.push(c);
            }
            (c, None) => plain.push(c),
        }
    }
    (plain, parts)
}

/// The text inside a tool result and its `toolUseResult` copy.
fn record(text: &str) -> String {
    json!({"type": "user", "uuid": "f-1", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]},
        "toolUseResult": {"stdout": text, "stderr": ""}})
    .to_string()
}

fn decoded(line: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(line).expect("output is JSON");
    let mut all = Vec::new();
    strings(&v, &mut all);
    all
}

#[test]
fn every_rule_has_fixtures() {
    let fx = fixtures();
    for r in builtin_rules() {
        let f = fx.rule.iter().find(|f| f.id == r.id);
        let f = f.unwrap_or_else(|| panic!("no fixture for {}", r.id));
        assert!(!f.found.is_empty() && !f.clean.is_empty(), "{}", r.id);
    }
    for f in &fx.rule {
        assert!(
            builtin_rules().any(|r| r.id == f.id),
            "unknown rule {}",
            f.id
        );
    }
}

#[test]
fn true_positives_are_found_by_their_rule() {
    for f in fixtures().rule {
        for text in &f.found {
            let (plain, secrets) = unmark(text, '«', '»');
            assert!(!secrets.is_empty(), "{}: no «secret» in {text}", f.id);
            // Plain text.
            let mut out = Vec::new();
            let found = STRICT.redact_text(plain.as_bytes(), &mut out);
            let out = String::from_utf8(out).expect("utf8");
            for s in &secrets {
                let at = plain.find(s.as_str()).expect("secret in text");
                assert!(
                    found
                        .iter()
                        .any(|x| x.rule_id == f.id && x.start <= at && at + s.len() <= x.end),
                    "{}: {s} not found in {plain:?}: {found:?}",
                    f.id
                );
                assert!(!out.contains(s.as_str()), "{}: left in {out}", f.id);
            }
            // The same text in a record: found in both copies, nothing left, fast path agrees.
            let line = record(&plain);
            let (red, o) = redact(&STRICT, &line);
            assert!(
                o.findings.iter().filter(|x| x.rule_id == f.id).count() >= 2,
                "{}: {o:?}",
                f.id
            );
            for s in &secrets {
                assert!(
                    !decoded(&red).iter().any(|x| x.contains(s.as_str())),
                    "{}: {red}",
                    f.id
                );
            }
            assert_eq!(redact(&PARANOID, &line).0, red, "{}", f.id);
            assert_eq!(redact(&STRICT, &red).0, red, "{}: not idempotent", f.id);
        }
    }
}

#[test]
fn decoys_stay_untouched() {
    let mut n = 0;
    for f in fixtures().rule {
        for text in &f.clean {
            let mut out = Vec::new();
            let found = STRICT.redact_text(text.as_bytes(), &mut out);
            assert!(found.is_empty(), "{} decoy {text:?}: {found:?}", f.id);
            let line = record(text);
            let (red, o) = redact(&STRICT, &line);
            assert!(
                !o.changed && red == line,
                "{} decoy in a record: {:?}",
                f.id,
                o.findings
            );
            n += 1;
        }
    }
    assert!(n >= 200, "{n} decoys");
}

#[test]
fn only_claude_codes_own_ids_are_protected() {
    for f in fixtures().line {
        let (with_kept, gone) = unmark(&f.json, '«', '»');
        let (line, kept) = unmark(&with_kept, '‹', '›');
        assert!(!gone.is_empty() || !kept.is_empty(), "{}", f.about);
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{}: {e}", f.about));
        let (out, o) = redact(&STRICT, &line);
        let after = decoded(&out);
        for s in &gone {
            assert!(
                !after.iter().any(|x| x.contains(s.as_str())),
                "{}: {s} left in {out}",
                f.about
            );
        }
        for s in &kept {
            assert!(
                out.contains(&format!("\"{s}\"")),
                "{}: {s} changed in {out}",
                f.about
            );
        }
        assert_eq!(
            o.findings.len(),
            gone.len(),
            "{}: {:?}",
            f.about,
            o.findings
        );
        assert_eq!(redact(&PARANOID, &line).0, out, "{}", f.about);
    }
}
