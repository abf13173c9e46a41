//! What skein does on a terminal and off it (issue 12): tables fitted to the width, colour
//! with `--color`, `NO_COLOR` and `CLICOLOR_FORCE`, one-line summaries instead of JSON
//! reports, relative `--since`, one meaning per flag, a walk that goes past what it cannot read.
//! Terminal cases run the real binary on a pseudo-terminal.

use std::process::Command;

use crate::common::pty::{self, PtyRun, strip_ansi};
use crate::common::{root, skein_command, stderr, stdout};

const SAMPLE: &str = "testdata/sample";
const SESSION: &str =
    "testdata/sample/projects/-home-dev-widgets/0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl";

/// `skein ARGS` in the workspace root, with a private HOME and the time zone fixed.
fn command(args: &[&str]) -> (Command, tempfile::TempDir) {
    let (mut cmd, home) = skein_command(args, &root());
    cmd.env("TZ", "UTC");
    (cmd, home)
}

fn on_terminal(args: &[&str], cols: u16, env: &[(&str, &str)]) -> PtyRun {
    let (mut cmd, _home) = command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    pty::run(cmd, cols, false)
}

fn piped(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let (mut cmd, _home) = command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run skein")
}

#[test]
fn tables_fit_the_terminal_width() {
    for cols in [60_u16, 80, 100] {
        for report in ["daily", "session", "model", "blocks"] {
            let run = on_terminal(&["usage", report, SAMPLE], cols, &[]);
            assert_eq!(run.status, Some(0), "{}", run.text);
            let text = strip_ansi(&run.text);
            assert!(text.contains("Total"), "usage {report} at {cols}: {text}");
            for line in text.lines() {
                assert!(
                    line.chars().count() <= usize::from(cols),
                    "usage {report} at {cols} columns, a line of {}: {line:?}\n{text}",
                    line.chars().count()
                );
            }
        }
    }
    // Wide enough, nothing is dropped; --compact drops the optional columns anyway.
    let wide = strip_ansi(&on_terminal(&["usage", SAMPLE], 200, &[]).text);
    assert!(
        wide.contains("cache read") && wide.contains("models"),
        "{wide}"
    );
    let compact = strip_ansi(&on_terminal(&["usage", "--compact", SAMPLE], 200, &[]).text);
    assert!(
        !compact.contains("cache read") && !compact.contains("models"),
        "{compact}"
    );
    assert!(compact.contains("cost USD"), "{compact}");
    // Off a terminal COLUMNS is the width; without it the table is not cut.
    let out = piped(
        &["usage", "--format", "table", SAMPLE],
        &[("COLUMNS", "70")],
    );
    assert!(
        stdout(&out).lines().all(|l| l.chars().count() <= 70),
        "{}",
        stdout(&out)
    );
    let out = piped(&["usage", "--format", "table", SAMPLE], &[]);
    assert!(stdout(&out).contains("models"), "{}", stdout(&out));
}

#[test]
fn the_session_report_lines_up_under_its_headers() {
    let run = on_terminal(&["usage", "session", SAMPLE], 250, &[]);
    let text = strip_ansi(&run.text);
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let row = lines.next().expect("row");
    let col = header.find("session").expect("session header");
    let id = row.split_whitespace().nth(1).expect("a session id");
    assert_eq!(row.find(id), Some(col), "\n{header}\n{row}");
    // Numbers carry thousands separators and model names are short.
    assert!(text.contains(','), "{text}");
    assert!(!text.contains("claude-"), "{text}");
}

#[test]
fn colour_on_a_terminal_unless_told_otherwise() {
    let has_colour = |s: &str| s.contains("\x1b[");
    let run = on_terminal(&["usage", SAMPLE], 120, &[]);
    assert!(has_colour(&run.text), "{:?}", run.text);
    for env in [[("NO_COLOR", "1")], [("TERM", "dumb")]] {
        let run = on_terminal(&["usage", SAMPLE], 120, &env);
        assert!(!has_colour(&run.text), "{env:?}: {:?}", run.text);
    }
    let run = on_terminal(&["usage", "--color", "never", SAMPLE], 120, &[]);
    assert!(!has_colour(&run.text), "{:?}", run.text);
    // Off a terminal: none, unless forced.
    let plain = piped(&["usage", "--format", "table", SAMPLE], &[]);
    assert!(!has_colour(&stdout(&plain)));
    for (args, env) in [
        (vec!["--color", "always"], vec![]),
        (vec![], vec![("CLICOLOR_FORCE", "1")]),
        (vec!["--color", "always"], vec![("NO_COLOR", "1")]),
    ] {
        let mut a = vec!["usage", "--format", "table"];
        a.extend(args.iter().copied());
        a.push(SAMPLE);
        let out = piped(&a, &env);
        assert!(has_colour(&stdout(&out)), "{args:?} {env:?}");
        assert_eq!(
            strip_ansi(&stdout(&out)),
            stdout(&plain),
            "colour changes no text"
        );
    }
    // JSON is never coloured.
    let out = piped(&["usage", "--color", "always", SAMPLE], &[]);
    assert!(!has_colour(&stdout(&out)));
    // Search highlights follow the same rules (the progress bar's line erasing is no colour).
    let sgr = |s: &str| s.contains("\x1b[1m") || s.contains("\x1b[1;33m");
    let run = on_terminal(&["search", "the", SAMPLE], 120, &[]);
    assert!(sgr(&run.text), "{:?}", run.text);
    let run = on_terminal(&["search", "the", SAMPLE], 120, &[("NO_COLOR", "1")]);
    assert!(!sgr(&run.text), "{:?}", run.text);
    // Diagnostics: the prefix is coloured on a terminal.
    let run = on_terminal(&["stats", "no-such-dir"], 80, &[]);
    assert!(
        run.text.contains("\x1b[1;31mskein:\x1b[0m"),
        "{:?}",
        run.text
    );
}

#[test]
fn passes_print_a_summary_on_a_terminal_and_json_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("lean.jsonl");
    let out = out.to_str().expect("utf-8");
    let session = root().join(SESSION);
    let session = session.to_str().expect("utf-8");
    let run = on_terminal(&["prune", "--preset", "lean", session, "-o", out], 80, &[]);
    assert_eq!(run.status, Some(0), "{}", run.text);
    let text = strip_ansi(&run.text);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("prune ") && text.contains(" lines, "),
        "{text}"
    );
    assert!(!text.contains('{'), "{text}");
    let run = on_terminal(&["redact", session, "-o", out], 80, &[]);
    assert!(strip_ansi(&run.text).starts_with("redact "), "{}", run.text);
    // --format jsonl on a terminal; piped, JSON by default and a summary when asked.
    let run = on_terminal(
        &[
            "prune", "--preset", "lean", session, "-o", out, "--format", "jsonl",
        ],
        80,
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(run.text.trim()).expect("json report");
    assert_eq!(v["pass"], "prune", "{v}");
    let p = piped(&["prune", "--preset", "lean", session, "-o", out], &[]);
    assert!(stderr(&p).trim_start().starts_with('{'), "{}", stderr(&p));
    let p = piped(
        &[
            "prune", "--preset", "lean", session, "-o", out, "--format", "summary",
        ],
        &[],
    );
    assert!(stderr(&p).starts_with("prune "), "{}", stderr(&p));
}

#[test]
fn archive_and_compress_summarise_on_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let to = dir.path().join("a");
    let to = to.to_str().expect("utf-8");
    let sample = root().join(SAMPLE);
    let sample = sample.to_str().expect("utf-8");
    let run = on_terminal(&["archive", sample, "--to", to], 100, &[]);
    assert_eq!(run.status, Some(0), "{}", run.text);
    let text = strip_ansi(&run.text);
    assert!(
        text.contains("archived ") && !text.contains("{\""),
        "{text}"
    );
    let to2 = dir.path().join("b");
    let p = piped(
        &["archive", sample, "--to", to2.to_str().expect("utf-8")],
        &[],
    );
    assert!(
        stdout(&p).lines().all(|l| l.starts_with('{')),
        "{}",
        stdout(&p)
    );
    assert!(stdout(&p).lines().count() >= 2, "{}", stdout(&p));

    let zst = dir.path().join("s.zst");
    let zst = zst.to_str().expect("utf-8");
    let session = root().join(SESSION);
    let session = session.to_str().expect("utf-8");
    let p = piped(&["compress", session, "-o", zst, "--zstd-level", "19"], &[]);
    assert_eq!(p.status.code(), Some(0), "{}", stderr(&p));
    let v: serde_json::Value = serde_json::from_str(stderr(&p).trim()).expect("json report");
    assert!(v["bytes_in"].as_u64() > v["bytes_out"].as_u64(), "{v}");
    let run = on_terminal(&["compress", session, "-o", zst, "-f"], 80, &[]);
    assert!(strip_ansi(&run.text).contains(" → "), "{}", run.text);
    // One meaning per flag: --level is the redaction level only.
    let p = piped(
        &["compress", session, "-o", zst, "-f", "--level", "19"],
        &[],
    );
    assert_eq!(p.status.code(), Some(2));
}

#[test]
fn since_and_until_take_days_times_and_durations() {
    let rows = |args: &[&str]| -> usize {
        let mut a = vec!["usage", "--format", "jsonl"];
        a.extend_from_slice(args);
        a.push(SAMPLE);
        let out = piped(&a, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        // The last line is the totals.
        stdout(&out).lines().count() - 1
    };
    let all = rows(&[]);
    assert!(all > 0);
    // The sample is older than a day and younger than a century.
    assert_eq!(rows(&["--since", "1d"]), 0);
    assert_eq!(rows(&["--since", "36500d"]), all);
    assert_eq!(rows(&["--until", "1h"]), all);
    assert_eq!(rows(&["--since", "2000-01-01T00:00:00Z"]), all);
    assert_eq!(rows(&["--until", "2000-01-01T00:00:00Z"]), 0);
    for bad in ["7x", "2026-02-30", "2026-02-30T10:00:00Z"] {
        let out = piped(&["usage", "--since", bad, SAMPLE], &[]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("--since"), "{}", stderr(&out));
    }
    // The same values in the catalog's commands.
    let out = piped(&["sessions", "--since", "36500d", SAMPLE], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).is_empty());
    let out = piped(&["sessions", "--since", "1d", SAMPLE], &[]);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn an_unreadable_subdirectory_is_skipped_with_a_warning() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod");
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("projects");
    crate::common::copy_dir(&root().join(SAMPLE).join("projects"), &tree);
    let locked = tree.join("-locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::write(locked.join("hidden.jsonl"), b"{}\n").expect("write");
    mode(&locked, 0o000);
    // Root reads any directory: then skein runs as `nobody`, for whom the rest is readable.
    let as_root = std::fs::read_dir(&locked).is_ok();
    if as_root {
        mode(dir.path(), 0o755);
        for entry in walk(&tree) {
            mode(&entry, if entry.is_dir() { 0o755 } else { 0o644 });
        }
        mode(&locked, 0o000);
    }
    let run = |path: &std::path::Path| {
        let (mut cmd, _home) = command(&["usage", "--no-catalog", "--format", "jsonl"]);
        cmd.arg(path).current_dir("/");
        if as_root {
            cmd.uid(65534).gid(65534);
        }
        cmd.output().expect("run skein")
    };
    let out = run(&tree);
    mode(&locked, 0o700);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("-locked"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let expected = run(&tree.join("-home-dev-widgets"));
    assert!(!stdout(&expected).is_empty());
    assert_eq!(
        stdout(&out),
        stdout(&expected),
        "the readable files are reported"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() && !p.ends_with("-locked") {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn corpus_progress_bars_only_on_a_terminal() {
    // A run long enough for the bar to be drawn (indicatif draws at most 20 times a second).
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let corpus = corpus.to_str().expect("utf-8").to_owned();
    let args = [
        "usage",
        "--no-catalog",
        "--format",
        "jsonl",
        corpus.as_str(),
    ];
    let run = on_terminal(&args, 100, &[]);
    assert!(
        run.text.contains(" sessions "),
        "{:?}",
        &run.text[..run.text.len().min(400)]
    );
    let mut quiet = args.to_vec();
    quiet.insert(1, "-q");
    let run = on_terminal(&quiet, 100, &[]);
    assert!(
        !run.text.contains(" sessions "),
        "{:?}",
        &run.text[..run.text.len().min(400)]
    );
    let out = piped(&args, &[]);
    assert!(!stderr(&out).contains(" sessions "), "{}", stderr(&out));
}
