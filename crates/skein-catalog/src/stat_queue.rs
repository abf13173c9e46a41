//! The fast path's stats, shared out while the calling thread reads the catalog: stat threads
//! (every core but the caller's, fewer for a small tree) take the directories at once and the
//! files batch by batch as the caller hands their paths on, and the caller joins them once its
//! reads are done. Fewer threads than cores while it reads: with four stat threads beside it
//! on two cores, the reading thread took turns with one of them in 4 ms slices (`perf sched`)
//! while its reads were the critical path; with none left once it is done reading, the stats
//! became the critical path of a refresh that reads little.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Condvar, Mutex, PoisonError};

use crate::track::{OpenRoots, Stat};

/// Paths a thread stats at a time (small enough that the threads finish together).
pub(crate) const BATCH: usize = 256;

enum Job {
    Dirs(Range<usize>),
    Files(Vec<String>),
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<(usize, Job)>,
    queued: usize,
    closed: bool,
    dirs: Vec<(usize, Vec<Option<Stat>>)>,
    files: Vec<(usize, Vec<String>, Vec<Option<Stat>>)>,
}

/// The stats of `dirs` and of the file batches handed in, in order.
pub(crate) struct StatQueue<'a> {
    roots: &'a OpenRoots,
    dirs: &'a [&'a str],
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// What [`StatQueue::finish`] gives: the directories' stats, the files in the order they were
/// handed in, and theirs.
pub(crate) type Stats = (Vec<Option<Stat>>, Vec<String>, Vec<Option<Stat>>);

impl<'a> StatQueue<'a> {
    pub(crate) fn new(roots: &'a OpenRoots, dirs: &'a [&'a str]) -> Self {
        let mut queue = Queue::default();
        for start in (0..dirs.len()).step_by(BATCH) {
            let seq = queue.queued;
            queue
                .jobs
                .push_back((seq, Job::Dirs(start..dirs.len().min(start + BATCH))));
            queue.queued += 1;
        }
        Self {
            roots,
            dirs,
            queue: Mutex::new(queue),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A stat does not panic while the lock is held; a poisoned queue is still whole.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Files to stat, after those handed in before.
    pub(crate) fn push(&self, files: Vec<String>) {
        let mut q = self.lock();
        let seq = q.queued;
        q.jobs.push_back((seq, Job::Files(files)));
        q.queued += 1;
        drop(q);
        self.wake.notify_one();
    }

    /// Closes the queue when dropped (also when the caller panics: the stat threads must not
    /// wait for batches that never come): [`StatQueue::work`] then returns once it is empty.
    pub(crate) fn closer(&self) -> Closer<'_, 'a> {
        Closer(self)
    }

    /// Stats batches until the queue is closed and empty.
    pub(crate) fn work(&self) {
        loop {
            let mut q = self.lock();
            let (seq, job) = loop {
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                if q.closed {
                    return;
                }
                q = self.wake.wait(q).unwrap_or_else(PoisonError::into_inner);
            };
            drop(q);
            match job {
                Job::Dirs(range) => {
                    let stats = self.dirs[range]
                        .iter()
                        .map(|d| self.roots.stat(d))
                        .collect();
                    self.lock().dirs.push((seq, stats));
                }
                Job::Files(files) => {
                    let stats = files.iter().map(|f| self.roots.stat(f)).collect();
                    self.lock().files.push((seq, files, stats));
                }
            }
        }
    }

    /// Every batch's stats in order; `None` when a batch is missing (a thread that could not
    /// finish it): the caller takes the full path.
    pub(crate) fn finish(self) -> Option<Stats> {
        let mut q = self
            .queue
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if q.dirs.len() + q.files.len() != q.queued {
            return None;
        }
        q.dirs.sort_unstable_by_key(|(seq, _)| *seq);
        q.files.sort_unstable_by_key(|(seq, _, _)| *seq);
        let dirs = q.dirs.into_iter().flat_map(|(_, s)| s).collect();
        let (mut files, mut stats) = (Vec::new(), Vec::new());
        for (_, f, s) in q.files {
            files.extend(f);
            stats.extend(s);
        }
        Some((dirs, files, stats))
    }
}

/// See [`StatQueue::closer`].
pub(crate) struct Closer<'q, 'a>(&'q StatQueue<'a>);

impl Drop for Closer<'_, '_> {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.wake.notify_all();
    }
}

/// The fewest stats that get a thread of their own (starting one costs tens of stats).
const STATS_PER_THREAD: usize = 512;

/// Threads for `stats` stats besides the caller: every core but the caller's (`threads`: the
/// refresh's parsing threads, 0 for all cores), fewer for fewer stats, at least one.
pub(crate) fn threads(threads: usize, stats: usize) -> usize {
    skein_core::ordered::threads_or_cores(threads)
        .saturating_sub(1)
        .min(stats.div_ceil(STATS_PER_THREAD))
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many small batches over several threads and the caller: every stat comes back once, in
    /// the order the paths were handed in.
    #[test]
    fn stats_come_back_in_order_whatever_thread_took_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let files: Vec<String> = (0..(3 * BATCH + 17))
            .map(|i| {
                let p = root.join(format!("d{}/f{i}.jsonl", i % 7));
                std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                std::fs::write(&p, vec![b'x'; i]).expect("write");
                p.to_string_lossy().into_owned()
            })
            .collect();
        let dirs: Vec<String> = (0..7)
            .map(|d| root.join(format!("d{d}")).to_string_lossy().into_owned())
            .chain(std::iter::once(
                root.join("gone").to_string_lossy().into_owned(),
            ))
            .collect();
        let dir_refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        let open = OpenRoots::open(std::slice::from_ref(&root));
        let queue = StatQueue::new(&open, &dir_refs);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..3).map(|_| scope.spawn(|| queue.work())).collect();
            let closer = queue.closer();
            // Uneven batches, as a reader hands them on.
            for chunk in files.chunks(BATCH / 3 + 1) {
                queue.push(chunk.to_vec());
            }
            drop(closer);
            queue.work();
            for w in workers {
                w.join().expect("worker");
            }
        });
        let (dir_stats, got, stats) = queue.finish().expect("every batch done");
        assert_eq!(got, files);
        let sizes: Vec<Option<u64>> = stats.iter().map(|s| s.map(|s| s.size)).collect();
        let want: Vec<Option<u64>> = (0..files.len()).map(|i| Some(i as u64)).collect();
        assert_eq!(sizes, want);
        assert_eq!(dir_stats.len(), dirs.len());
        assert!(dir_stats[..7].iter().all(Option::is_some));
        assert!(dir_stats[7].is_none(), "a directory gone");
    }

    /// A batch nobody stat'ed (a thread that could not finish it) leaves the result unknown.
    #[test]
    fn a_batch_left_undone_leaves_no_result() {
        let open = OpenRoots::default();
        let queue = StatQueue::new(&open, &[]);
        queue.push(vec!["/nowhere/a.jsonl".into()]);
        drop(queue.closer());
        assert!(queue.finish().is_none());
        // Done, the same batch gives its (missing) file's stat.
        let queue = StatQueue::new(&open, &[]);
        queue.push(vec!["/nowhere/a.jsonl".into()]);
        drop(queue.closer());
        queue.work();
        let (dirs, files, stats) = queue.finish().expect("done");
        assert_eq!((dirs.len(), files.len(), stats), (0, 1, vec![None]));
    }

    #[test]
    fn threads_follow_the_cores_and_the_work() {
        assert_eq!(threads(2, 7_600), 1, "two cores: the caller and one more");
        assert_eq!(threads(16, 7_600), 15);
        assert_eq!(
            threads(64, 7_600),
            15,
            "no more threads than 512 stats each"
        );
        assert_eq!(threads(64, 100), 1);
        assert_eq!(
            threads(1, 7_600),
            1,
            "one thread besides the caller, at least"
        );
        assert_eq!(threads(8, 0), 1);
    }
}
