//! Many writers at once: each source is indexed once, whoever gets there first.

use std::sync::Barrier;

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
    let barrier = Barrier::new(4);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut c = f.open();
                barrier.wait();
                refresh(&mut c, &roots);
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
