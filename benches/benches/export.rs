//! `skein export parquet` minus the command line: deduplicated usage rows, the per-file rows
//! (sessions, messages with the active path, paired tool calls) and the zstd Parquet files of
//! a Hive-partitioned dataset. Throughput in bytes of transcript read, on a synthetic 32 MiB
//! session written to a temp directory, and on every session of the shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{bytes_of, corpus_dir, write_synthetic_session};
use skein_export::{Dataset, ExportOptions, Layout};
use skein_layout::{SessionFiles, discover};
use skein_reports::pricing::PricingTable;

fn bench_export(c: &mut Criterion, name: &str, sessions: &[SessionFiles]) {
    let pricing = PricingTable::embedded();
    let mut g = c.benchmark_group("export");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes_of(
        sessions.iter().flat_map(SessionFiles::files),
    )));
    g.bench_function(name, |b| {
        b.iter(|| {
            let out = tempfile::tempdir().expect("tempdir");
            let mut ds = Dataset::create(&out.path().join("d"), Layout::default()).expect("create");
            skein_export::export(sessions, &ExportOptions::default(), &pricing, &mut ds)
                .expect("export");
            ds.commit().expect("commit")
        });
    });
    g.finish();
}

fn synthetic(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_synthetic_session(dir.path(), "bench-export", 32 << 20, 7);
    let found = discover(&[dir.path().join("projects")]);
    bench_export(c, "parquet_synthetic_32MiB", &found.sessions);
}

fn corpus(c: &mut Criterion) {
    // Without the corpus (SKEIN_CORPUS) only the synthetic bench runs.
    let Some(dir) = corpus_dir() else {
        return;
    };
    let found = discover(&[dir]);
    bench_export(c, "parquet_corpus", &found.sessions);
}

criterion_group!(benches, synthetic, corpus);
criterion_main!(benches);
