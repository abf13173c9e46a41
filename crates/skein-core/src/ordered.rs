//! Items worked on several threads and handed to one writer in input order: what is written
//! then does not depend on the thread count or on timing, and the writer runs while the next
//! items are worked on (the export's sessions, the reports' sessions and files).
//!
//! Workers take the next item from a shared counter but wait while they are more than a
//! window of items ahead of the writer, so a slow item holds back the workers instead of
//! letting finished results pile up in memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

/// Items each worker may be ahead of the writer.
const AHEAD_PER_THREAD: usize = 2;

/// A thread count as commands take it (`--threads`, `-j`): 0 means one per core.
pub fn threads_or_cores(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
}

/// Calls `work(state, item)` for every item on `threads` threads (0: one per core; each
/// thread's `state` made by `init`, e.g. a parser) and `write` with each result in the order
/// of `items`. Stops at the first error (of `work` or `write`, whichever comes first in item
/// order); a caller that wants to go on past a failed item returns its error inside `T`.
pub fn ordered<I: Sync, S, T: Send, E: Send>(
    items: &[I],
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &I) -> Result<T, E> + Sync,
    mut write: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads_or_cores(threads).min(items.len());
    if threads <= 1 {
        let mut state = init();
        for i in items {
            write(work(&mut state, i)?)?;
        }
        return Ok(());
    }
    let window = threads * AHEAD_PER_THREAD;
    let next = AtomicUsize::new(0);
    // How many results the writer has taken, and whether to stop; readers wait on `moved`.
    let written = Mutex::new(0usize);
    let moved = Condvar::new();
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<T, E>)>(window);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, written, moved, stop) = (&next, &written, &moved, &stop);
            let (init, work) = (&init, &work);
            scope.spawn(move || {
                let mut state = init();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(k) else { break };
                    {
                        let mut w = written.lock().unwrap_or_else(PoisonError::into_inner);
                        while k >= *w + window && !stop.load(Ordering::Relaxed) {
                            w = moved.wait(w).unwrap_or_else(PoisonError::into_inner);
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let r = work(&mut state, item);
                    if tx.send((k, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        let mut outcome = Ok(());
        'recv: for (k, r) in &rx {
            pending.insert(k, r);
            while let Some(r) = pending.remove(&want) {
                want += 1;
                outcome = r.and_then(&mut write);
                *written.lock().unwrap_or_else(PoisonError::into_inner) = want;
                moved.notify_all();
                if outcome.is_err() {
                    break 'recv;
                }
            }
        }
        if outcome.is_err() {
            // Under the lock, so that no reader misses it between its check and its wait.
            let _w = written.lock().unwrap_or_else(PoisonError::into_inner);
            stop.store(true, Ordering::Relaxed);
            moved.notify_all();
        }
        // Readers blocked on a full channel see it closed.
        drop(rx);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_threads_means_one_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(threads_or_cores(0), cores);
        assert_eq!(threads_or_cores(3), 3);
    }

    fn run(n: usize, threads: usize, fail_at: Option<usize>) -> (Vec<usize>, Result<(), String>) {
        let items: Vec<usize> = (0..n).collect();
        let mut seen = Vec::new();
        let r = ordered(
            &items,
            threads,
            || (),
            |(), &i| {
                // Later items finish first, so the writer must reorder.
                std::thread::sleep(std::time::Duration::from_micros(((n - i) % 7) as u64 * 50));
                if Some(i) == fail_at {
                    Err(format!("item {i}"))
                } else {
                    Ok(i * 10)
                }
            },
            |v| {
                seen.push(v);
                Ok(())
            },
        );
        (seen, r)
    }

    #[test]
    fn results_arrive_in_item_order_on_any_thread_count() {
        for threads in [1, 2, 3, 8] {
            let (seen, r) = run(100, threads, None);
            assert!(r.is_ok());
            assert_eq!(
                seen,
                (0..100).map(|i| i * 10).collect::<Vec<_>>(),
                "{threads}"
            );
        }
    }

    #[test]
    fn stops_at_the_first_error_in_item_order() {
        for threads in [1, 4] {
            let (seen, r) = run(100, threads, Some(37));
            assert_eq!(r, Err("item 37".to_owned()));
            assert_eq!(
                seen,
                (0..37).map(|i| i * 10).collect::<Vec<_>>(),
                "{threads}"
            );
        }
    }
}
