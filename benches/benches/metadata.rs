//! The archive's metadata pass (what `skein archive` reads a session for while its frame is
//! compressed, and the hook for each turn), throughput in bytes, on a synthetic 64 MiB
//! transcript and on the shared corpus when present:
//!
//! * `*_skim`: `skein_app::meta_read::feed_lines_with`, each line skimmed of the bulky values the
//!   collector never reads (`skein_core::skim`) before simd-json parses it;
//! * `*_whole`: the same collector fed every line parsed whole, the pass before the skim;
//! * `skim_only`: the skim alone (`Skim::reduce` of every line).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_app::MetaCollector;
use skein_app::meta::SKIM;
use skein_bench::{corpus_contents, synthetic_transcript};
use skein_core::{LineSource, Parser, Skim, SliceLines};

/// The metadata collector of `data`, with the metadata's skim or every line parsed whole.
fn collected(data: &[u8], parser: &mut Parser, skim: Option<Skim>) -> MetaCollector {
    let mut c = MetaCollector::new();
    let lines = SliceLines::new(data);
    skein_app::meta_read::feed_lines_with(&mut c, lines, parser, skim).expect("in memory");
    c
}

fn metadata(c: &mut Criterion) {
    let mut inputs = vec![("synthetic_64MiB", synthetic_transcript(64 << 20, 42))];
    if let Some(files) = corpus_contents() {
        inputs.push(("corpus", files.concat()));
    }
    let mut parser = Parser::new();
    let mut group = c.benchmark_group("metadata");
    group.sample_size(10);
    for (name, data) in &inputs {
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.bench_function(format!("{name}_skim"), |b| {
            b.iter(|| black_box(collected(data, &mut parser, Some(SKIM)).meta().tool_calls));
        });
        group.bench_function(format!("{name}_whole"), |b| {
            b.iter(|| black_box(collected(data, &mut parser, None).meta().tool_calls));
        });
        group.bench_function(format!("{name}_skim_only"), |b| {
            let mut out = Vec::new();
            b.iter(|| {
                let mut lines = SliceLines::new(data);
                let mut dropped = 0;
                while lines.advance().expect("in memory") {
                    dropped += usize::from(SKIM.reduce(lines.line().text, &mut out));
                }
                dropped
            });
        });
    }
    group.finish();
}

criterion_group!(benches, metadata);
criterion_main!(benches);
