//! What the machine allows a tree scan: the wall time of a program that does only the part of
//! skein's work no implementation can skip, on the same threads, so that `benches/compare.sh`
//! can print how far each goal is from it (docs/performance.md, issue 16).
//!
//!     floor MODE THREADS PATH...
//!
//! The main thread lists PATH (`skein_store::expand_paths_with`, the walk skein uses) and hands
//! each file to THREADS workers as it finds it, as `skein stats` does. Each worker reads its
//! files in skein's blocks (`skein_core::ReadLines`, one buffer per thread) and, by MODE:
//! - `read`: splits the lines and nothing more (the I/O floor on these cores);
//! - `parse`: builds simd-json's tape of every line (`SimdScratch`, as skein parses a line:
//!   stage 1, strings, tape; the value skipped with `IgnoredAny`): the floor of any reader that
//!   tells a record from an invalid line with simd-json, `stats` and the jq-style row;
//! - `usage`: parses only the lines that mention `"usage"` (skein's prefilter): the floor of
//!   `usage --no-catalog`.
//!
//! Files are read as they are: a `.jsonl.zst` in PATH would be read compressed (the bench tree
//! has none).
//!
//! Prints one line: mode, threads, wall seconds, files, bytes, lines, lines parsed as JSON.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    reason = "a measuring tool: lists and reads files, prints its figure"
)]

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Instant;

use serde::de::IgnoredAny;
use skein_core::{LineSource, ReadLines, SimdScratch};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Parse,
    Usage,
}

#[derive(Default)]
struct Counts {
    files: AtomicU64,
    bytes: AtomicU64,
    lines: AtomicU64,
    parsed: AtomicU64,
}

/// Reads one file's lines, parsing those `mode` asks for.
fn scan(
    path: &PathBuf,
    mode: Mode,
    buf: &mut Vec<u8>,
    simd: &mut SimdScratch,
    finder: &memchr::memmem::Finder<'_>,
    counts: &Counts,
) -> io::Result<()> {
    let file = std::fs::File::open(path)?;
    let mut lines =
        ReadLines::with_buffer(file, skein_core::lines::DEFAULT_BLOCK, std::mem::take(buf));
    let (mut n, mut parsed) = (0, 0);
    while lines.advance()? {
        n += 1;
        let text = lines.line().text;
        let wanted = match mode {
            Mode::Read => false,
            Mode::Parse => true,
            Mode::Usage => finder.find(text).is_some(),
        };
        if wanted && simd.from_slice::<IgnoredAny>(text).is_ok() {
            parsed += 1;
        }
    }
    counts.bytes.fetch_add(lines.consumed(), Ordering::Relaxed);
    counts.lines.fetch_add(n, Ordering::Relaxed);
    counts.parsed.fetch_add(parsed, Ordering::Relaxed);
    counts.files.fetch_add(1, Ordering::Relaxed);
    *buf = lines.into_buffer();
    Ok(())
}

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = || io::Error::other("usage: floor read|parse|usage THREADS PATH...");
    let name = args.next().unwrap_or_default();
    let mode = match name.as_str() {
        "read" => Mode::Read,
        "parse" => Mode::Parse,
        "usage" => Mode::Usage,
        _ => return Err(usage()),
    };
    let threads: usize = args
        .next()
        .and_then(|t| t.parse().ok())
        .filter(|&t| t > 0)
        .ok_or_else(usage)?;
    let paths: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(usage());
    }
    let counts = Counts::default();
    let start = Instant::now();
    let (send, receive) = mpsc::channel::<PathBuf>();
    let receive = Mutex::new(receive);
    std::thread::scope(|s| -> io::Result<()> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> io::Result<()> {
                    let (mut buf, mut simd) = (Vec::new(), SimdScratch::new());
                    let finder = memchr::memmem::Finder::new(skein_reports::usage::USAGE_MARK);
                    loop {
                        let next = receive.lock().expect("no worker panics").recv();
                        let Ok(path) = next else { return Ok(()) };
                        scan(&path, mode, &mut buf, &mut simd, &finder, &counts)?;
                    }
                })
            })
            .collect();
        skein_store::expand_paths_with(&paths, |entry| {
            if let Ok(p) = entry {
                // The workers outlive the walk: a send cannot fail while it runs.
                let _ = send.send(p);
            }
        });
        drop(send);
        for w in workers {
            w.join().expect("no worker panics")?;
        }
        Ok(())
    })?;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{name} {threads} {wall:.4} {} {} {} {}",
        counts.files.into_inner(),
        counts.bytes.into_inner(),
        counts.lines.into_inner(),
        counts.parsed.into_inner()
    );
    Ok(())
}
