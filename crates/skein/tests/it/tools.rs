//! `skein tools` run for real: hand-computed expectations on `testdata/reports/tools`, the
//! bundled sample, and consistency checks on the shared corpus (skipped with a note when
//! absent).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::common;
use common::{corpus, expected_rows, jsonl, ok, report_dir, report_rows, root, skein};

fn fixture_dir() -> PathBuf {
    report_dir("tools")
}

fn expected(name: &str) -> Vec<Value> {
    expected_rows("tools", name)
}

fn tools(args: &[&str]) -> Vec<Value> {
    report_rows("tools", args)
}

fn assert_rows(got: &[Value], want: &[Value]) {
    assert_eq!(got.len(), want.len(), "row count: {got:#?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "row {i}");
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect()
}

const CALL_KEYS: [&str; 18] = [
    "session_id",
    "project",
    "agent_id",
    "agent_type",
    "spawned_by",
    "file",
    "line",
    "sidechain",
    "tool",
    "id",
    "input_summary",
    "is_error",
    "result_bytes",
    "media_bytes",
    "images",
    "duration_ms",
    "paired",
    "timestamp",
];

#[test]
fn calls_match_the_hand_computed_rows() {
    let got = tools(&["projects"]);
    assert_rows(&got, &expected("calls.jsonl"));
    assert_eq!(keys(&got[0]), CALL_KEYS, "documented key order");
}

#[test]
fn totals_by_name_match() {
    let got = tools(&["--by", "name", "projects"]);
    assert_rows(&got, &expected("by_name.jsonl"));
    assert_eq!(
        keys(&got[0]),
        [
            "tool",
            "calls",
            "sessions",
            "errors",
            "error_rate",
            "unpaired",
            "result_bytes",
            "avg_result_bytes",
            "media_bytes",
            "images",
            "p50_duration_ms",
            "max_duration_ms"
        ]
    );
}

#[test]
fn loops_match_with_default_and_explicit_n() {
    let got = tools(&["--loops", "projects"]);
    assert_rows(&got, &expected("loops.jsonl"));
    assert_eq!(
        keys(&got[0]),
        [
            "session_id",
            "project",
            "agent_id",
            "agent_type",
            "file",
            "sidechain",
            "tool",
            "input_summary",
            "count",
            "first_line",
            "last_line",
            "first_timestamp",
            "last_timestamp",
            "errors",
            "ids"
        ]
    );
    assert_rows(&tools(&["--loops=3", "projects"]), &expected("loops.jsonl"));
    assert_rows(
        &tools(&["--loops=2", "projects"]),
        &expected("loops2.jsonl"),
    );
    assert!(tools(&["--loops=4", "projects"]).is_empty());
}

#[test]
fn loops_below_two_and_by_with_loops_are_refused() {
    let dir = fixture_dir();
    let out = skein(&["tools", "--loops=1", "projects"], &dir);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let out = skein(&["tools", "--loops", "--by", "name", "projects"], &dir);
    assert!(!out.status.success());
}

#[test]
fn filters_by_date_tool_project_and_glob() {
    let calls = expected("calls.jsonl");
    let ids = |rows: &[Value]| -> Vec<String> {
        rows.iter()
            .map(|r| r["id"].as_str().expect("id").to_owned())
            .collect()
    };
    // dates apply to the call's timestamp; untimed calls drop out under any date filter
    let day = tools(&["--since", "2026-05-02", "--until", "2026-05-02", "projects"]);
    assert_eq!(ids(&day), ["t07", "t08", "t09", "s01", "s02", "s03", "s04"]);
    let until = tools(&["--until", "20260501", "projects"]);
    assert_eq!(ids(&until), ["t01", "t02", "t03", "t04", "t05", "t06"]);
    // --tool keeps exact names; repeatable
    let read = tools(&["--tool", "Read", "projects"]);
    assert_eq!(
        ids(&read),
        ["t04", "t05", "t20", "t21", "t22", "t23", "t24"]
    );
    let two = tools(&["--tool", "Glob", "--tool", "Grep", "projects"]);
    assert_eq!(ids(&two), ["s01", "s02", "s03", "s04"]);
    assert!(tools(&["--tool", "read", "projects"]).is_empty());
    // --project and --exclude
    let beta = tools(&["--project", "beta", "projects"]);
    assert_eq!(beta, calls[14..].to_vec());
    let no_agents = tools(&["--exclude", "**/subagents/**", "projects"]);
    assert_eq!(ids(&no_agents).len(), calls.len() - 4);
    // filters also apply to totals and loops
    let by = tools(&["--by", "name", "--tool", "Bash", "projects"]);
    assert_eq!(by.len(), 1);
    assert_eq!(by[0], expected("by_name.jsonl")[1]);
    let loops = tools(&[
        "--loops=2",
        "--tool",
        "Read",
        "--since",
        "2026-05-03",
        "projects",
    ]);
    let want: Vec<Value> = expected("loops2.jsonl")
        .into_iter()
        .filter(|l| {
            l["tool"] == "Read" && l["session_id"].as_str().is_some_and(|s| s.starts_with('b'))
        })
        .collect();
    assert_eq!(loops, want);
}

#[test]
fn json_and_table_formats() {
    let dir = fixture_dir();
    for (args, file) in [
        (vec!["tools", "projects"], "calls.jsonl"),
        (vec!["tools", "--by", "name", "projects"], "by_name.jsonl"),
        (vec!["tools", "--loops", "projects"], "loops.jsonl"),
    ] {
        let mut a = args.clone();
        a.extend(["--format", "json"]);
        let out = skein(&a, &dir);
        let doc: Value = serde_json::from_slice(&ok(&out).stdout).expect("one JSON document");
        assert_eq!(doc, Value::Array(expected(file)), "{args:?}");
        let mut a = args.clone();
        a.extend(["--format", "table"]);
        let out = skein(&a, &dir);
        let text = String::from_utf8(ok(&out).stdout.clone()).expect("utf8");
        assert_eq!(text.lines().count(), 1 + expected(file).len(), "{text}");
    }
    let out = skein(&["tools", "--format", "table", "projects"], &dir);
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("session"));
    let first = lines.next().expect("row");
    assert!(first.starts_with("aaaaaaaa  main"), "{first}");
    assert!(first.ends_with("make test"), "{first}");
    // an empty result is still one JSON document
    let out = skein(
        &["tools", "--format", "json", "--tool", "None", "projects"],
        &dir,
    );
    let doc: Value = serde_json::from_slice(&ok(&out).stdout).expect("json");
    assert_eq!(doc, Value::Array(Vec::new()));
}

#[test]
fn piped_output_has_no_progress_and_missing_paths_exit_2() {
    let dir = fixture_dir();
    let out = skein(&["tools", "projects"], &dir);
    assert!(ok(&out).stderr.is_empty(), "no progress bar when piped");
    let out = skein(&["tools", "missing-dir", "projects"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing-dir"));
    assert_eq!(jsonl(&out).len(), expected("calls.jsonl").len());
}

#[test]
fn thread_count_does_not_change_output() {
    let dir = fixture_dir();
    let one = skein(&["tools", "-j", "1", "projects"], &dir);
    let two = skein(&["tools", "-j", "2", "projects"], &dir);
    assert_eq!(ok(&one).stdout, ok(&two).stdout);
    let mmap = skein(&["tools", "--mmap", "projects"], &dir);
    assert_eq!(ok(&mmap).stdout, one.stdout);
}

#[test]
fn sample_session_links_the_subagent() {
    let rows = jsonl(ok(&skein(&["tools", "testdata/sample"], &root())));
    let summary: Vec<(&str, &str, Option<bool>)> = rows
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().expect("tool"),
                r["input_summary"].as_str().expect("summary"),
                r["is_error"].as_bool(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Read", "/home/dev/widgets/src/cli.rs", Some(false)),
            ("Grep", "fn main", Some(false)),
            ("Bash", "cargo test --quiet", Some(true)),
            ("Task", "Find flag parsing", Some(false)),
            ("Edit", "/home/dev/widgets/src/cli.rs", Some(false)),
            ("Skill", "rust-testing", Some(false)),
            ("Bash", "cargo test", None),
            ("Glob", "src/**/*.rs", Some(false)),
        ]
    );
    let agent = &rows[7];
    assert_eq!(agent["agent_id"], "a1b2c3d4e5f60718");
    assert_eq!(agent["agent_type"], "Explore");
    assert_eq!(agent["spawned_by"], "toolu_04");
    assert_eq!(rows[0]["duration_ms"], 2074);
}

#[test]
fn corpus_rows_agree_with_stats() {
    let Some(corpus) = corpus() else { return };
    let c = corpus.to_str().expect("utf8 path");
    let cwd = std::env::temp_dir();
    let rows = jsonl(ok(&skein(&["tools", "-q", c], &cwd)));
    let stats = jsonl(ok(&skein(&["stats", "-q", c], &cwd)));
    assert!(!rows.is_empty());

    // every file: as many rows as `skein stats` counts tool uses
    let mut per_file: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &rows {
        *per_file
            .entry(r["file"].as_str().expect("file"))
            .or_insert(0) += 1;
    }
    assert!(!stats.is_empty());
    let mut stats_files = 0;
    for s in &stats {
        let path = s["path"].as_str().expect("path");
        let uses = s["tools"]["uses"].as_u64().expect("uses");
        assert_eq!(per_file.get(path).copied().unwrap_or(0), uses, "{path}");
        stats_files += 1;
    }
    assert!(per_file.len() <= stats_files);

    // row invariants
    let mut last: Option<(&str, u64)> = None;
    for r in &rows {
        let paired = r["paired"].as_bool().expect("paired");
        assert_eq!(r["is_error"].is_boolean(), paired, "{r}");
        assert_eq!(r["result_bytes"].is_u64(), paired, "{r}");
        if !paired {
            assert!(r["duration_ms"].is_null(), "{r}");
        }
        let summary = r["input_summary"].as_str().expect("summary");
        assert!(summary.chars().count() <= 120, "{summary}");
        assert!(
            !summary.contains('\n') && summary.trim() == summary,
            "{summary:?}"
        );
        if r["agent_id"].is_null() {
            assert!(
                r["agent_type"].is_null() && r["spawned_by"].is_null(),
                "{r}"
            );
        }
        let file = r["file"].as_str().expect("file");
        let line = r["line"].as_u64().expect("line");
        if let Some((f, l)) = last
            && f == file
        {
            assert!(line >= l, "file order in {file}: {l} then {line}");
        }
        last = Some((file, line));
    }

    // totals add up to the rows
    let by = jsonl(ok(&skein(&["tools", "-q", "--by", "name", c], &cwd)));
    let total: u64 = by.iter().map(|t| t["calls"].as_u64().expect("calls")).sum();
    assert_eq!(total, rows.len() as u64);
    let names: Vec<&str> = by
        .iter()
        .map(|t| t["tool"].as_str().expect("tool"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "sorted by name");
    for t in &by {
        let name = t["tool"].as_str().expect("tool");
        let of: Vec<&Value> = rows.iter().filter(|r| r["tool"] == name).collect();
        let errors = of.iter().filter(|r| r["is_error"] == true).count() as u64;
        let unpaired = of.iter().filter(|r| r["paired"] == false).count() as u64;
        let bytes: u64 = of.iter().filter_map(|r| r["result_bytes"].as_u64()).sum();
        let max = of.iter().filter_map(|r| r["duration_ms"].as_i64()).max();
        assert_eq!(t["errors"].as_u64(), Some(errors), "{name}");
        assert_eq!(t["unpaired"].as_u64(), Some(unpaired), "{name}");
        assert_eq!(t["result_bytes"].as_u64(), Some(bytes), "{name}");
        assert_eq!(t["max_duration_ms"].as_i64(), max, "{name}");
    }

    // each loop's ids are consecutive rows of one file with the loop's tool and summary
    let loops = jsonl(ok(&skein(&["tools", "-q", "--loops=2", c], &cwd)));
    assert!(!loops.is_empty(), "the corpus has repeated calls");
    let index: BTreeMap<(&str, &str), usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                (
                    r["file"].as_str().expect("f"),
                    r["id"].as_str().expect("id"),
                ),
                i,
            )
        })
        .collect();
    for l in &loops {
        let file = l["file"].as_str().expect("file");
        let ids: Vec<&str> = l["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| v.as_str().expect("id"))
            .collect();
        assert_eq!(ids.len() as u64, l["count"].as_u64().expect("count"));
        assert!(ids.len() >= 2);
        for id in &ids {
            let r = &rows[index[&(file, *id)]];
            assert_eq!(r["tool"], l["tool"]);
            assert_eq!(r["input_summary"], l["input_summary"]);
            assert_eq!(r["sidechain"], l["sidechain"]);
        }
        let first = &rows[index[&(file, ids[0])]];
        let last = &rows[index[&(file, ids[ids.len() - 1])]];
        assert_eq!(first["line"], l["first_line"]);
        assert_eq!(last["line"], l["last_line"]);
    }
}

/// `tools --by name` and `skills` take an unchanged session's calls from the catalog: the
/// same rows as reading it; a session changed in place without a change of size, time or
/// inode is (by design) answered from what was remembered, and an append is read again.
#[test]
fn by_name_and_skills_remember_unchanged_sessions_in_the_catalog() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tree = tmp.path().join("projects");
    common::copy_dir(&fixture_dir().join("projects"), &tree);
    common::copy_dir(&report_dir("skills").join("projects"), &tree);
    let db = tmp.path().join("catalog.db");
    let (t, d) = (tree.display().to_string(), db.display().to_string());
    let run = |args: &[&str]| ok(&skein(args, tmp.path())).stdout.clone();
    for report in [
        &["tools", "--by", "name"][..],
        &["skills"],
        &["skills", "--slash-commands"],
    ] {
        let mut with = report.to_vec();
        with.extend(["--catalog", &d, &t]);
        let mut without = report.to_vec();
        without.extend(["--no-catalog", &t]);
        let scanned = run(&without);
        assert!(scanned.len() > 2, "{report:?}: rows expected");
        assert_eq!(run(&with), scanned, "{report:?}: first run (remembers)");
        assert_eq!(run(&with), scanned, "{report:?}: second run (remembered)");
    }
    let by_name = ["tools", "--by", "name", "--catalog", &d, &t];
    let before = run(&by_name);
    // Rename every Bash call in place: same size, same inode, the time put back.
    let file = tree.join("-home-t-beta/bbbbbbbb-0000-4000-8000-000000000002.jsonl");
    let mtime = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .expect("mtime");
    let text = std::fs::read_to_string(&file).expect("read");
    let renamed = text.replace("\"name\":\"Bash\"", "\"name\":\"Bosh\"");
    assert_ne!(renamed, text);
    std::fs::write(&file, &renamed).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
    assert_eq!(run(&by_name), before, "answered from what was remembered");
    let scanned = run(&["tools", "--by", "name", "--no-catalog", &t]);
    assert_ne!(scanned, before, "the scan sees Bosh");
    // An append changes the fingerprint: read again, the scan's rows.
    let mut f = std::fs::File::options()
        .append(true)
        .open(&file)
        .expect("open");
    std::io::Write::write_all(&mut f, b"\n").expect("append");
    assert_eq!(run(&by_name), scanned);
}

#[test]
fn many_sessions_come_out_in_session_order_on_every_thread_count() {
    // 300 sessions go to the workers in runs of several sessions (one run per session on
    // three threads, runs of four on one): the rows still come in session order.
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("projects/-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    for i in 0..300 {
        let sid = format!("00000000-0000-4000-8000-{i:012}");
        let line = format!(
            r#"{{"type":"assistant","uuid":"a","sessionId":"{sid}","timestamp":"2026-01-01T00:00:00Z","message":{{"id":"m","content":[{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{}}}}]}}}}"#
        );
        std::fs::write(project.join(format!("{sid}.jsonl")), line + "\n").expect("write");
    }
    let want: Vec<String> = (0..300).map(|i| format!("toolu_{i}")).collect();
    for threads in ["1", "3"] {
        let out = skein(
            &["tools", "--format", "jsonl", "-j", threads, "projects"],
            dir.path(),
        );
        let got: Vec<String> = common::jsonl(ok(&out))
            .iter()
            .map(|r| r["id"].as_str().expect("id").to_owned())
            .collect();
        assert_eq!(got, want, "-j {threads}");
    }
}

/// Two sessions with one id in two project directories of one name (two roots, or a tree
/// that reuses session names) are remembered apart: renamed in place (same size, time and
/// inode), both are still answered from what was remembered, so neither was missed and read
/// again (when they shared one entry, each run overwrote the other's).
#[test]
fn sessions_of_one_id_in_directories_of_one_name_are_remembered_apart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let session = "cccccccc-0000-4000-8000-000000000003";
    let mut files = Vec::new();
    for (root, tool) in [("a", "toolu_a1"), ("b", "toolu_b1")] {
        let dir = tmp.path().join(format!("{root}/projects/-home-t-same"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join(format!("{session}.jsonl"));
        let lines = [
            format!(
                r#"{{"type":"assistant","uuid":"{root}1","parentUuid":null,"timestamp":"2026-03-01T10:00:00.000Z","sessionId":"{session}","message":{{"id":"msg_{root}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"{tool}","name":"Bash","input":{{"command":"ls"}}}}]}}}}"#
            ),
            format!(
                r#"{{"type":"user","uuid":"{root}2","parentUuid":"{root}1","timestamp":"2026-03-01T10:00:01.000Z","sessionId":"{session}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{tool}","content":"ok"}}]}}}}"#
            ),
        ];
        std::fs::write(&file, lines.join("\n") + "\n").expect("write");
        files.push(file);
    }
    let db = tmp.path().join("catalog.db");
    let roots = [tmp.path().join("a/projects"), tmp.path().join("b/projects")];
    let mut args: Vec<String> = ["tools", "--by", "name", "--catalog"]
        .map(String::from)
        .to_vec();
    args.push(db.display().to_string());
    args.extend(roots.iter().map(|r| r.display().to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = || ok(&skein(&argv, tmp.path())).stdout.clone();
    let before = run();
    assert!(String::from_utf8_lossy(&before).contains("Bash"));
    assert_eq!(run(), before, "second run");
    for file in &files {
        let mtime = std::fs::metadata(file)
            .and_then(|m| m.modified())
            .expect("mtime");
        let text = std::fs::read_to_string(file).expect("read");
        std::fs::write(file, text.replace("\"name\":\"Bash\"", "\"name\":\"Bosh\""))
            .expect("write");
        std::fs::File::options()
            .write(true)
            .open(file)
            .and_then(|f| f.set_modified(mtime))
            .expect("set mtime");
    }
    assert_eq!(run(), before, "both answered from what was remembered");
}
