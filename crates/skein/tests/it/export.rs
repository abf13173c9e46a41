//! `skein export` run for real: `--redact` keeps planted secrets out of every byte of the
//! dataset (and without it they are there, so the check can fail); `--redact-level` needs
//! `--redact`; the row files do not depend on `-j`.

use std::path::Path;

use crate::common::{ok, skein, stderr};

const GITHUB: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";
const AWS: &str = "AKIAZ4Q7RZ2DRB3K5LWM";

/// `dir/projects/-p/s1.jsonl`: a prompt, a reply with a tool call and its result, each with
/// both secrets.
fn plant(dir: &Path) {
    let p = dir.join("projects").join("-p");
    std::fs::create_dir_all(&p).expect("mkdir");
    let s = format!("token {GITHUB} and key {AWS}");
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1",
            "timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":s}}),
        serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1",
            "timestamp":"2026-05-01T10:00:01Z","requestId":"r1",
            "message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5",
                "content":[{"type":"text","text":s},
                    {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":s}}],
                "usage":{"input_tokens":10,"output_tokens":5}}}),
        serde_json::json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s1",
            "timestamp":"2026-05-01T10:00:02Z","message":{"role":"user",
                "content":[{"type":"tool_result","tool_use_id":"toolu_1","content":s}]}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(p.join("s1.jsonl"), text).expect("write");
}

/// Every byte of every file under `dir`.
fn bytes_under(dir: &Path) -> Vec<u8> {
    // Sorted by path, so two datasets with the same files give the same bytes.
    skein_testkit::files_under(dir)
        .iter()
        .flat_map(|p| std::fs::read(p).expect("read"))
        .collect()
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn redact_keeps_planted_secrets_out_of_the_jsonl_dataset() {
    let tmp = tempfile::tempdir().expect("tmp");
    plant(tmp.path());
    let export = |to: &str, extra: &[&str]| {
        let mut args = vec![
            "export",
            "jsonl",
            "--to",
            to,
            "--tool-output-bytes",
            "4096",
            "projects",
        ];
        args.extend_from_slice(extra);
        ok(&skein(&args, tmp.path())).clone()
    };
    export("plain", &[]);
    let plain = bytes_under(&tmp.path().join("plain"));
    assert!(contains(&plain, GITHUB) && contains(&plain, AWS));

    let out = export("red", &["--redact"]);
    assert!(stderr(&out).contains(", redacted"), "{}", stderr(&out));
    let red = bytes_under(&tmp.path().join("red"));
    assert!(!contains(&red, GITHUB) && !contains(&red, AWS));
    assert!(contains(&red, "[REDACTED:github-token]"));
    // Same rows, only the secrets replaced.
    let lines = |b: &[u8]| b.split(|&c| c == b'\n').count();
    assert_eq!(lines(&plain), lines(&red));

    // An explicit level goes through the same path: no secret in any byte either (Parquet
    // bytes are checked by `parquet_with_redact_writes_no_secret_byte`).
    export("pq", &["--redact", "--redact-level", "standard"]);
    let pq = std::fs::read_dir(tmp.path().join("pq"))
        .expect("dataset")
        .count();
    assert!(pq >= 4, "tables and _schema.json");
    let leveled = bytes_under(&tmp.path().join("pq"));
    assert!(!contains(&leveled, GITHUB) && !contains(&leveled, AWS));
}

#[test]
fn parquet_with_redact_writes_no_secret_byte() {
    let tmp = tempfile::tempdir().expect("tmp");
    plant(tmp.path());
    // Pages are zstd-compressed, but the footer's column statistics (min/max values) are not:
    // without --redact the secrets are there in plain bytes.
    for (to, redact) in [("plain", false), ("red", true)] {
        let mut args = vec!["export", "parquet", "--to", to, "projects"];
        if redact {
            args.push("--redact");
        }
        ok(&skein(&args, tmp.path()));
        let bytes = bytes_under(&tmp.path().join(to));
        assert!(contains(&bytes, "PAR1"), "parquet files written");
        assert_eq!(contains(&bytes, GITHUB), !redact, "{to}");
    }
}

#[test]
fn redact_level_needs_redact() {
    let tmp = tempfile::tempdir().expect("tmp");
    plant(tmp.path());
    let out = skein(
        &[
            "export",
            "jsonl",
            "--to",
            "x",
            "--redact-level",
            "strict",
            "projects",
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--redact"));
}

#[test]
fn files_do_not_depend_on_the_thread_count() {
    let root = crate::common::testdata("");
    let tmp = tempfile::tempdir().expect("tmp");
    for j in ["1", "3"] {
        let to = tmp.path().join(j);
        let to = to.to_str().expect("utf8");
        ok(&skein(
            &["export", "jsonl", "-q", "-j", j, "--to", to, "."],
            &root,
        ));
    }
    let a = bytes_under(&tmp.path().join("1"));
    assert!(a.len() > 10_000, "testdata exported");
    assert_eq!(a, bytes_under(&tmp.path().join("3")));
}
