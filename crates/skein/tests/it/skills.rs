//! `skein skills` run for real: hand-computed expectations on `testdata/reports/skills`, the
//! bundled sample, and an independent count on the shared corpus (skipped with a note when
//! absent).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{corpus, expected_rows, jsonl, jsonl_files, ok, report_dir, report_rows, root, skein};

fn fixture_dir() -> PathBuf {
    report_dir("skills")
}

fn expected(name: &str) -> Vec<Value> {
    expected_rows("skills", name)
}

fn skills(args: &[&str]) -> Vec<Value> {
    report_rows("skills", args)
}

#[test]
fn skills_match_the_hand_computed_rows() {
    let got = skills(&["projects"]);
    assert_eq!(got, expected("skills.jsonl"));
    let keys: Vec<&str> = got[0]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "skill",
            "count",
            "sessions",
            "first_use",
            "last_use",
            "errors",
            "unpaired",
            "success_rate",
            "daily"
        ]
    );
}

#[test]
fn slash_commands_are_opt_in() {
    assert_eq!(
        skills(&["--slash-commands", "projects"]),
        expected("slash.jsonl")
    );
}

#[test]
fn date_filters_apply_to_each_invocation() {
    assert_eq!(
        skills(&["--since", "2026-06-04", "projects"]),
        expected("since_0604.jsonl")
    );
    assert_eq!(
        skills(&["--until", "20260601", "projects"]),
        expected("until_0601.jsonl")
    );
    assert!(skills(&["--since", "2030-01-01", "projects"]).is_empty());
}

#[test]
fn project_filter_and_formats() {
    let two = skills(&["--project", "s-two", "projects"]);
    let names: Vec<&str> = two
        .iter()
        .map(|r| r["skill"].as_str().expect("s"))
        .collect();
    assert_eq!(names, ["pdf", "review"]);
    assert_eq!(two[0]["count"], 1);
    let dir = fixture_dir();
    let out = skein(&["skills", "--format", "json", "projects"], &dir);
    let doc: Value = serde_json::from_slice(&ok(&out).stdout).expect("one JSON document");
    assert_eq!(doc, Value::Array(expected("skills.jsonl")));
    let out = skein(&["skills", "--format", "table", "projects"], &dir);
    let text = String::from_utf8(ok(&out).stdout.clone()).expect("utf8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("skill"));
    assert!(lines[2].starts_with("pdf"));
    assert!(lines[2].contains("80.0%"), "{}", lines[2]);
}

#[test]
fn skill_counts_equal_skill_tool_rows() {
    let dir = fixture_dir();
    let calls = jsonl(ok(&skein(&["tools", "--tool", "Skill", "projects"], &dir)));
    let rows = skills(&["projects"]);
    let total: u64 = rows
        .iter()
        .map(|r| r["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(total, calls.len() as u64);
}

#[test]
fn sample_has_one_skill() {
    let rows = jsonl(ok(&skein(&["skills", "testdata/sample"], &root())));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["skill"], "rust-testing");
    assert_eq!(rows[0]["success_rate"], 1.0);
    assert_eq!(rows[0]["daily"]["2026-05-01"], 1);
}

/// Skill names of distinct `Skill` tool_use ids per file, read with serde_json alone.
fn oracle(dir: &Path) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for f in jsonl_files(dir) {
        let text = std::fs::read(&f).expect("read");
        let mut seen = BTreeSet::new();
        for line in text.split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if v["type"] != "assistant" {
                continue;
            }
            for b in v["message"]["content"].as_array().into_iter().flatten() {
                if b["type"] != "tool_use" || b["name"] != "Skill" {
                    continue;
                }
                let Some(id) = b["id"].as_str() else { continue };
                if !seen.insert(id.to_owned()) {
                    continue;
                }
                let skill = b["input"]["skill"].as_str().unwrap_or("<unknown>");
                *counts.entry(skill.to_owned()).or_insert(0) += 1;
            }
        }
    }
    counts
}

#[test]
fn corpus_skills_are_consistent() {
    let Some(corpus) = corpus() else { return };
    let c = corpus.to_str().expect("utf8 path");
    let cwd = std::env::temp_dir();
    let rows = jsonl(ok(&skein(&["skills", "-q", c], &cwd)));
    let got: BTreeMap<String, u64> = rows
        .iter()
        .map(|r| {
            (
                r["skill"].as_str().expect("skill").to_owned(),
                r["count"].as_u64().expect("count"),
            )
        })
        .collect();
    assert!(!rows.is_empty(), "the corpus has Skill calls");
    assert_eq!(got, oracle(&corpus), "independent count of Skill calls");
    let names: Vec<&String> = got.keys().collect();
    let listed: Vec<&str> = rows
        .iter()
        .map(|r| r["skill"].as_str().expect("s"))
        .collect();
    assert_eq!(names, listed, "sorted by name");
    for r in &rows {
        let count = r["count"].as_u64().expect("count");
        let errors = r["errors"].as_u64().expect("errors");
        let unpaired = r["unpaired"].as_u64().expect("unpaired");
        let sessions = r["sessions"].as_u64().expect("sessions");
        assert!(sessions >= 1 && sessions <= count, "{r}");
        assert!(errors + unpaired <= count, "{r}");
        let daily: u64 = r["daily"]
            .as_object()
            .expect("daily")
            .values()
            .map(|v| v.as_u64().expect("n"))
            .sum();
        assert!(daily <= count, "{r}");
        if let (Some(first), Some(last)) = (r["first_use"].as_str(), r["last_use"].as_str()) {
            assert!(first <= last, "{r}");
            for day in r["daily"].as_object().expect("daily").keys() {
                assert!(
                    &first[..10] <= day.as_str() && day.as_str() <= &last[..10],
                    "{r}"
                );
            }
        }
        match r["success_rate"].as_f64() {
            Some(rate) => {
                assert!((0.0..=1.0).contains(&rate), "{r}");
                let results = (count - unpaired) as f64;
                let want = ((results - errors as f64) / results * 10_000.0).round() / 10_000.0;
                assert!((rate - want).abs() < 1e-9, "{r}");
            }
            None => assert_eq!(unpaired, count, "{r}"),
        }
    }
    // the slash-command view only adds names that start with '/'
    let slash = jsonl(ok(&skein(&["skills", "-q", "--slash-commands", c], &cwd)));
    let plain: Vec<&Value> = slash
        .iter()
        .filter(|r| !r["skill"].as_str().expect("s").starts_with('/'))
        .collect();
    assert_eq!(plain, rows.iter().collect::<Vec<_>>());
    // and Skill rows of `skein tools` are the same calls
    let calls = jsonl(ok(&skein(&["tools", "-q", "--tool", "Skill", c], &cwd)));
    assert_eq!(calls.len() as u64, got.values().sum::<u64>());
}
