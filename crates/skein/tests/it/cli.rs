//! The `skein` binary run for real in temp directories.

use std::path::Path;

use serde_json::Value;

use crate::common;
use common::{jsonl, ok, skein, skein_stdin};

const SESSION: &str =
    "../../testdata/sample/projects/-home-dev-widgets/0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl";

fn sample() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn piped_output_is_jsonl_in_argument_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = std::fs::read(sample()).expect("sample");
    write(&dir.path().join("b.jsonl"), &sample);
    write(
        &dir.path().join("a.jsonl"),
        b"{\"type\":\"user\",\"uuid\":\"x\"}\n",
    );
    let out = skein(&["stats", "b.jsonl", "a.jsonl"], dir.path());
    assert!(out.status.success());
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["path"], "b.jsonl");
    assert_eq!(rows[1]["path"], "a.jsonl");
    assert_eq!(rows[1]["chain"]["nodes"], 1);
    assert_eq!(
        rows[0]["session_id"],
        "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b"
    );
}

#[test]
fn many_files_come_out_in_order_on_every_thread_count() {
    // 600 files go to the workers in runs of several files: results, and the error of a
    // missing file between them, still come out in argument order.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["stats".to_owned()];
    for i in 0..600 {
        let name = format!("f{i:03}.jsonl");
        if i != 317 {
            let uuids = (0..i % 7).map(|k| format!("{{\"type\":\"user\",\"uuid\":\"u{k}\"}}\n"));
            write(
                &dir.path().join(&name),
                uuids.collect::<String>().as_bytes(),
            );
        }
        args.push(name);
    }
    for threads in ["1", "2", "3"] {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["-j", threads]);
        let out = skein(&a, dir.path());
        assert_eq!(out.status.code(), Some(2), "f317 is missing");
        assert!(String::from_utf8_lossy(&out.stderr).contains("f317.jsonl"));
        let rows = jsonl(&out);
        let want: Vec<(String, u64)> = (0..600)
            .filter(|&i| i != 317)
            .map(|i| (format!("f{i:03}.jsonl"), i % 7))
            .collect();
        let got: Vec<(String, u64)> = rows
            .iter()
            .map(|r| {
                let path = r["path"].as_str().expect("path").to_owned();
                (path, r["chain"]["nodes"].as_u64().expect("nodes"))
            })
            .collect();
        assert_eq!(got, want, "-j {threads}");
    }
}

#[test]
fn directories_expand_sorted_with_zst_and_subagents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("p");
    let sample = std::fs::read(sample()).expect("sample");
    write(&root.join("s1.jsonl"), &sample);
    write(
        &root.join("s1/subagents/agent-a1.jsonl"),
        b"{\"type\":\"user\",\"uuid\":\"s\",\"isSidechain\":true}\n",
    );
    write(&root.join("notes.txt"), b"not a transcript");
    let zst = zstd::encode_all(&sample[..], 3).expect("compress");
    write(&root.join("s0.jsonl.zst"), &zst);
    let out = skein(&["stats", "p"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = jsonl(&out);
    let paths: Vec<&str> = rows
        .iter()
        .map(|r| r["path"].as_str().expect("path"))
        .collect();
    assert_eq!(
        paths,
        [
            "p/s0.jsonl.zst",
            "p/s1.jsonl",
            "p/s1/subagents/agent-a1.jsonl"
        ]
    );
    // The compressed copy reads exactly like the plain file.
    let mut a = rows[0].clone();
    let mut b = rows[1].clone();
    a["path"] = Value::Null;
    b["path"] = Value::Null;
    assert_eq!(a, b);
}

#[test]
fn unreadable_path_is_reported_and_others_still_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(&dir.path().join("ok.jsonl"), b"{\"type\":\"user\"}\n");
    let out = skein(&["stats", "missing.jsonl", "ok.jsonl"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.jsonl"), "{stderr}");
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["path"], "ok.jsonl");
}

#[test]
fn invalid_lines_are_warned_with_line_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        &dir.path().join("bad.jsonl"),
        b"{\"type\":\"user\"}\nnot json\n{\"type\":\"a\"}{\"b\":1}\n{\"torn\":",
    );
    let out = skein(&["stats", "bad.jsonl"], dir.path());
    assert!(out.status.success(), "bad lines are data, not errors");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.jsonl:2:16: "), "{stderr}");
    assert!(stderr.contains("bad.jsonl:3:25: "), "{stderr}");
    assert!(
        !stderr.contains(":4:"),
        "a torn tail is not warned about: {stderr}"
    );
    let rows = jsonl(&out);
    assert_eq!(rows[0]["invalid_lines"], 3);
    assert_eq!(rows[0]["torn_tail"]["line"], 4);
    assert_eq!(rows[0]["torn_tail"]["offset"], 45);
    let quiet = skein(&["stats", "-q", "bad.jsonl"], dir.path());
    assert!(quiet.stderr.is_empty());
}

#[test]
fn stdin_is_read_with_dash() {
    let input = std::fs::read(sample()).expect("sample");
    let out = skein_stdin(&["stats", "-"], Path::new("."), &input);
    let rows = jsonl(&out);
    assert_eq!(rows[0]["path"], "-");
    assert_eq!(rows[0]["chain"]["compactions"], 1);
}

#[test]
fn json_and_table_formats() {
    let s = sample();
    let s = s.to_str().expect("utf8 path");
    let dir = tempfile::tempdir().expect("tempdir");
    let json = skein(&["stats", "--format", "json", s, s], dir.path());
    let doc: Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    assert_eq!(doc.as_array().map(Vec::len), Some(2));
    let table = skein(&["stats", "--format", "table", s], dir.path());
    let text = String::from_utf8(table.stdout).expect("utf8");
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("path"));
    assert!(lines.next().expect("row").contains("0b4c6f9e"));
}

#[test]
fn mmap_and_read_agree() {
    let s = sample();
    let s = s.to_str().expect("utf8 path");
    let dir = tempfile::tempdir().expect("tempdir");
    let a = skein(&["stats", s], dir.path());
    let b = skein(&["stats", "--mmap", s], dir.path());
    // Two failed runs would agree on an empty output: both must succeed with one row.
    assert_eq!(jsonl(ok(&a)).len(), 1);
    ok(&b);
    assert_eq!(a.stdout, b.stdout);
}
