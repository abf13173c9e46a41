//! Read + graph + pairing + usage (the work of `skein stats`: tools counted by id,
//! `tool_counts_only`), throughput in bytes: on a synthetic 64 MiB transcript (streamed in 2 MiB
//! blocks and from a slice) and on the shared corpus when present, where
//! `corpus_all_files_full_tools` keeps every tool use and result as the reports do. Also the task list over the same bytes (`TaskTracker::lines`, what the
//! hook's goal reminder feeds new lines to).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_analysis::{AnalysisOptions, TaskTracker, analyze_with};
use skein_bench::{corpus_contents, synthetic_transcript};
use skein_core::{Parser, ReadLines, SliceLines};

fn stats(c: &mut Criterion) {
    let data = synthetic_transcript(64 << 20, 42);
    let options = AnalysisOptions {
        tool_counts_only: true,
        ..AnalysisOptions::default()
    };
    let full = AnalysisOptions::default();
    let mut parser = Parser::new();
    let mut group = c.benchmark_group("stats");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("synthetic_64MiB_stream", |b| {
        b.iter(|| {
            let a = analyze_with("bench", ReadLines::new(&data[..]), &options, &mut parser)
                .expect("in memory");
            black_box(a.stats.tools.paired)
        });
    });
    // The same stream in the 2 MiB blocks skein read before stop 33, beside the default block
    // in the same run (in memory, so no kernel copy: 761 against 845 MiB/s in stop 33's run,
    // docs/performance.md).
    group.bench_function("synthetic_64MiB_stream_2MiB_blocks", |b| {
        b.iter(|| {
            let lines = ReadLines::with_block_size(&data[..], 2 << 20);
            let a = analyze_with("bench", lines, &options, &mut parser).expect("in memory");
            black_box(a.stats.tools.paired)
        });
    });
    group.bench_function("synthetic_64MiB_slice", |b| {
        b.iter(|| {
            let a = analyze_with("bench", SliceLines::new(&data), &options, &mut parser)
                .expect("in memory");
            black_box(a.stats.tools.paired)
        });
    });
    if let Some(files) = corpus_contents() {
        let total: usize = files.iter().map(Vec::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("corpus_all_files", |b| {
            b.iter(|| {
                let mut paired = 0;
                for f in &files {
                    let a = analyze_with("bench", SliceLines::new(f), &options, &mut parser)
                        .expect("in memory");
                    paired += a.stats.tools.paired;
                }
                black_box(paired)
            });
        });
        group.bench_function("corpus_all_files_full_tools", |b| {
            b.iter(|| {
                let mut paired = 0;
                for f in &files {
                    let a = analyze_with("bench", SliceLines::new(f), &full, &mut parser)
                        .expect("in memory");
                    paired += a.stats.tools.paired;
                }
                black_box(paired)
            });
        });
    }
    group.finish();
}

fn tasks(c: &mut Criterion) {
    let data = synthetic_transcript(64 << 20, 42);
    let mut group = c.benchmark_group("tasks");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("synthetic_64MiB_lines", |b| {
        b.iter(|| {
            let mut t = TaskTracker::new();
            t.lines(&data);
            black_box(t.current().map(|l| l.items.len()))
        });
    });
    if let Some(files) = corpus_contents() {
        let total: usize = files.iter().map(Vec::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("corpus_all_files", |b| {
            b.iter(|| {
                let mut n = 0;
                for f in &files {
                    let mut t = TaskTracker::new();
                    t.lines(f);
                    n += t.current().map_or(0, |l| l.items.len());
                }
                black_box(n)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, stats, tasks);
criterion_main!(benches);
