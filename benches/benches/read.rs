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

/// The lines of `r` that mention `"usage"`: each line split and searched, or found by one
/// search over the bytes (`ReadLines::advance_to`); and the buffer, for the next reader.
fn usage_lines<R: Read>(
    mut r: ReadLines<R>,
    finder: &memchr::memmem::Finder<'_>,
    one_search: bool,
) -> (usize, Vec<u8>) {
    let mut n = 0;
    if one_search {
        while r.advance_to(finder).expect("read") {
            n += 1;
        }
    } else {
        while r.advance().expect("read") {
            n += usize::from(finder.find(r.line().text).is_some());
        }
    }
    (n, r.into_buffer())
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
    // The file, then in memory the synthetic transcript and the corpus (`None`: the file).
    let mut inputs: Vec<(&str, Option<Vec<u8>>)> = vec![
        ("file_64MiB", None),
        ("memory_synthetic_64MiB", Some(data.clone())),
    ];
    if let Some(files) = skein_bench::corpus_contents() {
        inputs.push(("memory_corpus", Some(files.concat())));
    }
    for (input, bytes) in &inputs {
        let text = bytes.as_deref().unwrap_or(&data);
        let want = text
            .split(|&b| b == b'\n')
            .filter(|l| finder.find(l).is_some())
            .count();
        assert!(want > 0 && want < memchr::memchr_iter(b'\n', text).count());
        group.throughput(Throughput::Bytes(text.len() as u64));
        for (way, one_search) in [("each", false), ("advance_to", true)] {
            group.bench_function(format!("{input}_usage_lines_{way}"), |b| {
                b.iter(|| {
                    let src: Box<dyn Read + '_> = match bytes {
                        Some(bytes) => Box::new(&bytes[..]),
                        None => Box::new(File::open(&path).expect("open")),
                    };
                    let r = ReadLines::with_buffer(src, BLOCK, std::mem::take(&mut kept));
                    let (n, back) = usage_lines(r, &finder, one_search);
                    kept = back;
                    assert_eq!(n, want);
                    black_box(n)
                });
            });
        }
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
