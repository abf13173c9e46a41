//! Only new bytes are read: appended text becomes searchable without a rebuild, a torn last
//! line waits until it is complete, a rewritten file is indexed again from zero, a deleted
//! one leaves the catalog.

use skein_catalog::report_cache::SessionResult;

use crate::common::{A, B, Fixture, append, found, hits};

fn user_line(uuid: &str, text: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"timestamp":"2026-03-03T08:00:00.000Z","sessionId":"{A}","message":{{"role":"user","content":"{text}"}}}}"#
    )
}

#[test]
fn appended_text_is_searchable_without_a_rebuild() {
    let f = Fixture::new();
    let mut c = f.open();
    f.refresh(&mut c);
    let main = f.main_file(A, "-home-me-widgets");
    let before = c.stats().expect("stats");
    // Nothing new: nothing read, nothing written.
    let r = f.refresh(&mut c);
    assert_eq!((r.unchanged, r.bytes), (3, 0));
    // A complete line and a torn one.
    append(
        &main,
        &format!(
            "{}\n{}",
            user_line("x1", "the okapi escaped"),
            &user_line("x2", "a wombat")[..40]
        ),
    );
    let r = f.refresh(&mut c);
    assert_eq!((r.appended, r.reindexed), (1, 0));
    assert_eq!(hits(&c, "okapi").len(), 1);
    assert!(
        hits(&c, "wombat").is_empty(),
        "a torn line is not indexed yet"
    );
    assert_eq!(hits(&c, "flamingo").len(), 1, "earlier text indexed once");
    // The torn line completed.
    append(&main, &format!("{}\n", &user_line("x2", "a wombat")[40..]));
    let r = f.refresh(&mut c);
    assert_eq!(r.appended, 1);
    assert_eq!(hits(&c, "wombat").len(), 1);
    let after = c.stats().expect("stats");
    assert_eq!(after.docs, before.docs + 2);
    assert_eq!(after.sources, before.sources);
}

#[test]
fn a_rewritten_file_is_indexed_again_and_a_deleted_one_dropped() {
    let f = Fixture::new();
    let mut c = f.open();
    f.refresh(&mut c);
    let main = f.main_file(A, "-home-me-widgets");
    // Same length, different bytes before the offset: a rewrite.
    let text = std::fs::read_to_string(&main).expect("read");
    std::fs::write(&main, text.replace("flamingo", "pelicans")).expect("write");
    let r = f.refresh(&mut c);
    assert_eq!((r.reindexed, r.appended), (1, 0));
    assert!(hits(&c, "flamingo").is_empty());
    assert_eq!(hits(&c, "pelicans").len(), 1);
    assert_eq!(
        hits(&c, "zeppelin").len(),
        1,
        "no duplicates after re-indexing"
    );
    // A deleted file leaves the catalog when its root is refreshed, and so do the report
    // results remembered for its session (not those of a session still there).
    let remember = |project: &str, session: &str| SessionResult {
        dir: f.projects().join(project).display().to_string(),
        project: project.into(),
        session_id: session.into(),
        fingerprint: 1,
        body: b"{}".to_vec(),
    };
    c.store_results(
        "tools",
        &[
            remember("-home-me-other", B),
            remember("-home-me-widgets", A),
        ],
    )
    .expect("remember");
    assert_eq!(c.cached_results("tools").expect("cached").len(), 2);
    std::fs::remove_file(f.main_file(B, "-home-me-other")).expect("rm");
    let r = f.refresh(&mut c);
    assert_eq!(r.removed, 1);
    assert!(hits(&c, "capybara").is_empty());
    let kept: Vec<_> = c
        .cached_results("tools")
        .expect("cached")
        .into_keys()
        .collect();
    let widgets = f.projects().join("-home-me-widgets").display().to_string();
    assert_eq!(kept, [(widgets, A.to_string())]);
    assert_eq!(c.integrity_check().expect("check"), Ok(()));
}

#[test]
fn refresh_file_is_bounded_and_catches_up() {
    let f = Fixture::new();
    let mut c = f.open();
    let main = f.main_file(A, "-home-me-widgets");
    let source = skein_layout::Source::live(&main).expect("source");
    // One byte per run: each run indexes at least one whole line, and stops.
    let mut runs = 0;
    loop {
        let r = c.refresh_file(&source, 1).expect("refresh");
        runs += 1;
        if r.unchanged == 1 {
            break;
        }
        assert!(runs < 100);
    }
    assert!(runs > 2, "{runs} runs");
    assert_eq!(hits(&c, "narwhal").len(), 1);
    assert_eq!(hits(&c, "flamingo").len(), 1);
}

#[test]
fn refresh_roots_skips_the_listing_when_no_directory_changed() {
    let f = Fixture::new();
    let mut c = f.open();
    let roots = [f.projects()];
    let now = crate::common::SETTLED_CLOCK;
    let opts = skein_catalog::RefreshOptions {
        now_ns: Some(now),
        ..Default::default()
    };
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(!r.fast);
    assert_eq!(r.refresh.reindexed, 3);
    assert_eq!(r.paths.len(), 3);
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(r.fast, "nothing changed: no listing");
    assert_eq!((r.refresh.unchanged, r.paths.len()), (3, 3));
    // An append: still no listing, the new text is indexed.
    append(
        &f.main_file(A, "-home-me-widgets"),
        &format!("{}\n", user_line("y1", "a jackal")),
    );
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(r.fast);
    assert_eq!(r.refresh.appended, 1);
    assert_eq!(hits(&c, "jackal").len(), 1);
    // A new session in an existing project: its directory changed, so the sources are listed.
    std::thread::sleep(std::time::Duration::from_millis(30));
    let new = f
        .projects()
        .join("-home-me-other/33333333-3333-4333-8333-333333333333.jsonl");
    std::fs::write(&new, format!("{}\n", user_line("z1", "a lemur"))).expect("write");
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(!r.fast);
    assert_eq!(r.refresh.reindexed, 1);
    assert_eq!(hits(&c, "lemur").len(), 1);
    // Without a clock, the directories a refresh records are never trusted: always listed.
    let other = f.dir.path().join("other.db");
    let mut c = skein_catalog::Catalog::open(&other, skein_catalog::CatalogOptions::default())
        .expect("open");
    for _ in 0..2 {
        let r = c
            .refresh_roots(
                &roots,
                &skein_catalog::RefreshOptions::default(),
                &mut |_| {},
            )
            .expect("refresh");
        assert!(!r.fast);
    }
}

/// More new bytes than `defer_above`: nothing is indexed or recorded, and the catalog answers
/// no usage query (a report scans instead) until a refresh without the bound catches up, in
/// the fast path (an append) as in a listing (a fresh catalog).
#[test]
fn a_refresh_with_more_new_bytes_than_its_bound_defers_everything() {
    let f = Fixture::new();
    let roots = [f.projects()];
    let now = crate::common::SETTLED_CLOCK;
    let bounded = skein_catalog::RefreshOptions {
        now_ns: Some(now),
        defer_above: Some(100),
        ..Default::default()
    };
    let unbounded = skein_catalog::RefreshOptions {
        now_ns: Some(now),
        ..Default::default()
    };
    let sessions = skein_layout::discover(&roots).sessions;
    let mut c = f.open();
    // A fresh catalog: everything is new.
    let r = c
        .refresh_roots(&roots, &bounded, &mut |_| {})
        .expect("refresh");
    assert!(
        r.refresh.deferred_bytes > 100,
        "{}",
        r.refresh.deferred_bytes
    );
    assert_eq!(
        (r.refresh.reindexed, c.stats().expect("stats").sources),
        (0, 0)
    );
    assert!(c.usage_groups(&sessions).expect("groups").is_none());
    assert!(
        c.usage_scans(
            &sessions,
            &mut skein_reports::usage::UsageScanner::default()
        )
        .expect("scans")
        .iter()
        .all(Option::is_none)
    );
    // Which files there are is known: the listing's own sessions, as a discovery gives them.
    assert_eq!(
        c.listed_sessions(&r.paths).expect("listed"),
        Some(sessions.clone())
    );
    // Nothing was recorded: the next refresh lists the tree again and indexes it.
    let r = c
        .refresh_roots(&roots, &unbounded, &mut |_| {})
        .expect("refresh");
    assert!(!r.fast, "a deferred listing leaves no directory record");
    assert_eq!((r.refresh.reindexed, r.refresh.deferred_bytes), (3, 0));
    assert!(c.usage_groups(&sessions).expect("groups").is_some());
    // An append above the bound, found by the fast path: deferred, and the grown file counts
    // as not read to its end: no pre-summed groups, and of every copy only the sessions it
    // does not hold (not its rows from before the append).
    let main = f.main_file(A, "-home-me-widgets");
    append(
        &main,
        &format!("{}\n", user_line("d1", &"kinkajou ".repeat(40))),
    );
    let r = c
        .refresh_roots(&roots, &bounded, &mut |_| {})
        .expect("refresh");
    assert!(r.fast);
    assert!(r.refresh.deferred_bytes > 100);
    assert_eq!(r.refresh.appended, 0);
    // The kept listing (which holds no sidecars) names the same files.
    let files = |s: &[skein_layout::SessionFiles]| -> Vec<(String, Vec<std::path::PathBuf>)> {
        s.iter()
            .map(|s| (s.session_id.clone(), s.files().map(Into::into).collect()))
            .collect()
    };
    let listed = c.listed_sessions(&r.paths).expect("listed").expect("known");
    assert_eq!(files(&listed), files(&sessions));
    assert!(hits(&c, "kinkajou").is_empty());
    assert!(c.usage_groups(&sessions).expect("groups").is_none());
    let scans = c
        .usage_scans(
            &sessions,
            &mut skein_reports::usage::UsageScanner::default(),
        )
        .expect("scans");
    let answered: Vec<(&str, bool)> = sessions
        .iter()
        .zip(&scans)
        .map(|(s, a)| (s.session_id.as_str(), a.is_some()))
        .collect();
    assert_eq!(answered, [(B, true), (A, false)]);
    // Under the bound (or without one) it is indexed as usual.
    let r = c
        .refresh_roots(&roots, &unbounded, &mut |_| {})
        .expect("refresh");
    assert_eq!((r.refresh.appended, r.refresh.deferred_bytes), (1, 0));
    assert_eq!(hits(&c, "kinkajou").len(), 1);
    assert!(c.usage_groups(&sessions).expect("groups").is_some());
}

/// A file's last record written without a final newline is a whole record: indexed (as the
/// scanners count it), and the newline that later ends it does not make a line of its own.
#[test]
fn a_whole_last_record_without_a_newline_is_indexed() {
    let f = Fixture::new();
    let mut c = f.open();
    f.refresh(&mut c);
    let main = f.main_file(A, "-home-me-widgets");
    let before = c.stats().expect("stats");
    append(&main, &user_line("y1", "the zorbling surfaced"));
    let r = f.refresh(&mut c);
    assert_eq!((r.appended, r.reindexed), (1, 0));
    assert_eq!(hits(&c, "zorbling").len(), 1, "the last record is indexed");
    // Claude Code goes on: the line end, then a new record.
    append(
        &main,
        &format!("\n{}\n", user_line("y2", "a quibblefrog waved")),
    );
    let r = f.refresh(&mut c);
    assert_eq!((r.appended, r.reindexed), (1, 0));
    let found = found(&c, "quibblefrog", 10);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].snippet.contains("quibblefrog"),
        "{}",
        found[0].snippet
    );
    assert_eq!(found[0].uuid.as_deref(), Some("y2"));
    assert_eq!(hits(&c, "zorbling").len(), 1, "indexed once");
    assert_eq!(c.stats().expect("stats").docs, before.docs + 2);
    // Another whole last record, then a record glued to it (no line end between them): the
    // old last line went on, so the file is read again, and the glued line (not JSON) is left
    // out like a torn one.
    append(&main, &user_line("y3", "a glued snorkelbat"));
    let r = f.refresh(&mut c);
    assert_eq!((r.appended, r.reindexed), (1, 0));
    assert_eq!(hits(&c, "snorkelbat").len(), 1);
    append(&main, &user_line("y4", "another glued glimmerwump"));
    let r = f.refresh(&mut c);
    assert_eq!(
        (r.reindexed, r.appended),
        (1, 0),
        "the old last line went on"
    );
    assert!(hits(&c, "snorkelbat").is_empty() && hits(&c, "glimmerwump").is_empty());
    assert_eq!(
        hits(&c, "quibblefrog").len(),
        1,
        "no duplicates after reading again"
    );
    assert_eq!(c.stats().expect("stats").docs, before.docs + 2);
    assert_eq!(c.integrity_check().expect("check"), Ok(()));
}

/// A file longer than two read chunks (8 MiB each): every line is indexed once at its own
/// offset (a hit's uuid and snippet are read back by offset), and an append afterwards is
/// read alone instead of the whole file again.
#[test]
fn a_file_longer_than_a_chunk_keeps_its_offsets_and_appends() {
    use skein_catalog::SearchQuery;
    let f = Fixture::new();
    let main = f.main_file(A, "-home-me-widgets");
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 17 << 20 {
        // Lines of varying length, so a chunk's end falls inside a line.
        let pad = "lorem ipsum ".repeat(20 + n % 37);
        text.push_str(&user_line(&format!("u{n}"), &format!("line {n} {pad}")));
        text.push('\n');
        n += 1;
    }
    text.push_str(&user_line("ulast", "the quokka at the end"));
    text.push('\n');
    std::fs::write(&main, &text).expect("write");
    let mut c = f.open();
    f.refresh(&mut c);
    let found = |c: &skein_catalog::Catalog, word: &str| {
        c.search(&SearchQuery {
            query: word.into(),
            limit: 5,
            ..SearchQuery::default()
        })
        .expect("search")
    };
    let hit = found(&c, "quokka");
    assert_eq!(hit.len(), 1);
    assert_eq!(
        hit[0].uuid.as_deref(),
        Some("ulast"),
        "read back at its offset"
    );
    assert!(hit[0].snippet.contains("quokka"), "{}", hit[0].snippet);
    append(
        &main,
        &format!("{}\n", user_line("unext", "a numbat appended")),
    );
    let r = f.refresh(&mut c);
    assert_eq!(
        (r.appended, r.reindexed),
        (1, 0),
        "only the new line is read"
    );
    let hit = found(&c, "numbat");
    assert_eq!(hit.len(), 1);
    assert_eq!(hit[0].uuid.as_deref(), Some("unext"));
}

/// A search returning more hits than one batch of snippets (256) gives every hit its own
/// snippet, in order: each names the line it came from.
#[test]
fn every_hit_of_a_large_search_gets_its_own_snippet() {
    let f = Fixture::new();
    let mut c = f.open();
    let main = f.main_file(A, "-home-me-widgets");
    let lines: String = (0..300)
        .map(|i| user_line(&format!("big{i}"), &format!("axolotlzz number n{i}")) + "\n")
        .collect();
    append(&main, &lines);
    f.refresh(&mut c);
    let found = found(&c, "axolotlzz", 1000);
    assert_eq!(found.len(), 300);
    for h in &found {
        let n = h
            .uuid
            .as_deref()
            .and_then(|u| u.strip_prefix("big"))
            .expect("uuid");
        assert_eq!(h.snippet, format!("«axolotlzz» number n{n}"), "{h:?}");
    }
}

/// The fast path stats the files in batches (of 256) while it reads their rows: over many
/// batches, every file is stat'ed once, and a file grown in any batch is found.
#[test]
fn the_fast_path_finds_a_grown_file_in_every_stat_batch() {
    const SESSIONS: usize = 1_300;
    let f = Fixture::new();
    let roots = [f.projects()];
    let many = f.projects().join("-home-me-many");
    std::fs::create_dir_all(&many).expect("mkdir");
    let files: Vec<std::path::PathBuf> = (0..SESSIONS)
        .map(|i| {
            let id = format!("44444444-4444-4444-8444-{i:012}");
            let path = many.join(format!("{id}.jsonl"));
            std::fs::write(&path, format!("{}\n", user_line(&format!("m{i}"), "a gnu")))
                .expect("write");
            path
        })
        .collect();
    let opts = skein_catalog::RefreshOptions {
        threads: 2,
        now_ns: Some(crate::common::SETTLED_CLOCK),
        ..Default::default()
    };
    let mut c = f.open();
    let total = SESSIONS + 3;
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert_eq!(r.refresh.reindexed, total);
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(r.fast);
    assert_eq!((r.refresh.unchanged, r.paths.len()), (total, total));
    // One grown file in each batch, whatever order the rows are read in: every 400th.
    let grown: Vec<_> = files.iter().step_by(400).collect();
    for (i, path) in grown.iter().enumerate() {
        append(
            path,
            &format!("{}\n", user_line(&format!("g{i}"), "a tapir")),
        );
    }
    let r = c
        .refresh_roots(&roots, &opts, &mut |_| {})
        .expect("refresh");
    assert!(r.fast);
    assert_eq!(
        (r.refresh.appended, r.refresh.unchanged),
        (grown.len(), total - grown.len())
    );
    assert_eq!(hits(&c, "tapir").len(), grown.len());
}
