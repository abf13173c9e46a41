//! The batch passes (`skein-passes`), throughput in bytes of input, one thread: parsing a
//! transcript into the passes' model, `prune --preset lean`, `prune --preset safe`, the
//! request snapshot, and the lean + redact pipeline, on a synthetic 64 MiB transcript
//! (`skein_bench::synthetic_transcript`) and on the shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_contents, synthetic_transcript};
use skein_passes::{
    Pass, Pipeline, Preset, PruneOptions, RedactOptions, RedactPass, SnapshotOptions, Transcript,
    prune, snapshot,
};

fn passes(c: &mut Criterion) {
    let data = synthetic_transcript(64 << 20, 42);
    let lean = PruneOptions::preset(Preset::Lean);
    let safe = PruneOptions::preset(Preset::Safe);
    let redact = RedactPass::new(&RedactOptions::default()).expect("built-in rules compile");
    let lean_redact = Pipeline::new(vec![Pass::Prune(lean.clone()), Pass::Redact(redact)]);

    let mut group = c.benchmark_group("passes");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("parse_synthetic_64MiB", |b| {
        b.iter(|| black_box(Transcript::parse(&data).entries().len()));
    });
    group.bench_function("prune_lean_synthetic_64MiB", |b| {
        b.iter(|| black_box(prune(&data, &lean).0.len()));
    });
    group.bench_function("prune_safe_synthetic_64MiB", |b| {
        b.iter(|| black_box(prune(&data, &safe).0.len()));
    });
    group.bench_function("snapshot_synthetic_64MiB", |b| {
        b.iter(|| {
            black_box(
                snapshot(&data, &SnapshotOptions::default())
                    .expect("synthetic input has prompts")
                    .0
                    .len(),
            )
        });
    });
    group.bench_function("lean_then_redact_synthetic_64MiB", |b| {
        b.iter(|| black_box(lean_redact.run(&data).expect("pipeline").bytes.len()));
    });
    if let Some(files) = corpus_contents() {
        let total: usize = files.iter().map(Vec::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("prune_lean_corpus", |b| {
            b.iter(|| {
                let mut out = 0;
                for f in &files {
                    out += prune(f, &lean).0.len();
                }
                black_box(out)
            });
        });
        group.bench_function("prune_safe_corpus", |b| {
            b.iter(|| {
                let mut out = 0;
                for f in &files {
                    out += prune(f, &safe).0.len();
                }
                black_box(out)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, passes);
criterion_main!(benches);
