//! `skein tree` and `skein show` end to end (load the session, link its subagents, build the
//! node list / drawing / Markdown), throughput in bytes of the session's files: on a
//! synthetic 32 MiB transcript written to a temporary directory, and on the largest session
//! of the shared corpus (main transcript plus subagents) when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use serde::de::IgnoredAny;
use skein_analysis::AnalysisOptions;
use skein_bench::{bytes_of, corpus_dir, write_synthetic_session};
use skein_core::Parser;
use skein_layout::{SessionFiles, discover};
use skein_reports::load_session;
use skein_reports::show::{ShowOptions, ShowVisitor, render_session};
use skein_reports::tree::{TreeOptions, TreeVisitor, draw_tree, link_session, tree_nodes};

fn session_bytes(s: &SessionFiles) -> u64 {
    bytes_of(s.files())
}

fn bench_session(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    s: &SessionFiles,
) {
    group.throughput(Throughput::Bytes(session_bytes(s)));
    let mut parser = Parser::new();
    let plain = AnalysisOptions::default();
    let with_tools = AnalysisOptions {
        node_tools: true,
        ..AnalysisOptions::default()
    };
    group.bench_function(format!("tree_nodes_{name}"), |b| {
        b.iter(|| {
            let loaded = load_session::<IgnoredAny, TreeVisitor>(s, &plain, &mut parser, false)
                .expect("load");
            let links = link_session(&loaded, |v| &v.links);
            black_box(tree_nodes(&loaded, &links).len())
        });
    });
    group.bench_function(format!("tree_draw_{name}"), |b| {
        b.iter(|| {
            let loaded = load_session::<IgnoredAny, TreeVisitor>(s, &plain, &mut parser, false)
                .expect("load");
            let links = link_session(&loaded, |v| &v.links);
            black_box(draw_tree(&loaded, &links, &TreeOptions::default()).len())
        });
    });
    group.bench_function(format!("show_{name}"), |b| {
        b.iter(|| {
            let loaded =
                load_session::<IgnoredAny, ShowVisitor>(s, &with_tools, &mut parser, false)
                    .expect("load");
            let links = link_session(&loaded, |v| &v.links);
            black_box(
                render_session(&loaded, &links, &ShowOptions::default())
                    .expect("render")
                    .len(),
            )
        });
    });
}

/// The corpus session with the most bytes (main transcript plus agents).
fn largest_corpus_session(dir: &Path) -> Option<SessionFiles> {
    discover(&[dir.to_path_buf()])
        .sessions
        .into_iter()
        .filter(|s| s.main.is_some())
        .max_by_key(session_bytes)
}

fn render(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    group.sample_size(10);

    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_synthetic_session(
        dir.path(),
        "00000000-0000-4000-8000-00000000beef",
        32 << 20,
        42,
    );
    let synthetic = discover(std::slice::from_ref(&file))
        .sessions
        .into_iter()
        .next()
        .expect("one session");
    bench_session(&mut group, "synthetic_32MiB", &synthetic);

    if let Some(dir) = corpus_dir() {
        let s = largest_corpus_session(&dir).expect("the corpus has a main session");
        bench_session(&mut group, "corpus_largest", &s);
    }
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
