//! `docs/redact.md` stays true: every rule has an example there, and each example is found by
//! its rule.

use std::path::Path;

use skein_redact::builtin_rules;

use crate::STRICT;

fn examples() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/redact.md");
    let doc = std::fs::read_to_string(&path).expect("docs/redact.md is readable");
    let start = doc
        .find("<!-- begin examples -->")
        .expect("examples start marker");
    let end = doc
        .find("<!-- end examples -->")
        .expect("examples end marker");
    doc[start..end]
        .lines()
        .filter(|l| !l.starts_with("<!--") && !l.starts_with("```") && !l.trim().is_empty())
        .map(|l| {
            let (id, ex) = l.split_once(' ').expect("`id example`");
            let mut text = String::new();
            let mut chars = ex.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, true) => match chars.next() {
                        Some('n') => text.push('\n'),
                        Some(o) => text.push(o),
                        None => text.push('\\'),
                    },
                    (c, false) => text.push(c),
                }
            }
            (id.to_owned(), text)
        })
        .collect()
}

#[test]
fn examples_in_docs_are_detected() {
    let ex = examples();
    for rule in builtin_rules() {
        assert!(
            ex.iter().any(|(id, _)| *id == rule.id),
            "docs have no example for {}",
            rule.id
        );
    }
    for (id, text) in &ex {
        let mut out = Vec::new();
        let findings = STRICT.redact_text(text.as_bytes(), &mut out);
        assert!(
            findings.iter().any(|f| f.rule_id == *id),
            "{id}: {findings:?}\n{text}"
        );
        let out = String::from_utf8(out).expect("utf8");
        assert!(out.contains(&format!("[REDACTED:{id}]")), "{id}: {out}");
    }
}
