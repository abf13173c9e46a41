//! The archive path (`skein archive` / the hook's archive step), throughput in bytes:
//!
//! * `full_64MiB_redact` / `full_64MiB_plain`: archive a synthetic 64 MiB transcript into a
//!   fresh archive (zstd level 3, automatic threads), with and without the redaction stand-in
//!   transform, including every fsync and the checkpoint/meta/index writes.
//! * `append_100KiB_to_100MiB`: the Stop-time step: 100 KiB of new lines appended to an already
//!   archived 100 MiB session, then one incremental ingest (only the ingest is timed).
//!
//! The data generator is shared with `crates/skein-archive/examples/archive_bench.rs`, which
//! `benches/compare_compression.sh` uses to compare against `gzip -6` and the `zstd` CLI.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

#[path = "../../crates/skein-archive/examples/common/synth.rs"]
mod synth;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_archive::{Archive, ArchiveOptions, IngestRequest, Kind, Transform};

fn request(source: &Path) -> IngestRequest<'_> {
    IngestRequest {
        source,
        kind: Kind::MainSession {
            session_id: "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b".into(),
        },
        first_timestamp: Some("2026-01-05T10:00:00Z"),
        meta: None,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("skein-archive-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn full(c: &mut Criterion) {
    let base = scratch("full");
    let data = synth::transcript(42, 64 << 20);
    let src = base.join("session.jsonl");
    std::fs::write(&src, &data).expect("write source");
    let mut group = c.benchmark_group("archive");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    for (name, redact) in [("full_64MiB_redact", true), ("full_64MiB_plain", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let root = base.join(format!("archive-{i}"));
                    let a = Archive::open(&root, ArchiveOptions::default()).expect("open");
                    let mut t = synth::redact;
                    let transform: Option<&mut Transform<'_>> =
                        if redact { Some(&mut t) } else { None };
                    let start = Instant::now();
                    let r = a.ingest(&request(&src), transform).expect("ingest");
                    total += start.elapsed();
                    assert_eq!(r.appended_source_bytes, data.len() as u64);
                    std::fs::remove_dir_all(&root).expect("cleanup");
                }
                total
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&base);
}

fn incremental(c: &mut Criterion) {
    let base = scratch("incremental");
    let src = base.join("session.jsonl");
    std::fs::write(&src, synth::transcript(7, 100 << 20)).expect("write source");
    let a = Archive::open(base.join("archive"), ArchiveOptions::default()).expect("open");
    let mut redact = synth::redact;
    a.ingest(&request(&src), Some(&mut redact))
        .expect("initial archive");
    let pieces: Vec<Vec<u8>> = (0..16)
        .map(|i| synth::transcript(100 + i, 100 << 10))
        .collect();
    let mut group = c.benchmark_group("archive");
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Bytes(pieces[0].len() as u64));
    group.bench_function("append_100KiB_to_100MiB", |b| {
        let mut n = 0usize;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let piece = &pieces[n % pieces.len()];
                n += 1;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&src)
                    .expect("open");
                std::io::Write::write_all(&mut f, piece).expect("append");
                drop(f);
                let start = Instant::now();
                let r = a.ingest(&request(&src), Some(&mut redact)).expect("ingest");
                total += start.elapsed();
                assert_eq!(r.appended_source_bytes, piece.len() as u64);
            }
            total
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&base);
}

criterion_group!(benches, full, incremental);
criterion_main!(benches);
