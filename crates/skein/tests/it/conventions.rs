//! Command-line conventions shared by every subcommand (issue 12): a reader that goes away ends
//! the command quietly with status 0, as `rg` and `cat` do.

use std::io::Read as _;
use std::process::Stdio;

use crate::common::{root, skein_command};

const SESSION: &str =
    "testdata/sample/projects/-home-dev-widgets/0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl";

/// Every subcommand that writes data to stdout, with arguments that make it write some.
fn writers() -> Vec<Vec<&'static str>> {
    let dir = "testdata/sample";
    vec![
        vec!["stats", dir],
        vec!["stats", "--format", "json", dir],
        vec!["stats", "--format", "table", dir],
        vec!["check", dir],
        vec!["usage", dir],
        vec!["usage", "daily", "--format", "table", dir],
        vec!["usage", "session", dir],
        vec!["usage", "model", "--format", "json", dir],
        vec!["usage", "blocks", dir],
        vec!["tools", dir],
        vec!["records", dir],
        vec!["skills", dir],
        vec!["tree", SESSION],
        vec!["tree", "--format", "table", SESSION],
        vec!["show", SESSION],
        vec!["prune", "--preset", "lean", SESSION],
        vec!["redact", SESSION],
        vec!["compress", "-o", "-", SESSION],
        vec!["sessions", dir],
        vec!["search", "the", dir],
        vec!["index", dir],
    ]
}

/// Runs `args` with a stdout pipe whose reader takes `read` bytes and then goes away.
fn run_with_reader_gone(args: &[&str], read: usize) -> (Option<i32>, String) {
    let (mut cmd, _home) = skein_command(args, &root());
    cmd.env("TZ", "UTC").stdin(Stdio::null());
    let mut child = cmd.spawn().expect("spawn skein");
    let mut stdout = child.stdout.take().expect("stdout");
    if read > 0 {
        let mut buf = vec![0; read];
        let _ = stdout.read(&mut buf);
    }
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait");
    (status.code(), stderr)
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_status_zero() {
    let mut failures = Vec::new();
    for args in writers() {
        for read in [0, 1] {
            let (code, stderr) = run_with_reader_gone(&args, read);
            let check_findings = args[0] == "check" && code == Some(1);
            if !(code == Some(0) || check_findings) || stderr.contains("Broken pipe") {
                failures.push(format!(
                    "skein {} (read {read}): {code:?}: {stderr}",
                    args.join(" ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The sessions `usage session` reports for `args` (their ids).
fn session_ids(args: &[&str]) -> Vec<String> {
    let mut all = vec!["usage", "session", "--format", "jsonl"];
    all.extend_from_slice(args);
    all.push("testdata/sample");
    let out = crate::common::skein(&all, &root());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            v.get("session_id")
                .and_then(|s| s.as_str())
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn values_that_begin_with_a_dash_are_taken_as_values() {
    let all = session_ids(&[]);
    assert!(!all.is_empty());
    // Every project directory name begins with `-`.
    assert_eq!(session_ids(&["--project", "-home-dev-widgets"]), all);
    assert_eq!(
        session_ids(&["--project", "-home-dev-nothing"]),
        Vec::<String>::new()
    );
    assert_eq!(session_ids(&["--include", "-x*"]), Vec::<String>::new());
    assert_eq!(session_ids(&["--exclude", "-x*"]), all);
    assert_eq!(session_ids(&["--timezone", "-0500"]), all);
}

#[test]
fn project_matches_the_working_directory_path() {
    let all = session_ids(&[]);
    assert_eq!(session_ids(&["--project", "/home/dev/widgets"]), all);
    assert_eq!(session_ids(&["--project", "/home/dev/widgets/"]), all);
    assert_eq!(
        session_ids(&["--project", "/home/dev/other"]),
        Vec::<String>::new()
    );
}

#[test]
fn errors_name_the_path_once_and_exit_two() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.jsonl");
    let missing = missing.to_str().expect("utf-8");
    for cmd in [
        "stats", "check", "redact", "prune", "usage", "tools", "records", "cat",
    ] {
        let out = crate::common::skein(&[cmd, missing], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "skein {cmd}: {stderr}");
        assert!(stderr.contains(missing), "skein {cmd}: {stderr}");
        for line in stderr.lines() {
            // The reason once: no `…(os error 2): …(os error 2)`.
            assert!(
                line.matches("os error 2").count() <= 1,
                "skein {cmd}: {line}"
            );
            assert!(line.starts_with("skein: "), "skein {cmd}: {line}");
        }
    }
}

#[test]
fn invalid_lines_are_reported_as_path_line_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"type\":\"user\"}\nnot json\n",
    )
    .expect("write");
    let out = crate::common::skein(&["stats", "t.jsonl"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("skein: t.jsonl:2:16: "), "{stderr}");
}

#[test]
fn a_typo_of_a_report_word_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = crate::common::skein(&["usage", "dialy"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("did you mean the report `daily`"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Total"));
}

#[test]
fn a_directory_without_transcripts_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("empty")).expect("mkdir");
    for cmd in ["stats", "usage", "tools", "check", "skills", "records"] {
        let out = crate::common::skein(&[cmd, "empty"], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("no transcripts under empty"),
            "skein {cmd}: {stderr}"
        );
    }
    let out = crate::common::skein(&["stats", "testdata/sample"], &root());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no transcripts"));
}

#[test]
fn completions_and_the_man_page_cover_every_subcommand() {
    let help = crate::common::skein(&["--help"], &root());
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    // The subcommand names listed by `--help` (two-space indented words after "Commands:").
    let names: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .expect("commands section")
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .collect();
    assert!(
        names.contains(&"usage") && names.contains(&"completions"),
        "{names:?}"
    );
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = crate::common::skein(&["completions", shell], &root());
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for name in &names {
            assert!(text.contains(name), "{shell} completions lack {name}");
        }
        assert!(text.contains("max-line"), "{shell}");
    }
    let man = crate::common::skein(&["man"], &root());
    assert_eq!(man.status.code(), Some(0));
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(
        man.starts_with(".ie") || man.contains(".TH skein"),
        "{}",
        &man[..200]
    );
    for name in &names {
        assert!(
            man.contains(&format!(".SH \"SKEIN {}\"", name.to_uppercase())),
            "man lacks {name}"
        );
    }
}

#[test]
fn version_names_the_commit_and_the_price_table() {
    let out = crate::common::skein(&["--version"], &root());
    let text = String::from_utf8_lossy(&out.stdout);
    let prices: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/skein-reports/pricing.json")).expect("read"),
    )
    .expect("json");
    let as_of = prices["as_of"].as_str().expect("as_of");
    assert!(
        text.starts_with(&format!("skein {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(text.contains(&format!("prices as of {as_of})")), "{text}");
}
