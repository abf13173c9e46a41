//! The four tables from testdata/: values against skein's reports, partitions, types.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMillisecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use skein_analysis::AnalysisOptions;
use skein_core::Parser;
use skein_export::{ExportOptions, Layout};
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{UsageBuilder, UsageKind, UsageOptions, UsageScanner};

use crate::common::{export, read_table, sessions};

fn col_i64(b: &RecordBatch, name: &str) -> i64 {
    let a = b
        .column_by_name(name)
        .expect(name)
        .as_primitive::<Int64Type>();
    a.iter().flatten().sum()
}

fn strings(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let a = b.column_by_name(name).expect(name).as_string::<i32>();
    a.iter().map(|s| s.map(str::to_owned)).collect()
}

#[test]
fn usage_totals_equal_skein_usage() {
    let sessions = sessions();
    let dir = tempfile::tempdir().expect("tmp");
    export(
        &sessions,
        dir.path(),
        Layout::default(),
        &ExportOptions::default(),
    );

    // `skein usage`'s own totals over the same sessions.
    let mut scanner = UsageScanner::new();
    let mut builder = UsageBuilder::new();
    for s in &sessions {
        builder.add(s, scanner.scan_session(s, false).expect("scan"));
    }
    let report = builder.finish(
        &UsageOptions {
            kind: UsageKind::Daily,
            ..UsageOptions::default()
        },
        &PricingTable::embedded(),
    );
    let want = &report.totals.figures;
    assert!(
        want.messages > 10,
        "testdata has requests: {}",
        want.messages
    );

    let batches = read_table(dir.path(), "usage");
    let rows: usize = batches.iter().map(|(_, b)| b.num_rows()).sum();
    let sum = |c| batches.iter().map(|(_, b)| col_i64(b, c)).sum::<i64>();
    assert_eq!(rows as u64, want.messages);
    assert_eq!(sum("input_tokens") as u64, want.input_tokens);
    assert_eq!(sum("output_tokens") as u64, want.output_tokens);
    assert_eq!(
        sum("cache_creation_input_tokens") as u64,
        want.cache_creation_input_tokens
    );
    assert_eq!(
        sum("cache_read_input_tokens") as u64,
        want.cache_read_input_tokens
    );
    let cost: f64 = batches
        .iter()
        .map(|(_, b)| {
            let a = b
                .column_by_name("cost_usd")
                .expect("cost")
                .as_primitive::<arrow_array::types::Float64Type>();
            a.iter().flatten().sum::<f64>()
        })
        .sum();
    assert!(
        (cost - want.cost_usd).abs() < 1e-6,
        "{cost} vs {}",
        want.cost_usd
    );
    assert!(cost > 0.0);

    // Sessions' cost is each session's requests deduplicated within the session, as `skein
    // sessions` and `skein usage session` price them (a resumed session's copies count in
    // both sessions, so the sum may exceed the deduplicated total above).
    let own: f64 = sessions
        .iter()
        .map(|s| {
            let mut b = UsageBuilder::new();
            b.add(s, scanner.scan_session(s, false).expect("scan"));
            let r = b.finish(
                &UsageOptions {
                    kind: UsageKind::Session,
                    ..UsageOptions::default()
                },
                &PricingTable::embedded(),
            );
            r.totals.figures.cost_usd
        })
        .sum();
    let sess = read_table(dir.path(), "sessions");
    let sess_cost: f64 = sess
        .iter()
        .map(|(_, b)| {
            let a = b
                .column_by_name("cost_usd")
                .expect("cost")
                .as_primitive::<arrow_array::types::Float64Type>();
            a.iter().flatten().sum::<f64>()
        })
        .sum();
    // The report rounds each session's cost to 1e-6 USD.
    assert!(
        (sess_cost - own).abs() < 1e-6 * sessions.len() as f64 && sess_cost > 0.0,
        "{sess_cost} vs {own}"
    );
}

#[test]
fn timestamps_are_typed_and_rows_sit_in_their_month() {
    let dir = tempfile::tempdir().expect("tmp");
    export(
        &sessions(),
        dir.path(),
        Layout::default(),
        &ExportOptions::default(),
    );
    for table in ["sessions", "messages", "tool_calls", "usage"] {
        let batches = read_table(dir.path(), table);
        assert!(!batches.is_empty(), "{table} has files");
        for (path, b) in &batches {
            let name = if table == "sessions" {
                "first_timestamp"
            } else {
                "timestamp"
            };
            let col = b.column_by_name(name).expect(name);
            assert_eq!(
                col.data_type(),
                &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                "{table}.{name}"
            );
            let month = path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("month="))
                .expect("month= directory")
                .to_owned();
            let ts = col.as_primitive::<TimestampMillisecondType>();
            for v in ts {
                let got = skein_export::partition::month_of(v);
                assert_eq!(got, month, "{}", path.display());
            }
        }
    }
}

#[test]
fn messages_cover_every_chain_record_and_flag_the_active_path() {
    let sessions = sessions();
    let dir = tempfile::tempdir().expect("tmp");
    let (stats, written) = export(
        &sessions,
        dir.path(),
        Layout::default(),
        &ExportOptions::default(),
    );
    // What skein stats says of each file: nodes and the bridged active path.
    let mut nodes = 0;
    let mut active = 0;
    let mut files = 0;
    let mut parser = Parser::new();
    for s in &sessions {
        for path in s.files() {
            let a = skein_reports::session::read_file::<serde::de::IgnoredAny, _>(
                path,
                &AnalysisOptions::default(),
                &mut parser,
                &mut skein_analysis::NoVisitor,
                false,
            )
            .expect("read");
            nodes += a.stats.chain.nodes;
            active += a.stats.chain.bridged_path_len;
            files += 1;
        }
    }
    assert_eq!(stats.files, files);
    assert_eq!(written.rows[0], files, "one sessions row per file");
    assert_eq!(written.rows[1], nodes, "one messages row per chain record");
    let batches = read_table(dir.path(), "messages");
    let flagged: u64 = batches
        .iter()
        .map(|(_, b)| {
            b.column_by_name("on_active_path")
                .expect("col")
                .as_boolean()
                .true_count() as u64
        })
        .sum();
    assert_eq!(flagged, active);
    assert!(flagged < nodes, "testdata has abandoned branches");
    // Prompts and replies carry text by default.
    let with_text: usize = batches
        .iter()
        .map(|(_, b)| {
            b.column_by_name("text").expect("text").len()
                - b.column_by_name("text").expect("text").null_count()
        })
        .sum();
    assert!(with_text > 0);
}

#[test]
fn sessions_name_subagents_and_tool_calls_pair() {
    let dir = tempfile::tempdir().expect("tmp");
    let sample = skein_testkit::workspace_root().join("testdata/sample");
    let sessions = skein_layout::discover(&[sample]).sessions;
    export(
        &sessions,
        dir.path(),
        Layout::default(),
        &ExportOptions::default(),
    );
    let batches = read_table(dir.path(), "sessions");
    let mut rows: BTreeMap<Option<String>, (Option<String>, Option<String>)> = BTreeMap::new();
    for (_, b) in &batches {
        let agents = strings(b, "agent_id");
        let parents = strings(b, "parent_session_id");
        let spawns = strings(b, "spawning_tool_use_id");
        for i in 0..b.num_rows() {
            rows.insert(agents[i].clone(), (parents[i].clone(), spawns[i].clone()));
        }
    }
    assert_eq!(rows.len(), 2, "{rows:?}");
    let agent = rows
        .get(&Some("a1b2c3d4e5f60718".into()))
        .expect("subagent row");
    assert_eq!(agent.1.as_deref(), Some("toolu_04"));
    let tools = read_table(dir.path(), "tool_calls");
    let ids: Vec<_> = tools
        .iter()
        .flat_map(|(_, b)| strings(b, "tool_use_id"))
        .collect();
    assert!(ids.contains(&Some("toolu_04".into())), "{ids:?}");
    let durations: i64 = tools.iter().map(|(_, b)| col_i64(b, "duration_ms")).sum();
    assert!(durations > 0, "paired calls have durations");
}

#[test]
fn schema_json_is_versioned_and_matches_the_files() {
    let dir = tempfile::tempdir().expect("tmp");
    export(
        &sessions(),
        dir.path(),
        Layout::default(),
        &ExportOptions::default(),
    );
    let text = std::fs::read_to_string(dir.path().join("_schema.json")).expect("schema");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["schema_version"], skein_export::SCHEMA_VERSION);
    for t in v["tables"].as_array().expect("tables") {
        let name = t["name"].as_str().expect("name");
        let (_, b) = &read_table(dir.path(), name)[0];
        let want: Vec<&str> = t["columns"]
            .as_array()
            .expect("cols")
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect();
        let got: Vec<&str> = b
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(got, want, "{name}");
    }
}
