//! `skein records`' per-line work (`Projection::write`: the skim of every other key's long
//! values, simd-json's tape of what is left, the fields named written as JSON), throughput in
//! bytes, beside the envelope parse every `stats` line gets: on a synthetic 64 MiB transcript
//! and on the shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_contents, synthetic_transcript};
use skein_core::{LineSource, Parser, Projection, SliceLines};

const FIELDS: &[&str] = &["type", "uuid", "parentUuid"];

/// Projects every line of every input; the bytes written.
fn project(
    inputs: &[&[u8]],
    projection: &Projection,
    parser: &mut Parser,
    out: &mut Vec<u8>,
) -> usize {
    let mut written = 0;
    for data in inputs {
        let mut lines = SliceLines::new(data);
        while lines.advance().expect("in memory") {
            out.clear();
            let _ = projection.write(parser, lines.line().text, b"", out);
            written += out.len();
        }
    }
    written
}

/// Parses every line's envelope, as `stats` does; the records.
fn envelopes(inputs: &[&[u8]], parser: &mut Parser) -> usize {
    let mut records = 0;
    for data in inputs {
        let mut lines = SliceLines::new(data);
        while lines.advance().expect("in memory") {
            records += usize::from(parser.parse(lines.line().text).is_ok());
        }
    }
    records
}

fn records(c: &mut Criterion) {
    let synthetic = synthetic_transcript(64 << 20, 42);
    let corpus = corpus_contents();
    let projection = Projection::new(FIELDS).expect("fields");
    let mut parser = Parser::new();
    let mut out = Vec::new();
    let mut group = c.benchmark_group("records");
    group.sample_size(10);
    let mut inputs: Vec<(&str, Vec<&[u8]>)> = vec![("synthetic_64MiB", vec![&synthetic[..]])];
    if let Some(files) = &corpus {
        inputs.push((
            "corpus_all_files",
            files.iter().map(Vec::as_slice).collect(),
        ));
    }
    for (name, data) in &inputs {
        let total: usize = data.iter().map(|d| d.len()).sum();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function(format!("{name}_project"), |b| {
            b.iter(|| black_box(project(data, &projection, &mut parser, &mut out)));
        });
        group.bench_function(format!("{name}_envelope_parse"), |b| {
            b.iter(|| black_box(envelopes(data, &mut parser)));
        });
    }
    group.finish();
}

criterion_group!(benches, records);
criterion_main!(benches);
