//! Peak memory of the streaming path (`ReadLines` → `Reader` → analysis, what `skein stats`
//! runs) on one huge line, measured as the growth of the peak resident set (`VmHWM` in
//! `/proc/self/status`) of a child process: this test binary run again with
//! `SKEIN_MEMORY_CHILD` set, so nothing else shares its heap. Not a timed test.
//!
//! * a 48 MiB line costs at most twice its length beyond itself: one copy of a string being
//!   unescaped (serde_json's scratch) and, for text the envelope keeps (a prompt), the kept
//!   copy; a tool result, whose text is only measured, costs about its own length once more;
//! * a 48 MiB line over a 4 MiB maximum is skipped in bounded memory and reported invalid with
//!   its offset.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use skein_analysis::{AnalysisOptions, analyze};
use skein_core::{ReadLines, ReaderOptions};

const MIB: u64 = 1 << 20;
const LINE: u64 = 48 * MIB;

fn note(msg: &str) {
    let _ = writeln!(std::io::stdout(), "{msg}");
}

/// Peak resident set of this process, in bytes.
fn vm_hwm() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM");
    kb * 1024
}

/// The child: reads `SKEIN_MEMORY_CHILD` (`path max_line`) and prints `peak-before
/// peak-after invalid-lines first-invalid-offset`.
#[test]
fn child() {
    let Ok(arg) = std::env::var("SKEIN_MEMORY_CHILD") else {
        return;
    };
    let (path, max) = arg.split_once(' ').expect("path max");
    let before = vm_hwm();
    let file = std::fs::File::open(path).expect("open");
    let options = AnalysisOptions {
        reader: ReaderOptions {
            max_line_len: max.parse().expect("max"),
        },
        ..AnalysisOptions::default()
    };
    let a = analyze(path, ReadLines::new(file), &options).expect("analyze");
    let after = vm_hwm();
    let offset = a.stats.invalid.first().map_or(0, |i| i.offset);
    let records: u64 = a.stats.records.values().sum();
    let mut out = std::io::stdout();
    writeln!(
        out,
        "MEASURED {before} {after} {} {offset} {records}",
        a.stats.invalid_lines
    )
    .expect("stdout");
}

/// Runs the child on `path`; returns (peak growth in bytes, invalid lines, first invalid
/// offset, records).
fn measure(path: &Path, max: u64) -> (u64, u64, u64, u64) {
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "memory::child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SKEIN_MEMORY_CHILD", format!("{} {max}", path.display()))
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split_once("MEASURED ").map(|(_, r)| r.to_owned()))
        .unwrap_or_else(|| {
            panic!(
                "child said: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let v: Vec<u64> = line
        .split_whitespace()
        .map(|x| x.parse().expect("number"))
        .collect();
    (v[1].saturating_sub(v[0]), v[2], v[3], v[4])
}

fn small_line(i: u64) -> String {
    format!(
        r#"{{"type":"user","uuid":"s{i}","parentUuid":null,"sessionId":"m","timestamp":"2026-05-01T10:00:00Z","message":{{"role":"user","content":"hello"}}}}"#
    ) + "\n"
}

/// A file: two small lines, one huge line built by `huge`, two small lines.
fn write_file(path: &Path, huge: impl Fn(&str) -> String) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    f.write_all(small_line(0).as_bytes()).expect("write");
    f.write_all(small_line(1).as_bytes()).expect("write");
    // Text with a newline and a quote every 64 bytes, as a file read or a log has.
    let unit = format!("{}\\n{}\\\"", "a".repeat(30), "b".repeat(30));
    let body = unit.repeat((LINE as usize) / unit.len());
    let line = huge(&body) + "\n";
    f.write_all(line.as_bytes()).expect("write");
    f.write_all(small_line(2).as_bytes()).expect("write");
    f.write_all(small_line(3).as_bytes()).expect("write");
    f.flush().expect("flush");
    line.len() as u64
}

#[test]
fn a_huge_line_costs_at_most_twice_its_length_beyond_itself() {
    if !Path::new("/proc/self/status").exists() {
        note("memory: skipped (no /proc/self/status)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let result = dir.path().join("result.jsonl");
    let len = write_file(&result, |body| {
        format!(
            r#"{{"type":"user","uuid":"r","parentUuid":"s1","sessionId":"m","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t","content":"{body}"}}]}}}}"#
        )
    });
    let prompt = dir.path().join("prompt.jsonl");
    write_file(&prompt, |body| {
        format!(
            r#"{{"type":"user","uuid":"p","parentUuid":"s1","sessionId":"m","message":{{"role":"user","content":"{body}"}}}}"#
        )
    });
    let unlimited = u64::MAX / 2;
    let (grow_result, bad, _, records) = measure(&result, unlimited);
    assert_eq!((bad, records), (0, 5));
    let (grow_prompt, bad, _, records) = measure(&prompt, unlimited);
    assert_eq!((bad, records), (0, 5));
    let (grow_skipped, bad, offset, records) = measure(&result, 4 * MIB);
    assert_eq!((bad, records), (1, 4));
    assert_eq!(offset, 2 * small_line(0).len() as u64);
    let ratio = |g: u64| g as f64 / len as f64;
    note(&format!(
        "memory: {len}-byte line: tool result +{} MiB ({:.2}x), prompt text +{} MiB ({:.2}x), \
         over a 4 MiB maximum +{} MiB",
        grow_result / MIB,
        ratio(grow_result),
        grow_prompt / MIB,
        ratio(grow_prompt),
        grow_skipped / MIB,
    ));
    // The line itself plus at most twice its length; a measured-only string once.
    assert!(
        ratio(grow_result) <= 2.1,
        "tool result: {grow_result} bytes"
    );
    assert!(ratio(grow_prompt) <= 3.1, "prompt: {grow_prompt} bytes");
    assert!(
        grow_skipped <= 16 * MIB,
        "skipped line: {grow_skipped} bytes"
    );
}
