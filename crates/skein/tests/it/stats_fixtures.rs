//! Data-driven: every `testdata/stats/<case>.jsonl` has a `<case>.expected.json` written by
//! hand from the stats contract; the real binary must produce exactly those values, and so must
//! the library reading the same bytes in 1-byte, 7-byte and 64 KiB blocks.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skein_analysis::{AnalysisOptions, analyze};
use skein_core::{ReadLines, SliceLines};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/stats");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/stats exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 20,
        "expected at least 20 fixtures, found {}",
        cases.len()
    );
    cases
}

fn expected(case: &Path) -> Value {
    let p = case.with_extension("expected.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every key of `want` must be present in `got` with an equal value (recursively for objects).
fn assert_subset(case: &Path, want: &Value, got: &Value, at: &str) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g
                    .get(k)
                    .unwrap_or_else(|| panic!("{}: missing key {at}.{k}", case.display()));
                assert_subset(case, wv, gv, &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(got, want, "{}: {at}", case.display()),
    }
}

#[test]
fn binary_matches_every_fixture() {
    let cases = fixtures();
    let home = tempfile::tempdir().expect("tempdir");
    let out = crate::common::hermetic(&mut Command::new(env!("CARGO_BIN_EXE_skein")), home.path())
        .arg("stats")
        .arg("--format")
        .arg("jsonl")
        .arg("--quiet")
        .args(&cases)
        .output()
        .expect("run skein");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .expect("utf8 stdout")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each stdout line is JSON"))
        .collect();
    assert_eq!(lines.len(), cases.len(), "one line per file, in order");
    for (case, got) in cases.iter().zip(&lines) {
        assert_eq!(got["path"], case.display().to_string());
        assert_subset(case, &expected(case), got, "");
    }
}

#[test]
fn read_block_size_does_not_change_the_result() {
    for case in fixtures() {
        let data = std::fs::read(&case).expect("read fixture");
        let name = case.display().to_string();
        let options = AnalysisOptions::default();
        let want = analyze(&name, SliceLines::new(&data), &options)
            .expect("slice")
            .stats;
        for block in [1, 7, 64 << 10] {
            let got = analyze(
                &name,
                ReadLines::with_block_size(&data[..], block),
                &options,
            )
            .expect("stream")
            .stats;
            assert_eq!(got, want, "{name} at block size {block}");
        }
        let as_json = serde_json::to_value(&want).expect("serialize");
        assert_subset(&case, &expected(&case), &as_json, "");
    }
}
