//! `skein check` minus the output: load each session (main file and agents) with the check
//! visitor and produce its diagnostics. Throughput in bytes of transcript read, single thread:
//! on a synthetic 32 MiB session written to a temp directory, and on every session of the
//! shared corpus when present.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::{corpus_dir, synthetic_transcript};
use skein_core::Parser;
use skein_reports::check::check_session;
use skein_sessions::{SessionFiles, discover};

fn bytes_of(sessions: &[SessionFiles]) -> u64 {
    sessions
        .iter()
        .flat_map(SessionFiles::files)
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

fn sessions(c: &mut Criterion, name: &str, sessions: &[SessionFiles]) {
    let mut parser = Parser::new();
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes_of(sessions)));
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

#[allow(clippy::print_stderr, reason = "a skipped corpus is noted, not failed")]
fn check(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("projects/-bench");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join("c4ec4000-0000-4000-8000-000000000000.jsonl"),
        synthetic_transcript(32 << 20, 42),
    )
    .expect("write synthetic session");
    let synthetic = discover(&[dir.path().to_path_buf()]).sessions;
    assert_eq!(synthetic.len(), 1);
    sessions(c, "synthetic_32MiB", &synthetic);

    match corpus_dir() {
        Some(corpus) => sessions(c, "corpus", &discover(&[corpus]).sessions),
        None => eprintln!("note: corpus not found (set SKEIN_CORPUS); corpus benchmark skipped"),
    }
}

criterion_group!(benches, check);
criterion_main!(benches);
