//! Reading a file through the page cache, throughput in bytes: a synthetic 64 MiB transcript in
//! a temporary file (warm after the first iteration), split into lines by `ReadLines` (what
//! every streaming pass does), and read raw in 128 KiB blocks into a buffer placed at the start
//! of a page, then 16 bytes past it (where a heap buffer of that size starts). The two raw rows
//! are the kernel's copy with and without its page alignment (docs/performance.md, "Reads that
//! land in their page"): three times apart on the AMD EPYC machines of stop 34. The
//! `usage_lines` rows find the lines that mention `"usage"` as `skein usage` reads a file: each
//! line split and searched, then one search over the bytes (`ReadLines::advance_to`); from the
//! file, and from memory (the synthetic transcript, then the shared corpus), where the
//! kernel's copy does not hide the difference.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skein_bench::synthetic_transcript;
use skein_core::page::in_page_start;
use skein_core::{LineSource, ReadLines};

const BLOCK: usize = 128 << 10;

/// Reads `file` whole in blocks of `BLOCK` landing `off` bytes past the start of a page, and
/// counts its newlines.
fn raw(file: &mut File, buf: &mut [u8], off: usize) -> usize {
    let at = in_page_start(buf, 0, 0) + off;
    let mut lines = 0;
    loop {
        let n = file.read(&mut buf[at..at + BLOCK]).expect("read");
        if n == 0 {
            return lines;
        }
        lines += memchr::memchr_iter(b'\n', &buf[at..at + n]).count();
    }
}

fn read(c: &mut Criterion) {
    let data = synthetic_transcript(64 << 20, 42);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    File::create(&path)
        .and_then(|mut f| f.write_all(&data))
        .expect("write");
    let expected = memchr::memchr_iter(b'\n', &data).count();
    let mut group = c.benchmark_group("read");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(data.len() as u64));
    let mut kept = Vec::new();
    group.bench_function("file_64MiB_lines", |b| {
        b.iter(|| {
            let file = File::open(&path).expect("open");
            let mut r = ReadLines::with_buffer(file, BLOCK, std::mem::take(&mut kept));
            let mut n = 0;
            while r.next_line().expect("read").is_some() {
                n += 1;
            }
            kept = r.into_buffer();
            assert_eq!(n, expected);
            black_box(n)
        });
    });
    let finder = memchr::memmem::Finder::new(skein_reports::usage::USAGE_MARK);
    let usage_lines = data
        .split(|&b| b == b'\n')
        .filter(|l| finder.find(l).is_some())
        .count();
    assert!(
        usage_lines > 0 && usage_lines < expected,
        "some lines, not all"
    );
    group.bench_function("file_64MiB_usage_lines_each", |b| {
        b.iter(|| {
            let file = File::open(&path).expect("open");
            let mut r = ReadLines::with_buffer(file, BLOCK, std::mem::take(&mut kept));
            let mut n = 0;
            while r.advance().expect("read") {
                n += usize::from(finder.find(r.line().text).is_some());
            }
            kept = r.into_buffer();
            assert_eq!(n, usage_lines);
            black_box(n)
        });
    });
    group.bench_function("file_64MiB_usage_lines_advance_to", |b| {
        b.iter(|| {
            let file = File::open(&path).expect("open");
            let mut r = ReadLines::with_buffer(file, BLOCK, std::mem::take(&mut kept));
            let mut n = 0;
            while r.advance_to(&finder).expect("read") {
                n += 1;
            }
            kept = r.into_buffer();
            assert_eq!(n, usage_lines);
            black_box(n)
        });
    });
    let mut inputs = vec![("synthetic_64MiB", data.clone())];
    if let Some(files) = skein_bench::corpus_contents() {
        inputs.push(("corpus", files.concat()));
    }
    for (input, bytes) in &inputs {
        let want = bytes
            .split(|&b| b == b'\n')
            .filter(|l| finder.find(l).is_some())
            .count();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("memory_{input}_usage_lines_each"), |b| {
            b.iter(|| {
                let mut r = ReadLines::with_buffer(&bytes[..], BLOCK, std::mem::take(&mut kept));
                let mut n = 0;
                while r.advance().expect("in memory") {
                    n += usize::from(finder.find(r.line().text).is_some());
                }
                kept = r.into_buffer();
                assert_eq!(n, want);
                black_box(n)
            });
        });
        group.bench_function(format!("memory_{input}_usage_lines_advance_to"), |b| {
            b.iter(|| {
                let mut r = ReadLines::with_buffer(&bytes[..], BLOCK, std::mem::take(&mut kept));
                let mut n = 0;
                while r.advance_to(&finder).expect("in memory") {
                    n += 1;
                }
                kept = r.into_buffer();
                assert_eq!(n, want);
                black_box(n)
            });
        });
    }
    group.throughput(Throughput::Bytes(data.len() as u64));
    let mut buf = vec![0u8; BLOCK + 2 * 4096];
    for (name, off) in [
        ("file_64MiB_raw_in_page", 0),
        ("file_64MiB_raw_16_bytes_off", 16),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut file = File::open(&path).expect("open");
                let n = raw(&mut file, &mut buf, off);
                assert_eq!(n, expected);
                black_box(n)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
