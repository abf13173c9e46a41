//! `--max-line`: a line longer than the maximum is reported invalid with its line number and
//! byte offset and skipped, by every command that streams transcripts, from a file or a pipe.

use crate::common::{jsonl, ok, skein, skein_stdin, stderr};

fn user(uuid: &str, text: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"s","timestamp":"2026-05-01T10:00:00Z","message":{{"role":"user","content":"{text}"}}}}"#
    ) + "\n"
}

#[test]
fn a_line_over_the_maximum_is_reported_and_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = user("a", "hi");
    let long = user("b", &"x".repeat(3000));
    let data = format!("{first}{long}{}", user("c", "bye"));
    std::fs::write(dir.path().join("t.jsonl"), &data).expect("write");
    let want = format!(
        "t.jsonl:2:{}: line of {} bytes is longer than the maximum line length (1024 bytes); skipped",
        first.len(),
        long.len()
    );
    for args in [
        vec!["stats", "--max-line", "1K", "t.jsonl"],
        vec!["--max-line", "1024", "stats", "t.jsonl"],
    ] {
        let out = skein(&args, dir.path());
        ok(&out);
        let row = &jsonl(&out)[0];
        assert_eq!(row["invalid_lines"], 1, "{args:?}");
        assert_eq!(row["records"]["user"], 2, "{args:?}");
        assert!(stderr(&out).contains(&want), "{args:?}: {}", stderr(&out));
    }
    // From a pipe (the streaming reader) and in check's diagnostics.
    let out = skein_stdin(
        &["stats", "--max-line", "1K", "-"],
        dir.path(),
        data.as_bytes(),
    );
    ok(&out);
    assert_eq!(jsonl(&out)[0]["invalid_lines"], 1);
    let out = skein(&["check", "--max-line", "1K", "t.jsonl"], dir.path());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("maximum line length"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The default (256 MiB) reads it.
    let out = skein(&["stats", "t.jsonl"], dir.path());
    ok(&out);
    assert_eq!(jsonl(&out)[0]["invalid_lines"], 0);
    for bad in ["0", "lots", "-1"] {
        let out = skein(&["stats", "--max-line", bad, "t.jsonl"], dir.path());
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

/// 64 MiB without a newline (like `/dev/zero`) under a 1 MiB maximum: one invalid line, the
/// lines after it still read.
#[test]
fn an_endless_line_is_skipped_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut data = vec![0u8; 64 << 20];
    data.push(b'\n');
    data.extend_from_slice(user("z", "after").as_bytes());
    let out = skein_stdin(&["stats", "--max-line", "1M", "-"], dir.path(), &data);
    ok(&out);
    let row = &jsonl(&out)[0];
    assert_eq!(row["invalid_lines"], 1);
    assert_eq!(row["records"]["user"], 1);
}
