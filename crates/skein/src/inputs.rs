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
use skein_store::{Input, InputMode, expand_paths};

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
    let input = skein_layout::open(path, mode)?;
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
    crate::report::warn_empty_dirs(paths, files.iter().map(|(p, _)| p.as_path()));
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
