//! `skein check` minus the output: load each session (main file and agents) with the check
//! visitor and produce its diagnostics. Throughput in bytes of transcript read, single thread:
//! on a synthetic 32 MiB session written to a temp directory, and on every session of the
//! shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{bytes_of, corpus_dir, write_synthetic_session};
use skein_core::Parser;
use skein_layout::{SessionFiles, discover};
use skein_reports::check::check_session;

fn sessions(c: &mut Criterion, name: &str, sessions: &[SessionFiles]) {
    let mut parser = Parser::new();
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes_of(
        sessions.iter().flat_map(SessionFiles::files),
    )));
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut n = 0;
            for s in sessions {
                n += check_session(s, &mut parser, false).len();
            }
            black_box(n)
        });
    });
    g.finish();
}

fn check(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_synthetic_session(
        dir.path(),
        "c4ec4000-0000-4000-8000-000000000000",
        32 << 20,
        42,
    );
    let synthetic = discover(&[dir.path().to_path_buf()]).sessions;
    assert_eq!(synthetic.len(), 1);
    sessions(c, "synthetic_32MiB", &synthetic);

    if let Some(corpus) = corpus_dir() {
        sessions(c, "corpus", &discover(&[corpus]).sessions);
    }
}

criterion_group!(benches, check);
criterion_main!(benches);
