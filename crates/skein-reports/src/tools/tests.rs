//! Unit tests of the `skein tools` report.

use super::*;
use serde_json::{Value, json};

use skein_analysis::SpawnLinks;
use skein_analysis::{AnalysisOptions, NoVisitor, analyze_visit};
use skein_core::{Parser, SliceLines};
use skein_layout::SessionFiles;

/// A one-file session from JSONL lines.
fn session(lines: &[String]) -> LoadedSession<NoVisitor> {
    let data = lines.join("\n");
    let analysis = analyze_visit::<_, Value, _>(
        "f.jsonl",
        SliceLines::new(data.as_bytes()),
        &AnalysisOptions::default(),
        &mut Parser::new(),
        &mut NoVisitor,
    )
    .expect("in memory");
    LoadedSession {
        files: SessionFiles {
            session_id: "s".into(),
            project_dir: "p".into(),
            main: Some("f.jsonl".into()),
            agents: Vec::new(),
        },
        main: Some((analysis, NoVisitor)),
        links: SpawnLinks::new(),
        agents: Vec::new(),
    }
}

fn call_line(id: &str, name: &str, input: &str) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"u{id}","message":{{"id":"m{id}","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
    )
}

fn side_line(id: &str, name: &str, input: &str) -> String {
    call_line(id, name, input).replacen('{', r#"{"isSidechain":true,"#, 1)
}

fn result_line(id: &str, error: bool) -> String {
    format!(
        r#"{{"type":"user","uuid":"r{id}","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}","content":"x","is_error":{error}}}]}}}}"#
    )
}

/// (tool, count, first_line, last_line) of each loop.
fn loops(lines: &[String], min: usize) -> Vec<(String, u64, u64, u64)> {
    tool_loops(&session(lines), min)
        .into_iter()
        .map(|l| (l.tool, l.count, l.first_line, l.last_line))
        .collect()
}

fn l(tool: &str, count: u64, first: u64, last: u64) -> (String, u64, u64, u64) {
    (tool.to_owned(), count, first, last)
}

#[test]
fn loops_need_min_consecutive_identical_calls() {
    let a = |id: &str| call_line(id, "Bash", r#"{"command":"ls"}"#);
    assert!(loops(&[], 3).is_empty());
    assert!(loops(&[a("1"), a("2")], 3).is_empty());
    assert_eq!(loops(&[a("1"), a("2")], 2), [l("Bash", 2, 1, 2)]);
    assert_eq!(loops(&[a("1"), a("2"), a("3")], 3), [l("Bash", 3, 1, 3)]);
    // one maximal run, not overlapping runs
    assert_eq!(
        loops(&[a("1"), a("2"), a("3"), a("4")], 3),
        [l("Bash", 4, 1, 4)]
    );
    // min 1: every maximal run
    assert_eq!(loops(&[a("1")], 1), [l("Bash", 1, 1, 1)]);
    assert_eq!(loops(&[a("1")], 0), [l("Bash", 1, 1, 1)]);
}

#[test]
fn loops_are_broken_by_any_other_call() {
    let a = |id: &str| call_line(id, "Bash", r#"{"command":"ls"}"#);
    let other_input = call_line("x", "Bash", r#"{"command":"ls -l"}"#);
    let other_tool = call_line("y", "Read", r#"{"command":"ls"}"#);
    assert!(loops(&[a("1"), a("2"), other_input.clone(), a("3")], 3).is_empty());
    assert_eq!(
        loops(&[a("1"), a("2"), other_tool, a("3"), a("4")], 2),
        [l("Bash", 2, 1, 2), l("Bash", 2, 4, 5)]
    );
    // two runs of one tool with different inputs, back to back
    let b = |id: &str| call_line(id, "Bash", r#"{"command":"ls -l"}"#);
    assert_eq!(
        loops(&[a("1"), a("2"), a("3"), b("4"), b("5"), b("6")], 3),
        [l("Bash", 3, 1, 3), l("Bash", 3, 4, 6)]
    );
    // a run at the very end is reported
    assert_eq!(
        loops(&[other_input, a("1"), a("2"), a("3")], 3),
        [l("Bash", 3, 2, 4)]
    );
}

#[test]
fn results_text_and_copies_do_not_break_loops() {
    let a = |id: &str| call_line(id, "Grep", r#"{"pattern":"x","path":"/w"}"#);
    let text =
        r#"{"type":"assistant","uuid":"t","message":{"content":[{"type":"text","text":"again"}]}}"#;
    let run = [
        a("1"),
        result_line("1", true),
        text.to_owned(),
        a("2"),
        // a later copy of id 1 with another input is not a call
        call_line("1", "Bash", r#"{"command":"rm"}"#),
        result_line("2", false),
        a("3"),
        result_line("3", true),
    ];
    let found = tool_loops(&session(&run), 3);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].count, found[0].first_line, found[0].last_line),
        (3, 1, 7)
    );
    assert_eq!(found[0].errors, 2);
    assert_eq!(found[0].ids, ["1", "2", "3"]);
    assert_eq!(found[0].input_summary, "x");
}

#[test]
fn identical_means_canonical_json() {
    let one = call_line(
        "1",
        "Edit",
        r#"{"file_path":"/a","old_string":"x","new_string":"y"}"#,
    );
    let reordered = call_line(
        "2",
        "Edit",
        r#"{"new_string":"y","file_path":"/a","old_string":"x"}"#,
    );
    let encoded = call_line(
        "3",
        "Edit",
        r#""{\"old_string\":\"x\",\"new_string\":\"y\",\"file_path\":\"/a\"}""#,
    );
    assert_eq!(loops(&[one, reordered, encoded], 3), [l("Edit", 3, 1, 3)]);
    // numbers compare as written: 1 and 1.0 differ
    let n1 = call_line("4", "Read", r#"{"file_path":"/a","limit":1}"#);
    let n2 = call_line("5", "Read", r#"{"file_path":"/a","limit":1.0}"#);
    assert!(loops(&[n1.clone(), n1.replace("\"4\"", "\"6\""), n2], 3).is_empty());
    // no name: identical `<none>` calls still loop
    let nameless = |id: &str| {
        format!(
            r#"{{"type":"assistant","uuid":"n{id}","message":{{"content":[{{"type":"tool_use","id":"{id}","input":{{}}}}]}}}}"#
        )
    };
    assert_eq!(
        loops(&[nameless("7"), nameless("8")], 2),
        [l(NO_NAME, 2, 1, 2)]
    );
}

#[test]
fn sidechain_calls_form_their_own_stream() {
    let m = |id: &str| call_line(id, "Read", r#"{"file_path":"/x"}"#);
    let s = |id: &str| side_line(id, "Read", r#"{"file_path":"/x"}"#);
    let run = [m("1"), s("2"), m("3"), s("4"), m("5")];
    let found = tool_loops(&session(&run), 2);
    let got: Vec<(bool, u64, u64, u64)> = found
        .iter()
        .map(|l| (l.sidechain, l.count, l.first_line, l.last_line))
        .collect();
    assert_eq!(got, [(false, 3, 1, 5), (true, 2, 2, 4)]);
}

#[test]
fn calls_follow_file_order_with_results() {
    let lines = [
        call_line("1", "Bash", r#"{"command":"ls"}"#),
        result_line("2", false),
        call_line("2", "Read", r#"{"file_path":"/r"}"#),
        result_line("1", true),
    ];
    let calls = tool_calls(&session(&lines));
    let got: Vec<(&str, u64, Option<bool>, bool)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.line, c.is_error, c.paired))
        .collect();
    assert_eq!(
        got,
        [("1", 1, Some(true), true), ("2", 3, Some(false), true)]
    );
    assert_eq!(calls[1].input_summary, "/r");
    assert_eq!(calls[0].agent_id, None);
    assert_eq!(calls[0].file, "f.jsonl");
}

#[test]
fn summaries_of_known_tools() {
    let s = |tool: &str, v: Value| input_summary(tool, Some(&v));
    assert_eq!(
        s(
            "Bash",
            json!({"command": "cargo  test\n--quiet", "description": "x"})
        ),
        "cargo test --quiet"
    );
    assert_eq!(
        s("Read", json!({"file_path": "/a/b.rs", "offset": 3})),
        "/a/b.rs"
    );
    assert_eq!(
        s("Grep", json!({"path": "/w", "pattern": "fn main"})),
        "fn main"
    );
    assert_eq!(
        s("Task", json!({"prompt": "long", "description": "Find it"})),
        "Find it"
    );
    assert_eq!(
        s("Agent", json!({"prompt": "P", "subagent_type": "Explore"})),
        "Explore"
    );
    assert_eq!(s("Skill", json!({"skill": "pdf", "args": "x"})), "pdf");
    assert_eq!(
        s("WebFetch", json!({"prompt": "p", "url": "https://x.test/"})),
        "https://x.test/"
    );
    assert_eq!(s("TodoWrite", json!({"todos": [1, 2]})), "2 todos");
    assert_eq!(s("TodoWrite", json!({"todos": [1]})), "1 todo");
    assert_eq!(
        s("TaskUpdate", json!({"taskId": "2", "status": "completed"})),
        "2 completed"
    );
    assert_eq!(s("TaskUpdate", json!({"taskId": 7})), "7");
    assert_eq!(
        s(
            "AskUserQuestion",
            json!({"questions": [{"question": "Why?"}]})
        ),
        "Why?"
    );
    assert_eq!(
        s(
            "mcp__srv__run",
            json!({"limit": 3, "sql": "select 1", "db": "x"})
        ),
        "select 1"
    );
    assert_eq!(s("Whatever", json!({"n": 1})), "");
    assert_eq!(s("Read", json!({"path": "/only/generic"})), "/only/generic");
    assert_eq!(input_summary("Bash", None), "");
    // inputs JSON-encoded as strings (old builds)
    assert_eq!(s("Bash", json!("{\"command\":\"ls\"}")), "ls");
    assert_eq!(s("Bash", json!("plain text")), "plain text");
}

#[test]
fn clip_counts_characters() {
    assert_eq!(clip("  a \n\t b  ", 10), "a b");
    assert_eq!(clip("abcdef", 6), "abcdef");
    assert_eq!(clip("abcdefg", 6), "abcde…");
    assert_eq!(clip("abcd efgh", 6), "abcd…");
    assert_eq!(clip("ééééééé", 4), "ééé…");
    let long = "x".repeat(500);
    let c = input_summary("Bash", Some(&json!({ "command": long })));
    assert_eq!(c.chars().count(), MAX_SUMMARY_CHARS);
    assert!(c.ends_with('…'));
}

#[test]
fn canonical_sorts_keys_recursively() {
    let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "s"}});
    assert_eq!(
        canonical_input(Some(&a)),
        r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#
    );
    let encoded = json!("{\"b\":1,\"a\":2}");
    assert_eq!(canonical_input(Some(&encoded)), r#"{"a":2,"b":1}"#);
    assert_eq!(canonical_input(None), "null");
    assert_eq!(canonical_input(Some(&json!("x\"y"))), r#""x\"y""#);
}

fn call(tool: &str, session: &str, res: Option<(bool, u64)>, d: Option<i64>) -> ToolCall {
    ToolCall {
        session_id: session.into(),
        project: "p".into(),
        agent_id: None,
        agent_type: None,
        spawned_by: None,
        file: "f".into(),
        line: 1,
        sidechain: false,
        tool: tool.into(),
        id: "t".into(),
        input_summary: String::new(),
        is_error: res.map(|r| r.0),
        result_bytes: res.map(|r| r.1),
        media_bytes: res.map(|r| r.1 * 10),
        images: res.map(|_| 1),
        duration_ms: d,
        paired: res.is_some(),
        timestamp: None,
    }
}

#[test]
fn totals_per_name() {
    let mut b = ToolTotalsBuilder::new();
    b.add(&call("Read", "s1", Some((false, 10)), Some(40)));
    b.add(&call("Bash", "s1", Some((true, 5)), Some(300)));
    b.add(&call("Bash", "s2", Some((false, 6)), Some(100)));
    b.add(&call("Bash", "s2", None, None));
    b.add(&call("Bash", "s2", Some((false, 0)), Some(200)));
    b.add(&call("Bash", "s2", Some((false, 0)), Some(250)));
    let t = b.finish();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].tool, "Bash");
    assert_eq!(t[0].figures.calls, 5);
    assert_eq!(t[0].figures.sessions, 2);
    assert_eq!(t[0].figures.errors, 1);
    assert_eq!(t[0].figures.unpaired, 1);
    assert_eq!(t[0].figures.error_rate, Some(0.25));
    assert_eq!(t[0].figures.result_bytes, 11);
    assert_eq!(t[0].figures.avg_result_bytes, Some(3));
    assert_eq!(
        (t[0].figures.media_bytes, t[0].figures.images),
        (110, 4),
        "media apart from text"
    );
    assert_eq!(t[0].figures.p50_duration_ms, Some(200));
    assert_eq!(t[0].figures.max_duration_ms, Some(300));
    assert_eq!(t[1].tool, "Read");
    assert_eq!(t[1].figures.p50_duration_ms, Some(40));
    let mut b = ToolTotalsBuilder::new();
    b.add(&call("X", "s", None, None));
    let t = b.finish();
    assert_eq!(
        (
            t[0].figures.error_rate,
            t[0].figures.avg_result_bytes,
            t[0].figures.p50_duration_ms
        ),
        (None, None, None)
    );
}
