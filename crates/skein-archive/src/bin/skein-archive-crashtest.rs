//! Test helper for `tests/crash.rs`, not a user tool: grows a transcript with a deterministic
//! stream of lines (in pieces that split lines) and archives it after every piece, as a main
//! session and as a subagent, until killed. Now and then it replaces the source by a copy (same
//! bytes, new inode), which makes the archive start a new version file.
//!
//! With `--bulk`, archives every file of a directory instead (even positions as main sessions,
//! odd ones as subagents) from three threads through one [`skein_archive::Batch`], committing
//! every few sources, until done or killed (`tests/it/crash_bulk.rs`).
//!
//! Usage: `skein-archive-crashtest ARCHIVE_DIR SOURCE SEED`,
//! `skein-archive-crashtest --bulk ARCHIVE_DIR SOURCE_DIR`
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use skein_archive::{Archive, ArchiveOptions, IngestRequest, Kind};

/// Line `n` of the stream.
fn line(n: u64) -> Vec<u8> {
    let pad = if n % 211 == 7 {
        40_000
    } else {
        (n * 7919 % 900) as usize
    };
    format!(
        "{{\"type\":\"user\",\"n\":{n},\"timestamp\":\"2026-01-05T14:03:22Z\",\"pad\":\"{}\"}}\n",
        "ab".repeat(pad / 2)
    )
    .into_bytes()
}

/// `len` bytes of the stream starting at byte `from`.
fn stream(from: u64, len: usize) -> Vec<u8> {
    let (mut pos, mut n, mut out) = (0u64, 0u64, Vec::with_capacity(len));
    while out.len() < len {
        let l = line(n);
        let end = pos + l.len() as u64;
        if end > from {
            let skip = from.saturating_sub(pos) as usize;
            let take = (l.len() - skip).min(len - out.len());
            out.extend_from_slice(&l[skip..skip + take]);
        }
        pos = end;
        n += 1;
    }
    out
}

/// The archive key of the `i`-th source file of a bulk run.
fn bulk_kind(i: usize, stem: &str) -> Kind {
    if i.is_multiple_of(2) {
        Kind::MainSession {
            session_id: stem.to_owned(),
        }
    } else {
        Kind::Subagent {
            agent_type: "general-purpose".into(),
            agent_id: stem.to_owned(),
            parent_session: Some("bulk-session".into()),
            tool_use_id: None,
        }
    }
}

fn bulk(dir: &str, sources: &str) -> Result<(), String> {
    let archive = Archive::open(dir, ArchiveOptions::default()).map_err(|e| e.to_string())?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(sources)
        .map_err(|e| e.to_string())?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    let batch = archive.batch().map_err(|e| e.to_string())?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(path) = files.get(i) else {
                            return Ok(());
                        };
                        let stem = path
                            .file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let req = IngestRequest {
                            source: path,
                            kind: bulk_kind(i, &stem),
                            first_timestamp: Some("2026-01-05T14:03:22Z"),
                            meta: None,
                        };
                        batch.ingest(&req, None).map_err(|e| e.to_string())?;
                        if batch.len() >= 5 {
                            batch.commit().map_err(|e| e.to_string())?;
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().map_err(|_| "worker panicked".to_owned())?)
    })?;
    batch.commit().map_err(|e| e.to_string())?;
    Ok(())
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, dir, sources] = args.as_slice()
        && flag == "--bulk"
    {
        return bulk(dir, sources);
    }
    let [_, dir, source, seed] = args.as_slice() else {
        return Err("usage: skein-archive-crashtest ARCHIVE_DIR SOURCE SEED".into());
    };
    let source = PathBuf::from(source);
    let mut rng: u64 = seed.parse::<u64>().map_err(|e| e.to_string())? * 2 + 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let archive = Archive::open(dir, ArchiveOptions::default()).map_err(|e| e.to_string())?;
    let kinds = [
        Kind::MainSession {
            session_id: "crash-session".into(),
        },
        Kind::Subagent {
            agent_type: "general-purpose".into(),
            agent_id: "acrash1".into(),
            parent_session: Some("crash-session".into()),
            tool_use_id: Some("toolu_crash".into()),
        },
    ];
    for _ in 0..5000 {
        let have = std::fs::metadata(&source).map_or(0, |m| m.len());
        if have > 32 << 20 {
            break;
        }
        let piece = stream(have, (next() % 3000 + 1) as usize);
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&source)
            .map_err(|e| e.to_string())?;
        f.write_all(&piece).map_err(|e| e.to_string())?;
        drop(f);
        if next() % 40 == 0 {
            let copy = source.with_extension("copy");
            std::fs::copy(&source, &copy).map_err(|e| e.to_string())?;
            std::fs::rename(&copy, &source).map_err(|e| e.to_string())?;
        }
        for kind in &kinds {
            let req = IngestRequest {
                source: &source,
                kind: kind.clone(),
                first_timestamp: Some("2026-01-05T14:03:22Z"),
                meta: None,
            };
            archive.ingest(&req, None).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "skein-archive-crashtest: {e}");
            ExitCode::FAILURE
        }
    }
}
