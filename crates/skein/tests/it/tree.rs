//! `skein tree` run for real: the drawing and the node list of the hand-made session in
//! `testdata/reports/tree` (rewind branch, parallel calls, a subagent with a nested agent, an
//! internal agent, a compaction, a dangling progress record) against expectations computed by
//! hand; the bundled sample; and every session of the shared corpus (skipped with a note when
//! absent).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{corpus, jsonl, jsonl_files, note, ok, root, skein, stdout};

fn fixture_dir() -> PathBuf {
    root().join("testdata/reports/tree")
}

const SESSION: &str = "11111111-0000-4000-8000-000000000001";

fn session_file() -> String {
    format!("projects/-home-t-tree/{SESSION}.jsonl")
}

#[test]
fn drawing_matches_the_hand_drawn_tree() {
    let out = skein(
        &["tree", "--format", "table", &session_file()],
        &fixture_dir(),
    );
    let want = std::fs::read_to_string(fixture_dir().join("expected/tree.txt")).expect("expected");
    assert_eq!(stdout(ok(&out)), want);
}

/// One hand-computed node row: uuid, agent, line, type, subtype, depth, active, dangling,
/// children, attached_to, spawned_by.
type Row = (
    &'static str,
    Option<&'static str>,
    u64,
    &'static str,
    &'static str,
    u64,
    bool,
    bool,
    u64,
    Option<&'static str>,
    Option<&'static str>,
);

const ROWS: [Row; 24] = [
    (
        "u1", None, 2, "user", "prompt", 0, true, false, 1, None, None,
    ),
    (
        "a1",
        None,
        3,
        "assistant",
        "text",
        0,
        true,
        false,
        2,
        None,
        None,
    ),
    (
        "u2", None, 4, "user", "prompt", 1, false, false, 1, None, None,
    ),
    (
        "a2",
        None,
        5,
        "assistant",
        "text",
        1,
        false,
        false,
        0,
        None,
        None,
    ),
    (
        "u3", None, 6, "user", "prompt", 0, true, false, 1, None, None,
    ),
    (
        "a3",
        None,
        7,
        "assistant",
        "tool_use",
        0,
        true,
        false,
        2,
        None,
        None,
    ),
    (
        "x1",
        Some("agent01"),
        1,
        "user",
        "prompt",
        1,
        true,
        false,
        1,
        Some("a3"),
        Some("toolu_T1"),
    ),
    (
        "x2",
        Some("agent01"),
        2,
        "assistant",
        "tool_use",
        1,
        true,
        false,
        1,
        None,
        Some("toolu_T1"),
    ),
    (
        "y1",
        Some("agent02"),
        1,
        "user",
        "prompt",
        2,
        true,
        false,
        1,
        Some("x2"),
        Some("toolu_N1"),
    ),
    (
        "y2",
        Some("agent02"),
        2,
        "assistant",
        "text",
        2,
        true,
        false,
        0,
        None,
        Some("toolu_N1"),
    ),
    (
        "x3",
        Some("agent01"),
        3,
        "user",
        "tool_result",
        1,
        true,
        false,
        1,
        None,
        Some("toolu_T1"),
    ),
    (
        "x4",
        Some("agent01"),
        4,
        "assistant",
        "text",
        1,
        true,
        false,
        0,
        None,
        Some("toolu_T1"),
    ),
    (
        "r1",
        None,
        10,
        "user",
        "tool_result",
        1,
        false,
        false,
        0,
        None,
        None,
    ),
    (
        "a4",
        None,
        8,
        "assistant",
        "tool_use",
        0,
        true,
        false,
        1,
        None,
        None,
    ),
    (
        "r2",
        None,
        11,
        "user",
        "tool_result",
        0,
        true,
        false,
        1,
        None,
        None,
    ),
    (
        "a5",
        None,
        12,
        "assistant",
        "text",
        0,
        true,
        false,
        1,
        None,
        None,
    ),
    (
        "s1",
        None,
        13,
        "system",
        "turn_duration",
        0,
        true,
        false,
        0,
        None,
        None,
    ),
    (
        "cb1",
        None,
        14,
        "system",
        "compact_boundary",
        0,
        true,
        false,
        1,
        Some("s1"),
        None,
    ),
    (
        "cs1",
        None,
        15,
        "user",
        "compact_summary",
        0,
        true,
        false,
        1,
        None,
        None,
    ),
    (
        "u4", None, 16, "user", "prompt", 0, true, false, 1, None, None,
    ),
    (
        "a6",
        None,
        17,
        "assistant",
        "text",
        0,
        true,
        false,
        0,
        None,
        None,
    ),
    (
        "p1",
        None,
        9,
        "progress",
        "hook_progress",
        0,
        false,
        true,
        0,
        None,
        None,
    ),
    (
        "z1",
        Some("acompact-abc"),
        1,
        "user",
        "prompt",
        0,
        true,
        false,
        1,
        None,
        None,
    ),
    (
        "z2",
        Some("acompact-abc"),
        2,
        "assistant",
        "text",
        0,
        true,
        false,
        0,
        None,
        None,
    ),
];

#[test]
fn node_list_matches_the_hand_computed_rows() {
    let rows = jsonl(ok(&skein(
        &["tree", "--format", "jsonl", &session_file()],
        &fixture_dir(),
    )));
    assert_eq!(rows.len(), ROWS.len(), "{rows:#?}");
    for (got, want) in rows.iter().zip(ROWS) {
        let (uuid, agent, line, kind, subtype, depth, active, dangling, children, att, spawn) =
            want;
        let ctx = format!("{got}");
        assert_eq!(got["uuid"], uuid, "{ctx}");
        assert_eq!(got["agent_id"].as_str(), agent, "{ctx}");
        assert_eq!(got["line"], line, "{ctx}");
        assert_eq!(got["type"], kind, "{ctx}");
        assert_eq!(got["subtype"], subtype, "{ctx}");
        assert_eq!(got["depth"], depth, "{ctx}");
        assert_eq!(got["active"], active, "{ctx}");
        assert_eq!(got["dangling"], dangling, "{ctx}");
        assert_eq!(got["children"], children, "{ctx}");
        assert_eq!(got["attached_to"].as_str(), att, "{ctx}");
        assert_eq!(got["spawned_by"].as_str(), spawn, "{ctx}");
        assert_eq!(got["session_id"], SESSION, "{ctx}");
        assert_eq!(got["internal"], agent == Some("acompact-abc"), "{ctx}");
    }
    let keys: Vec<&str> = rows[0]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "file",
            "agent_id",
            "agent_name",
            "internal",
            "line",
            "uuid",
            "parent",
            "dangling",
            "logical_parent",
            "seam",
            "type",
            "subtype",
            "timestamp",
            "active",
            "sidechain",
            "meta",
            "depth",
            "children",
            "attached_to",
            "spawned_by",
            "preview"
        ],
        "documented key order"
    );
    let by_uuid: BTreeMap<&str, &Value> = rows
        .iter()
        .map(|r| (r["uuid"].as_str().expect("uuid"), r))
        .collect();
    assert_eq!(by_uuid["cb1"]["logical_parent"], "s1");
    assert!(by_uuid["cb1"]["parent"].is_null());
    assert_eq!(by_uuid["p1"]["parent"], "gone-1");
    assert_eq!(
        by_uuid["r1"]["preview"],
        "Task → Config is in cfg.toml agentId: agent01"
    );
    assert_eq!(by_uuid["a3"]["preview"], "Task Find config");
    assert!(
        by_uuid["x1"]["file"]
            .as_str()
            .expect("file")
            .ends_with("subagents/agent-agent01.jsonl")
    );
    // --format json is the same list as one document
    let doc: Value = serde_json::from_str(&stdout(ok(&skein(
        &["tree", "--format", "json", &session_file()],
        &fixture_dir(),
    ))))
    .expect("json");
    assert_eq!(doc.as_array().expect("array"), &rows);
}

#[test]
fn caps_shorten_only_the_drawing() {
    let out = stdout(ok(&skein(
        &[
            "tree",
            "--format",
            "table",
            "--max-depth",
            "0",
            &session_file(),
        ],
        &fixture_dir(),
    )));
    let lines: Vec<&str> = out.lines().skip(4).collect();
    assert_eq!(
        &lines[..7],
        [
            "* u1  user/prompt  What does the widget tool do?",
            "* a1  assistant/text  It builds widgets.",
            "├─ … 2 nodes (--max-depth)",
            "* u3  user/prompt  Find its config file.",
            "* a3  assistant/tool_use  Task Find config",
            "├─ … 6 nodes (--max-depth)",
            "├─ … 1 node (--max-depth)",
        ]
    );
    let out = stdout(ok(&skein(
        &[
            "tree",
            "--format",
            "table",
            "--collapse",
            "3",
            "--internal",
            &session_file(),
        ],
        &fixture_dir(),
    )));
    assert!(
        out.contains(
            "* a4  assistant/tool_use  Read /w/README.md\n┆ … 2 nodes\n* s1  system/turn_duration  900 ms\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("* z2  assistant/text  Summary: widget config."),
        "{out}"
    );
    // the node list ignores the caps
    let rows = jsonl(ok(&skein(
        &[
            "tree",
            "--format",
            "jsonl",
            "--max-depth",
            "0",
            "--collapse",
            "2",
            &session_file(),
        ],
        &fixture_dir(),
    )));
    assert_eq!(rows.len(), ROWS.len());
}

#[test]
fn session_ids_and_prefixes_are_looked_up() {
    let by_path = stdout(ok(&skein(
        &["tree", "--format", "jsonl", &session_file()],
        &fixture_dir(),
    )));
    for id in [SESSION, "11111111"] {
        let by_id = stdout(ok(&skein(
            &["tree", "--format", "jsonl", "--in", "projects", id],
            &fixture_dir(),
        )));
        assert_eq!(by_id, by_path, "{id}");
    }
    let out = skein(&["tree", "--in", "projects", "99999999"], &fixture_dir());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"));
    // an agent transcript alone is a session of its own
    let rows = jsonl(ok(&skein(
        &[
            "tree",
            "--format",
            "jsonl",
            &format!("projects/-home-t-tree/{SESSION}/subagents/agent-agent02.jsonl"),
        ],
        &fixture_dir(),
    )));
    let uuids: Vec<&str> = rows
        .iter()
        .map(|r| r["uuid"].as_str().expect("uuid"))
        .collect();
    assert_eq!(uuids, ["y1", "y2"]);
}

#[test]
fn sample_session_tree() {
    let sample = root().join("testdata/sample/projects/-home-dev-widgets");
    let rows = jsonl(ok(&skein(
        &[
            "tree",
            "--format",
            "jsonl",
            "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl",
        ],
        &sample,
    )));
    let get = |u: &str| {
        rows.iter()
            .find(|r| r["uuid"] == u)
            .unwrap_or_else(|| panic!("{u}"))
    };
    assert_eq!(rows.len(), 27 + 4);
    assert_eq!(get("u02")["active"], false);
    assert_eq!(get("a08")["active"], false);
    assert_eq!(get("u03")["active"], true);
    assert_eq!(get("i01")["active"], true, "bridged across the compaction");
    assert_eq!(get("x01")["attached_to"], "a05");
    assert_eq!(get("x01")["spawned_by"], "toolu_04");
    assert_eq!(get("x01")["depth"], 1);
    assert_eq!(get("cb1")["attached_to"], "i01");
}

#[test]
fn corpus_every_node_is_listed_once() {
    let Some(corpus) = corpus() else { return };
    let cwd = std::env::temp_dir();
    let stats = jsonl(ok(&skein(
        &["stats", "-q", corpus.to_str().expect("utf8")],
        &cwd,
    )));
    let nodes: BTreeMap<String, u64> = stats
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_owned(),
                s["chain"]["nodes"].as_u64().expect("nodes"),
            )
        })
        .collect();
    let files = jsonl_files(&corpus);
    assert_eq!(nodes.len(), files.len(), "one stats row per file");
    let is_agent = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
    };
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut sessions = 0;
    let (mains, agents): (Vec<&PathBuf>, Vec<&PathBuf>) = files.iter().partition(|p| !is_agent(p));
    let mut run = |f: &Path, seen: &mut BTreeMap<String, u64>| {
        let path = f.to_str().expect("utf8");
        let rows = jsonl(ok(&skein(&["tree", "-q", "--format", "jsonl", path], &cwd)));
        let draw = skein(&["tree", "-q", "--format", "table", path], &cwd);
        ok(&draw);
        let mut uuids: BTreeSet<(String, String)> = BTreeSet::new();
        let mut here: BTreeMap<String, u64> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.get("edge").is_none()) {
            let file = r["file"].as_str().expect("file").to_owned();
            let uuid = r["uuid"].as_str().expect("uuid").to_owned();
            assert!(uuids.insert((file.clone(), uuid)), "listed twice: {r}");
            *here.entry(file).or_insert(0) += 1;
        }
        for (file, n) in here {
            seen.insert(file, n);
        }
        sessions += 1;
    };
    for f in mains {
        run(f, &mut seen);
    }
    // agent transcripts not reached from a main transcript (sessions of agents only)
    for f in agents {
        let key = f.to_str().expect("utf8");
        if nodes.get(key).copied().unwrap_or(0) > 0 && !seen.contains_key(key) {
            run(f, &mut seen);
        }
    }
    for (file, n) in &nodes {
        if *n > 0 {
            assert_eq!(seen.get(file), Some(n), "{file}: every node once");
        }
    }
    note(&format!("tree: {sessions} corpus sessions drawn"));
}
