//! Shards: the union of N sharded runs equals one unsharded run; project partitions; re-runs.

use std::collections::BTreeMap;

use skein_export::{ExportOptions, Format, Layout, Shard};

use crate::common::{export, files, sessions};

/// Every JSONL line of every table, sorted per table.
fn lines(dir: &std::path::Path) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for table in ["sessions", "messages", "tool_calls", "usage"] {
        let v = out.entry(table.into()).or_default();
        for f in files(&dir.join(table), "jsonl") {
            let text = std::fs::read_to_string(&f).expect("read");
            v.extend(text.lines().map(str::to_owned));
        }
        v.sort();
    }
    out
}

#[test]
fn three_shards_make_one_dataset() {
    let sessions = sessions();
    let jsonl = Layout {
        format: Format::Jsonl,
        ..Layout::default()
    };
    let whole = tempfile::tempdir().expect("tmp");
    export(&sessions, whole.path(), jsonl, &ExportOptions::default());
    let sharded = tempfile::tempdir().expect("tmp");
    let mut exported = 0;
    for index in 0..3 {
        let shard = Shard { index, count: 3 };
        let (stats, _) = export(
            &sessions,
            sharded.path(),
            Layout { shard, ..jsonl },
            &ExportOptions {
                shard: Some(shard),
                ..ExportOptions::default()
            },
        );
        assert!(stats.exported < stats.sessions, "shard {shard} is a slice");
        exported += stats.exported;
    }
    assert_eq!(exported, sessions.len() as u64);
    let (a, b) = (lines(whole.path()), lines(sharded.path()));
    for (table, rows) in &a {
        assert!(!rows.is_empty(), "{table}");
        assert_eq!(rows, &b[table], "{table}");
    }
    // Part files are named by shard.
    let names: Vec<String> = files(sharded.path(), "jsonl")
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
        .collect();
    assert!(
        names.iter().any(|n| n == "part-00002-of-00003.jsonl"),
        "{names:?}"
    );
}

#[test]
fn project_partitions_and_reruns_replace_their_files() {
    let sessions = sessions();
    let dir = tempfile::tempdir().expect("tmp");
    let layout = Layout {
        by_project: true,
        ..Layout::default()
    };
    let (_, first) = export(&sessions, dir.path(), layout, &ExportOptions::default());
    assert!(
        first
            .files
            .iter()
            .all(|f| f.to_string_lossy().contains("/project="))
    );
    let (_, second) = export(&sessions, dir.path(), layout, &ExportOptions::default());
    assert_eq!(first, second);
    let on_disk = files(dir.path(), "parquet");
    assert_eq!(on_disk.len(), second.files.len(), "no stale or temp files");
    // No temp file is left behind.
    let stray = files(dir.path(), "")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".skein-tmp-"))
        .count();
    assert_eq!(stray, 0);
}

/// The usage deduplication in several passes (each over a share of the message ids, for
/// bounded memory on large inputs) gives the rows and counts of one pass.
#[test]
fn usage_passes_give_the_rows_of_one_pass() {
    let sessions = sessions();
    let jsonl = Layout {
        format: Format::Jsonl,
        ..Layout::default()
    };
    let run = |passes: u32| {
        let dir = tempfile::tempdir().expect("tmp");
        let options = ExportOptions {
            usage_passes: Some(passes),
            ..ExportOptions::default()
        };
        let (stats, _) = export(&sessions, dir.path(), jsonl, &options);
        (stats, lines(dir.path()))
    };
    let (one, rows) = run(1);
    assert!(one.usage.requests > 10, "{:?}", one.usage);
    assert!(
        one.usage.duplicate_copies > 0,
        "the input has copies to deduplicate"
    );
    for passes in [2, 3, 7] {
        let (stats, other) = run(passes);
        assert_eq!(stats, one, "{passes} passes");
        assert_eq!(other, rows, "{passes} passes");
    }
}
