//! Turning path arguments into line sources, and running a per-file job over them in parallel
//! with deterministic output order.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::{Context, Result};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;

use skein_core::lines::DEFAULT_BLOCK;
use skein_core::{LineSource, Parser, ReadLines, SliceLines};
use skein_store::{Input, InputMode, expand_paths, is_transcript_name, open_input};

/// Makes every command read `.zst` files through the archive's reader: plain zstd files decode
/// as before, and files of a skein archive are read up to their committed length, with the
/// trained dictionary their frames name.
pub(crate) fn register_archive_reader() {
    skein_store::input::set_zstd_opener(open_zst);
}

fn open_zst(path: &Path) -> std::io::Result<Box<dyn std::io::Read + Send>> {
    skein_archive::open_archived(path).map_err(|e| match e {
        // The caller names the path already.
        skein_archive::ArchiveError::Io { source, .. } => source,
        skein_archive::ArchiveError::Corrupt { path: p, reason } if p == path => {
            std::io::Error::other(reason)
        }
        other => std::io::Error::other(other.to_string()),
    })
}

/// A transcript file name without its `.jsonl.zst` or `.jsonl` extension.
pub(crate) fn transcript_stem(name: &str) -> Option<&str> {
    name.strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))
}

/// The legacy `agent-*.jsonl[.zst]` transcripts directly in `dir`, sorted (none when it cannot
/// be listed).
pub(crate) fn legacy_agent_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut legacy: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
                && is_transcript_name(p)
        })
        .collect();
    legacy.sort();
    legacy
}

thread_local! {
    /// Each worker thread reuses one read buffer and one parser across files.
    static SCRATCH: RefCell<(Vec<u8>, Parser)> = RefCell::new((Vec::new(), Parser::new()));
}

/// Opens `path` and calls `f` with its line source and this thread's parser.
pub(crate) fn with_lines<T>(
    path: &Path,
    mmap: bool,
    f: impl FnOnce(&mut dyn LineSource, &mut Parser) -> std::io::Result<T>,
) -> Result<T> {
    let mode = if mmap {
        InputMode::Mmap
    } else {
        InputMode::Read
    };
    let input = open_input(path, mode)?;
    let shown = path.display();
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        let (buf, parser) = &mut *scratch;
        match input {
            Input::Mapped(map) => {
                f(&mut SliceLines::new(&map), parser).with_context(|| format!("{shown}"))
            }
            Input::Stream(r) => {
                let mut lines = ReadLines::with_buffer(r, DEFAULT_BLOCK, std::mem::take(buf));
                let result = f(&mut lines, parser).with_context(|| format!("{shown}"));
                *buf = lines.into_buffer();
                result
            }
        }
    })
}

/// Expands `paths` and runs `job` on every file on `threads` workers; `emit` receives each
/// result in input order as soon as it and all before it are done.
pub(crate) fn for_each_file<T: Send>(
    paths: &[PathBuf],
    threads: Option<usize>,
    job: impl Fn(&Path) -> Result<T> + Sync,
    mut emit: impl FnMut(&Path, Result<T>) -> Result<()>,
) -> Result<()> {
    let mut files = Vec::new();
    for entry in expand_paths(paths) {
        match entry {
            Ok(p) => files.push((p, None)),
            Err(e) => files.push((e.path.clone(), Some(anyhow::Error::new(e)))),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let (tx, rx) = mpsc::channel::<(usize, Result<T>)>();
    let mut pending: BTreeMap<usize, Result<T>> = BTreeMap::new();
    let mut next = 0;
    let mut outcome = Ok(());
    pool.in_place_scope(|scope| {
        let files = &files;
        let job = &job;
        scope.spawn(move |_| {
            files
                .par_iter()
                .enumerate()
                .for_each_with(tx, |tx, (i, (path, err))| {
                    let r = match err {
                        Some(e) => Err(anyhow::anyhow!("{e:#}")),
                        None => job(path),
                    };
                    let _ = tx.send((i, r));
                });
        });
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&next) {
                if outcome.is_ok() {
                    outcome = emit(&files[next].0, r);
                }
                next += 1;
            }
        }
    });
    outcome
}
