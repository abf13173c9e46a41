//! `skein usage` from the catalog is the scan path's report, byte for byte: on the usage
//! fixtures (a request in two files, sidechain replays, progress copies, resume copies), on
//! the catalog fixture, and on the shared corpus; from every copy (`usage_scans`) and from
//! the usage groups (`usage_groups`, with the sessions taken from the catalog's sources), in
//! several zones and ranges.

use rustc_hash::FxHashSet as HashSet;
use std::path::{Path, PathBuf};

use skein_catalog::{Catalog, RefreshOptions};
use skein_core::time::{Bound, DateRange, Day, Zone};
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{UsageBuilder, UsageKind, UsageOptions, UsageScanner, groups_fit};

use crate::common::{append, copy_dir, refresh, testdata};

fn json(b: UsageBuilder, options: &UsageOptions) -> String {
    let r = b.finish(options, &PricingTable::embedded());
    serde_json::to_string(&(r.rows, r.totals)).expect("json")
}

/// The sources a refresh of `root` finds (what `skein usage` takes its sessions from).
fn refreshed_paths(c: &mut Catalog, root: &Path) -> HashSet<String> {
    let r = c
        .refresh_roots(
            &[root.to_path_buf()],
            &RefreshOptions::default(),
            &mut |_| {},
        )
        .expect("refresh");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r.paths
}

/// The report from the usage groups, with the sessions from the catalog (which must be the
/// listing's); `None` when the groups cannot answer `options` exactly.
fn grouped(
    root: &Path,
    c: &Catalog,
    paths: &HashSet<String>,
    options: &UsageOptions,
) -> Option<String> {
    let mut found = skein_layout::discover(&[root.to_path_buf()]).sessions;
    let sessions = c
        .listed_sessions(paths)
        .expect("list")
        .expect("live sources");
    // The catalog does not read sidecars: the rest is the listing's.
    for a in found.iter_mut().flat_map(|s| s.agents.iter_mut()) {
        a.meta = None;
    }
    assert_eq!(sessions, found);
    let answers = c.usage_groups(&sessions).expect("groups").expect("covered");
    let fits = groups_fit(
        answers.iter().flat_map(|a| &a.groups),
        options,
        &PricingTable::embedded(),
    );
    if !fits {
        return None;
    }
    let mut scanner = UsageScanner::new();
    let mut b = UsageBuilder::new();
    for (s, a) in sessions.iter().zip(answers) {
        // The skipped lines are located as the scanner locates them.
        let scanned = scanner.scan_session(s, false).expect("scan");
        assert_eq!(a.scan.skipped, scanned.skipped, "{}", s.session_id);
        b.add_with_groups(s, a.scan, a.groups);
    }
    Some(json(b, options))
}

/// The scan path's report against the groups' for each zone and range (all of which align
/// with the 15-minute groups).
fn check_grouped(root: &Path, c: &mut Catalog) {
    let paths = refreshed_paths(c, root);
    let day = |s: &str| Some(Bound::Day(Day::parse(s).expect("day")));
    let zones = [0, 330, -210, 345, 60 * 14].map(|m| Zone::fixed_minutes(m).expect("zone"));
    let ranges = [
        DateRange::default(),
        DateRange {
            since: day("2026-05-02"),
            until: day("2026-06-01"),
        },
    ];
    let found = skein_layout::discover(&[root.to_path_buf()]).sessions;
    let mut scanner = UsageScanner::new();
    for kind in ["daily", "weekly", "monthly", "session", "model"] {
        for zone in &zones {
            for range in ranges {
                let options = UsageOptions {
                    kind: UsageKind::from_name(kind).expect("kind"),
                    range,
                    zone: zone.clone(),
                };
                let mut scan = UsageBuilder::new();
                for s in &found {
                    scan.add(s, scanner.scan_session(s, false).expect("scan"));
                }
                let got = grouped(root, c, &paths, &options).expect("the groups fit");
                assert_eq!(json(scan, &options), got, "{kind} {zone:?} {range:?}");
            }
        }
    }
}

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
        out.push((json(scan, &options), json(cat, &options)));
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
    check_grouped(root, &mut c);
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
    check_grouped(&root, &mut c);
    // A torn last line is not catalogued: the groups do not answer (the copies path does).
    append(
        &file,
        "\n{\"type\":\"assistant\",\"timestamp\":\"2026-06-01T00:32:00.000Z\",",
    );
    let paths = refreshed_paths(&mut c, &root);
    let sessions = c.listed_sessions(&paths).expect("list").expect("live");
    assert!(c.usage_groups(&sessions).expect("groups").is_none());
    // Once the line is whole, they do.
    append(
        &file,
        concat!(
            r#""requestId":"req_u","message":{"id":"msg_u","usage":{"input_tokens":1,"output_tokens":2}}}"#,
            "\n"
        ),
    );
    check_grouped(&root, &mut c);
    // Skipped lines in appended bytes are located in the file, not in the batch.
    append(
        &file,
        "not json but \"usage\"\n{\"type\":\"assistant\",\"usage\":1}\n",
    );
    check_grouped(&root, &mut c);
}

#[test]
fn later_copies_contest_and_move_groups() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    copy_dir(&testdata("reports/usage/projects"), &root);
    let db = dir.path().join("c.db");
    let mut c = Catalog::open(&db, skein_catalog::CatalogOptions::default()).expect("open");
    check_grouped(&root, &mut c);
    // msg_f1 was only in sess-b1 (summed in its groups): a larger copy in sess-b2 now wins the
    // deduplication. msg_a2 gets a streaming line 40 minutes earlier (the previous UTC day),
    // which moves its merged copy to another bucket.
    append(
        &root.join("-home-me-beta/sess-b2.jsonl"),
        concat!(
            r#"{"type":"assistant","timestamp":"2026-06-07T13:00:05.000Z","sessionId":"sess-b2","requestId":"req_f1","message":{"id":"msg_f1","model":"claude-opus-4-6","usage":{"input_tokens":1000,"output_tokens":400,"speed":"fast"}}}"#,
            "\n"
        ),
    );
    append(
        &root.join("-home-me-alpha/sess-a1.jsonl"),
        concat!(
            r#"{"type":"assistant","timestamp":"2026-05-31T23:30:00.000Z","sessionId":"sess-a1","requestId":"req_a2","message":{"id":"msg_a2","model":"claude-sonnet-4-6","usage":{"input_tokens":20,"output_tokens":250,"cache_read_input_tokens":2000}}}"#,
            "\n"
        ),
    );
    refresh(&mut c, std::slice::from_ref(&root));
    for (scan, cat) in reports(&root, &c) {
        assert_eq!(scan, cat);
    }
    check_grouped(&root, &mut c);
}

#[test]
fn groups_do_not_answer_what_they_cannot() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    copy_dir(&testdata("reports/usage/projects"), &root);
    let mut c = Catalog::open(
        &dir.path().join("c.db"),
        skein_catalog::CatalogOptions::default(),
    )
    .expect("open");
    // Two requests in one 15-minute bucket: 23:50 and 23:56 UTC.
    let line = |ts: &str, id: &str| {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-06-09T{ts}.000Z","requestId":"req_{id}","message":{{"id":"msg_{id}","model":"claude-opus-4-7","usage":{{"input_tokens":1,"output_tokens":2}}}}}}"#
        ) + "\n"
    };
    append(
        &root.join("-home-me-beta/sess-b1.jsonl"),
        &(line("23:50:00", "x1") + &line("23:56:00", "x2")),
    );
    let paths = refreshed_paths(&mut c, &root);
    assert!(grouped(&root, &c, &paths, &UsageOptions::default()).is_some());
    // A zone 7 minutes ahead of UTC (midnight at 23:53 UTC), or a range bound at 23:53, split
    // that group.
    let odd = UsageOptions {
        zone: Zone::fixed_minutes(7).expect("zone"),
        ..UsageOptions::default()
    };
    assert_eq!(grouped(&root, &c, &paths, &odd), None);
    let instant = UsageOptions {
        range: DateRange {
            since: Some(Bound::Instant(
                skein_core::time::parse_ms("2026-06-09T23:53:00Z").expect("ts"),
            )),
            until: None,
        },
        ..UsageOptions::default()
    };
    assert_eq!(grouped(&root, &c, &paths, &instant), None);
}

#[test]
fn corpus_is_equal() {
    let Some(corpus) = skein_testkit::corpus_dir() else {
        return;
    };
    check(&corpus);
}

/// The usage fixtures copied into a temp dir (kept while the first value lives), a catalog
/// path there, and refresh options whose clock is far ahead: every directory counts as
/// settled, so the next refresh is fast.
fn settled() -> (tempfile::TempDir, PathBuf, PathBuf, RefreshOptions) {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    copy_dir(&testdata("reports/usage/projects"), &root);
    let db = dir.path().join("c.db");
    let opts = RefreshOptions {
        now_ns: Some(crate::common::SETTLED_CLOCK),
        ..RefreshOptions::default()
    };
    (dir, root, db, opts)
}

/// A refresh that finds no directory changed hands the report the source rows it read before
/// indexing, brought up to date for the files it indexed: the usage from them is the usage
/// from the table read afresh (stale rows would keep the old sizes and counters).
#[test]
fn a_fast_refresh_hands_the_report_current_rows() {
    let (_dir, root, db, opts) = settled();
    let options = skein_catalog::CatalogOptions::default();
    let mut c = Catalog::open(&db, options.clone()).expect("open");
    let roots = [root.clone()];
    let first = c.refresh_roots(&roots, &opts, &mut |_| {}).expect("first");
    assert!(!first.fast);
    let usage = |c: &Catalog, paths: &HashSet<String>| {
        let sessions = c.listed_sessions(paths).expect("list").expect("live");
        let answers = c.usage_groups(&sessions).expect("groups").expect("covered");
        format!("{answers:?}")
    };
    let before = usage(&c, &first.paths);
    append(
        &root.join("-home-me-alpha/sess-a1.jsonl"),
        concat!(
            r#"{"type":"assistant","timestamp":"2026-06-01T00:30:00.000Z","sessionId":"sess-a1","requestId":"req_n","message":{"id":"msg_n","model":"claude-sonnet-4-6","usage":{"input_tokens":7,"output_tokens":9}}}"#,
            "\n"
        ),
    );
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(r.fast, "no directory changed");
    assert_eq!(r.refresh.appended, 1);
    let handed = usage(&c, &r.paths);
    let read = usage(&Catalog::open(&db, options).expect("reopen"), &r.paths);
    assert_eq!(handed, read);
    assert_ne!(handed, before, "the append is counted");
}

/// A refresh asked to read the usage ahead (`usage daily` does) hands the report what a
/// report reading after it finds, and drops what it read when it indexed something (the
/// groups read before an append would miss it).
#[test]
fn usage_read_ahead_is_what_a_later_read_finds() {
    let (_dir, root, db, opts) = settled();
    let options = skein_catalog::CatalogOptions::default();
    let roots = [root.clone()];
    Catalog::open(&db, options.clone())
        .expect("open")
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("first");
    let usage = |c: &Catalog, paths: &HashSet<String>| {
        let sessions = c.listed_sessions(paths).expect("list").expect("live");
        let answers = c.usage_groups(&sessions).expect("groups").expect("covered");
        format!("{sessions:?} {answers:?}")
    };
    // What a catalog that reads nothing ahead answers after a fast refresh.
    let plain = |paths: &HashSet<String>| {
        let mut c = Catalog::open(&db, options.clone()).expect("reopen");
        let r = c.refresh_roots(&roots, &opts, &mut |_| {}).expect("plain");
        assert_eq!(&r.paths, paths);
        usage(&c, &r.paths)
    };
    let mut c = Catalog::open(&db, options.clone()).expect("reopen");
    c.read_usage_ahead();
    let r = c.refresh_roots(&roots, &opts, &mut |_| {}).expect("fast");
    assert!(r.fast && r.refresh.appended == 0);
    let before = usage(&c, &r.paths);
    assert_eq!(before, plain(&r.paths));
    append(
        &root.join("-home-me-alpha/sess-a1.jsonl"),
        concat!(
            r#"{"type":"assistant","timestamp":"2026-06-01T00:30:00.000Z","sessionId":"sess-a1","requestId":"req_r","message":{"id":"msg_r","model":"claude-sonnet-4-6","usage":{"input_tokens":5,"output_tokens":3}}}"#,
            "\n"
        ),
    );
    let r = c.refresh_roots(&roots, &opts, &mut |_| {}).expect("append");
    assert!(r.fast);
    assert_eq!(r.refresh.appended, 1);
    let after = usage(&c, &r.paths);
    assert_ne!(after, before, "the append is counted");
    assert_eq!(after, plain(&r.paths));
}

/// The sessions a fast refresh keeps from the last listing are the listing's grouping, and
/// are only used for exactly the files the refresh found.
#[test]
fn a_kept_listing_is_the_grouping_of_the_files_found() {
    let (_dir, root, db, opts) = settled();
    let mut c = Catalog::open(&db, skein_catalog::CatalogOptions::default()).expect("open");
    let roots = [root.clone()];
    let mut found = skein_layout::discover(&roots).sessions;
    for a in found.iter_mut().flat_map(|s| s.agents.iter_mut()) {
        a.meta = None;
    }
    assert!(
        found.iter().any(|s| !s.agents.is_empty()),
        "agents are kept too"
    );
    c.refresh_roots(&roots, &opts, &mut |_| {}).expect("first");
    // A new catalog handle: nothing in memory, the sessions come from the `listings` table.
    let mut c = Catalog::open(&db, skein_catalog::CatalogOptions::default()).expect("reopen");
    let r = c.refresh_roots(&roots, &opts, &mut |_| {}).expect("fast");
    assert!(r.fast);
    let kept = c.listed_sessions(&r.paths).expect("list").expect("live");
    assert_eq!(kept, found);
    // Asked for fewer files than it names, the kept listing is not used.
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("fast again");
    let mut fewer = r.paths.clone();
    let main = found[0].main.clone().expect("a main file");
    assert!(fewer.remove(main.to_str().expect("utf-8")));
    let listed = c.listed_sessions(&fewer).expect("list").expect("live");
    assert!(listed.iter().all(|s| s.main.as_ref() != Some(&main)));
    assert_eq!(
        listed.iter().map(|s| s.files().count()).sum::<usize>(),
        fewer.len()
    );
}
