//! Rewriting a transcript Claude Code may still be appending to never loses a line: `--in-place`
//! (with and without `--backup`) races an appender and keeps every appended line, and an output
//! path that is the input itself (by any spelling, symlink or hard link) is refused by every
//! command that writes files: prune, redact, snapshot (`-o`, `--out-dir`), show, compress,
//! decompress, and `--report`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{ok, skein, skein_command, stderr};

const SECRET: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";

/// A linear session of `n` user/assistant pairs, every tenth prompt with a token to redact.
fn session(n: usize) -> (Vec<u8>, String) {
    let mut out = String::new();
    let mut parent = "null".to_owned();
    let filler = "lorem ipsum dolor sit amet ".repeat(20);
    for i in 0..n {
        let secret = if i % 10 == 0 { SECRET } else { "none" };
        writeln!(
            out,
            r#"{{"type":"user","uuid":"u{i}","parentUuid":{parent},"sessionId":"s","timestamp":"2026-05-01T10:00:00Z","message":{{"role":"user","content":"token {secret} {filler}"}}}}"#
        )
        .expect("format");
        writeln!(
            out,
            r#"{{"type":"assistant","uuid":"a{i}","parentUuid":"u{i}","sessionId":"s","timestamp":"2026-05-01T10:00:01Z","message":{{"id":"m{i}","role":"assistant","model":"claude-x","content":[{{"type":"text","text":"ok {filler}"}}],"usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
        )
        .expect("format");
        parent = format!("\"a{i}\"");
    }
    (out.into_bytes(), format!("a{}", n - 1))
}

/// A line Claude Code could append next: it continues the active branch, holds no secret and
/// nothing prune drops, so every pass keeps it byte for byte.
fn appended_line(k: usize, parent: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"late{k}","parentUuid":"{parent}","sessionId":"s","timestamp":"2026-05-01T11:00:00Z","message":{{"role":"user","content":"appended while skein ran {k}"}}}}"#
    ) + "\n"
}

fn append(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(line.as_bytes()).expect("append");
}

/// Runs `args` (which rewrite `t.jsonl` in place) while lines are appended to `t.jsonl` by
/// path at pseudo-random moments; returns the lines appended, the file afterwards and whether
/// skein reported carrying appended bytes over.
fn race(dir: &Path, args: &[&str], seed: u64, parent: &str) -> (Vec<String>, String, bool) {
    let (mut cmd, _home) = skein_command(args, dir);
    let path = dir.join("t.jsonl");
    let mut rng = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = || {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        rng >> 33
    };
    let mut child = cmd.spawn().expect("spawn skein");
    let start = Instant::now();
    let mut appended = Vec::new();
    let mut parent = parent.to_owned();
    // The first append comes after 0–40 ms (the read, the pass or the write), then one every
    // 0–3 ms until skein exits.
    std::thread::sleep(Duration::from_micros(next() % 40_000));
    loop {
        let done = child.try_wait().expect("wait").is_some();
        let line = appended_line(appended.len(), &parent);
        append(&path, &line);
        parent = format!("late{}", appended.len());
        appended.push(line);
        if done || start.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_micros(next() % 3_000));
    }
    let out = child.wait_with_output().expect("wait");
    ok(&out);
    let text = String::from_utf8(std::fs::read(&path).expect("read")).expect("utf8");
    let carried = stderr(&out).contains("appended_during_rewrite");
    (appended, text, carried)
}

#[test]
fn in_place_rewrites_keep_lines_appended_meanwhile() {
    let (data, leaf) = session(600);
    let cases: [&[&str]; 3] = [
        &["redact", "--in-place", "t.jsonl"],
        &["prune", "--preset", "lean", "--in-place", "t.jsonl"],
        &["redact", "--in-place", "--backup", "t.jsonl"],
    ];
    let mut carried_runs = 0;
    for (c, args) in cases.iter().enumerate() {
        for trial in 0..5 {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::write(dir.path().join("t.jsonl"), &data).expect("write");
            let (appended, text, carried) = race(dir.path(), args, (c * 100 + trial) as u64, &leaf);
            for line in &appended {
                assert_eq!(
                    text.matches(line.as_str()).count(),
                    1,
                    "{args:?} trial {trial}: {line} lost or doubled"
                );
            }
            if args[0] == "redact" {
                // Everything skein read was redacted; appended lines hold no secret anyway.
                assert!(!text.contains(SECRET), "{args:?} trial {trial}");
            }
            if args.contains(&"--backup") {
                let bak = std::fs::read(dir.path().join("t.jsonl.bak")).expect("backup");
                assert!(bak.starts_with(&data), "the backup is the original");
            }
            carried_runs += usize::from(carried);
        }
    }
    crate::common::note(&format!(
        "{carried_runs} of 15 runs carried appended lines over"
    ));
    // The appends did land while skein was between its read and its rename.
    assert!(
        carried_runs > 0,
        "no trial raced; the test exercised nothing"
    );
}

#[test]
fn an_output_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (data, _) = session(3);
    std::fs::write(d.join("t.jsonl"), &data).expect("write");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("t.jsonl", d.join("link.jsonl")).expect("symlink");
        std::fs::hard_link(d.join("t.jsonl"), d.join("hard.jsonl")).expect("hard link");
    }
    let mut refused: Vec<Vec<&str>> = vec![
        vec!["redact", "t.jsonl", "-o", "t.jsonl"],
        vec!["redact", "t.jsonl", "-o", "./t.jsonl"],
        vec!["prune", "t.jsonl", "-o", "t.jsonl"],
        vec!["snapshot", "t.jsonl", "-o", "t.jsonl"],
        vec!["prune", "t.jsonl", "--report", "t.jsonl"],
        vec!["show", "t.jsonl", "-o", "t.jsonl"],
        vec!["compress", "t.jsonl", "-o", "t.jsonl", "-f"],
        vec!["decompress", "t.jsonl", "-o", "t.jsonl", "-f"],
    ];
    #[cfg(unix)]
    refused.extend([
        vec!["redact", "t.jsonl", "-o", "link.jsonl"],
        vec!["redact", "t.jsonl", "-o", "hard.jsonl"],
        vec!["show", "t.jsonl", "-o", "link.jsonl"],
    ]);
    for args in &refused {
        let out = skein(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?} was not refused");
        assert!(
            stderr(&out).contains("is the input"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(d.join("t.jsonl")).expect("read"),
            data,
            "{args:?}"
        );
    }
    // snapshot --out-dir onto the directory holding the session's own file.
    let sid = "5e55a0a0-0000-4000-8000-00000000000a";
    std::fs::write(d.join(format!("{sid}.jsonl")), &data).expect("write");
    let out = skein(&["snapshot", &format!("{sid}.jsonl"), "--out-dir", "."], d);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(d.join(format!("{sid}.jsonl"))).expect("read"),
        data
    );
    // The same commands writing elsewhere work.
    ok(&skein(&["redact", "t.jsonl", "-o", "clean.jsonl"], d));
    ok(&skein(&["show", "t.jsonl", "-o", "t.md"], d));
}

/// `--report /dev/stdout` (and `-o /dev/stdout`) write through the process's own standard
/// output: a file it was appended to (`>> log`) keeps what it held.
#[test]
fn dev_stdout_is_written_through_not_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (data, _) = session(3);
    std::fs::write(d.join("t.jsonl"), &data).expect("write");
    let log = d.join("log.txt");
    std::fs::write(&log, b"earlier output\n").expect("write");
    let stdout = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .expect("open log");
    let (mut cmd, _home) = skein_command(
        &[
            "redact",
            "t.jsonl",
            "-o",
            "/dev/stdout",
            "--report",
            "/dev/stdout",
        ],
        d,
    );
    let out = cmd.stdout(stdout).output().expect("run");
    ok(&out);
    let text = std::fs::read_to_string(&log).expect("read log");
    assert!(text.starts_with("earlier output\n"), "{text}");
    let rest: Vec<serde_json::Value> = text["earlier output\n".len()..]
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    // The six transcript lines, then the report.
    assert_eq!(rest.len(), 7, "{text}");
    assert!(rest[..6].iter().all(|v| v["sessionId"] == "s"), "{text}");
    assert_eq!(rest[6]["pass"], "redact");
}
