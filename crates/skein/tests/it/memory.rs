//! Peak memory of the passes on a large transcript: `redact`, `prune --preset lean`, `snapshot`
//! and `check` run on a generated ~300 MB session, each under a peak-RSS limit far below the
//! file's size. The peak is the child's `VmHWM` from `/proc/<pid>/status`, read while it runs
//! (the kernel keeps the high-water mark; polling every few milliseconds can only miss what the
//! last few milliseconds add, so a failure is never spurious). Not a timing test. Linux only.

use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::skein_command;

/// Size of the generated session.
const TARGET_BYTES: usize = 300_000_000;
/// The goal of issue 16: under 128 MB, whatever the file's size.
const LIMIT_KB: u64 = 128 * 1024;

/// Writes a session of about `TARGET_BYTES`: prompts, tool calls and large tool results in one
/// parent chain, with a secret now and then for `redact` to find.
fn generate(path: &Path) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let pad = "fn main() { println!(\"hello\"); } // lorem ipsum dolor sit amet\\n".repeat(130);
    let (mut written, mut i, mut records) = (0usize, 0usize, 0u64);
    while written < TARGET_BYTES {
        let parent = if i == 0 {
            "null".to_owned()
        } else {
            format!("\"u{}\"", i - 1)
        };
        let head = format!(
            "\"uuid\":\"u{i}\",\"parentUuid\":{parent},\"sessionId\":\"mem\",\"timestamp\":\"2026-01-05T14:{:02}:00.000Z\"",
            i % 60
        );
        let line = match i % 3 {
            0 => format!(
                "{{\"type\":\"user\",{head},\"message\":{{\"role\":\"user\",\"content\":\"look at f{i}.rs, key AKIAIOSFODNN7EXAMPL{}\"}}}}\n",
                i % 10
            ),
            1 => format!(
                "{{\"type\":\"assistant\",{head},\"message\":{{\"id\":\"msg_{i}\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"Read\",\"input\":{{\"file_path\":\"/src/f{i}.rs\"}}}}],\"usage\":{{\"input_tokens\":10,\"output_tokens\":5}}}}}}\n"
            ),
            _ => format!(
                "{{\"type\":\"user\",{head},\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_{}\",\"content\":\"{pad}\"}}]}},\"toolUseResult\":{{\"stdout\":\"{pad}\"}}}}\n",
                i - 1
            ),
        };
        w.write_all(line.as_bytes()).expect("write");
        written += line.len();
        i += 1;
        records += 1;
    }
    w.flush().expect("flush");
    records
}

/// Runs `skein ARGS` in `dir` and returns its peak RSS in kB.
fn peak_kb(args: &[&str], dir: &Path) -> u64 {
    let (mut cmd, _home) = skein_command(args, dir);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb);
        }
        std::thread::sleep(Duration::from_millis(3));
    };
    let out = child.wait_with_output().expect("output");
    // `check` exits 1 when it has error-level findings; anything else is a failure.
    assert!(
        status.success() || (args[0] == "check" && status.code() == Some(1)),
        "skein {args:?}: {status}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(peak > 0, "skein {args:?}: no VmHWM read");
    peak
}

#[test]
#[allow(clippy::print_stderr)]
fn passes_stay_under_128_mb_on_a_300_mb_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("big.jsonl");
    let records = generate(&src);
    let size = std::fs::metadata(&src).expect("md").len();
    let runs: [&[&str]; 4] = [
        &[
            "redact",
            "big.jsonl",
            "-o",
            "out.jsonl",
            "--report",
            "r.json",
        ],
        &[
            "prune",
            "--preset",
            "lean",
            "big.jsonl",
            "-o",
            "out.jsonl",
            "--report",
            "r.json",
        ],
        &[
            "snapshot",
            "big.jsonl",
            "-o",
            "out.jsonl",
            "--report",
            "r.json",
        ],
        &["check", "-q", "big.jsonl"],
    ];
    let mut seen = Vec::new();
    for args in runs {
        let kb = peak_kb(args, dir.path());
        seen.push(format!("{} {} MB", args[0], kb / 1024));
        assert!(
            kb < LIMIT_KB,
            "skein {args:?} peaked at {kb} kB on a {size}-byte file (limit {LIMIT_KB} kB)"
        );
        if args[0] != "check" {
            let out = std::fs::metadata(dir.path().join("out.jsonl")).expect("output");
            assert!(out.len() > 0, "skein {args:?} wrote nothing");
        }
    }
    eprintln!(
        "peak RSS on {size} bytes, {records} records: {}",
        seen.join(", ")
    );
}
