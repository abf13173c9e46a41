//! Helpers shared by the CLI tests: run the real binary with a private `HOME`, read its
//! output, the report fixtures of `testdata/reports`; the shared corpus comes from
//! `skein-testkit`.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub(crate) mod pty;

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path under `testdata/`.
pub(crate) fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// Runs `skein ARGS` in `cwd` with a fresh temporary `HOME`, no `CLAUDE_CONFIG_DIR`,
/// `XDG_CONFIG_HOME` or `XDG_STATE_HOME` (so no test can reach the user's `~/.claude` or
/// skein config and state; see [`hermetic`]) and
/// `TZ=UTC` (so days do not depend on the machine's zone; a test may set another `TZ` through
/// [`skein_env`]).
pub(crate) fn skein(args: &[&str], cwd: &Path) -> Output {
    skein_env(args, cwd, &[])
}

/// Makes `cmd` hermetic: `HOME` is `home`, and nothing of the user's environment that skein
/// reads (the Claude dir, skein's config and state, colour and width) reaches it.
pub(crate) fn hermetic<'c>(cmd: &'c mut Command, home: &Path) -> &'c mut Command {
    cmd.env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("COLUMNS")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("HOME", home)
}

/// A `skein ARGS` command in `cwd` with a private `HOME` (kept alive by the returned guard), to
/// spawn and watch while it runs.
pub(crate) fn skein_command(args: &[&str], cwd: &Path) -> (Command, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skein"));
    hermetic(&mut cmd, home.path())
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    (cmd, home)
}

/// [`skein`] with extra environment variables.
pub(crate) fn skein_env(args: &[&str], cwd: &Path, env: &[(&str, &Path)]) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skein"));
    hermetic(&mut cmd, home.path())
        .args(args)
        .current_dir(cwd)
        .env("TZ", "UTC");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run skein")
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

/// `needles` appear in `hay` in this order.
pub(crate) fn in_order(hay: &str, needles: &[&str]) {
    let mut at = 0;
    for n in needles {
        match hay[at..].find(n) {
            Some(i) => at += i + n.len(),
            None => panic!("{n:?} missing (or out of order) in:\n{hay}"),
        }
    }
}

/// A note in the test output (shown with `--nocapture`).
pub(crate) fn note(msg: &str) {
    let _ = writeln!(std::io::stdout(), "{msg}");
}

/// The shared corpus (`SKEIN_CORPUS`, default `../shared/corpus`), or `None` with a note.
pub(crate) fn corpus() -> Option<PathBuf> {
    skein_testkit::corpus_dir()
}

/// Every `*.jsonl` file below `dir`, sorted; panics when there is none.
pub(crate) fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    skein_testkit::jsonl_files(dir)
}

/// `testdata/reports/REPORT`, the fixture directory of one report.
pub(crate) fn report_dir(report: &str) -> PathBuf {
    testdata("reports").join(report)
}

/// The reviewed rows `testdata/reports/REPORT/expected/NAME`, one JSON value per line.
pub(crate) fn expected_rows(report: &str, name: &str) -> Vec<Value> {
    let p = report_dir(report).join("expected").join(name);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("expected line"))
        .collect()
}

/// `skein REPORT ARGS` run in `testdata/reports/REPORT`: its JSON lines, after a zero exit.
pub(crate) fn report_rows(report: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec![report];
    all.extend_from_slice(args);
    jsonl(ok(&skein(&all, &report_dir(report))))
}

/// [`skein`] with `input` on standard input.
pub(crate) fn skein_stdin(args: &[&str], cwd: &Path, input: &[u8]) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    let mut child = hermetic(&mut Command::new(env!("CARGO_BIN_EXE_skein")), home.path())
        .args(args)
        .current_dir(cwd)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skein");
    // A command may refuse before reading its input (`--in-place` on stdin): its end of the
    // pipe is then closed, which is not the test's failure.
    match child.stdin.take().expect("stdin").write_all(input) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    child.wait_with_output().expect("wait")
}

/// Copies the directory tree `from` to `to` (created as needed).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}
