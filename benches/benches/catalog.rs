//! The catalog's hot paths, throughput in bytes: indexing a tree from nothing (parse on two
//! threads, one SQLite writer, FTS5), and a refresh that finds nothing new (a stat per file
//! and one query). On a synthetic tree of 8 × 8 MiB sessions and, when present, the shared
//! corpus. The end-to-end goals on ~1 GB (cold index MB/s, refresh, search, usage) are
//! measured by `benches/catalog.sh`.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benches write their synthetic inputs"
)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_dir, synthetic_transcript};
use skein_catalog::{Catalog, CatalogOptions, RefreshOptions};

fn tree_bytes(sources: &[skein_layout::Source]) -> u64 {
    sources
        .iter()
        .filter_map(|s| std::fs::metadata(&s.path).ok())
        .map(|m| m.len())
        .sum()
}

fn bench_tree(c: &mut Criterion, name: &str, root: &Path) {
    let listing = skein_layout::sources(&[root.to_path_buf()]);
    let bytes = tree_bytes(&listing.sources);
    let opts = RefreshOptions {
        threads: 2,
        ..RefreshOptions::default()
    };
    let mut group = c.benchmark_group("catalog");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function(format!("{name}_cold_index"), |b| {
        b.iter(|| {
            let dir = tempfile::tempdir().expect("tmp");
            let mut cat =
                Catalog::open(&dir.path().join("c.db"), CatalogOptions::default()).expect("open");
            black_box(
                cat.refresh(&listing.sources, &opts, &mut |_| {})
                    .expect("refresh")
                    .docs,
            )
        });
    });
    let dir = tempfile::tempdir().expect("tmp");
    let mut cat = Catalog::open(&dir.path().join("c.db"), CatalogOptions::default()).expect("open");
    cat.refresh(&listing.sources, &opts, &mut |_| {})
        .expect("refresh");
    group.bench_function(format!("{name}_refresh_unchanged"), |b| {
        b.iter(|| {
            black_box(
                cat.refresh(&listing.sources, &opts, &mut |_| {})
                    .expect("refresh")
                    .unchanged,
            )
        });
    });
    group.finish();
}

fn catalog(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-bench");
    std::fs::create_dir_all(&project).expect("mkdir");
    for i in 0..8u64 {
        let data = synthetic_transcript(8 << 20, 42 + i);
        let name = format!("00000000-0000-4000-8000-{i:012}.jsonl");
        std::fs::write(project.join(name), data).expect("write");
    }
    bench_tree(c, "synthetic_64MiB", dir.path());
    if let Some(corpus) = corpus_dir() {
        bench_tree(c, "corpus", &corpus);
    }
}

criterion_group!(benches, catalog);
criterion_main!(benches);
