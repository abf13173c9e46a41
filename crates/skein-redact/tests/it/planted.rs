//! The generated test set: every rule family planted in several JSON positions and escape
//! variants; each must be found with the right rule id and leave no trace in the output.

use serde_json::{Value, json};
use skein_redact::builtin_rules;

use crate::samples::{self, Rng, Sample, TEMPLATES};
use crate::{PARANOID, STRICT, at, redact, strings};

/// Rules whose context breaks if the blank before the secret becomes a line break.
const NO_SPLIT: &[&str] = &[
    "generic-password",
    "generic-secret",
    "generic-token",
    "generic-api-key",
    "netrc-password",
    "cli-basic-auth",
    "http-auth-header",
    "bearer-token",
    "kubernetes-secret",
    "xml-password",
    "mailgun-api-key",
    "twilio-api-key",
    "discord-bot-token",
    "facebook-app-token",
    "aws-secret-access-key",
    "aws-session-token",
    "gcp-private-key-id",
    "cloudflare-api-key",
    "mailchimp-api-key",
    "resend-api-key",
    "kubeconfig-client-key",
    "docker-config-auth",
];

/// The secret inside a JSON document at one of five places.
fn embed(pos: usize, text: &str, uuid: &str) -> String {
    let v = match pos {
        0 => {
            json!({"parentUuid": null, "type": "user", "message": {"role": "user", "content": text},
                    "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": "s-1"})
        }
        1 => {
            json!({"type": "assistant", "message": {"id": "msg_01", "content": [{"type": "tool_use",
                    "id": "toolu_01", "name": "Bash", "input": {"command": text, "description": "run"}}]},
                    "uuid": uuid, "requestId": "req_1"})
        }
        2 => json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": "toolu_01", "content": text}]}, "uuid": uuid}),
        3 => {
            json!({"type": "user", "uuid": uuid, "toolUseResult": {"stdout": text, "stderr": "", "interrupted": false}})
        }
        _ => {
            json!({"type": "x-future-record", "uuid": uuid, "payload": {"notes": [1, {"deep": [text]}]}})
        }
    };
    serde_json::to_string(&v).expect("serialise")
}

/// Replaces the first alphanumeric byte of the encoded secret at or after `from` with a
/// `\u00XX` escape (a writer that escapes printable characters).
fn escape_inside(line: &str, secret: &str, from: usize) -> Option<String> {
    let enc = serde_json::to_string(secret).expect("serialise");
    let enc = &enc[1..enc.len() - 1];
    let base = line.find(enc)?;
    let b = line.as_bytes();
    let i = (base + from..base + enc.len()).find(|&i| {
        let backslashes = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
        b[i].is_ascii_alphanumeric() && backslashes % 2 == 0
    })?;
    Some(format!("{}\\u{:04x}{}", &line[..i], b[i], &line[i + 1..]))
}

/// All variants of one sample: (name, line).
fn variants(s: &Sample, pos: usize, uuid: &str) -> Vec<(&'static str, String)> {
    let mut v = vec![("plain", embed(pos, &s.text, uuid))];
    v.push((
        "newline-before-text",
        embed(pos, &format!("$ run\n{}", s.text), uuid),
    ));
    if !NO_SPLIT.contains(&s.rule) {
        let at = s.text.find(&s.secret).expect("secret in text");
        let split = if at == 0 {
            Some(format!("out:\n{}", s.text))
        } else if s.text.as_bytes()[at - 1] == b' ' {
            Some(format!("{}\n{}", &s.text[..at - 1], &s.text[at..]))
        } else {
            None
        };
        if let Some(t) = split {
            v.push(("newline-before-secret", embed(pos, &t, uuid)));
        }
    }
    let plain = v[0].1.clone();
    for (name, from) in [
        ("u-escape-at-1", 1),
        ("u-escape-middle", s.secret.len() / 2),
    ] {
        if let Some(l) = escape_inside(&plain, &s.secret, from) {
            v.push((name, l));
        }
    }
    v.push(("escaped-slashes", plain.replace('/', "\\/")));
    v
}

fn check(s: &Sample, variant: &str, line: &str, uuid: &str) {
    let ctx = || format!("{} / {variant}: {line}", s.rule);
    let input: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("bad test line {e}: {}", ctx()));
    let mut before = Vec::new();
    strings(&input, &mut before);
    assert!(
        before.iter().any(|x| x.contains(&s.secret)),
        "secret not planted: {}",
        ctx()
    );

    let (out, o) = redact(&STRICT, line);
    let output: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("invalid output {e}: {out}\n{}", ctx()));
    let mut after = Vec::new();
    strings(&output, &mut after);
    assert!(
        !after.iter().any(|x| x.contains(&s.secret)),
        "secret left in {out}\n{}",
        ctx()
    );
    assert!(o.changed, "{}", ctx());
    assert!(
        o.findings.iter().any(|f| f.rule_id == s.rule),
        "expected {} in {:?}\n{}",
        s.rule,
        o.findings,
        ctx()
    );
    assert!(out.contains(&format!("[REDACTED:{}]", s.rule)), "{}", ctx());
    for f in &o.findings {
        assert_eq!(f.uuid.as_deref(), Some(uuid), "{}", ctx());
        let value = at(&input, &f.json_path).and_then(Value::as_str);
        let value = value.unwrap_or_else(|| panic!("path {} not a string: {}", f.json_path, ctx()));
        assert!(f.start < f.end && f.end <= value.len(), "{f:?} {}", ctx());
        assert!(
            value.is_char_boundary(f.start) && value.is_char_boundary(f.end),
            "{}",
            ctx()
        );
    }
    // Idempotent, and the fast path agrees with decoding everything.
    let (again, o2) = redact(&STRICT, &out);
    assert_eq!(again, out, "not idempotent: {}", ctx());
    assert!(!o2.changed && o2.findings.is_empty(), "{}", ctx());
    let (paranoid, _) = redact(&PARANOID, line);
    assert_eq!(paranoid, out, "decode_all differs: {}", ctx());
}

#[test]
fn every_rule_has_a_template() {
    for r in builtin_rules() {
        assert!(
            TEMPLATES.iter().any(|(id, _)| *id == r.id),
            "no template for {}",
            r.id
        );
    }
    for (id, _) in TEMPLATES {
        assert!(
            builtin_rules().any(|r| r.id == *id),
            "template for unknown rule {id}"
        );
    }
}

#[test]
fn planted_secrets_are_found_everywhere() {
    let mut rng = Rng::new(7);
    let mut lines = 0;
    for round in 0..2 {
        for (i, s) in samples::samples(&mut rng).iter().enumerate() {
            for pos in 0..5 {
                let uuid = format!("00000000-0000-4000-8000-{:06}{:06}", round, i * 10 + pos);
                for (variant, line) in variants(s, pos, &uuid) {
                    check(s, variant, &line, &uuid);
                    lines += 1;
                }
            }
        }
    }
    assert!(lines > 5000, "{lines}");
}

#[test]
fn all_secrets_in_one_line() {
    let mut rng = Rng::new(11);
    let samples = samples::samples(&mut rng);
    let text: Vec<&str> = samples.iter().map(|s| s.text.as_str()).collect();
    let line = embed(3, &text.join("\n\n"), "u-all");
    let (out, o) = redact(&STRICT, &line);
    let v: Value = serde_json::from_str(&out).expect("valid");
    let mut after = Vec::new();
    strings(&v, &mut after);
    for s in &samples {
        assert!(
            !after.iter().any(|x| x.contains(&s.secret)),
            "{} left: {}",
            s.rule,
            s.secret
        );
        assert!(
            o.findings.iter().any(|f| f.rule_id == s.rule),
            "{} not reported",
            s.rule
        );
    }
    assert_eq!(redact(&STRICT, &out).0, out);
}
