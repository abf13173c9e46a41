//! Options, errors, protected fields, byte preservation and odd inputs.

use serde_json::Value;
use skein_redact::{Error, Level, RedactOptions, Redactor, UserRule, builtin_rules};

use crate::{STRICT, redact};

const GH: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";

#[test]
fn config_from_toml() {
    let cfg = r#"
        level = "standard"
        allowlist = ["^AKIA.*TESTING$"]
        allow_literals = ["not-a-secret-123"]
        disable = ["jwt"]
        [[user_rules]]
        id = "acme-token"
        regex = "acme_(?P<secret>[a-z0-9]{24})"
        keywords = ["acme_"]
    "#;
    let opts: RedactOptions = toml::from_str(cfg).expect("parses");
    assert_eq!(opts.level, Level::Standard);
    let r = Redactor::new(&opts).expect("valid");
    assert!(
        r.rules()
            .iter()
            .any(|x| x.id == "acme-token" && x.tier.is_none())
    );
    assert!(
        !r.rules()
            .iter()
            .any(|x| x.id == "jwt" || x.id.starts_with("generic-"))
    );
    let line = r#"{"uuid":"u","x":"use acme_0123456789abcdefghijklmn now"}"#;
    let (out, o) = redact(&r, line);
    assert_eq!(
        out,
        r#"{"uuid":"u","x":"use acme_[REDACTED:acme-token] now"}"#
    );
    assert_eq!(o.findings[0].start, 9);
    assert!(
        toml::from_str::<RedactOptions>("levle = \"strict\"").is_err(),
        "unknown keys are rejected"
    );
}

#[test]
fn option_errors_are_typed() {
    let bad = |opts: RedactOptions| Redactor::new(&opts).expect_err("must fail");
    let rule = |id: &str, regex: &str, kw: &[&str]| UserRule {
        id: id.into(),
        regex: regex.into(),
        keywords: kw.iter().map(|s| (*s).to_owned()).collect(),
    };
    let with = |r: UserRule| RedactOptions {
        user_rules: vec![r],
        ..RedactOptions::default()
    };
    assert!(matches!(
        bad(with(rule("a b", "x", &[]))),
        Error::InvalidRuleId { .. }
    ));
    assert!(matches!(
        bad(with(rule("jwt", "x", &[]))),
        Error::DuplicateRuleId { .. }
    ));
    assert!(matches!(
        bad(with(rule("x", "(", &[]))),
        Error::UserRegex { .. }
    ));
    assert!(matches!(
        bad(with(rule("x", "x", &["a\"b"]))),
        Error::InvalidKeyword { .. }
    ));
    let opts = RedactOptions {
        allowlist: vec!["[".into()],
        ..RedactOptions::default()
    };
    assert!(matches!(bad(opts), Error::Allowlist { index: 0, .. }));
    let opts = RedactOptions {
        disable: vec!["nope".into()],
        ..RedactOptions::default()
    };
    assert!(matches!(bad(opts), Error::UnknownRule { .. }));
}

#[test]
fn allowlist_keeps_values() {
    let opts = RedactOptions {
        allow_literals: vec![GH.into()],
        ..RedactOptions::default()
    };
    let r = Redactor::new(&opts).expect("valid");
    let line = format!(r#"{{"a":"{GH}"}}"#);
    let (out, o) = redact(&r, &line);
    assert_eq!(out, line);
    assert!(!o.changed);
}

#[test]
fn levels() {
    let line = r#"{"uuid":"u","m":"DB_PASSWORD=Zq81xk9Lm2vB7pT and AKIAZ4Q7RZ2DRB3K5LWM"}"#;
    let (strict, o) = redact(&STRICT, line);
    assert_eq!(o.findings.len(), 2);
    assert!(strict.contains("[REDACTED:generic-password]"));
    let std = Redactor::new(&RedactOptions {
        level: Level::Standard,
        ..RedactOptions::default()
    })
    .expect("valid");
    let (out, o) = redact(&std, line);
    assert_eq!(o.findings.len(), 1);
    assert!(
        out.contains("DB_PASSWORD=Zq81xk9Lm2vB7pT") && out.contains("[REDACTED:aws-access-key-id]")
    );
    assert!(builtin_rules().count() >= 60);
}

#[test]
fn ids_signatures_and_media_are_never_touched() {
    let b64 = format!(
        "iVBORw0KGgo{GH}AKIAZ4Q7RZ2DRB3K5LWMeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc"
    );
    let lines = [
        format!(
            r#"{{"uuid":"{GH}","parentUuid":"{GH}","sessionId":"{GH}","requestId":"{GH}","timestamp":"{GH}"}}"#
        ),
        format!(
            r#"{{"message":{{"id":"{GH}","content":[{{"type":"tool_use","id":"{GH}","input":{{}}}}]}},"agentId":"{GH}","promptId":"{GH}"}}"#
        ),
        format!(
            r#"{{"message":{{"content":[{{"type":"thinking","thinking":"hm","signature":"{b64}"}}]}}}}"#
        ),
        format!(
            r#"{{"message":{{"content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{b64}"}}}}]}}}}"#
        ),
        format!(r#"{{"message":{{"content":[{{"type":"redacted_thinking","data":"{b64}"}}]}}}}"#),
        format!(
            r#"{{"toolUseResult":{{"type":"image","file":{{"base64":"{b64}","type":"image/png"}}}},"sourceToolAssistantUUID":"{GH}"}}"#
        ),
        format!(
            r#"{{"message":{{"content":[{{"type":"tool_result","tool_use_id":"{GH}","content":"ok"}}]}},"leafUuid":"{GH}"}}"#
        ),
        format!(r#"{{"{GH}":"object keys are not values"}}"#),
    ];
    for line in &lines {
        let (out, o) = redact(&STRICT, line);
        assert_eq!(&out, line);
        assert!(!o.changed && o.findings.is_empty(), "{line}");
    }
}

#[test]
fn untouched_bytes_stay_identical() {
    // Odd but valid formatting, escapes and numbers survive; only the secret changes.
    let line = format!(
        "{{ \"uuid\" : \"u1\",\t\"n\": 1.0e+10, \"t\": \"caf\\u00e9 \\ud83d\\ude00 \\/ok\",\"c\":\"tok {GH}\\n\" , \"z\":[ true,null ] }}"
    );
    let (out, o) = redact(&STRICT, &line);
    assert_eq!(out, line.replace(GH, "[REDACTED:github-token]"));
    assert_eq!(o.findings.len(), 1);
    assert_eq!(
        (o.findings[0].json_path.as_str(), o.findings[0].start),
        ("c", 4)
    );
    // A line without secrets is copied as is, whatever it looks like.
    for l in [
        "",
        "   ",
        "{}",
        "[1,2]",
        "not json at all",
        "{\"a\":\"\\u00\"}",
        "\u{feff}{\"a\":1}",
    ] {
        assert_eq!(redact(&STRICT, l).0, l);
    }
}

#[test]
fn secret_split_by_escape_keeps_other_escapes() {
    // The secret is written with an escaped character; the placeholder replaces exactly the
    // escaped span, the neighbouring escapes stay.
    let esc = GH.replacen('R', "\\u0052", 1);
    let line = format!(r#"{{"a":"\n{esc}\t","b":"\u0041"}}"#);
    let (out, o) = redact(&STRICT, &line);
    assert_eq!(out, r#"{"a":"\n[REDACTED:github-token]\t","b":"\u0041"}"#);
    assert_eq!((o.findings[0].start, o.findings[0].end), (1, 1 + GH.len()));
}

#[test]
fn lines_that_are_not_json() {
    // Truncated tail, two records on one line, garbage: no panic; secrets still go.
    let cut = format!(r#"{{"uuid":"u","message":{{"content":"export TOKEN={GH}"#);
    let (out, o) = redact(&STRICT, &cut);
    assert!(!out.contains(GH) && o.fallback, "{out}");
    assert_eq!(o.findings[0].json_path, "?.content");
    let two = format!(r#"{{"uuid":"a","x":"{GH}"}}{{"uuid":"b","y":"{GH}"}}"#);
    let (out, o) = redact(&STRICT, &two);
    assert!(!out.contains(GH) && !o.fallback, "{out}");
    assert_eq!(o.findings.len(), 2);
    let junk = format!("<<{GH}>> \"x\" : ");
    let (out, o) = redact(&STRICT, &junk);
    assert_eq!(out, "<<[REDACTED:github-token]>> \"x\" : ");
    assert!(o.fallback);
    assert_eq!(redact(&STRICT, &out).0, out);
}

#[test]
fn structured_key_value_pairs() {
    // Secrets whose name is a JSON key (MCP tool input, env maps) are found through the key.
    let line = r#"{"uuid":"u","message":{"content":[{"type":"tool_use","id":"t","input":{"env":{"DB_PASSWORD":"Zq81xk9Lm2vB7pT","api_key":"Qx7LmZ2vB9pT4kR8"}}}]}}"#;
    let (out, o) = redact(&STRICT, line);
    let v: Value = serde_json::from_str(&out).expect("valid");
    assert_eq!(
        v["message"]["content"][0]["input"]["env"]["DB_PASSWORD"],
        "[REDACTED:generic-password]"
    );
    assert_eq!(
        v["message"]["content"][0]["input"]["env"]["api_key"],
        "[REDACTED:generic-api-key]"
    );
    assert_eq!(
        o.findings[0].json_path,
        "message.content[0].input.env.DB_PASSWORD"
    );
    assert_eq!((o.findings[0].start, o.findings[0].end), (0, 15));
}

#[test]
fn false_positive_guards() {
    for text in [
        "max_tokens = 4096",
        "let token = lexer.next_token()?;",
        "password: ${DB_PASSWORD}",
        "postgres://postgres:postgres@localhost:5432/app",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "Authorization: Bearer $TOKEN",
        "secret_key_base: dev-only-secret-not-for-production-use-minimum-64-bytes-long",
        "keyJob.start(); monkey = 1; csrf_token = abcdef123456789",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "https://user@example.com/path:1@x",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ] {
        let line = serde_json::to_string(&serde_json::json!({ "t": text })).expect("json");
        let (out, o) = redact(&STRICT, &line);
        assert_eq!(out, line, "{:?}", o.findings);
    }
}

#[test]
fn plain_text() {
    let mut out = Vec::new();
    let f = STRICT.redact_text(format!("line 1\nexport GH={GH}\n").as_bytes(), &mut out);
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "line 1\nexport GH=[REDACTED:github-token]\n"
    );
    assert_eq!((f[0].json_path.as_str(), f[0].start), ("", 17));
}

#[test]
fn redactor_is_shareable() {
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(&*STRICT);
    assert!(format!("{:?}", *STRICT).starts_with("Redactor"));
}

#[test]
fn overlapping_user_keywords() {
    let rule = |id: &str, regex: &str, kw: &str| UserRule {
        id: id.into(),
        regex: regex.into(),
        keywords: vec![kw.into()],
    };
    let opts = RedactOptions {
        user_rules: vec![
            rule("outer", "acme_[0-9]{6}", "acme_"),
            rule("inner", "me_(?P<secret>[a-z]{6})", "me_"),
        ],
        ..RedactOptions::default()
    };
    let r = Redactor::new(&opts).expect("valid");
    let (out, o) = redact(&r, r#"{"a":"acme_123456 acme_abcdef"}"#);
    assert_eq!(out, r#"{"a":"[REDACTED:outer] acme_[REDACTED:inner]"}"#);
    assert_eq!(o.findings.len(), 2);
}

#[test]
fn counts_by_rule_for_an_audit_trail() {
    // Three records, CRLF and a last line without terminator: every byte but the secrets is
    // kept, and the counts say what was redacted (never the secret).
    let data = format!(
        "{{\"uuid\":\"a\",\"m\":\"{GH} and {GH}\"}}\r\n{{\"uuid\":\"b\",\"m\":\"mail jane.roe@acme-corp.io\"}}\n{{\"uuid\":\"c\",\"m\":\"nothing\"}}"
    );
    let mut out = Vec::new();
    let counts = STRICT.redact_jsonl(data.as_bytes(), &mut out);
    let out = String::from_utf8(out).expect("utf8");
    assert_eq!(
        out,
        "{\"uuid\":\"a\",\"m\":\"[REDACTED:github-token] and [REDACTED:github-token]\"}\r\n{\"uuid\":\"b\",\"m\":\"mail [REDACTED:email]\"}\n{\"uuid\":\"c\",\"m\":\"nothing\"}"
    );
    assert_eq!((counts.get("github-token"), counts.get("email")), (2, 1));
    assert_eq!((counts.total(), counts.get("jwt")), (3, 0));
    assert_eq!(
        serde_json::to_string(&counts).expect("json"),
        r#"{"email":1,"github-token":2}"#
    );
    assert!(
        !serde_json::to_string(&counts)
            .expect("json")
            .contains("ghp_")
    );
    // Per line, and merged across writes.
    let (_, o) = redact(&STRICT, &format!(r#"{{"m":"{GH}"}}"#));
    let mut all = o.counts();
    assert_eq!(all.iter().collect::<Vec<_>>(), [("github-token", 1)]);
    all.merge(&counts);
    assert_eq!(all.get("github-token"), 3);
    let mut text = Vec::new();
    let f = STRICT.redact_text(b"write to jane.roe@acme-corp.io", &mut text);
    let c: skein_redact::RuleCounts = f.iter().collect();
    assert_eq!(c.get("email"), 1);
    assert!(skein_redact::RuleCounts::new().is_empty());
}

/// Inputs the `redact` fuzz target found (minimised or simplified): redacting twice changes nothing more,
/// the raw prefilter agrees with decoding every string, and every secret of a run of several
/// after one keyword is found (each `[REDACTED:` count is the number expected).
#[test]
fn fuzz_findings_stay_fixed() {
    let cases: &[(&str, usize)] = &[
        ("Bearer patFHGUOK_SECRET=whsec_z5", 1),
        (
            r#""auths: \"auth\":\"Q5A2C6vZo/Vz\"auth\":\"Q5AziqiBL6Nm"#,
            2,
        ),
        (
            r#"{"=ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlK1wEQIY9me6jhbc1yJH3MH04Q7464=ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKwEQlGl98Mgb33JHMcH04Q74ozL8N"#,
            2,
        ),
        (
            "zdiscordl'MdldNkivlHmKl8fEjhs23ckf.oSeXaF.idNkivayJpRNCi1kzfmgOrLuMgx('Myu3svbglgHml8fEBhs23ckf.oSeXaF.idNkNC1zfmgOrgxKdVVpN0Rvu5l}}",
            2,
        ),
        ("s@q.gi._@q.gi", 1),
        (
            "{bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t=C=bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29th}",
            1,
        ),
        (
            r#": "twilio SK443c7a222de6c73e913fcb30b26b5ead SK443c7a222de6c73e913fcb30b26b5ea1}"#,
            2,
        ),
        (
            "tyMAILGUN key-a6f26369110022a09b194086e2727881 key-a6f26369110022a9b4109086e2727881]",
            2,
        ),
        (
            r#"{"": {"c":[{"":"-----BEGIN PRIVATE KEY-----\\tMIIEFzpj+mmp7dIfzB1HIUszn8Aqocin"}]}}"#,
            1,
        ),
        (r#"{"":{"":[{"":"Token:\"s,ke-\u2024"}]}}"#, 1),
        (r#""[REDACTED:":TOKEN=Qfq5GAz: "TOKEN=fshwao03"#, 3),
        (
            "S@dd.uk.y3r.coddddddddddddddddddddddddd1ddddddddSSSSSSSSSSSddddSSSSSdddd@dd.uk.",
            0,
        ),
        (
            // `machine` more than 256 bytes before `login` until the key in between is redacted.
            &format!(
                r#"{{"c":"machine api.example.com {}-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC7
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC7 ok
  login bob
  password 1aKgQz7x"}}"#,
                "x".repeat(200)
            ),
            2,
        ),
        (
            r#"{"c":"ssh -i k.pem ubuntu@ec2-3-8-1-2.eu.compute.io TOKEN=y@anthropic.ly x@y.co.uk"}"#,
            1,
        ),
    ];
    for &(line, n) in cases {
        let (out, _) = redact(&STRICT, line);
        assert_eq!(out.matches("[REDACTED:").count(), n, "{line} -> {out}");
        assert_eq!(redact(&STRICT, &out).0, out, "not idempotent: {line}");
        if serde_json::from_str::<Value>(line).is_ok() {
            assert_eq!(
                redact(&crate::PARANOID, line).0,
                out,
                "decode_all differs: {line}"
            );
        }
    }
}
