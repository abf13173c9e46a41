//! One line at a time, the line parses `skein stats` chooses between, throughput in bytes of
//! lines: simd-json's tape (`tape`, stage 1 and 2), the structural index alone
//! (`structural_index`, [`skein_core::structural`]), the index checked by the walk
//! (`lazy_document`), and the whole envelope parse (`envelope`, `Parser::parse`: off the index
//! where it vouches for the line, else off the tape; `envelope_without_texts`: the same, the
//! texts of prompts and blocks left out as `skein stats` leaves them, `Parser::set_texts`;
//! `envelope_off_tape`: every line off the tape, as before stop 35). On a synthetic 64 MiB
//! transcript and on the shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_contents, synthetic_transcript};
use skein_core::lazy::Lazy;
use skein_core::structural::{Simd, Structure};
use skein_core::{LineSource, Parser, SliceLines};

fn lines_of(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut source = SliceLines::new(data);
    while source.advance().expect("in memory") {
        out.push(source.line().text.to_vec());
    }
    out
}

/// A benchmark of `read` over every line; what it returns is summed, so that nothing is
/// optimized away.
fn each_line(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    lines: &[Vec<u8>],
    mut read: impl FnMut(&[u8]) -> usize,
) {
    group.bench_function(name, |b| {
        b.iter(|| black_box(lines.iter().map(|l| read(l)).sum::<usize>()));
    });
}

fn group(c: &mut Criterion, name: &str, lines: &[Vec<u8>]) {
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group(format!("parse_{name}"));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    let mut parser = Parser::new();
    each_line(&mut group, "tape", lines, |l| {
        parser.parse_tape(l, None, <[_]>::len).unwrap_or(0)
    });
    let mut structure = Structure::new();
    each_line(&mut group, "structural_index", lines, |l| {
        if structure.index(l) {
            structure.idx.len()
        } else {
            0
        }
    });
    // Each level of vector instructions this CPU runs (the line above takes the widest).
    for simd in Simd::all() {
        let name = format!("structural_index_{simd:?}").to_lowercase();
        each_line(&mut group, &name, lines, |l| {
            if structure.index_with(l, simd) {
                structure.idx.len()
            } else {
                0
            }
        });
    }
    let mut lazy = Lazy::new();
    each_line(&mut group, "lazy_document", lines, |l| {
        usize::from(lazy.document(l).is_some())
    });
    for (name, index, texts) in [
        ("envelope", true, true),
        ("envelope_without_texts", true, false),
        ("envelope_off_tape", false, true),
    ] {
        parser.set_index(index);
        parser.set_texts(texts);
        each_line(&mut group, name, lines, |l| {
            parser
                .parse(l)
                .map_or(0, |p| p.envelope.uuid.get().map_or(0, str::len))
        });
    }
    group.finish();
}

fn parse(c: &mut Criterion) {
    group(
        c,
        "synthetic_64MiB",
        &lines_of(&synthetic_transcript(64 << 20, 42)),
    );
    if let Some(files) = corpus_contents() {
        let lines: Vec<Vec<u8>> = files.iter().flat_map(|f| lines_of(f)).collect();
        group(c, "corpus", &lines);
    }
}

criterion_group!(benches, parse);
criterion_main!(benches);
