//! `--redact`: secrets planted in a prompt, a reply, a tool input, a tool result and the cwd
//! reach no byte of the dataset (Parquet values read back, JSONL bytes as written) with a
//! redactor, and do reach it without one (so the check can fail).

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use skein_export::{ExportOptions, Format, Layout, TextOptions};
use skein_redact::{RedactOptions, Redactor};

use crate::common::{export, files, read_table};

/// Fixtures from skein-redact's tests: a GitHub token and an AWS access key id.
const GITHUB: &str = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";
const AWS: &str = "AKIAZ4Q7RZ2DRB3K5LWM";

/// One session under `root/projects/-p/` whose prompt, reply, tool input, tool result and
/// cwd each carry both secrets.
fn plant(root: &Path) -> Vec<skein_layout::SessionFiles> {
    let dir = root.join("projects").join("-p");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let s = format!("token {GITHUB} and key {AWS}");
    let cwd = format!("/work/{GITHUB}");
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1",
            "timestamp":"2026-05-01T10:00:00Z","cwd":cwd,
            "message":{"role":"user","content":format!("deploy with {s}")}}),
        serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1",
            "timestamp":"2026-05-01T10:00:01Z","requestId":"req1","cwd":cwd,
            "message":{"id":"msg1","role":"assistant","model":"claude-sonnet-4-5",
                "content":[{"type":"text","text":format!("I will use {s}")},
                    {"type":"tool_use","id":"toolu_1","name":"Bash",
                        "input":{"command":format!("echo {s}")}}],
                "usage":{"input_tokens":10,"output_tokens":5}}}),
        serde_json::json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s1",
            "timestamp":"2026-05-01T10:00:02Z","cwd":cwd,
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",
                "content":format!("printed {s}")}]}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(dir.join("s1.jsonl"), text).expect("write");
    skein_layout::discover(&[root.join("projects")]).sessions
}

/// Every string value of every Parquet table under `dir` (list items included).
fn parquet_strings(dir: &Path) -> String {
    fn push(a: &ArrayRef, out: &mut String) {
        match a.data_type() {
            DataType::Utf8 => {
                for s in a.as_string::<i32>().iter().flatten() {
                    out.push_str(s);
                    out.push('\n');
                }
            }
            DataType::List(_) => push(a.as_list::<i32>().values(), out),
            _ => {}
        }
    }
    let mut out = String::new();
    for table in ["sessions", "messages", "tool_calls", "usage"] {
        for (_, b) in read_table(dir, table) {
            for c in b.columns() {
                push(c, &mut out);
            }
        }
    }
    out
}

/// Every byte of every file under `dir`, as text.
fn all_bytes(dir: &Path) -> String {
    let mut out = Vec::new();
    for p in files(dir, "jsonl").into_iter().chain(files(dir, "json")) {
        out.extend(std::fs::read(p).expect("read"));
    }
    String::from_utf8(out).expect("utf8")
}

fn run(format: Format, redactor: Option<&Redactor>) -> String {
    let tmp = tempfile::tempdir().expect("tmp");
    let sessions = plant(tmp.path());
    assert_eq!(sessions.len(), 1);
    let out = tmp.path().join("out");
    let options = ExportOptions {
        // Tool results in messages.text too, so that all four places reach a text column.
        text: TextOptions {
            tool_output_bytes: 4096,
            ..TextOptions::default()
        },
        redactor,
        ..ExportOptions::default()
    };
    let layout = Layout {
        format,
        ..Layout::default()
    };
    let (_, written) = export(&sessions, &out, layout, &options);
    assert_eq!(
        written.rows,
        [1, 3, 1, 1],
        "sessions, messages, tool calls, usage"
    );
    match format {
        Format::Parquet => parquet_strings(&out),
        Format::Jsonl => all_bytes(&out),
    }
}

#[test]
fn planted_secrets_are_exported_without_redaction() {
    for format in [Format::Parquet, Format::Jsonl] {
        let text = run(format, None);
        // prompt, reply, tool input, tool result (in messages.text), title (the prompt), cwd
        for (what, needle) in [
            ("prompt", format!("deploy with token {GITHUB}")),
            ("reply", format!("I will use token {GITHUB}")),
            ("tool input", format!("echo token {GITHUB}")),
            ("tool result", format!("printed token {GITHUB}")),
            ("cwd", format!("/work/{GITHUB}")),
        ] {
            assert!(text.contains(&needle), "{format:?}: {what} missing");
        }
        assert!(text.contains(AWS), "{format:?}: AWS key missing");
    }
}

#[test]
fn redaction_keeps_every_planted_secret_out_of_the_dataset() {
    let redactor = Redactor::new(&RedactOptions::default()).expect("rules");
    for format in [Format::Parquet, Format::Jsonl] {
        let text = run(format, Some(&redactor));
        assert!(!text.contains(GITHUB), "{format:?}: GitHub token leaked");
        assert!(!text.contains(AWS), "{format:?}: AWS key leaked");
        // The rest of each value is still there: redaction replaced only the secrets.
        for needle in [
            "deploy with token [REDACTED:github-token]",
            "I will use token [REDACTED:github-token]",
            "echo token [REDACTED:github-token]",
            "printed token [REDACTED:github-token]",
            "/work/[REDACTED:github-token]",
        ] {
            assert!(text.contains(needle), "{format:?}: {needle} missing");
        }
    }
}
