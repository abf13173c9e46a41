//! `skein usage` from the catalog is the scan path's report, byte for byte: on the usage
//! fixtures (a request in two files, sidechain replays, progress copies, resume copies), on
//! the catalog fixture, and on the shared corpus.

use std::path::Path;

use skein_catalog::Catalog;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{UsageBuilder, UsageKind, UsageOptions, UsageScanner};

use crate::common::{append, copy_dir, refresh, testdata};

/// Every report kind, as JSON, from the scan path and from the catalog.
fn reports(root: &Path, c: &Catalog) -> Vec<(String, String)> {
    let found = skein_layout::discover(&[root.to_path_buf()]);
    let mut scanner = UsageScanner::new();
    let mut out = Vec::new();
    for kind in ["daily", "weekly", "monthly", "session", "model"] {
        let options = UsageOptions {
            kind: UsageKind::from_name(kind).expect("kind"),
            ..UsageOptions::default()
        };
        let mut scan = UsageBuilder::new();
        let mut cat = UsageBuilder::new();
        let from_catalog = c
            .usage_scans(&found.sessions, &mut scanner)
            .expect("catalog");
        for (s, c) in found.sessions.iter().zip(from_catalog) {
            let scanned = scanner.scan_session(s, false).expect("scan");
            // A session with skipped lines is left to the scanner, which can name them.
            let c = c.unwrap_or_else(|| {
                assert!(!scanned.skipped.is_empty(), "{} not covered", s.session_id);
                scanned.clone()
            });
            // The copies themselves are the scanner's: groups, order, counters, agents (the
            // catalog keeps no locations of skipped lines).
            let unlocated = skein_reports::usage::SessionScan {
                skipped: c.skipped.clone(),
                ..scanned.clone()
            };
            assert_eq!(unlocated, c, "session {}", s.session_id);
            scan.add(s, scanned);
            cat.add(s, c);
        }
        let json = |b: UsageBuilder| {
            let r = b.finish(&options, &PricingTable::embedded());
            serde_json::to_string(&(r.rows, r.totals)).expect("json")
        };
        out.push((json(scan), json(cat)));
    }
    out
}

fn check(root: &Path) {
    let db = tempfile::tempdir().expect("tmp");
    let mut c = Catalog::open(
        &db.path().join("c.db"),
        skein_catalog::CatalogOptions::default(),
    )
    .expect("open");
    refresh(&mut c, &[root.to_path_buf()]);
    for (scan, cat) in reports(root, &c) {
        assert_eq!(scan, cat);
    }
}

#[test]
fn usage_fixtures_are_equal() {
    check(&testdata("reports/usage/projects"));
    check(&testdata("catalog/projects"));
}

#[test]
fn appended_and_torn_lines_keep_parity() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    copy_dir(&testdata("reports/usage/projects"), &root);
    let db = dir.path().join("c.db");
    let mut c = Catalog::open(&db, skein_catalog::CatalogOptions::default()).expect("open");
    refresh(&mut c, std::slice::from_ref(&root));
    // A streaming copy of msg_a2 with a larger output (merged with the stored group), and a
    // torn line that mentions usage (scanned from the tail).
    let file = root.join("-home-me-alpha/sess-a1.jsonl");
    append(
        &file,
        concat!(
            r#"{"type":"assistant","timestamp":"2026-06-01T00:30:00.000Z","sessionId":"sess-a1","requestId":"req_a2","message":{"id":"msg_a2","model":"claude-sonnet-4-6","usage":{"input_tokens":20,"output_tokens":999,"cache_read_input_tokens":2000}}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-06-01T00:31:00.000Z","requestId":"req_t","message":{"id":"msg_t","usage":{"input_tokens":1,"output_tokens":2}}}"#
        ),
    );
    refresh(&mut c, std::slice::from_ref(&root));
    for (scan, cat) in reports(&root, &c) {
        assert_eq!(scan, cat);
    }
}

#[test]
fn corpus_is_equal() {
    let Some(corpus) = skein_testkit::corpus_dir() else {
        return;
    };
    check(&corpus);
}
