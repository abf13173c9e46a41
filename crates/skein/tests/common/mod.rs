//! Helpers shared by the CLI tests: run the real binary with a private `HOME`, read its
//! output, find the shared corpus.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path under `testdata/`.
pub(crate) fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// Runs `skein ARGS` in `cwd` with a fresh temporary `HOME` and no `CLAUDE_CONFIG_DIR`, so
/// no test can reach the user's `~/.claude`.
pub(crate) fn skein(args: &[&str], cwd: &Path) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    Command::new(env!("CARGO_BIN_EXE_skein"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOME", home.path())
        .output()
        .expect("run skein")
}

/// Asserts a zero exit status, showing stderr otherwise.
pub(crate) fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf8")
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Standard output as JSON lines.
pub(crate) fn jsonl(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// A note in the test output (shown with `--nocapture`).
pub(crate) fn note(msg: &str) {
    let _ = writeln!(std::io::stdout(), "{msg}");
}

/// The shared corpus (`SKEIN_CORPUS`, default `../shared/corpus`), or `None` with a note.
pub(crate) fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("SKEIN_CORPUS")
        .map_or_else(|| root().join("../shared/corpus"), PathBuf::from);
    if dir.is_dir() {
        Some(dir)
    } else {
        note(&format!(
            "note: corpus not found at {} (set SKEIN_CORPUS); corpus test skipped",
            dir.display()
        ));
        None
    }
}

/// Every `*.jsonl` file below `dir`, in sorted path order.
pub(crate) fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            jsonl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
}

/// [`skein`] with `input` on standard input.
pub(crate) fn skein_stdin(args: &[&str], cwd: &Path, input: &[u8]) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skein"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skein");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}
