//! Many writers at once: each source is indexed once, whoever gets there first.

use std::sync::Barrier;

use skein_catalog::Opened;

use crate::common::{Fixture, append, copy_dir, hits, refresh, testdata};

#[test]
fn concurrent_refreshes_index_every_byte_once() {
    let f = Fixture::new();
    // More files, so the writers overlap.
    for i in 0..6 {
        copy_dir(
            &testdata("reports/usage/projects"),
            &f.projects().join(format!("-copy-{i}")),
        );
    }
    let roots = [f.projects()];
    let expected = {
        let g = tempfile::tempdir().expect("tmp");
        let mut c = skein_catalog::Catalog::open(
            &g.path().join("c.db"),
            skein_catalog::CatalogOptions::default(),
        )
        .expect("open");
        refresh(&mut c, &roots);
        c.stats().expect("stats")
    };
    // Opened before the threads start: a thread that failed before the barrier would leave
    // the others waiting there for ever (opening at once is tested on its own below).
    let barrier = Barrier::new(4);
    let catalogs: Vec<_> = (0..4).map(|_| f.open()).collect();
    std::thread::scope(|s| {
        for mut c in catalogs {
            let (barrier, roots) = (&barrier, &roots);
            s.spawn(move || {
                barrier.wait();
                refresh(&mut c, roots);
            });
        }
    });
    let c = f.open();
    let got = c.stats().expect("stats");
    assert_eq!(
        (
            got.sources,
            got.docs,
            got.requests,
            got.tool_calls,
            got.indexed_bytes
        ),
        (
            expected.sources,
            expected.docs,
            expected.requests,
            expected.tool_calls,
            expected.indexed_bytes
        )
    );
    assert_eq!(hits(&c, "flamingo").len(), 1);
    // A reader keeps working while a writer appends.
    let main = f.main_file(crate::common::A, "-home-me-widgets");
    let reader = f.open();
    append(
        &main,
        "{\"type\":\"user\",\"message\":{\"content\":\"tapir\"}}\n",
    );
    let mut w = f.open();
    refresh(&mut w, &roots);
    assert_eq!(hits(&reader, "tapir").len(), 1);
}

/// Hooks firing together on a first run all open the new catalog: none gets "busy" and none
/// takes the half-made file for a corrupt one. (SQLite's busy handler does not cover switching
/// a new database to WAL: before the fix, about one round in seven failed here.)
#[test]
fn openers_of_a_new_catalog_at_once_all_succeed() {
    for round in 0..40 {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("state/catalog.db");
        let opened: Vec<Result<Opened, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        skein_catalog::Catalog::open(&db, skein_catalog::CatalogOptions::default())
                            .map(|c| c.opened().clone())
                            .map_err(|e| e.to_string())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("opener"))
                .collect()
        });
        assert!(
            opened
                .iter()
                .all(|o| matches!(o, Ok(Opened::Created | Opened::Existing))),
            "round {round}: {opened:?}"
        );
    }
}
