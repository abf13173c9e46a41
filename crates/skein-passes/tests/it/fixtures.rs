//! Each pass on the hand-designed fixtures of `testdata/passes` (made by `make_fixtures.py`):
//! what each rule removes or rewrites, that everything else is byte-equal, that the graph
//! stays whole, and that a second run changes nothing.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use skein_passes::{
    DUPLICATE_MARKER, Error, Pass, PassKind, PassReport, PassesConfig, Pipeline, Preset,
    PruneOptions, RedactOptions, RedactPass, SnapshotOptions, Start, ToolUseResultMode, prune,
    snapshot,
};

const SESSION: &str = "5e55a0a0-0000-4000-8000-000000000001";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/passes")
}

fn snapshot_fixture() -> Vec<u8> {
    fixture(&format!("projects/-w/{SESSION}.jsonl"))
}

/// Lines without terminators.
fn raw_lines(data: &[u8]) -> Vec<&[u8]> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if v.last() == Some(&&b""[..]) {
        v.pop();
    }
    v
}

/// The line of `data` whose top-level uuid is `uuid`.
fn by_uuid<'a>(data: &'a [u8], uuid: &str) -> Option<&'a [u8]> {
    raw_lines(data).into_iter().find(|l| {
        common::parse(l.strip_suffix(b"\r").unwrap_or(l)).is_some_and(|v| v["uuid"] == uuid)
    })
}

fn value(line: &[u8]) -> Value {
    common::parse(line.strip_suffix(b"\r").unwrap_or(line)).expect("json line")
}

fn uuids(data: &[u8]) -> Vec<String> {
    raw_lines(data)
        .into_iter()
        .filter_map(|l| common::parse(l.strip_suffix(b"\r").unwrap_or(l)))
        .filter_map(|v| v["uuid"].as_str().map(str::to_owned))
        .collect()
}

/// Every option set the tests run: presets and each rule alone.
fn option_sets() -> Vec<(String, PruneOptions)> {
    let mut v = vec![
        ("lean".to_owned(), PruneOptions::preset(Preset::Lean)),
        ("safe".to_owned(), PruneOptions::preset(Preset::Safe)),
        ("none".to_owned(), PruneOptions::none()),
    ];
    let none = PruneOptions::none();
    let singles: Vec<(&str, PruneOptions)> = vec![
        (
            "progress",
            PruneOptions {
                progress: true,
                ..none.clone()
            },
        ),
        (
            "fhs",
            PruneOptions {
                file_history_snapshots: true,
                ..none.clone()
            },
        ),
        (
            "queue",
            PruneOptions {
                queue_operations: true,
                ..none.clone()
            },
        ),
        (
            "thinking",
            PruneOptions {
                thinking: true,
                ..none.clone()
            },
        ),
        (
            "images",
            PruneOptions {
                images: true,
                ..none.clone()
            },
        ),
        (
            "truncate",
            PruneOptions {
                max_tool_result_bytes: Some(100),
                ..none.clone()
            },
        ),
        (
            "dedupe",
            PruneOptions {
                tool_use_result: ToolUseResultMode::Dedupe,
                ..none.clone()
            },
        ),
        (
            "slim",
            PruneOptions {
                tool_use_result: ToolUseResultMode::Slim,
                ..none.clone()
            },
        ),
        (
            "drop",
            PruneOptions {
                tool_use_result: ToolUseResultMode::Drop,
                ..none.clone()
            },
        ),
        (
            "off_branch",
            PruneOptions {
                off_branch: true,
                ..none.clone()
            },
        ),
        (
            "compaction",
            PruneOptions {
                before_last_compaction: true,
                ..none.clone()
            },
        ),
        (
            "everything",
            PruneOptions {
                before_last_compaction: true,
                ..PruneOptions::preset(Preset::Lean)
            },
        ),
    ];
    v.extend(singles.into_iter().map(|(n, o)| (n.to_owned(), o)));
    v
}

fn all_fixtures() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("session", fixture("session.jsonl")),
        ("branches", fixture("branches.jsonl")),
        ("compaction", fixture("compaction.jsonl")),
        ("odd", fixture("odd.jsonl")),
        ("snapshot", snapshot_fixture()),
    ]
}

#[test]
fn every_rule_keeps_the_invariants_and_is_idempotent_on_every_fixture() {
    for (name, data) in all_fixtures() {
        for (opts_name, o) in option_sets() {
            let (out, report) = prune(&data, &o);
            let ctx = format!("{name} / {opts_name}");
            common::check(&data, &out);
            common::check_leaf(&data, &out);
            if !o.before_last_compaction {
                common::check_branch_text(&data, &out);
            }
            assert_eq!(report.unrewritable_lines, 0, "{ctx}");
            let (again, report2) = prune(&out, &o);
            assert!(
                again == out,
                "{ctx}: second run differs:\n{}",
                String::from_utf8_lossy(&again)
            );
            assert_eq!(report2.rewritten_lines, 0, "{ctx}");
            assert_eq!(report.output.bytes, out.len() as u64, "{ctx}");
        }
    }
}

#[test]
fn no_rule_means_identical_bytes() {
    for (name, data) in all_fixtures() {
        let (out, report) = prune(&data, &PruneOptions::none());
        assert!(out == data, "{name}");
        assert_eq!(report.rewritten_lines, 0);
        let redact = RedactPass::new(&RedactOptions::default()).expect("rules");
        let (out, report) = redact.run(&data);
        assert!(out == data, "{name}: redact changed a file without secrets");
        assert_eq!(report.findings, 0);
    }
}

#[test]
fn safe_drops_bookkeeping_and_reparents() {
    let data = fixture("session.jsonl");
    let (out, report) = prune(&data, &PruneOptions::preset(Preset::Safe));
    let text = String::from_utf8(out.clone()).expect("utf8");
    assert!(!text.contains("\"file-history-snapshot\""));
    assert!(!text.contains("\"enqueue\"") && !text.contains("\"dequeue\""));
    assert!(
        text.contains("also check the docs"),
        "steering text removed from the queue is kept"
    );
    assert!(!text.contains("\"type\":\"progress\""));
    assert_eq!(report.rules.progress.records, 2);
    assert_eq!(report.rules.file_history_snapshots.records, 1);
    assert_eq!(report.rules.queue_operations.records, 2);
    // a1 hung from the progress record p1: now from u1, and only that value changed.
    let a1_in = by_uuid(&data, "a1").expect("a1");
    let a1_out = by_uuid(&out, "a1").expect("a1 kept");
    assert_eq!(
        String::from_utf8_lossy(a1_out),
        String::from_utf8_lossy(a1_in).replacen(
            "\"parentUuid\":\"p1\"",
            "\"parentUuid\":\"u1\"",
            1
        )
    );
    assert_eq!(report.reparented, 1);
    // Duplicate tool output replaced by a marker, the rest of toolUseResult kept.
    let r1 = value(by_uuid(&out, "r1").expect("r1"));
    assert_eq!(r1["toolUseResult"]["file"]["content"], DUPLICATE_MARKER);
    assert_eq!(r1["toolUseResult"]["file"]["filePath"], "/w/src/lib.rs");
    let r2 = value(by_uuid(&out, "r2").expect("r2"));
    assert_eq!(r2["toolUseResult"]["stdout"], DUPLICATE_MARKER);
    assert_eq!(r2["toolUseResult"]["stderr"], "");
    assert_eq!(report.rules.tool_use_result.records, 2);
    // Everything else is byte-equal.
    for u in ["u1", "a2", "a3", "a4", "t1", "u2", "a5"] {
        assert_eq!(by_uuid(&out, u), by_uuid(&data, u), "{u}");
    }
    assert!(report.output.bytes < report.input.bytes);
}

#[test]
fn lean_prunes_content_and_keeps_the_conversation() {
    let data = fixture("session.jsonl");
    let (out, report) = prune(&data, &PruneOptions::preset(Preset::Lean));
    // Thinking-only a1 is gone; its child a2 hangs from u1 (p1 went too).
    assert!(by_uuid(&out, "a1").is_none());
    assert_eq!(value(by_uuid(&out, "a2").expect("a2"))["parentUuid"], "u1");
    // Mixed a4 keeps its text block, loses its thinking block.
    let a4 = value(by_uuid(&out, "a4").expect("a4"));
    let blocks = a4["message"]["content"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        blocks[0]["text"],
        "The README describes widgets; tests pass."
    );
    assert_eq!(report.rules.thinking.blocks, 2);
    // The long Read result is truncated with a marker; toolUseResult is gone.
    let r1 = value(by_uuid(&out, "r1").expect("r1"));
    let content = r1["message"]["content"][0]["content"]
        .as_str()
        .expect("string");
    assert!(content.len() <= 4096, "{}", content.len());
    assert!(
        content.contains(" bytes of tool output removed]\n"),
        "{content}"
    );
    assert!(content.ends_with("    let widget_119 = Widget::new(119); // configure the widget\n"));
    assert!(r1.get("toolUseResult").is_none());
    assert_eq!(report.rules.tool_results.blocks, 1);
    // The image is a placeholder naming type and size.
    let u2 = value(by_uuid(&out, "u2").expect("u2"));
    assert_eq!(
        u2["message"]["content"][0]["text"],
        "What is in this screenshot?"
    );
    let placeholder = u2["message"]["content"][1]["text"].as_str().expect("text");
    assert!(placeholder.starts_with("[skein prune: image removed, image/png, "));
    assert_eq!(report.rules.images.blocks, 1);
    // Untouched records are byte-equal.
    for u in ["u1", "a3", "t1", "a5"] {
        assert_eq!(by_uuid(&out, u), by_uuid(&data, u), "{u}");
    }
    // The parallel result r1 is off the single-parent path, but not an abandoned branch.
    assert_eq!(report.rules.off_branch.records, 0);
    assert!(
        out.len() * 2 < data.len(),
        "{} -> {}",
        data.len(),
        out.len()
    );
}

#[test]
fn off_branch_drops_rewinds_keeps_hooks_and_tool_pairs() {
    let data = fixture("branches.jsonl");
    let o = PruneOptions {
        off_branch: true,
        ..PruneOptions::none()
    };
    let (out, report) = prune(&data, &o);
    let kept = uuids(&out);
    for gone in ["u2", "a2", "r2", "a3"] {
        assert!(!kept.contains(&gone.to_owned()), "{gone} kept");
    }
    for stays in ["u1", "a1", "ax", "p9", "u3", "a4", "rx", "a5", "s1", "m1"] {
        assert!(kept.contains(&stays.to_owned()), "{stays} dropped");
        assert_eq!(by_uuid(&out, stays), by_uuid(&data, stays), "{stays}");
    }
    assert_eq!(report.rules.off_branch.records, 4);
    assert_eq!(report.kept_for_tool_pairs, 1);
}

#[test]
fn before_last_compaction_keeps_the_preserved_segment() {
    let data = fixture("compaction.jsonl");
    let o = PruneOptions {
        before_last_compaction: true,
        ..PruneOptions::none()
    };
    let (out, report) = prune(&data, &o);
    let kept = uuids(&out);
    assert_eq!(kept, ["u4", "a4", "cb2", "cs2", "u5", "a5"]);
    // The preserved head lost its (removed) parent; the tail and the rest are untouched.
    assert_eq!(
        value(by_uuid(&out, "u4").expect("u4"))["parentUuid"],
        Value::Null
    );
    for u in ["a4", "cb2", "cs2", "u5", "a5"] {
        assert_eq!(by_uuid(&out, u), by_uuid(&data, u), "{u}");
    }
    assert!(String::from_utf8_lossy(&out).contains("\"leafUuid\":\"a5\""));
    assert_eq!(report.rules.before_last_compaction.records, 8);
}

#[test]
fn odd_lines_survive_and_splices_keep_escapes() {
    let data = fixture("odd.jsonl");
    let (out, report) = prune(&data, &PruneOptions::preset(Preset::Safe));
    assert!(out.starts_with(b"\xEF\xBB\xBF{"), "BOM kept");
    assert!(
        out.ends_with(br#"{"type":"assistant","uuid":"torn""#),
        "torn tail kept"
    );
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("\r\nnot json at all\r\n"));
    assert_eq!(report.invalid_lines, 2);
    assert_eq!(
        report.rules.progress.records, 3,
        "both copies of p1, and p2"
    );
    // u2 hung from the removed p2 (child of a1): only its parentUuid bytes changed, its
    // escapes (lone surrogate, \u00e9, \/) are intact.
    let u2 = by_uuid(&out, "u2").expect("u2");
    assert!(u2.ends_with(b"\r"));
    let u2_in = String::from_utf8_lossy(by_uuid(&data, "u2").expect("u2"))
        .replace("\"parentUuid\":\"p2\"", "\"parentUuid\":\"a1\"");
    assert_eq!(String::from_utf8_lossy(u2), u2_in);
    assert!(
        String::from_utf8_lossy(u2).contains(r"lone \ud83d surrogate, escaped \u00e9 and \/ slash")
    );
    let a1 = value(by_uuid(&out, "a1").expect("a1"));
    assert_eq!(a1["parentUuid"], "u1");
    // The dangling parent and the cycle are left as they were.
    assert_eq!(by_uuid(&out, "d1"), by_uuid(&data, "d1"));
    assert_eq!(by_uuid(&out, "c1"), by_uuid(&data, "c1"));
}

#[test]
fn snapshot_cuts_the_last_request() {
    let data = snapshot_fixture();
    let (out, report) = snapshot(&data, &SnapshotOptions::default()).expect("snapshot");
    assert_eq!(uuids(&out), ["u2", "p2", "a3", "r3", "a4", "t4"]);
    assert_eq!(
        value(by_uuid(&out, "u2").expect("u2"))["parentUuid"],
        Value::Null
    );
    for u in ["p2", "a3", "r3", "a4", "t4"] {
        assert_eq!(by_uuid(&out, u), by_uuid(&data, u), "{u}");
    }
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("\"ai-title\""),
        "metadata after the start is kept"
    );
    assert!(!text.contains("not JSON"));
    assert_eq!(report.start.uuid, "u2");
    assert_eq!(report.leaf, "a4");
    assert_eq!(report.spawns, ["toolu_agent"]);
    assert_eq!(report.agent_ids, ["a1b2c3"]);
    assert_eq!(report.invalid_lines, 1);
    common::check(&data, &out);
    // A snapshot of a snapshot is the same snapshot.
    let (again, _) = snapshot(&out, &SnapshotOptions::default()).expect("again");
    assert!(again == out);
    // Every output line is JSON and the graph has exactly one root.
    let ls = common::lines(&out);
    assert!(ls.iter().all(|l| l.value.is_some()));
    assert!(common::dangling(&ls).is_empty());
}

#[test]
fn snapshot_starts() {
    let data = snapshot_fixture();
    let run = |start: Start| snapshot(&data, &SnapshotOptions { start });
    let (out, _) = run(Start::Uuid("a2".into())).expect("uuid");
    assert_eq!(uuids(&out)[0], "a2");
    let (out, r) = run(Start::Since("2026-05-01T10:00:05Z".into())).expect("since");
    assert_eq!(r.start.uuid, "u2");
    assert_eq!(uuids(&out)[0], "u2");
    // Starting at a tool result pulls the start back to its tool call.
    let (out, r) = run(Start::Uuid("r3".into())).expect("result");
    assert_eq!(r.start.uuid, "a3");
    assert_eq!(uuids(&out)[0], "a3");
    assert!(matches!(
        run(Start::Uuid("nope".into())),
        Err(Error::StartNotOnBranch(_))
    ));
    assert!(matches!(
        run(Start::Since("2030-01-01T00:00:00Z".into())),
        Err(Error::NothingSince(_))
    ));
    assert!(matches!(
        run(Start::Since("yesterday".into())),
        Err(Error::BadTimestamp(_))
    ));
    assert!(matches!(
        snapshot(b"{\"type\":\"ai-title\"}\n", &SnapshotOptions::default()),
        Err(Error::NoActiveBranch)
    ));
}

#[test]
fn pipeline_chains_passes_and_reports_each() {
    let mut data = fixture("session.jsonl");
    let secret = "ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8";
    let line = format!(
        "{{\"type\":\"user\",\"uuid\":\"u9\",\"parentUuid\":\"a5\",\"sessionId\":\"{SESSION}\",\"message\":{{\"role\":\"user\",\"content\":\"token {secret}\"}}}}\n"
    );
    data.extend_from_slice(line.as_bytes());
    let config = PassesConfig::from_toml(
        "pipeline = [\"prune\", \"snapshot\", \"redact\"]\n[prune]\npreset = \"lean\"\nthinking = false\n[redact]\nlevel = \"standard\"\n",
    )
    .expect("config");
    let pipeline = config.build().expect("pipeline");
    assert_eq!(
        pipeline.passes().iter().map(Pass::kind).collect::<Vec<_>>(),
        [PassKind::Prune, PassKind::Snapshot, PassKind::Redact]
    );
    let out = pipeline.run(&data).expect("run");
    let text = String::from_utf8(out.bytes.clone()).expect("utf8");
    assert!(!text.contains(secret));
    assert!(text.contains("[REDACTED:"));
    assert_eq!(uuids(&out.bytes), ["u9"]);
    let names: Vec<String> = out
        .reports
        .iter()
        .map(|r| {
            serde_json::to_value(r).expect("json")["pass"]
                .as_str()
                .expect("tag")
                .to_owned()
        })
        .collect();
    assert_eq!(names, ["prune", "snapshot", "redact"]);
    let PassReport::Prune(p) = &out.reports[0] else {
        panic!("prune first")
    };
    assert!(!p.options.thinking, "config overrides the preset");
    let PassReport::Redact(r) = &out.reports[2] else {
        panic!("redact last")
    };
    assert_eq!(r.findings, 1);
    assert_eq!(r.locations[0].uuid.as_deref(), Some("u9"));
    let serialized = serde_json::to_string(&out.reports).expect("json");
    assert!(!serialized.contains(secret), "reports never hold secrets");
    // Without the snapshot pass, subagent files get the same treatment.
    assert_eq!(pipeline.without(PassKind::Snapshot).passes().len(), 2);
    // An empty pipeline is the identity.
    let same = Pipeline::default().run(&data).expect("run");
    assert!(same.bytes == data && same.reports.is_empty());
}

#[test]
fn config_errors_are_reported() {
    assert!(PassesConfig::from_toml("[prune]\nbogus = true\n").is_err());
    assert!(
        PassesConfig::from_toml("[snapshot]\nfrom = \"a\"\nsince = \"2026-05-01T00:00:00Z\"\n")
            .is_err()
    );
    assert!(PassesConfig::from_toml("[snapshot]\nsince = \"soon\"\n").is_err());
    assert!(PassesConfig::from_toml("pipeline = [\"compress\"]\n").is_err());
    let c = PassesConfig::from_toml("other_tool = 1\n[prune]\nmax_tool_result_bytes = 0\n")
        .expect("ok");
    assert_eq!(c.prune.resolve().max_tool_result_bytes, None);
    let o: PruneOptions = toml::from_str("preset = \"lean\"\nimages = false\n").expect("section");
    assert!(o.thinking && !o.images);
}

/// The before/after example of `docs/passes.md` (`UPDATE_EXPECT=1` rewrites the expected file).
#[test]
fn docs_example_is_current() {
    let data = fixture("example.jsonl");
    let (out, report) = prune(&data, &PruneOptions::preset(Preset::Lean));
    let expected = dir().join("example.lean.jsonl");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&expected, &out).expect("write expected");
    }
    let want = std::fs::read(&expected).expect("expected output");
    assert!(out == want, "{}", String::from_utf8_lossy(&out));
    common::check(&data, &out);
    assert_eq!(uuids(&out), ["u1", "a2", "r1", "a3"]);
    assert_eq!(report.reparented, 1);
    let r1 = value(by_uuid(&out, "r1").expect("r1"));
    let text = r1["message"]["content"][0]["content"]
        .as_str()
        .expect("text");
    assert!(
        text.ends_with("ld: cannot find -lz"),
        "the end of the output stays"
    );
}

/// A whole-history fixture (`testdata/history`, one session per kind of broken chain).
fn history_fixture(session: &str) -> Vec<u8> {
    let path = dir().join(format!("../history/projects/-w/{session}.jsonl"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn snapshot_keeps_both_sides_of_a_seam() {
    // The last request's tool result hangs from a hook progress record whose parent is not
    // in the file: the request spans the seam.
    let data = history_fixture("11111111-0000-4000-8000-00000000da01");
    let (out, report) = snapshot(&data, &SnapshotOptions::default()).expect("snapshot");
    assert_eq!(report.start.uuid, "u2");
    assert_eq!(uuids(&out), ["u2", "a3", "p1", "r2", "a4"]);
    for u in ["a3", "r2", "a4"] {
        assert_eq!(
            by_uuid(&out, u),
            by_uuid(&data, u),
            "{u} is copied byte for byte"
        );
    }
    // Self-contained: the dangling parent becomes null, so the output has the same seam (a
    // new root), which the whole-history walk bridges again.
    assert_eq!(
        value(by_uuid(&out, "p1").expect("p1"))["parentUuid"],
        Value::Null
    );
    common::check(&data, &out);

    let from_u1 = |session: &str| {
        let data = history_fixture(session);
        let start = Start::Uuid("u1".into());
        let (out, _) = snapshot(&data, &SnapshotOptions { start }).expect("snapshot");
        uuids(&out)
    };
    // From the first prompt of a session whose compaction boundary lost its logical parent:
    // everything before and after the boundary.
    assert_eq!(
        from_u1("11111111-0000-4000-8000-00000000c0c1"),
        ["u1", "a1", "r1", "a2", "cb", "cs", "u2", "a3"]
    );
    // After a new root ("clear context"), from a record before it.
    assert_eq!(
        from_u1("11111111-0000-4000-8000-0000000000e3"),
        ["u1", "a1", "r1", "i1", "h2", "u2", "a2", "r2", "a3"],
        "the rewound prompt x1 stays out"
    );
}
