//! `skein check` run for real: the exact diagnostics of the hand-broken session in
//! `testdata/reports/check` (every code, levels, lines, byte offsets), the exit status, the
//! formats, the bundled sample, and the shared corpus, whose only error is its one known
//! invalid line (skipped with a note when the corpus is absent).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{corpus, jsonl, root, skein, stderr};

fn fixture_dir() -> PathBuf {
    root().join("testdata/reports/check")
}

const SESSION: &str = "22222222-0000-4000-8000-000000000002";

/// Byte offset of each 1-based line of a file.
fn offsets(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).expect("read");
    let mut out = vec![0, 0];
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            out.push(i as u64 + 1);
        }
    }
    out
}

/// One expected row: path, line, offset, level, code, uuid.
type Expected<'a> = (
    &'a str,
    Option<u64>,
    Option<u64>,
    &'a str,
    &'a str,
    Option<&'a str>,
);

#[test]
fn broken_session_gives_the_hand_computed_diagnostics() {
    let main = format!("projects/-home-t-check/{SESSION}.jsonl");
    let agent = format!("projects/-home-t-check/{SESSION}/subagents/agent-lost.jsonl");
    let out = skein(
        &["check", "--format", "jsonl", "projects", "missing.jsonl"],
        &fixture_dir(),
    );
    // `missing.jsonl` cannot be read: an error of the run (2), which outranks findings (1).
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("checked 3 files in 2 sessions: 3 errors, 6 warnings, 1 info"),
        "{}",
        stderr(&out)
    );
    let rows = jsonl(&out);
    let off = offsets(&fixture_dir().join(&main));
    let agent_off = offsets(&fixture_dir().join(&agent));
    let want: Vec<Expected<'_>> = vec![
        ("missing.jsonl", None, None, "error", "unreadable", None),
        (&main, Some(2), Some(off[2]), "error", "invalid_line", None),
        (
            &main,
            Some(3),
            Some(off[3]),
            "warning",
            "unpaired_use",
            Some("c2"),
        ),
        (
            &main,
            Some(4),
            Some(off[4]),
            "warning",
            "orphan_result",
            Some("c3"),
        ),
        (
            &main,
            Some(5),
            Some(off[5]),
            "warning",
            "dangling_parent",
            Some("c4"),
        ),
        (
            &main,
            Some(8),
            Some(off[8]),
            "warning",
            "duplicate_uuid",
            Some("c1"),
        ),
        (&main, Some(9), Some(off[9]), "error", "cycle", Some("d1")),
        (&main, Some(11), Some(off[11]), "warning", "torn_tail", None),
        (&agent, None, None, "warning", "unlinked_subagent", None),
        (
            &agent,
            Some(2),
            Some(agent_off[2]),
            "info",
            "cross_file_parent",
            Some("w2"),
        ),
    ];
    assert_eq!(rows.len(), want.len(), "{rows:#?}");
    for (got, (path, line, offset, level, code, uuid)) in rows.iter().zip(&want) {
        let ctx = format!("{got}");
        assert_eq!(got["path"], *path, "{ctx}");
        assert_eq!(got["line"].as_u64(), *line, "{ctx}");
        assert_eq!(got["offset"].as_u64(), *offset, "{ctx}");
        assert_eq!(got["level"], *level, "{ctx}");
        assert_eq!(got["code"], *code, "{ctx}");
        assert_eq!(got["uuid"].as_str(), *uuid, "{ctx}");
    }
    let message = |i: usize| rows[i]["message"].as_str().expect("message").to_owned();
    assert_eq!(message(2), "tool_use toolu_A (Bash) has no tool_result");
    assert_eq!(message(3), "tool_result for toolu_ZZ has no tool_use");
    assert_eq!(message(4), "parent nowhere is not in the session");
    assert_eq!(
        message(5),
        "uuid c1 already on line 1 (the first copy is used)"
    );
    assert_eq!(
        message(6),
        "parentUuid cycle through 2 records: d1 → d2 → d1"
    );
    assert!(message(7).starts_with("the last line (24 bytes) has no newline"));
    assert!(message(8).starts_with("agent lost: no Task/Agent call names it"));
    assert_eq!(message(9), format!("parent c4 is in {main}"));
    assert_eq!(rows[1]["session_id"], SESSION);
    assert_eq!(rows[8]["agent_id"], "lost");
    assert!(rows[1]["agent_id"].is_null());
    let keys: Vec<&str> = rows[1]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "path",
            "line",
            "offset",
            "level",
            "code",
            "message",
            "session_id",
            "agent_id",
            "uuid"
        ],
        "documented key order"
    );
}

#[test]
fn level_filter_and_formats() {
    let out = skein(
        &[
            "check",
            "--format",
            "jsonl",
            "--severity",
            "error",
            "projects",
        ],
        &fixture_dir(),
    );
    assert_eq!(out.status.code(), Some(1));
    let codes: Vec<String> = jsonl(&out)
        .iter()
        .map(|r| r["code"].as_str().expect("code").to_owned())
        .collect();
    assert_eq!(codes, ["invalid_line", "cycle"]);
    assert!(stderr(&out).contains("2 errors, 6 warnings, 1 info"));

    let out = skein(
        &["check", "--format", "json", "-q", "projects"],
        &fixture_dir(),
    );
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json document");
    assert_eq!(doc.as_array().expect("array").len(), 9);
    assert!(stderr(&out).is_empty(), "-q: no summary");

    let out = skein(&["check", "--format", "table", "projects"], &fixture_dir());
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("level    code"));
    assert!(
        text.contains("error    cycle              projects/-home-t-check/"),
        "{text}"
    );

    let out = skein(
        &["check", "--since", "2026-01-01", "projects"],
        &fixture_dir(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn clean_sample_exits_zero() {
    let sample = root().join("testdata/sample");
    let out = skein(&["check", "--format", "jsonl", "projects"], &sample);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["code"], "unpaired_use");
    assert_eq!(rows[0]["line"], 23);
    assert!(
        rows[0]["message"]
            .as_str()
            .expect("message")
            .contains("toolu_07")
    );
    let out = skein(
        &[
            "check",
            "--format",
            "jsonl",
            "--severity",
            "warning",
            "missing-dir",
        ],
        &sample,
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a path that is not there is an error"
    );
    assert_eq!(jsonl(&out)[0]["code"], "unreadable");
}

#[test]
fn corpus_errors_are_exactly_the_known_invalid_lines() {
    let Some(corpus) = corpus() else { return };
    let c = corpus.to_str().expect("utf8 path");
    let cwd = std::env::temp_dir();
    let out = skein(&["check", "--format", "jsonl", c], &cwd);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = jsonl(&out);
    let errors: Vec<&Value> = rows.iter().filter(|r| r["level"] == "error").collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let e = errors[0];
    assert_eq!(e["code"], "invalid_line");
    assert_eq!(
        e["path"],
        format!("{c}/entireio__cli/37/995ebed6e4/2/full.jsonl")
    );
    assert_eq!(e["line"], 128);
    // the offset is where line 128 starts
    let bytes =
        std::fs::read(corpus.join("entireio__cli/37/995ebed6e4/2/full.jsonl")).expect("read");
    let start = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(126)
        .map(|(i, _)| i as u64 + 1);
    assert_eq!(e["offset"].as_u64(), start);
    assert!(stderr(&out).contains(": 1 errors,"), "{}", stderr(&out));
    // every row is well formed
    for r in &rows {
        assert!(["error", "warning", "info"].contains(&r["level"].as_str().expect("level")));
        assert!(r["line"].is_null() == r["offset"].is_null(), "{r}");
        assert!(!r["message"].as_str().expect("message").is_empty());
    }
    // stats agrees: the same invalid line count over the corpus
    let stats = jsonl(&skein(&["stats", "-q", c], &cwd));
    let invalid: u64 = stats
        .iter()
        .map(|s| s["invalid_lines"].as_u64().expect("n") - u64::from(!s["torn_tail"].is_null()))
        .sum();
    assert_eq!(invalid, 1);
}
