//! `skein tools` and `skein skills` minus the output: load a session (main file and agents),
//! build the rows, totals or loops. Throughput in bytes of transcript read, single thread:
//! on a synthetic 32 MiB session written to a temp directory, and on every session of the
//! shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::de::IgnoredAny;
use skein_analysis::{AnalysisOptions, NoVisitor};
use skein_bench::{bytes_of, corpus_dir, write_synthetic_session};
use skein_core::Parser;
use skein_layout::{SessionFiles, discover};
use skein_reports::load_session;
use skein_reports::skills::{SkillTotals, SkillVisitor, skill_calls};
use skein_reports::tools::{ToolTotalsBuilder, tool_calls, tool_loops};

/// The four report kernels over `sessions`, as one criterion group.
fn kernels(c: &mut Criterion, group: &str, sessions: &[SessionFiles]) {
    let options = AnalysisOptions::default();
    let mut parser = Parser::new();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes_of(
        sessions.iter().flat_map(SessionFiles::files),
    )));
    g.bench_function("calls", |b| {
        b.iter(|| {
            let mut n = 0;
            for s in sessions {
                let l =
                    load_session::<serde_json::Value, NoVisitor>(s, &options, &mut parser, false)
                        .expect("load");
                n += tool_calls(&l).len();
            }
            black_box(n)
        });
    });
    g.bench_function("by_name", |b| {
        b.iter(|| {
            let mut totals = ToolTotalsBuilder::new();
            for s in sessions {
                let l = load_session::<IgnoredAny, NoVisitor>(s, &options, &mut parser, false)
                    .expect("load");
                for c in &tool_calls(&l) {
                    totals.add(c);
                }
            }
            black_box(totals.finish().len())
        });
    });
    g.bench_function("loops", |b| {
        b.iter(|| {
            let mut n = 0;
            for s in sessions {
                let l =
                    load_session::<serde_json::Value, NoVisitor>(s, &options, &mut parser, false)
                        .expect("load");
                n += tool_loops(&l, 3).len();
            }
            black_box(n)
        });
    });
    g.bench_function("skills", |b| {
        b.iter(|| {
            let mut totals = SkillTotals::new();
            for s in sessions {
                let l = load_session::<IgnoredAny, SkillVisitor>(s, &options, &mut parser, false)
                    .expect("load");
                for c in &skill_calls(&l, true) {
                    totals.add(c);
                }
            }
            black_box(totals.finish().len())
        });
    });
    g.finish();
}

fn tools(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_synthetic_session(
        dir.path(),
        "5e551011-0000-4000-8000-000000000000",
        32 << 20,
        42,
    );
    let synthetic = discover(&[dir.path().to_path_buf()]).sessions;
    assert_eq!(synthetic.len(), 1);
    kernels(c, "tools_synthetic_32MiB", &synthetic);

    if let Some(corpus) = corpus_dir() {
        kernels(c, "tools_corpus", &discover(&[corpus]).sessions);
    }
}

criterion_group!(benches, tools);
criterion_main!(benches);
