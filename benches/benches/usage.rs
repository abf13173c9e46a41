//! The work of `skein usage` (prefilter + parse of usage lines + per-file grouping + global
//! deduplication + daily rows with cost), throughput in bytes, one thread: on a synthetic
//! 64 MiB transcript, on the shared corpus held in memory, and on the corpus read from disk
//! (page cache) session by session as the command does (`corpus_in_memory_tape`: usage lines
//! read off their skimmed tape only, never off their structural index;
//! `corpus_in_memory_whole`: parsed whole by serde); and `usage blocks` (the same work,
//! then the requests in 5-hour billing blocks with the active block's figures). The end-to-end
//! comparison with ccusage on ~1 GB is `benches/ccusage_compare.sh`.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_contents, corpus_dir, synthetic_transcript};
use skein_core::SliceLines;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{
    BlockOptions, SessionScan, Source, TokenLimit, UsageBuilder, UsageOptions, UsageScanner,
};

/// The report's total tokens (what each iteration keeps from being optimised away).
fn total_tokens(builder: UsageBuilder, options: &UsageOptions, pricing: &PricingTable) -> u64 {
    builder.finish(options, pricing).totals.figures.total_tokens
}

/// `data` scanned as one session's transcript, in a builder.
fn one_session(scanner: &mut UsageScanner, data: &[u8]) -> UsageBuilder {
    let mut scan = SessionScan::default();
    scanner
        .scan_lines(SliceLines::new(data), "bench", Source::Main, &mut scan)
        .expect("in memory");
    let mut builder = UsageBuilder::new();
    builder.add_session("bench", "bench", scan);
    builder
}

fn usage(c: &mut Criterion) {
    let pricing = PricingTable::embedded();
    let options = UsageOptions::default();
    let mut scanner = UsageScanner::new();
    let mut group = c.benchmark_group("usage");
    group.sample_size(10);

    let data = synthetic_transcript(64 << 20, 42);
    {
        let mut scan = SessionScan::default();
        scanner
            .scan_lines(SliceLines::new(&data), "bench", Source::Main, &mut scan)
            .expect("in memory");
        assert!(
            !scan.copies.is_empty(),
            "the synthetic transcript has usage"
        );
    }
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("synthetic_64MiB_slice", |b| {
        b.iter(|| {
            black_box(total_tokens(
                one_session(&mut scanner, &data),
                &options,
                &pricing,
            ))
        });
    });

    // Blocks: scan, deduplicate, price, sort and cut into blocks (the synthetic sessions
    // spread over 28 days); the throughput is in bytes of transcript.
    let blocks = BlockOptions {
        length_ms: skein_reports::usage::blocks::DEFAULT_BLOCK_MS,
        now_ms: skein_core::time::parse_ms("2026-05-28T12:00:00Z").expect("time"),
        range: skein_core::time::DateRange::default(),
        zone: skein_core::time::Zone::utc(),
        gaps: true,
        active_only: false,
        token_limit: Some(TokenLimit::Max),
    };
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("blocks_synthetic_64MiB_slice", |b| {
        b.iter(|| {
            let r = one_session(&mut scanner, &data).finish_blocks(&blocks, &pricing);
            assert!(r.rows.len() > 10, "several blocks");
            black_box(r.totals.figures.total_tokens)
        });
    });

    if let Some(files) = corpus_contents() {
        let total: usize = files.iter().map(Vec::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        // The scan as the command runs it (usage lines read off their index, else their skimmed
        // tape), off the skimmed tape alone, and with every usage line parsed whole by serde.
        for (name, mut scanner) in [
            ("corpus_in_memory", UsageScanner::new()),
            ("corpus_in_memory_tape", UsageScanner::tape_only()),
            ("corpus_in_memory_whole", UsageScanner::whole()),
        ] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut builder = UsageBuilder::new();
                    for (i, f) in files.iter().enumerate() {
                        let mut scan = SessionScan::default();
                        scanner
                            .scan_lines(SliceLines::new(f), "bench", Source::Main, &mut scan)
                            .expect("in memory");
                        builder.add_session(&i.to_string(), "corpus", scan);
                    }
                    black_box(total_tokens(builder, &options, &pricing))
                });
            });
        }
        let dir = corpus_dir().expect("corpus");
        let sessions = skein_layout::discover(&[dir]).sessions;
        group.bench_function("corpus_sessions_from_disk", |b| {
            b.iter(|| {
                let mut builder = UsageBuilder::new();
                for s in &sessions {
                    let scan = scanner.scan_session(s, false).expect("readable");
                    builder.add(s, scan);
                }
                black_box(total_tokens(builder, &options, &pricing))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, usage);
criterion_main!(benches);
